"""A run of 1,000 tasks x 5 exact-match criteria: at most 3x the library grading the same
outputs in a loop, and at most 25 queries per 100 tasks (issue 25).

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
import sys
import tempfile
import time
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
from datasets_app.models import Criterion, Dataset, Run, Task, Version  # noqa: E402
from datasets_app.services import datasets, runs  # noqa: E402

TASKS = 1_000
CRITERIA = 4  # and the expected answer: 5 checks a task
TIME_GOAL = 3.0
QUERY_GOAL = 25
EXACT = {"kind": "exact_match"}


def _version() -> Version:
    person = get_user_model().objects.create_user(username="bench-runs", password="pw-bench-1")
    dataset = Dataset.objects.create(
        owner=person, name="Bench runs", settings={"expectedAnswerVerifier": EXACT}
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
            verifier=EXACT,
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
    spec = runs.frozen_spec(version)
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


def main() -> int:
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-runs-") as media,
            override_settings(MEDIA_ROOT=media),
        ):
            return measure(_version())
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
