"""What writing and reading a large dataset costs, next to the least work it could be.

- import_scale: importing a 1,000-task x 5-criteria .json file (Add) into a dataset of
  9,000 tasks x 5 criteria with `services.imports.import_run`, against its floor: checking
  the same file (`checker.check_file`) plus a bare COPY of the rows it makes (tasks and
  criteria, keys reserved from the sequences). Goal: at most 3x.
- import_scale_queries: the SQL statements that import makes (each COPY counted as one).
  Goal: at most 25, and no more than importing a 10-task file.

- export_json, export_csv, export_zip: a saved version of 10,000 tasks x 5 criteria
  downloaded as the app builds it (`exporting.export` of `selectors.version_spec_streamed`:
  its rows read from the database a chunk at a time and written as they come), against the
  writer alone on the same content held in memory: `json.dumps` of its document,
  `csv.writer` of its rows, `zipfile` of its dataset.json. Goal: at most 3x.
- export_xlsx: the same against openpyxl's write-only mode writing the same cells. Goal: at
  most 1.5x.
- export_memory: the peak of Python memory (tracemalloc) while each export is built.
  Goal: at most 64 MiB for every format.

- save_version: saving 10,000 drafts x 5 criteria as v1 (`services.datasets.version_save`)
  against a COPY of those tasks and criteria. Goal: at most 2x. Then v2 after one task
  changed, for the record: a version holds its tasks' rows and shares those saved
  unchanged, so v2 writes the one changed task and a list of keys (migration 0015).

Each ratio is the median of alternating rounds (`timing.median_ratio`) on the wall clock:
the database server does part of the work, which this process's CPU time would not see.
Each import runs in a transaction that is then rolled back, so every round imports the same
upload into the same 9,000 tasks. It runs in a throwaway database on the PostgreSQL server
of DATABASE_URL (else 127.0.0.1:5432 if it answers); on SQLite, where there is no COPY, the
figures say they were skipped. Where the time goes is printed to stderr.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from bench_django import setup  # noqa: E402

setup(database="contextevals_bench")

from bench_checker_json import dataset as bench_file  # noqa: E402
from bench_scale_pages import build  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.files.uploadedfile import SimpleUploadedFile  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from openpyxl import Workbook  # noqa: E402
from timing import median_ratio, median_time, verdict  # noqa: E402

from datasets_app import exporting, selectors  # noqa: E402
from datasets_app.importing import checker, columns, json_format  # noqa: E402
from datasets_app.importing.spec import DatasetSpec  # noqa: E402
from datasets_app.models import Dataset, Upload, Version  # noqa: E402
from datasets_app.services import datasets, imports  # noqa: E402

ROUNDS = 9


def note(message: str) -> None:
    print(f"  {message}", file=sys.stderr)


def rolled_back(run: Callable[[], object]) -> Callable[[], None]:
    """`run` in a transaction that is rolled back: the next round finds the same rows."""

    def once() -> None:
        with transaction.atomic():
            run()
            transaction.set_rollback(True)

    return once


def copy_floor(dataset: Dataset, plan: DatasetSpec) -> Callable[[], None]:
    """A bare COPY of the plan's task and criterion rows, values ready."""
    now = "2026-01-01T00:00:00+00:00"
    tasks = [
        (
            dataset.pk,
            spec.id,
            spec.name,
            spec.prompt,
            spec.expected_text or "",
            None,
            position,
            "draft",
            "{}",
            "{}",
            now,
            now,
        )
        for position, spec in enumerate(plan.tasks)
    ]
    criteria = [
        [
            (dataset.pk, c.id, c.criterion, c.weight, None, position, False)
            for position, c in enumerate(spec.criteria)
        ]
        for spec in plan.tasks
    ]
    task_columns = (
        "dataset_id, task_id, name, prompt, expected_text, expected_verifier, position, "
        "state, evidence, metadata, created_at, updated_at"
    )
    criterion_columns = "dataset_id, criterion_id, text, weight, verifier, position, archived"

    def copy() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence('datasets_app_task', 'id')) "
                "FROM generate_series(1, %s)",
                [len(tasks)],
            )
            keys = [key for (key,) in cursor.fetchall()]
            raw = cursor.cursor
            with raw.copy(f"COPY datasets_app_task (id, {task_columns}) FROM STDIN") as out:
                for key, row in zip(keys, tasks, strict=True):
                    out.write_row((key, *row))
            sql = f"COPY datasets_app_criterion (task_id, {criterion_columns}) FROM STDIN"
            with raw.copy(sql) as out:
                for key, rows in zip(keys, criteria, strict=True):
                    for row in rows:
                        out.write_row((key, *row))

    return copy


def checked_upload(person, dataset: Dataset, data: bytes) -> Upload:
    upload = imports.upload_create(
        owner=person, dataset=dataset, uploaded_file=SimpleUploadedFile("bench.json", data)
    )
    return imports.upload_check(upload=upload)


def import_scale(person, data: bytes, small: bytes) -> None:
    # Rubric tasks: an answer task would be made a rubric by the file's criteria for every
    # task, which is a change of every task, not an import's cost.
    dataset = build(person, 9_000, expected=False)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    upload = checked_upload(person, dataset, data)
    options = selectors.checker_options()

    def run_import() -> None:
        imports.import_run(upload=Upload.objects.get(pk=upload.pk), mode="add")

    ours = rolled_back(run_import)
    plan = checker.check_file(data, "bench.json").plan
    assert plan is not None
    copy = copy_floor(dataset, plan)

    def floor() -> None:
        checker.check_file(data, "bench.json", options=options)
        rolled_back(copy)()

    ratio = median_ratio(ours, floor, rounds=ROUNDS, clock=time.perf_counter)
    print(f"bench import_scale: {ratio:.2f}x check + COPY (goal 3x) {verdict(ratio <= 3)}")
    ours_time = median_time(ours, rounds=ROUNDS, clock=time.perf_counter)
    check_time = median_time(
        lambda: checker.check_file(data, "bench.json", options=options), clock=time.perf_counter
    )
    copy_time = median_time(rolled_back(copy), clock=time.perf_counter)
    recheck = median_time(
        lambda: imports._check(upload, first_task_number=1), clock=time.perf_counter
    )
    note(
        f"import_scale: import_run {ours_time * 1000:.0f} ms (its own check of the stored "
        f"file {recheck * 1000:.0f} ms); floor: check_file {check_time * 1000:.0f} ms + "
        f"COPY {copy_time * 1000:.0f} ms"
    )

    counts = []
    for payload in (small, data):
        small_upload = checked_upload(person, dataset, payload)
        with transaction.atomic(), CaptureQueriesContext(connection) as queries:
            imports.import_run(upload=small_upload, mode="add")
            transaction.set_rollback(True)
        counts.append(len(queries.captured_queries))
    few, many = counts
    ok = many <= 25 and many <= few
    print(f"bench import_scale_queries: {many} (goal 25) {verdict(ok)}")
    note(f"import_scale_queries: {few} for 10 tasks, {many} for 1,000")


EXPORT_TASKS = 10_000
# BENCH_PARTS=exports (or imports) runs only those figures, with the save's.
PARTS = os.environ.get("BENCH_PARTS", "imports,exports").split(",")
MAX_EXPORT_MIB = 64


def export_floors(spec) -> dict[str, Callable[[], object]]:
    """Each format's writer alone, on the version's content already in memory."""
    document = json_format.to_document(spec)
    header, rows, _warnings = columns.rows_from_spec(spec)
    data = json_format.write(spec)

    def as_json() -> None:
        json.dumps(document, indent=2, ensure_ascii=False)

    def as_csv() -> None:
        writer = csv.writer(io.StringIO(newline=""), lineterminator="\r\n")
        writer.writerow(header)
        writer.writerows(rows)

    def as_zip() -> None:
        with zipfile.ZipFile(io.BytesIO(), "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("dataset.json", data)

    def as_xlsx() -> None:
        workbook = Workbook(write_only=True)
        sheet = workbook.create_sheet("Tasks")
        sheet.append(header)
        for row in rows:
            sheet.append(row)
        workbook.save(io.BytesIO())

    return {"json": as_json, "csv": as_csv, "zip": as_zip, "xlsx": as_xlsx}


def vacuum() -> None:
    """The tables a save writes, as autovacuum leaves them (outside any transaction)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "VACUUM datasets_app_task, datasets_app_criterion, datasets_app_version_tasks"
        )


def saves(person) -> Version:
    """Saving 10,000 drafts as v1, against a COPY of its tasks and criteria; then, the
    figure saving aims at, v2 after one task changed (no goal, for the record)."""
    dataset = build(person, EXPORT_TASKS)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    # Into a dataset of its own: the same ids, where the unique constraint lets them be.
    elsewhere = datasets.dataset_create(owner=person, name="COPY floor")
    copy = rolled_back(copy_floor(elsewhere, selectors.dataset_spec(dataset=dataset)))
    ours = rolled_back(lambda: datasets.version_save(dataset=dataset, user=person))
    # A save rolled back leaves 10,000 dead row versions of the tasks it made saved, which
    # the next round's UPDATE wades through (round after round: 0.7 s, 1.3 s, ... 9 s),
    # where a save that commits is followed by autovacuum. Each round starts vacuumed.
    ratio = median_ratio(ours, copy, rounds=ROUNDS, clock=time.perf_counter, before=vacuum)
    shown = f"{ratio:.2f}x a COPY of its tasks and criteria"
    print(f"bench save_version: {shown} (goal 2x) {verdict(ratio <= 2)}")
    ours_time = median_time(ours, clock=time.perf_counter, before=vacuum)
    copy_time = median_time(copy, clock=time.perf_counter, before=vacuum)
    version = datasets.version_save(dataset=dataset, user=person)
    task = dataset.tasks.get(task_id="task-000007")
    spec = replace(selectors.task_spec(task), prompt="Changed.")
    datasets.task_save(dataset=dataset, task=task, spec=spec)
    again = median_time(
        rolled_back(lambda: datasets.version_save(dataset=dataset, user=person)),
        clock=time.perf_counter,
        before=vacuum,
    )
    note(
        f"save_version: v1 of {EXPORT_TASKS:,} drafts {ours_time * 1000:.0f} ms, COPY "
        f"{copy_time * 1000:.0f} ms; v2 after one task changed {again * 1000:.0f} ms"
    )
    return version


def exports(version: Version) -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    floors = export_floors(selectors.version_spec(version))
    peaks = {}
    for slug, goal in (("json", 3), ("csv", 3), ("zip", 3), ("xlsx", 1.5)):
        fmt = exporting.export_format(slug)
        assert fmt is not None

        def ours(fmt=fmt) -> None:
            stream = exporting.export(selectors.version_spec_streamed(version), fmt)
            stream.close()

        ratio = median_ratio(ours, floors[slug], rounds=ROUNDS, clock=time.perf_counter)
        name = "openpyxl write_only" if slug == "xlsx" else f"its writer alone ({slug})"
        print(f"bench export_{slug}: {ratio:.2f}x {name} (goal {goal}x) {verdict(ratio <= goal)}")
        tracemalloc.start()
        ours()
        peaks[slug] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        ours_time = median_time(ours, clock=time.perf_counter)
        floor_time = median_time(floors[slug], clock=time.perf_counter)
        note(
            f"export_{slug}: {ours_time * 1000:.0f} ms against {floor_time * 1000:.0f} ms, "
            f"peak {peaks[slug]:.1f} MiB"
        )
    worst = max(peaks, key=peaks.__getitem__)
    shown = f"{peaks[worst]:.1f} MiB ({worst}) at {EXPORT_TASKS:,} tasks"
    ok = peaks[worst] <= MAX_EXPORT_MIB
    print(f"bench export_memory: {shown} (goal {MAX_EXPORT_MIB} MiB) {verdict(ok)}")


def main() -> None:
    data = bench_file(broken_last_task=False)
    document = json.loads(data)
    document["tasks"] = document["tasks"][:10]
    small = json.dumps(document).encode()
    if connection.vendor != "postgresql":
        for name in (
            "import_scale",
            "import_scale_queries",
            "export_json",
            "export_csv",
            "export_zip",
            "export_xlsx",
            "export_memory",
        ):
            print(f"bench {name}: skipped (no PostgreSQL)")
        return
    connection.settings_dict["TEST"]["NAME"] = f"bench_scale_io_{os.getpid()}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-scale-io-") as media,
            override_settings(MEDIA_ROOT=media, DEBUG=False, ALLOWED_HOSTS=["testserver"]),
        ):
            person = get_user_model().objects.create_user(username="bench-io", password=None)
            if "imports" in PARTS:
                import_scale(person, data, small)
            version = saves(person)
            if "exports" in PARTS:
                exports(version)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
