"""The same work at 1,000, 10,000 and 100,000 tasks (x 5 criteria): pages stay flat, saves,
imports and exports grow with what they write, and memory stays bounded (issue 24).

Each dataset is built through the app's bulk writer (COPY on PostgreSQL), as
`bench_scale_pages.build` does, then saved as v1, the tables vacuumed as autovacuum would.
Every figure is a ratio of two sizes measured side by side in the same run
(`timing.median_ratio`, alternating rounds, the wall clock: the database server does part
of the work):

- dataset_page, version_page: the first page of each, against the same page at 1,000
  tasks. Goal: at most 1.5x (flat).
- import: a 1,000-task x 5-criteria .json file added to the dataset (`imports.import_run`,
  rolled back each round), against adding it to the 1,000-task one. Goal: at most 1.5x (an
  import costs what it writes, not the size of the dataset it goes into).
- save_version: saving every draft as a version (`datasets.version_save`, rolled back each
  round, from vacuumed tables), against saving the dataset ten times smaller. Goal: at most
  15x for ten times the tasks (linear: at most 1.5x a task).
- export_json, export_csv, export_zip: the saved version downloaded as the app builds it
  (`exporting.export` of `selectors.version_spec_streamed`), against the same at ten times
  fewer tasks. Goal: at most 15x (linear). export_memory: the peak of Python memory
  (tracemalloc) while each is built, at every size. Goal: at most 64 MiB. The .xlsx export
  is measured at 10,000 tasks by bench_scale_io (openpyxl writes 100,000 rows in a minute
  a round, too slow for alternating rounds here).

It runs in a throwaway database on the PostgreSQL server of DATABASE_URL (else
127.0.0.1:5432 if it answers); on SQLite, where there is no COPY, the figures say they were
skipped. BENCH_SIZES=1000,10000 runs the smaller sizes only. Run:
`.venv/bin/python bench/bench_scale_sizes.py` (also in `make bench`).
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
# bench_scale_io sets Django up (its own settings, no broker, no judge).
from bench_scale_io import bench_file, checked_upload, note, rolled_back, vacuum  # noqa: E402
from bench_scale_pages import build, getter  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from timing import median_ratio, verdict  # noqa: E402

from datasets_app import exporting, selectors  # noqa: E402
from datasets_app.models import Dataset, Upload, Version  # noqa: E402
from datasets_app.services import datasets, imports  # noqa: E402

SIZES = tuple(int(size) for size in os.environ.get("BENCH_SIZES", "1000,10000,100000").split(","))
ROUNDS = 9
# Flat: at most 1.5x. Linear: at most 1.5x the time a task (15x for ten times the tasks).
FLAT = 1.5
MAX_MIB = 64
EXPORTS = ("json", "csv", "zip")
NAMES = (
    "dataset_page",
    "version_page",
    "import",
    "save_version",
    *(f"export_{slug}" for slug in EXPORTS),
    "export_memory",
)


def ratio_line(name: str, ratio: float, goal: float, against: str) -> None:
    print(f"bench scale {name}: {ratio:.2f}x {against} (goal {goal:g}x) {verdict(ratio <= goal)}")


def pages(client: Client, sets: dict[int, tuple[Dataset, Version]]) -> None:
    small, small_version = sets[SIZES[0]]
    for size, (dataset, version) in sets.items():
        if size == SIZES[0]:
            continue
        for name, url, base in (
            ("dataset_page", dataset.get_absolute_url(), small.get_absolute_url()),
            ("version_page", version.get_absolute_url(), small_version.get_absolute_url()),
        ):
            big_page, small_page = getter(client, url), getter(client, base)
            big_page(), small_page()  # the first view of a version caches its notes
            ratio = median_ratio(big_page, small_page, rounds=ROUNDS, clock=time.perf_counter)
            ratio_line(f"{name} at {size:,}", ratio, FLAT, f"the page at {SIZES[0]:,} tasks")


def imports_into(person, sets: dict[int, tuple[Dataset, Version]], data: bytes) -> None:
    def adding(dataset: Dataset) -> Callable[[], None]:
        upload = checked_upload(person, dataset, data)
        assert upload.result["ok"], upload.result["problems"][:3]
        return rolled_back(
            lambda: imports.import_run(upload=Upload.objects.get(pk=upload.pk), mode="add")
        )

    small = adding(sets[SIZES[0]][0])
    for size in SIZES[1:]:
        ratio = median_ratio(adding(sets[size][0]), small, rounds=ROUNDS, clock=time.perf_counter)
        against = f"adding it to {SIZES[0]:,} tasks"
        ratio_line(f"import of 1,000 tasks into {size:,}", ratio, FLAT, against)


def saves(person, drafts: dict[int, Dataset]) -> None:
    for smaller, size in itertools.pairwise(SIZES):
        ours, theirs = (
            rolled_back(lambda d=drafts[n]: datasets.version_save(dataset=d, user=person))
            for n in (size, smaller)
        )
        ratio = median_ratio(ours, theirs, rounds=ROUNDS, clock=time.perf_counter, before=vacuum)
        ratio_line(f"save_version at {size:,}", ratio, FLAT * size / smaller, f"at {smaller:,}")


def exports(sets: dict[int, tuple[Dataset, Version]]) -> None:
    peaks: dict[tuple[str, int], float] = {}
    for slug in EXPORTS:
        fmt = exporting.export_format(slug)
        assert fmt is not None

        def building(version: Version, fmt=fmt) -> Callable[[], None]:
            return lambda: exporting.export(selectors.version_spec_streamed(version), fmt).close()

        for size, (_dataset, version) in sets.items():
            tracemalloc.start()
            building(version)()
            peaks[slug, size] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        for smaller, size in itertools.pairwise(SIZES):
            ours, theirs = building(sets[size][1]), building(sets[smaller][1])
            ratio = median_ratio(ours, theirs, rounds=ROUNDS, clock=time.perf_counter)
            goal = FLAT * size / smaller
            ratio_line(f"export_{slug} at {size:,}", ratio, goal, f"at {smaller:,}")
    worst = max(peaks, key=peaks.__getitem__)
    shown = f"{peaks[worst]:.1f} MiB ({worst[0]} at {worst[1]:,} tasks)"
    ok = peaks[worst] <= MAX_MIB
    print(f"bench scale export_memory: {shown} (goal {MAX_MIB} MiB) {verdict(ok)}")
    note(", ".join(f"{slug} at {size:,}: {mib:.1f} MiB" for (slug, size), mib in peaks.items()))


def main() -> None:
    if connection.vendor != "postgresql":
        for name in NAMES:
            print(f"bench scale {name}: skipped (no PostgreSQL)")
        return
    connection.settings_dict["TEST"]["NAME"] = f"bench_scale_sizes_{os.getpid()}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-scale-sizes-") as media,
            # The largest dataset plus the imported file is past the 100,000 a dataset holds.
            override_settings(
                MEDIA_ROOT=media,
                DEBUG=False,
                ALLOWED_HOSTS=["testserver"],
                MAX_TASKS_PER_DATASET=max(SIZES) + 1_000,
            ),
        ):
            person = get_user_model().objects.create_user(username="bench-sizes", password=None)
            started = time.perf_counter()
            # Rubric tasks: an answer task would be made a rubric by the imported file's
            # criteria for every task, which is a change of every task, not an import's cost.
            drafts = {size: build(person, size, expected=False) for size in SIZES}
            # As autovacuum leaves a table after a large insert: counted from the index alone
            # (a count over rows never vacuumed reads the table, 60 ms at 100,000 tasks).
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
            note(
                f"built {', '.join(f'{s:,}' for s in SIZES)} tasks x 5 in "
                f"{time.perf_counter() - started:.1f} s"
            )
            saves(person, drafts)
            sets = {
                size: (dataset, datasets.version_save(dataset=dataset, user=person))
                for size, dataset in drafts.items()
            }
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
            client = Client()
            client.force_login(person)
            pages(client, sets)
            imports_into(person, sets, bench_file(broken_last_task=False))
            exports(sets)
            note(f"all sizes in {time.perf_counter() - started:.0f} s")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
