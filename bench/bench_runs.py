"""A run of 1,000 tasks x 5 exact-match criteria: at most 3x the library grading the same
outputs in a loop, and at most 25 queries per 100 tasks (issue 25). The same run with
`llm_judge` criteria, against the local chat completions server answering in 20 ms,
JUDGE_CONCURRENCY 16: at most 1.5x the ideal (calls x latency / concurrency), the median
of three runs. That one is graded as in production: two Celery workers on Redis (database
8: the broker and the judges' slots) take its chunks from the `judges` queue, 16 threads
each, and the slots keep 16 requests in flight in all; "skipped (no Redis)" without one.

Ours: `services.runs.run_create` as the API calls it, Celery eager as by default: the
outputs checked against the version, its rows written, each chunk claimed, graded, written
and counted, the run's figures made. Theirs: `grade_tasks` on the same version's specs and
the same outputs, nothing kept. Timed on the wall clock (the database's work is part of
ours), in alternating rounds as `timing.py` does. Queries are those of one whole run.

It runs in a throwaway test database (PostgreSQL if it answers on 127.0.0.1:5432, else
SQLite). Run: `.venv/bin/python bench/bench_runs.py` (also in `make bench`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from bench_django import JUDGE, setup  # noqa: E402

setup(database="contextevals_bench_runs", without=JUDGE)

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from timing import median_ratio, verdict  # noqa: E402

from context_verifiers.grading import Graders, grade_tasks  # noqa: E402
from context_verifiers.judges import JudgeConfig  # noqa: E402
from contextevals.celery import app  # noqa: E402
from datasets_app import selectors  # noqa: E402
from datasets_app.models import Criterion, Dataset, Run, Task, Version  # noqa: E402
from datasets_app.services import datasets, runs  # noqa: E402

TASKS = 1_000
CRITERIA = 4  # and the expected answer: 5 checks a task
TIME_GOAL = 3.0
QUERY_GOAL = 25
EXACT = {"kind": "exact_match"}
JUDGED = {"kind": "llm_judge", "outputType": "boolean", "instructions": "{{criterion}} {{output}}"}
LATENCY = 0.020
CONCURRENCY = 16
JUDGE_GOAL = 1.5
JUDGE_ROUNDS = 3
JUDGE_WORKERS = 2
BROKER_URL = "redis://127.0.0.1:6379/8"


def _version(verifier: dict[str, str] = EXACT, name: str = "runs") -> Version:
    person = get_user_model().objects.create_user(username=f"bench-{name}", password="pw-bench-1")
    dataset = Dataset.objects.create(
        owner=person, name=f"Bench {name}", settings={"expectedAnswerVerifier": verifier}
    )
    tasks = Task.objects.bulk_create(
        Task(
            dataset=dataset,
            task_id=f"t{n}",
            prompt=f"Question {n}?",
            expected_text=f"Answer {n}",
            position=n,
        )
        for n in range(TASKS)
    )
    Criterion.objects.bulk_create(
        Criterion(
            dataset=dataset,
            task=task,
            criterion_id=f"c{c}",
            text=f"Check {c}",
            verifier=verifier,
            position=c,
        )
        for task in tasks
        for c in range(CRITERIA)
    )
    return datasets.version_save(dataset=dataset, user=person)


def measure(version: Version) -> int:
    outputs = {f"t{n}": f"Answer {n}" if n % 4 else "wrong" for n in range(TASKS)}
    data = "".join(json.dumps({"task": t, "output": o}) + "\n" for t, o in outputs.items())
    user = version.created_by
    assert user is not None
    spec = selectors.frozen_version(version).spec
    pairs = [(task, outputs.get(task.id)) for task in spec.tasks]

    def run() -> None:
        made = runs.run_create(version=version, user=user, data=data.encode(), file_name="o.jsonl")
        assert Run.objects.get(pk=made.pk).state == "done"

    def library() -> None:
        result = grade_tasks(spec, pairs, graders=Graders())
        assert len(result.tasks) == TASKS

    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        run()
        once = time.perf_counter() - started
    per_100 = len(queries) * 100 / TASKS
    ratio = median_ratio(run, library, clock=time.perf_counter)
    print(
        f"bench runs: a run of {TASKS:,} tasks x {CRITERIA + 1} exact-match criteria takes "
        f"{ratio:.2f}x the library grading them in a loop (goal <= {TIME_GOAL:g}x; one run "
        f"{once * 1000:,.0f} ms, {connection.vendor}) {verdict(ratio <= TIME_GOAL)}"
    )
    print(
        f"bench runs: {per_100:.1f} queries per 100 tasks ({len(queries):,} in all; goal <= "
        f"{QUERY_GOAL}) {verdict(per_100 <= QUERY_GOAL)}"
    )
    return 0 if ratio <= TIME_GOAL and per_100 <= QUERY_GOAL else 1


def _redis_answers() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return False
    return True


def _workers(base_url: str, log: Path) -> tuple[list[subprocess.Popen], str]:
    """JUDGE_WORKERS Celery workers on a default and a judges' queue of the bench's own,
    started and ready."""
    queue = f"bench-runs-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        # The app's settings, on the bench's queues (RECIPE_QUEUE, RECIPE_JUDGE_QUEUE).
        "DJANGO_SETTINGS_MODULE": "tests.recipe_settings",
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": BROKER_URL,
        "RECIPE_QUEUE": queue,
        "RECIPE_JUDGE_QUEUE": f"{queue}-judges",
        "JUDGE_BASE_URL": base_url,
        "JUDGE_MODEL": "bench",
        "JUDGE_CONCURRENCY": str(CONCURRENCY),
        "JUDGE_MAX_RETRIES": "0",
        "LOG_LEVEL": "INFO",
    }
    workers = []
    for number in range(JUDGE_WORKERS):
        command = [sys.executable, "-m", "celery", "-A", "contextevals", "worker", "-c", "1"]
        command += ["-Q", f"{queue},{queue}-judges", "-n", f"{queue}-{number}@%h", "-l", "INFO"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        with log.open("ab") as out:
            workers.append(
                subprocess.Popen(
                    command,
                    cwd=REPO,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
    deadline = time.monotonic() + 60
    while log.read_text(errors="replace").count(" ready.") < JUDGE_WORKERS:
        if time.monotonic() > deadline:
            raise SystemExit(f"the workers did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.1)
    return workers, queue


def _database_url() -> str:
    db = connection.settings_dict
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    return f"postgres://{db['USER'] or 'postgres'}@{host}:{port}/{db['NAME']}"


def _timed_run(version: Version, data: bytes, log: Path) -> float:
    """How long one run of `data` takes, from its start to its end on the workers."""
    assert version.created_by is not None
    started = time.perf_counter()
    made = runs.run_create(version=version, user=version.created_by, data=data, file_name="o.jsonl")
    while not Run.objects.get(pk=made.pk).ended:
        if time.perf_counter() > started + 300:
            raise SystemExit(f"the run did not end:\n{log.read_text()[-2000:]}")
        time.sleep(0.01)
    return time.perf_counter() - started


def measure_judged(version: Version) -> int:
    """The run of `version` (every check an llm_judge) on the workers, against the local
    server in its own process (tests/verifiers/judge_server.py). No seed: nothing is
    cached, every check is a request. Timed from the run's start to its end."""
    if not _redis_answers() or connection.vendor != "postgresql":
        # The workers share the bench's database: PostgreSQL's, not SQLite's in memory.
        print("bench runs: a run with llm_judge criteria: skipped (no Redis or no PostgreSQL)")
        return 0
    import redis

    redis.Redis.from_url(BROKER_URL).flushdb()
    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests/verifiers/judge_server.py"), "--latency", str(LATENCY)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    log = Path(tempfile.mkdtemp(prefix="bench-runs-")) / "workers.log"
    workers, queue = _workers(base_url, log)
    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_url", "task_default_queue")}
    app.conf.update(task_always_eager=False, broker_url=BROKER_URL, task_default_queue=queue)
    # The connections made for the eager rounds above would send to the old broker.
    app._pool = None
    app.amqp._producer_pool = None
    outputs = {f"t{n}": f"Answer {n}, correct" for n in range(TASKS)}
    data = "".join(json.dumps({"task": t, "output": o}) + "\n" for t, o in outputs.items())
    config = JudgeConfig(base_url=base_url, model="bench", concurrency=CONCURRENCY)
    try:
        with override_settings(JUDGE=config):
            times = [_timed_run(version, data.encode(), log) for _ in range(JUDGE_ROUNDS)]
    finally:
        for worker in workers:
            os.killpg(worker.pid, signal.SIGTERM)
        for worker in workers:
            worker.wait(timeout=30)
        server.terminate()
        server.wait()
        channel = app.connection_for_write(BROKER_URL).default_channel
        for name in (queue, f"{queue}-judges"):
            channel.queue_delete(name)
        app.conf.update(saved)
    made = Run.objects.filter(version=version).latest("pk")
    calls = made.outcome_count
    elapsed = statistics.median(times)
    ideal = calls * LATENCY / CONCURRENCY
    ratio = elapsed / ideal
    ok = made.state == "done" and ratio <= JUDGE_GOAL
    print(
        f"bench runs: a run of {TASKS:,} tasks x {CRITERIA + 1} llm_judge criteria on "
        f"{JUDGE_WORKERS} workers takes {ratio:.2f}x the ideal {ideal:.2f} s ({elapsed:.2f} s "
        f"for {calls:,} judge calls of {LATENCY * 1000:.0f} ms, {CONCURRENCY} at a time, the "
        f"median of {JUDGE_ROUNDS}; goal <= {JUDGE_GOAL:g}x) {verdict(ok)}"
    )
    return 0 if ok else 1


def main() -> int:
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-runs-") as media,
            override_settings(MEDIA_ROOT=media),
        ):
            exact = measure(_version())
            judged = measure_judged(_version(JUDGED, name="judged-runs"))
            return exact or judged
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
