"""What the import dialog costs on the server, next to the work it cannot avoid.

- preview_render: rendering the preview of a checked, valid 1,000-task .json file (5 criteria
  a task, about 1.7 MB): the dialog's preview request through Django (read the checked
  upload, look for ids the dataset already has, render 1,000 rows), against
  `checker.check_file` on the same bytes. Goal: at most 1.5x.
- choose_file (no goal, for the record): the whole request that choosing the file makes
  (receive the 1.7 MB multipart body, keep and hash the upload, check it, store the outcome,
  render the preview), against the same check.
- import_queries: the SQL queries `services.imports.import_run` makes to import that file
  into a dataset on PostgreSQL. Goal: at most 25, and no more than for a 10-task file (the
  count must not grow with the number of tasks).
- import_time: `services.imports.import_run` (which checks the file again, as the commit's
  own check) against a bare `bulk_create` of the same Task and Criterion rows in one
  transaction. Goal: at most 2x.

It runs in a throwaway test database: on the PostgreSQL server of DATABASE_URL if set, else
on 127.0.0.1:5432 if it answers; without PostgreSQL the preview is measured on SQLite and the
two import figures say they were skipped. Each figure is the best of several repeats, taken
in turns with its reference. Where the time goes is printed to stderr.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
# Checks and imports run in-process (eager Celery), against local media storage.
from bench_django import setup  # noqa: E402

setup(database="contextevals_bench")

from bench_checker_json import dataset as bench_file  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.files.uploadedfile import SimpleUploadedFile  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402
from timing import median_ratio, median_time, verdict  # noqa: E402

from datasets_app import selectors  # noqa: E402
from datasets_app.importing import checker  # noqa: E402
from datasets_app.models import Criterion, Dataset, Task, TaskState, Upload  # noqa: E402
from datasets_app.services import datasets, imports  # noqa: E402

REPEATS = 5
TASKS = 1_000


def best(run: Callable[[], object]) -> float:
    return median_time(run, rounds=REPEATS)


def note(message: str) -> None:
    print(f"  {message}", file=sys.stderr)


def new_person(name: str):
    # One person per figure keeps each well under the per-person rate of checks.
    return get_user_model().objects.create_user(username=name, password=None)


def preview_render(data: bytes) -> None:
    person = new_person("bench-preview")
    dataset = datasets.dataset_create(owner=person, name="Preview bench")
    client = Client()
    client.force_login(person)
    url = reverse("datasets_app:import_check", args=[dataset.pk])

    def choose_the_file() -> None:
        file = SimpleUploadedFile("bench.json", data, content_type="application/json")
        response = client.post(url, {"file": file}, HTTP_HX_REQUEST="true")
        assert response.status_code == 200, response.status_code
        assert f"Import {TASKS:,} tasks" in response.content.decode(), response.content[:500]

    options = selectors.checker_options()
    choose_the_file()
    status_url = reverse(
        "datasets_app:import_status", args=[dataset.pk, Upload.objects.latest("pk").key]
    )

    def render_the_preview() -> None:
        response = client.get(status_url, HTTP_HX_REQUEST="true")
        assert f"Import {TASKS:,} tasks" in response.content.decode()

    ratio = median_ratio(
        render_the_preview,
        lambda: checker.check_file(data, "bench.json", options=options),
        rounds=REPEATS,
    )
    print(f"bench preview_render: {ratio:.1f}x check (goal 1.5x) {verdict(ratio <= 1.5)}")
    ratio = median_ratio(
        choose_the_file,
        lambda: checker.check_file(data, "bench.json", options=options),
        rounds=REPEATS,
    )
    print(f"bench choose_file: {ratio:.1f}x check (no goal)")

    # Where the request's time goes, from the same steps called directly.
    def keep_the_upload() -> Upload:
        file = SimpleUploadedFile("bench.json", data)
        return imports.upload_create(owner=person, dataset=dataset, uploaded_file=file)

    check = best(lambda: checker.check_file(data, "bench.json", options=options))
    request = best(choose_the_file)
    keep = best(keep_the_upload)
    upload = keep_the_upload()
    stored = best(lambda: imports.upload_check(upload=upload))
    result = checker.check_file(data, "bench.json", options=options)
    as_json = best(lambda: checker.result_to_json(result))
    outcome = {**checker.result_to_json(result), "notes": [], "dataset": {}}
    save = best(lambda: Upload.objects.filter(pk=upload.pk).update(result=outcome))
    note(
        f"upload_check: {stored * 1000:.0f} ms = check_file {check * 1000:.0f} ms + "
        f"result_to_json {as_json * 1000:.0f} ms + "
        f"writing the outcome ({len(json.dumps(outcome)) / 1e6:.1f} MB of JSON) "
        f"{save * 1000:.0f} ms + the rest {(stored - check - as_json - save) * 1000:.0f} ms"
    )
    note(
        f"choose_file: request {request * 1000:.0f} ms = keep the upload {keep * 1000:.0f} ms"
        f" + check and store the outcome {stored * 1000:.0f} ms (of which check_file "
        f"{check * 1000:.0f} ms) + read back and render {(request - keep - stored) * 1000:.0f} ms"
    )


def checked_upload(person, data: bytes, name: str = "bench.json") -> Upload:
    dataset = datasets.dataset_create(owner=person, name="Import bench")
    upload = imports.upload_create(
        owner=person, dataset=dataset, uploaded_file=SimpleUploadedFile(name, data)
    )
    return imports.upload_check(upload=upload)


def import_queries(person, data: bytes, small: bytes) -> None:
    counts = []
    for payload in (small, data):
        upload = checked_upload(person, payload)
        with CaptureQueriesContext(connection) as queries:
            imports.import_run(upload=upload, mode="add")
        counts.append(len(queries.captured_queries))
    few, many = counts
    ok = many <= 25 and many <= few
    print(f"bench import_queries: {many} (goal 25) {verdict(ok)}")
    note(f"import_queries: {few} for 10 tasks, {many} for {TASKS:,}")


def rows_of(person, data: bytes) -> Callable[[], None]:
    """A bare bulk_create of the rows the file makes: tasks, then their criteria."""
    plan = checker.check_file(data, "bench.json").plan
    tasks = [
        {
            "task_id": spec.id,
            "name": spec.name,
            "prompt": spec.prompt,
            "expected_text": spec.expected_text or "",
            "expected_verifier": spec.expected_verifier.to_json()
            if spec.expected_verifier
            else None,
            "evidence": {},
            "position": position,
            "state": TaskState.DRAFT,
        }
        for position, spec in enumerate(plan.tasks)
    ]
    criteria = [
        [
            {
                "criterion_id": c.id,
                "text": c.criterion,
                "weight": c.weight,
                "verifier": c.verifier.to_json() if c.verifier else None,
                "position": position,
            }
            for position, c in enumerate(spec.criteria)
        ]
        for spec in plan.tasks
    ]

    def bulk_create() -> None:
        dataset = Dataset.objects.create(owner=person, name="Bulk bench")
        with transaction.atomic():
            made = Task.objects.bulk_create(Task(dataset=dataset, **row) for row in tasks)
            Criterion.objects.bulk_create(
                Criterion(dataset=dataset, task=task, **row)
                for task, rows in zip(made, criteria, strict=True)
                for row in rows
            )

    return bulk_create


def import_time(person, data: bytes) -> None:
    uploads: list[Upload] = []

    def prepare() -> None:
        uploads.append(checked_upload(person, data))

    def run_import() -> None:
        imports.import_run(upload=uploads.pop(), mode="add")

    bulk_create = rows_of(person, data)
    # A fresh dataset and upload for each import, made outside the timed part.
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(REPEATS):
        prepare()
        for run, bucket in ((run_import, times[0]), (bulk_create, times[1])):
            start = time.perf_counter()
            run()
            bucket.append(time.perf_counter() - start)
    imported, bare = min(times[0]), min(times[1])
    ratio = imported / bare
    print(f"bench import_time: {ratio:.1f}x bulk_create (goal 2x) {verdict(ratio <= 2)}")

    upload = checked_upload(person, data)
    recheck = best(lambda: imports._check(upload, first_task_number=1))
    note(
        f"import_time: import_run {imported * 1000:.0f} ms, of which the commit's own check "
        f"{recheck * 1000:.0f} ms; bare bulk_create {bare * 1000:.0f} ms; without the check "
        f"{(imported - recheck) / bare:.1f}x"
    )


def main() -> None:
    data = bench_file(broken_last_task=False)
    document = json.loads(data)
    document["tasks"] = document["tasks"][:10]
    small = json.dumps(document).encode()

    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        # Not setup_test_environment(): it instruments every template render for the test
        # client's benefit, which would be counted in the preview's time. DEBUG off as served.
        with (
            tempfile.TemporaryDirectory(prefix="bench-import-") as media,
            override_settings(MEDIA_ROOT=media, DEBUG=False, ALLOWED_HOSTS=["testserver"]),
        ):
            preview_render(data)
            if connection.vendor != "postgresql":
                print("bench import_queries: skipped (no PostgreSQL)")
                print("bench import_time: skipped (no PostgreSQL)")
                return
            person = new_person("bench-import")
            import_queries(person, data, small)
            import_time(person, data)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
