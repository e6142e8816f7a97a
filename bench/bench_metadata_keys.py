"""The Metadata filter's choices at 100,000 tasks (issue 27), on PostgreSQL when it answers.

- metadata_keys: the choices' request (a datalist, as htmx asks it when the field is first
  focused) for 100,000 tasks with 4 keys each (one with a value per task), once worked out
  and cached, against the same request for 100 tasks. Goal: at most 1.5x.
- metadata_keys_first: working them out at 100,000 tasks (the one query, cold) against
  reading the 100,000 tasks' metadata into Python, which the choices would otherwise need.
  Goal: at most 1x (the database counts and ranks; Python receives about 100 rows).
- dataset_page: the dataset page of the 100,000 tasks, which offers the filter but does not
  count keys, against the same page of 100 tasks (no goal here: bench_scale_pages has the
  page's at 10,000; printed to show that the keys cost the page nothing).

Ratios are medians of alternating rounds (`timing.median_ratio`) on the wall clock: the
database server does most of this work. Sizes go to stderr.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from bench_django import setup  # noqa: E402

setup(database="contextevals_bench_metadata_keys")

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.signals import request_finished, request_started  # noqa: E402
from django.db import close_old_connections, connection, transaction  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.urls import reverse  # noqa: E402
from timing import median_ratio, verdict  # noqa: E402

from datasets_app import metadata_keys  # noqa: E402
from datasets_app.models import Dataset, Task  # noqa: E402
from datasets_app.services import bulk  # noqa: E402

BIG, SMALL = 100_000, 100
BATCH = 5_000
ROUNDS = 9
HX = {"HTTP_HX_REQUEST": "true"}


def build(owner, tasks: int) -> Dataset:
    dataset = Dataset.objects.create(owner=owner, name=f"Bench {tasks:,}")
    with transaction.atomic():
        for start in range(0, tasks, BATCH):
            bulk.insert_rows(
                Task,
                [
                    Task(
                        dataset=dataset,
                        task_id=f"task-{n:06}",
                        prompt=f"Question {n}",
                        expected_text=f"Answer {n}",
                        position=n,
                        metadata={
                            "category": f"category-{n % 12}",
                            "difficulty": n % 5,
                            "split": "test" if n % 3 == 0 else "train",
                            "source": f"https://example.com/docs/{n}",
                        },
                    )
                    for n in range(start, min(start + BATCH, tasks))
                ],
            )
    return dataset


def note(message: str) -> None:
    print(f"  {message}", file=sys.stderr)


def getter(client: Client, url: str, expect: str, **headers):
    def get() -> None:
        response = client.get(url, **headers)
        assert response.status_code == 200, (url, response.status_code)
        assert expect.encode() in response.content, (url, expect)

    return get


def main() -> None:
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with override_settings(DEBUG=False, ALLOWED_HOSTS=["testserver"]):
            person = get_user_model().objects.create_user(username="bench-keys", password=None)
            start = time.perf_counter()
            big, small = build(person, BIG), build(person, SMALL)
            note(f"built {BIG:,} + {SMALL} tasks in {time.perf_counter() - start:.1f}s")
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")
            note(f"on {connection.vendor}")
            client = Client()
            client.force_login(person)
            urls = [
                reverse("datasets_app:dataset_metadata_keys", args=[d.pk]) for d in (big, small)
            ]
            wanted = 'value="category=category-0"'

            def first() -> None:
                cache.clear()
                found = metadata_keys.dataset_metadata_keys(big)
                assert [k.key for k in found][:1] == ["category"], found

            def read_all() -> None:
                assert len(list(big.tasks.live().values_list("metadata", flat=True))) == BIG

            ratio = median_ratio(first, read_all, rounds=ROUNDS, clock=time.perf_counter)
            start = time.perf_counter()
            first()
            note(f"metadata_keys_first: {(time.perf_counter() - start) * 1000:.0f} ms cold")
            print(
                f"bench metadata_keys_first: {ratio:.2f}x reading every task's metadata "
                f"(goal 1x) {verdict(ratio <= 1)}"
            )
            big_get, small_get = (getter(client, url, wanted, **HX) for url in urls)
            big_get(), small_get()  # worked out once, then cached
            ratio = median_ratio(big_get, small_get, rounds=ROUNDS, clock=time.perf_counter)
            print(
                f"bench metadata_keys: {ratio:.2f}x the 100-task request, cached "
                f"(goal 1.5x) {verdict(ratio <= 1.5)}"
            )
            pages = [
                getter(client, d.get_absolute_url(), 'list="metadata-choices"')
                for d in (big, small)
            ]
            ratio = median_ratio(*pages, rounds=ROUNDS, clock=time.perf_counter)
            print(f"bench metadata_keys_dataset_page: {ratio:.2f}x the 100-task page (no goal)")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
