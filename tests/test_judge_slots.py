"""The judges' limit across processes (`datasets_app.judge_slots`), on the real Redis at
127.0.0.1:6379 (database 5) and the local chat completions server, which counts the most
requests it answered at once. Skipped, saying so, when no Redis answers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest

from context_verifiers.judges import Judge, JudgeConfig
from datasets_app.importing.spec import Verifier
from datasets_app.judge_slots import UNAVAILABLE, RedisSlots
from tests.conftest import REPO_ROOT
from tests.test_worker import _redis_answers
from tests.verifiers.conftest import judge_server  # noqa: F401 - the library's fixture
from tests.verifiers.test_judges import TASK, answer

pytestmark = pytest.mark.redis

SLOTS_URL = "redis://127.0.0.1:6379/5"
BOOLEAN = Verifier(kind="llm_judge", output_type="boolean", instructions="{{output}}")

# A process of its own grading `calls` answers with `threads` threads, its judge's limit
# kept in Redis; prints its statuses as JSON.
GRADER = textwrap.dedent(
    """
    import json, sys
    from concurrent.futures import ThreadPoolExecutor
    from context_verifiers.judges import Judge, JudgeConfig
    from context_verifiers.views import OutputView, TaskView
    from datasets_app.importing.spec import Verifier
    from datasets_app.judge_slots import RedisSlots

    BOOLEAN = Verifier(kind="llm_judge", output_type="boolean", instructions="{{output}}")
    TASK = TaskView(id="t", name="T", prompt="Say it.", expected=None)

    url, base_url, limit, calls, threads = sys.argv[1:]
    config = JudgeConfig(base_url=base_url, model="m", concurrency=int(limit))
    slots = RedisSlots(url=url, endpoint=base_url, limit=int(limit), hold_seconds=30)
    judge = Judge(config, slots=slots)
    grade = lambda n: judge.grade(BOOLEAN, TASK, OutputView(text=f"correct {n}")).status
    with ThreadPoolExecutor(max_workers=int(threads)) as pool:
        print(json.dumps(list(pool.map(grade, range(int(calls))))))
    """
)

# Takes a slot, says so, and holds it until killed.
HOLDER = textwrap.dedent(
    """
    import sys, time
    from datasets_app.judge_slots import RedisSlots

    slots = RedisSlots(url=sys.argv[1], endpoint=sys.argv[2], limit=1, hold_seconds=1.5)
    with slots.hold():
        print("held", flush=True)
        time.sleep(600)
    """
)


@pytest.fixture
def redis_db() -> Iterator[str]:
    if not _redis_answers():
        pytest.skip("no Redis answered on 127.0.0.1:6379 (CI has one): the slots test skipped")
    import redis

    client = redis.Redis.from_url(SLOTS_URL)
    client.flushdb()
    yield SLOTS_URL
    client.flushdb()


def python(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_three_processes_together_send_no_more_than_the_limit(redis_db, judge_server):  # noqa: F811
    judge_server.latency = 0.05
    graders = [python(GRADER, redis_db, judge_server.base_url, "3", "12", "4") for _ in range(3)]

    statuses = [json.loads(grader.communicate(timeout=120)[0]) for grader in graders]

    assert statuses == [["passed"] * 12] * 3
    assert len(judge_server.requests) == 36
    # Each process has 4 threads asking at once, 12 in all: the server never sees more than 3.
    assert judge_server.most_in_flight == 3


def test_a_slot_a_killed_process_held_is_freed_when_it_grows_old(redis_db, judge_server):  # noqa: F811
    holder = python(HOLDER, redis_db, judge_server.base_url)
    assert holder.stdout.readline().strip() == "held"
    os.killpg(holder.pid, signal.SIGKILL)  # kill -9, the slot never given back
    holder.wait(timeout=10)
    config = JudgeConfig(base_url=judge_server.base_url, model="m", concurrency=1)
    slots = RedisSlots(url=redis_db, endpoint=judge_server.base_url, limit=1, hold_seconds=1.5)
    started = time.monotonic()

    result = Judge(config, slots=slots).grade(BOOLEAN, TASK, answer("correct"))

    assert result.status == "passed"
    assert 0.3 < time.monotonic() - started < 5


def test_redis_not_answering_ends_the_criterion_as_an_error_saying_so(judge_server):  # noqa: F811
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = JudgeConfig(base_url=judge_server.base_url, model="m", max_retries=1)
    slots = RedisSlots(url=f"redis://127.0.0.1:{port}/5", endpoint="x", limit=1, hold_seconds=5)

    result = Judge(config, slots=slots).grade(BOOLEAN, TASK, answer("correct"))

    assert (result.status, result.code) == ("error", "judge_unreachable")
    assert result.detail.startswith("After 2 attempts: " + UNAVAILABLE.split("{")[0])
    assert judge_server.requests == []  # nothing was sent without a slot
