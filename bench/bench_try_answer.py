""" "Try an answer" on a task with an exact match and a Python check: the request at most
1.5x the verifiers' own time (issue 23).

Ours: the task page's htmx POST through Django (the login, CSRF and rate-limit middleware,
the form, the task and its criteria read, the try handed to Celery, eager as by default,
and its state kept in the cache, the result rendered). Theirs: `grade_task` on the same
task and answer, its specs already made: the exact match and the `length` check in the
sandbox. Both are timed in CPU time: of this process and of the sandbox's fork server with
the checks it reaped (/proc/PID/stat: utime, stime, cutime, cstime), so that the check's
own process is counted on both sides. Rounds alternate as in `timing.py`; wall-clock
medians are printed beside.

It runs in a throwaway test database (PostgreSQL if it answers on 127.0.0.1:5432, else
SQLite). Run: `.venv/bin/python bench/bench_try_answer.py` (also in `make bench`).
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
# Tries run in-process (eager Celery), with no judge: the task has none to call.
from bench_django import JUDGE, setup  # noqa: E402

setup(database="contextevals_bench_try", without=JUDGE)

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.urls import reverse  # noqa: E402
from timing import MIN_ROUNDS, verdict  # noqa: E402

from context_verifiers.grading import Graders, grade_task  # noqa: E402
from context_verifiers.sandbox import launcher, sandbox_status  # noqa: E402
from datasets_app import grading, selectors  # noqa: E402
from datasets_app.importing.starters import LENGTH_CHECK  # noqa: E402
from datasets_app.models import Criterion, Dataset, SiteSettings, Task  # noqa: E402

GOAL = 1.5
ROUNDS = 11
# Tries a round: the fork server's CPU time is read in clock ticks (10 ms), too coarse
# for one check.
BATCH = 20
ANSWER = " ".join(["word"] * 149)


def _cpu() -> float:
    """CPU time of this process, the children it waited for, and the sandbox's fork
    server with the checks it reaped."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    for server in launcher._servers.values():
        fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        # utime, stime, cutime, cstime are fields 14 to 17 of stat (1 and 2 precede ")").
        total += sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = _cpu(), time.perf_counter()
    for _ in range(BATCH):
        run()
    return _cpu() - cpu, (time.perf_counter() - wall) / BATCH


def _task() -> Task:
    person = get_user_model().objects.create_user(username="bench-try", password="pw-bench-1")
    dataset = Dataset.objects.create(owner=person, name="Bench")
    task = Task.objects.create(
        dataset=dataset,
        task_id="q3-end-date",
        prompt="Return only the ISO 8601 date of the last day of calendar Q3 2025.",
        expected_text=ANSWER,
        expected_verifier={"kind": "exact_match"},
    )
    Criterion.objects.create(
        dataset=dataset,
        task=task,
        criterion_id="length",
        text="Is 150 words or fewer.",
        verifier={"kind": "code_verifier", "code": LENGTH_CHECK},
    )
    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": True})
    return task


def measure(task: Task) -> int:
    client = Client()
    client.force_login(task.dataset.owner)
    url = reverse("datasets_app:task_try", args=[task.dataset_id, task.pk])
    spec = grading.dataset_spec_for_grading(task.dataset)
    task_spec = selectors.task_spec(selectors.task_for(task.dataset, task.pk))
    graders = Graders(allow_python=True)

    def request() -> None:
        response = client.post(url, {"answer": ANSWER}, HTTP_HX_REQUEST="true")
        assert response.status_code == 200
        assert response.content.count(b'<span class="badge passed">') == 2, response.content

    def verifiers() -> None:
        result = grade_task(spec, task_spec, ANSWER, graders=graders)
        assert [one.outcome.status for one in result.criteria] == ["passed", "passed"]

    request(), verifiers()  # the first check starts the fork server, as a worker's does
    ratios, walls_ours, walls_theirs = [], [], []
    cpu_of: dict[Callable[[], None], list[float]] = {request: [], verifiers: []}
    for number in range(max(ROUNDS, MIN_ROUNDS)):
        pair = (request, verifiers) if number % 2 == 0 else (verifiers, request)
        times = {run: _timed(run) for run in pair}
        for run in pair:
            cpu_of[run].append(times[run][0])
        ratios.append(times[request][0] / times[verifiers][0])
        walls_ours.append(times[request][1])
        walls_theirs.append(times[verifiers][1])
    ratio = statistics.median(ratios)
    cpu_ours = statistics.median(cpu_of[request]) * 1000 / BATCH
    cpu_theirs = statistics.median(cpu_of[verifiers]) * 1000 / BATCH
    print(
        f"try an answer (exact match + Python check): the request {ratio:.2f}x the CPU time "
        f"of the verifiers' own ({cpu_ours:.1f} ms vs {cpu_theirs:.1f} ms a try; goal <= "
        f"{GOAL:g}x; wall clock "
        f"{statistics.median(walls_ours) * 1000:.1f} ms vs "
        f"{statistics.median(walls_theirs) * 1000:.1f} ms; median of {len(ratios)} rounds) "
        f"{verdict(ratio <= GOAL)}"
    )
    return 0 if ratio <= GOAL else 1


def main() -> int:
    available, reason = sandbox_status()
    if not available:
        print(f"try an answer: skipped, the sandbox is unavailable ({reason}) FAIL")
        return 1
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        # DEBUG off as served; no rate limit in the way of the rounds.
        with (
            tempfile.TemporaryDirectory(prefix="bench-try-") as media,
            override_settings(
                MEDIA_ROOT=media,
                DEBUG=False,
                ALLOWED_HOSTS=["testserver"],
                RATELIMIT_TRIES="100000/m",
            ),
        ):
            return measure(_task())
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
