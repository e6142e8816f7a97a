"""What the dataset and version pages cost at 10,000 tasks, next to the same pages at 100.

- dataset_page: the dataset page of 10,000 tasks x 5 criteria (first page of its tasks),
  against the same page of a 100-task dataset. Goal: at most 1.5x, at most 300 KiB of HTML.
- version_page: the same for a saved version of each.
- search: the 10,000-task dataset page searched for a word found in one task's prompt,
  against the 100-task page (unsearched). Goal (on PostgreSQL, whose trigram indexes serve
  it; SQLite reads every row): that task shown, at most 1.5x.
- version_search (no goal, for the record): the same search on the version page.
- version_changes: the page of a v2 that edited 10 tasks of each dataset, which says what
  changed since v1 (worked out on its first view, then cached), against the 100-task v2.
  Goal: at most 1.5x, at most 300 KiB; its first view is noted.

Each ratio is the median of alternating rounds (`timing.median_ratio`) on the wall clock:
on PostgreSQL the database server does part of the work, which this process's CPU time
would not see. It runs in a throwaway test database on the PostgreSQL server of
DATABASE_URL when that is set, else on SQLite. Sizes and queries go to stderr.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")
for name in ("CELERY_BROKER_URL", "STORAGE_BUCKET", "CACHE_URL"):
    os.environ.pop(name, None)
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.signals import request_finished, request_started  # noqa: E402
from django.db import close_old_connections, connection, reset_queries, transaction  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from timing import median_ratio, verdict  # noqa: E402

from datasets_app import comparing, selectors  # noqa: E402
from datasets_app.models import Criterion, Dataset, Task  # noqa: E402
from datasets_app.services import bulk, datasets  # noqa: E402

BIG, SMALL, CRITERIA = 10_000, 100, 5
ROUNDS = 9
BATCH = 2_000
MAX_HTML = 300 * 1024
# The word one task's prompt holds, and no other text of either dataset.
NEEDLE = "quokka"
WORDS = "apples oranges river mountain ledger invoice budget quarterly audit"


def build(owner, tasks: int, *, expected: bool = True) -> Dataset:
    """A dataset of `tasks` tasks x 5 criteria, written in batches by the app's bulk writer
    (COPY on PostgreSQL); `expected` False: graded by their criteria only."""
    dataset = Dataset.objects.create(owner=owner, name=f"Bench {tasks:,}")
    with transaction.atomic():
        for start in range(0, tasks, BATCH):
            made = bulk.insert_rows(
                Task,
                [
                    Task(
                        dataset=dataset,
                        task_id=f"task-{n:06}",
                        name=f"Question {n:,}",
                        prompt=f"Question {n}: {WORDS} " * 4
                        + (NEEDLE if n == tasks * 3 // 4 else ""),
                        expected_text=f"Answer {n}" if expected else "",
                        position=n,
                    )
                    for n in range(start, min(start + BATCH, tasks))
                ],
            )
            bulk.insert_rows(
                Criterion,
                [
                    Criterion(
                        dataset=dataset,
                        task=task,
                        criterion_id=f"c{c}",
                        text=f"Mentions point {c} of {task.task_id}",
                        weight=c + 1,
                        position=c,
                    )
                    for task in made
                    for c in range(CRITERIA)
                ],
            )
    return dataset


def note(message: str) -> None:
    print(f"  {message}", file=sys.stderr)


def getter(client: Client, url: str, expect: str = ""):
    def get() -> bytes:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        body = response.content
        assert expect.encode() in body, (url, expect)
        return body

    return get


def figure(name: str, big, small, *, goal_html: bool = True, goal: float | None = 1.5) -> None:
    big_body, small_body = big(), small()  # warm: the first view of a version caches notes
    reset_queries()  # a full log (DEBUG's, while building) would hide these
    with CaptureQueriesContext(connection) as capture:
        big()
    # Read now: each later request empties the log the capture reads from.
    queries = capture.captured_queries
    if os.environ.get("BENCH_QUERIES"):
        slowest = sorted(queries, key=lambda q: -float(q["time"]))[:6]
        for query in slowest:
            note(f"{query['time']}s {query['sql'][:300]}")
    ratio = median_ratio(big, small, rounds=ROUNDS, clock=time.perf_counter)
    size = len(big_body)
    ok = (goal is None or ratio <= goal) and (not goal_html or size <= MAX_HTML)
    judged = goal is not None or goal_html
    goals = f"goal {goal}x" if goal else "no goal for the time"
    goals += ", 300 KiB" if goal_html else ""
    shown = f"{ratio:.2f}x the 100-task page, {size / 1024:.0f} KiB ({goals})"
    print(f"bench {name}: {shown} {verdict(ok) if judged else ''}".rstrip())
    note(
        f"{name}: {len(queries)} queries at {BIG:,} tasks; "
        f"the {SMALL}-task page {len(small_body) / 1024:.0f} KiB"
    )


def main() -> None:
    # One connection for the whole run, as the test runner keeps it: a page's figure is its
    # own work, not a new connection each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    # A database of its own name: never the test suite's, which may be running beside it.
    connection.settings_dict["TEST"]["NAME"] = f"bench_scale_pages_{os.getpid()}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with override_settings(DEBUG=False, ALLOWED_HOSTS=["testserver"]):
            person = get_user_model().objects.create_user(username="bench-pages", password=None)
            start = time.perf_counter()
            big, small = build(person, BIG), build(person, SMALL)
            note(
                f"built {BIG:,} + {SMALL} tasks x {CRITERIA} in {time.perf_counter() - start:.1f}s"
            )
            start = time.perf_counter()
            big_version = datasets.version_save(dataset=big, user=person)
            small_version = datasets.version_save(dataset=small, user=person)
            note(f"saved both as v1 in {time.perf_counter() - start:.1f}s")
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")
            note(f"on {connection.vendor}")
            client = Client()
            client.force_login(person)
            big_url, small_url = big.get_absolute_url(), small.get_absolute_url()
            found = f"task-{BIG * 3 // 4:06}"
            figure("dataset_page", getter(client, big_url), getter(client, small_url))
            getter(client, small_version.get_absolute_url())()  # templates, URLs: warm
            start = time.perf_counter()
            getter(client, big_version.get_absolute_url())()
            note(
                f"version_page: its first view {(time.perf_counter() - start) * 1000:.0f} ms "
                "(reads the whole snapshot once for the export notes and head, then cached)"
            )
            figure(
                "version_page",
                getter(client, big_version.get_absolute_url()),
                getter(client, small_version.get_absolute_url()),
            )
            figure(
                "search",
                getter(client, f"{big_url}?q={NEEDLE}", expect=f"<code>{found}</code>"),
                getter(client, small_url),
                # SQLite has no index to search with: it reads every row, by design.
                goal=1.5 if connection.vendor == "postgresql" else None,
            )
            figure(
                "version_search",
                getter(
                    client,
                    f"{big_version.get_absolute_url()}?q={NEEDLE}",
                    expect=f"<code>{found}</code>",
                ),
                getter(client, small_version.get_absolute_url()),
                goal=None,
                goal_html=False,
            )
            big_v2, small_v2 = (edited_version(d, person) for d in (big, small))
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")  # as autovacuum would after 10,000 new rows
            start = time.perf_counter()
            comparing.version_changes(big_v2)
            worked_out = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            getter(client, big_v2.get_absolute_url(), expect="10 changed")()
            rest = (time.perf_counter() - start) * 1000
            note(
                f"version_changes: v2's changes since v1 worked out in {worked_out:.0f} ms "
                f"(then cached); the rest of its first view {rest:.0f} ms"
            )
            figure(
                "version_changes",
                getter(client, big_v2.get_absolute_url(), expect="10 changed"),
                getter(client, small_v2.get_absolute_url(), expect="10 changed"),
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def edited_version(dataset: Dataset, person) -> object:
    """v2 of `dataset`: 10 of its tasks' prompts edited as the task form edits them."""
    for task in dataset.tasks.live().prefetch_related("criteria", "files")[:10]:
        spec = selectors.task_spec(task)
        datasets.task_save(
            dataset=dataset, task=task, spec=replace(spec, prompt="Edited. " + spec.prompt)
        )
    return datasets.version_save(dataset=dataset, user=person)


if __name__ == "__main__":
    main()
