"""A run that calls a judge is graded on the `judges` queue, by workers of their own, and its
judge's server never has more than JUDGE_CONCURRENCY requests in flight however many of
them there are: real Celery workers on Redis (databases 6, the broker and the judges'
slots, and 7, the reply cache), the local chat completions server counting what it answers
at once. Skipped, with the reason shown, when no Redis answers."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

import pytest

from context_verifiers.judges import JudgeConfig
from contextevals.celery import app
from datasets_app.models import Run, RunState
from datasets_app.services import runs
from tests.runs import outputs_jsonl
from tests.runs.conftest import saved_version
from tests.runs.test_run_worker import Workers, wait_until
from tests.test_worker import _redis_answers, shared_db  # noqa: F401 - a fixture
from tests.verifiers.judge_server import JudgeServer

pytestmark = [pytest.mark.redis, pytest.mark.slow]

BROKER_URL = "redis://127.0.0.1:6379/6"
CACHE_URL = "redis://127.0.0.1:6379/7"
TASKS = 60
CONCURRENCY = 3


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    server = JudgeServer(latency=0.05).start()
    yield server
    server.stop()


@pytest.fixture
def queues(shared_db, settings, judge, tmp_path, monkeypatch):  # noqa: F811
    """A default queue and a judges' queue of the test's own, each with its workers."""
    if not _redis_answers():
        pytest.skip("no Redis answered on 127.0.0.1:6379 (CI has one): the worker test skipped")
    import redis

    for url in (BROKER_URL, CACHE_URL):
        redis.Redis.from_url(url).flushdb()
    default, judges = (f"{name}-{uuid.uuid4().hex[:12]}" for name in ("runs", "judges"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.recipe_settings",
        "DATABASE_URL": shared_db,
        "CELERY_BROKER_URL": BROKER_URL,
        "CACHE_URL": CACHE_URL,
        "RECIPE_QUEUE": default,
        "RECIPE_JUDGE_QUEUE": judges,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "JUDGE_BASE_URL": judge.base_url,
        "JUDGE_MODEL": "local-judge",
        "JUDGE_CONCURRENCY": str(CONCURRENCY),
        "RUN_CHUNK_TASKS": "10",
    }
    settings.JUDGE = JudgeConfig(base_url=judge.base_url, model="local-judge")
    settings.RUN_CHUNK_TASKS = 10
    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_url", "task_default_queue")}
    app.conf.update(task_always_eager=False, broker_url=BROKER_URL, task_default_queue=default)
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    on_default = Workers(env, tmp_path / "default.log")
    on_judges = Workers({**env, "RECIPE_QUEUE": judges}, tmp_path / "judges.log")
    try:
        yield on_default, on_judges
    finally:
        on_default.stop()
        on_judges.stop()
        channel = app.connection_for_write(BROKER_URL).default_channel
        for queue in (default, judges):
            channel.queue_delete(queue)
        app.conf.update(saved)


def start_run(user, *, judged: bool) -> Run:
    version = saved_version(user, tasks=TASKS, judged=judged, name=f"Judged {judged}")
    outputs = {f"t{n}": f"Answer {n}, correct" for n in range(1, TASKS + 1)}
    return runs.run_create(
        version=version, user=user, data=outputs_jsonl(outputs), file_name="o.jsonl"
    )


def test_judged_chunks_go_to_the_judges_workers_within_the_endpoints_limit(queues, user, judge):
    on_default, on_judges = queues
    on_default.start("default")
    run = start_run(user, judged=True)
    wait_until(lambda: Run.objects.get(pk=run.pk).state == RunState.GRADING, 60, on_default.log)
    time.sleep(3)
    # Dispatched on the default queue, but its chunks wait for a judges' worker.
    assert Run.objects.get(pk=run.pk).outcomes_done == 0 and judge.requests == []

    # Two judges' workers, each grading a chunk with JUDGE_CONCURRENCY threads: six could ask
    # at once, the limit is three.
    on_judges.start("judges-1")
    on_judges.start("judges-2")
    wait_until(lambda: Run.objects.get(pk=run.pk).ended, 180, on_judges.log)

    run.refresh_from_db()
    assert run.state == RunState.DONE and run.outcomes_done == 2 * TASKS
    assert len(judge.requests) == TASKS
    assert judge.most_in_flight == CONCURRENCY


def test_a_run_with_no_judge_stays_on_the_default_queue(queues, user, judge):
    on_default, _ = queues
    on_default.start("default")  # no judges' worker at all

    run = start_run(user, judged=False)
    wait_until(lambda: Run.objects.get(pk=run.pk).ended, 120, on_default.log)

    assert Run.objects.get(pk=run.pk).state == RunState.DONE
    assert judge.requests == []
