"""The run page of a 10,000-task run (issue 25): at most 150 ms server time on PostgreSQL,
and not growing with the run's size (at most 1.5x the same page of a 100-task run).

Each run grades 5 exact-match checks a task (the expected answer and 4 criteria), a
quarter of the outputs wrong, a few tasks with no output; the run ends before the page is
timed, as a person looks at it. The page is fetched through Django's test client (its
whole server side: middleware, view, template), the median of ROUNDS on the wall clock,
the 10,000-task page and the 100-task page in alternating turns (`timing.median_ratio`).

It runs in a throwaway test database (PostgreSQL if it answers on 127.0.0.1:5432, else
SQLite). Run: `.venv/bin/python bench/bench_run_page.py` (also in `make bench`).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from bench_django import JUDGE, setup  # noqa: E402

setup(database="contextevals_bench_run_page", without=JUDGE)

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.signals import request_finished, request_started  # noqa: E402
from django.db import close_old_connections, connection, reset_queries  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from timing import median_ratio, verdict  # noqa: E402

from datasets_app.models import Criterion, Dataset, Run, Task  # noqa: E402
from datasets_app.services import bulk, datasets, runs  # noqa: E402

BIG, SMALL, CRITERIA = 10_000, 100, 4
ROUNDS = 9
TIME_GOAL_MS = 150
RATIO_GOAL = 1.5
EXACT = {"kind": "exact_match"}


def graded_run(person, tasks: int) -> Run:
    """A dataset of `tasks` tasks saved as v1, and a finished run of it."""
    dataset = Dataset.objects.create(
        owner=person, name=f"Bench {tasks:,}", settings={"expectedAnswerVerifier": EXACT}
    )
    rows = bulk.insert_rows(
        Task,
        [
            Task(
                dataset=dataset,
                task_id=f"t{n}",
                name=f"Task {n + 1:,}",
                prompt=f"Question {n}?",
                expected_text=f"Answer {n}",
                position=n,
            )
            for n in range(tasks)
        ],
    )
    bulk.insert_rows(
        Criterion,
        [
            Criterion(
                dataset=dataset,
                task=task,
                criterion_id=f"c{c}",
                text=f"Check {c}",
                verifier=EXACT,
                position=c,
            )
            for task in rows
            for c in range(CRITERIA)
        ],
    )
    version = datasets.version_save(dataset=dataset, user=person)
    lines = (
        json.dumps({"task": f"t{n}", "output": f"Answer {n}" if n % 4 else "wrong"})
        for n in range(tasks)
        if n % 50 != 7  # a few tasks with no output: the agent's failure, counted
    )
    data = "".join(line + "\n" for line in lines).encode()
    run = runs.run_create(version=version, user=person, data=data, file_name="o.jsonl")
    run.refresh_from_db()
    assert run.ended, run.state
    return run


def getter(client: Client, url: str):
    def get() -> bytes:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        return response.content

    return get


def main() -> int:
    # One connection for the whole bench, as a server keeps it: the page's own work.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-run-page-") as media,
            override_settings(MEDIA_ROOT=media, DEBUG=False, ALLOWED_HOSTS=["testserver"]),
        ):
            person = get_user_model().objects.create_user(username="bench-runs", password=None)
            started = time.perf_counter()
            big, small = graded_run(person, BIG), graded_run(person, SMALL)
            built = time.perf_counter() - started
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")
            client = Client()
            client.force_login(person)
            big_page = getter(client, big.get_absolute_url())
            small_page = getter(client, small.get_absolute_url())
            body = big_page()
            assert f"Tasks 1 to 50 of {BIG:,}.".encode() in body, "the page lists its tasks"
            small_page()
            reset_queries()
            with CaptureQueriesContext(connection) as queries:
                big_page()
            count = len(queries.captured_queries)
            times = []
            for _ in range(ROUNDS):
                start = time.perf_counter()
                big_page()
                times.append((time.perf_counter() - start) * 1000)
            median_ms = statistics.median(times)
            ratio = median_ratio(big_page, small_page, rounds=ROUNDS, clock=time.perf_counter)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    print(
        f"  built and graded runs of {BIG:,} and {SMALL} tasks x {CRITERIA + 1} in "
        f"{built:.1f}s; the page: {count} queries, {len(body) / 1024:.0f} KiB",
        file=sys.stderr,
    )
    timed_ok = median_ms <= TIME_GOAL_MS or connection.vendor != "postgresql"
    print(
        f"bench run_page: the page of a {BIG:,}-task run takes {median_ms:.0f} ms "
        f"(goal <= {TIME_GOAL_MS} ms on PostgreSQL; {connection.vendor}) {verdict(timed_ok)}"
    )
    print(
        f"bench run_page: {ratio:.2f}x the page of a {SMALL}-task run "
        f"(goal <= {RATIO_GOAL:g}x) {verdict(ratio <= RATIO_GOAL)}"
    )
    return 0 if timed_ok and ratio <= RATIO_GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
