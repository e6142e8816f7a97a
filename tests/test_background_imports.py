"""Checking and importing as background jobs, on the eager path the ordinary suite runs:
progress a poller sees, all-or-nothing with stored files, redelivered tasks, clean-up and
the task file download."""

from __future__ import annotations

import io
import json
import random
import zipfile

import pytest
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from datasets_app import tasks
from datasets_app.importing import checker
from datasets_app.models import TaskFile, Upload
from datasets_app.services import imports

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def dataset_zip(tasks_files: dict[str, list[tuple[str, bytes]]]) -> bytes:
    """A .zip whose dataset.json has one task per key, attaching the files listed."""
    buffer = io.BytesIO()
    document = {"tasks": []}
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for task_id, files in tasks_files.items():
            for name, data in files:
                archive.writestr(f"files/{task_id}/{name}", data)
            document["tasks"].append(
                {
                    "id": task_id,
                    "prompt": f"Read the files of {task_id}.",
                    "expected": "ok",
                    "inputFiles": [f"files/{task_id}/{name}" for name, _ in files],
                }
            )
        archive.writestr("dataset.json", json.dumps(document))
    return buffer.getvalue()


def checked_upload(user, dataset, name: str, data: bytes) -> Upload:
    upload = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=SimpleUploadedFile(name, data)
    )
    tasks.check_upload(upload.pk)
    upload.refresh_from_db()
    return upload


def start_import(upload: Upload, mode: str = "add") -> Upload:
    """What the Import button does: claim the upload, then run the task."""
    Upload.objects.filter(pk=upload.pk).update(state=Upload.State.IMPORTING, mode=mode)
    tasks.import_upload(upload.pk, mode)
    upload.refresh_from_db()
    return upload


THREE = {
    "a": [("one.csv", b"x,y\n1,2\n"), ("two.pdf", b"%PDF-1.4 two")],
    "b": [("three.bin", b"\x00\x01" * 5000)],
    "c": [],
}


def test_a_zip_check_reports_each_task_whose_files_are_read():
    seen: list[tuple[int, int]] = []
    result = checker.check_file(
        dataset_zip(THREE), "set.zip", progress=lambda d, t: seen.append((d, t))
    )
    assert result.ok
    assert seen[0] == (1, 3), "a task with no files is done before any file is read"
    assert seen[-1] == (3, 3)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_the_dialog_shows_progress_with_thousands_separators(auth_client, make_dataset, user):
    dataset = make_dataset()
    upload = checked_upload(user, dataset, "set.zip", dataset_zip(THREE))
    url = reverse("datasets_app:import_status", args=[dataset.pk, upload.key])

    Upload.objects.filter(pk=upload.pk).update(
        state=Upload.State.CHECKING, progress_done=420, progress_total=1000
    )
    page = auth_client.get(url, **HTMX).content.decode()
    assert "Checking… 420 of 1,000 tasks" in page
    assert 'hx-trigger="load delay:1s"' in page, "it keeps polling"

    Upload.objects.filter(pk=upload.pk).update(
        state=Upload.State.IMPORTING, progress_done=3, progress_total=12
    )
    page = auth_client.get(url, **HTMX).content.decode()
    assert "Importing… 3 of 12 files stored" in page


def test_a_finished_import_sends_the_poller_to_the_dataset_page(auth_client, make_dataset, user):
    dataset = make_dataset()
    upload = start_import(checked_upload(user, dataset, "set.zip", dataset_zip(THREE)))
    assert upload.state == Upload.State.IMPORTED
    url = reverse("datasets_app:import_status", args=[dataset.pk, upload.key])
    response = auth_client.get(url, **HTMX)
    assert response["HX-Redirect"] == dataset.get_absolute_url()
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Imported 3 tasks as drafts. Check them, then Save as v1." in page


class WatchingStorage(FileSystemStorage):
    """Local storage that notes, at each file it stores, the progress a poller would read,
    and every read of the member's stream (a whole read would be `read()` or `read(-1)`)."""

    progress: list[tuple[int, int]] = []
    reads: list[int | None] = []

    def _save(self, name, content):
        if not name.startswith("task-files/"):
            return super()._save(name, content)  # the upload itself
        row = Upload.objects.values_list("progress_done", "progress_total").get()
        WatchingStorage.progress.append(row)
        return super()._save(name, File(_Reads(content.file), name=content.name))


class _Reads(io.RawIOBase):
    def __init__(self, stream):
        self._stream = stream

    def read(self, size=-1):
        WatchingStorage.reads.append(size)
        return self._stream.read(size)


@pytest.fixture
def watching_storage(settings):
    WatchingStorage.progress = []
    WatchingStorage.reads = []
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "tests.test_background_imports.WatchingStorage",
            "OPTIONS": {"location": settings.MEDIA_ROOT},
        },
    }


def test_an_import_streams_each_file_and_reports_files_stored(
    make_dataset, user, monkeypatch, watching_storage
):
    monkeypatch.setattr(imports, "PROGRESS_EVERY_SECONDS", 0)
    dataset = make_dataset()
    four_mib = random.Random(6).randbytes(4 * 1024 * 1024)
    files = {**THREE, "big": [("big.bin", four_mib)]}
    upload = start_import(checked_upload(user, dataset, "set.zip", dataset_zip(files)))

    assert upload.state == Upload.State.IMPORTED
    assert WatchingStorage.progress == [(0, 4), (1, 4), (2, 4), (3, 4)]
    assert (upload.progress_done, upload.progress_total) == (4, 4)
    assert all(size is not None and 0 < size <= 1024 * 1024 for size in WatchingStorage.reads)
    big = TaskFile.objects.get(name="big.bin")
    assert big.size == len(four_mib)
    assert big.file.read() == four_mib


def test_a_failed_import_leaves_the_dataset_and_the_storage_as_they_were(
    make_dataset, user, monkeypatch
):
    dataset = make_dataset(tasks=1)
    upload = checked_upload(user, dataset, "set.zip", dataset_zip(THREE))
    saved: list[str] = []
    real_save = FileSystemStorage.save

    def save_then_fail(storage, name, content, **kwargs):
        if len(saved) == 2:
            raise OSError("disk full")
        saved.append(real_save(storage, name, content, **kwargs))
        return saved[-1]

    monkeypatch.setattr(FileSystemStorage, "save", save_then_fail)
    upload = start_import(upload)

    assert upload.state == Upload.State.CHECKED
    assert upload.error == tasks.IMPORT_FAILED
    assert [t.task_id for t in dataset.tasks.all()] == ["t1"]
    assert len(saved) == 2 and not any(default_storage.exists(name) for name in saved)


def test_a_redelivered_import_after_a_success_imports_nothing_more(make_dataset, user):
    dataset = make_dataset()
    upload = start_import(checked_upload(user, dataset, "set.zip", dataset_zip(THREE)))
    files = set(TaskFile.objects.values_list("file", flat=True))
    tasks.import_upload(upload.pk, "add")  # the broker hands the same message out again
    assert dataset.tasks.count() == 3
    assert set(TaskFile.objects.values_list("file", flat=True)) == files


def test_a_rerun_after_a_killed_import_imports_once_and_the_leftovers_are_cleaned(
    make_dataset, user
):
    dataset = make_dataset()
    upload = checked_upload(user, dataset, "set.zip", dataset_zip(THREE))
    # What a worker killed while storing files leaves: the upload still "importing", and a
    # file in its own run folder that no task points to.
    Upload.objects.filter(pk=upload.pk).update(state=Upload.State.IMPORTING)
    dead = f"{imports.task_files_folder(upload)}/deadrun/0/one.csv"
    default_storage.save(dead, io.BytesIO(b"half"))

    tasks.import_upload(upload.pk, "add")  # the redelivered message
    upload.refresh_from_db()
    assert upload.state == Upload.State.IMPORTED
    assert dataset.tasks.count() == 3
    kept = list(TaskFile.objects.exclude(file="").values_list("file", flat=True))
    assert len(kept) == 3

    Upload.objects.update(expires_at=timezone.now())
    assert imports.uploads_delete_expired() == 1
    assert not default_storage.exists(dead)
    assert all(default_storage.exists(name) for name in kept)


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("two.pdf", "application/pdf"),
        ("one.csv", "text/csv"),
        ("three.bin", "application/octet-stream"),
        ("page.html", "text/html"),
    ],
)
def test_the_task_page_serves_stored_files_as_downloads_with_their_type(
    auth_client, make_dataset, user, name, content_type
):
    dataset = make_dataset()
    data = b"<script>alert(1)</script>" if name.endswith(".html") else b"bytes of " + name.encode()
    upload = checked_upload(user, dataset, "set.zip", dataset_zip({"a": [(name, data)]}))
    start_import(upload)
    stored = TaskFile.objects.get()
    response = auth_client.get(
        reverse("datasets_app:task_file_download", args=[dataset.pk, stored.task_id, stored.pk])
    )
    assert response["Content-Disposition"] == f'attachment; filename="{name}"'
    assert response["Content-Type"] == content_type
    assert response["X-Content-Type-Options"] == "nosniff"
    assert b"".join(response.streaming_content) == data


@pytest.mark.django_db
def test_the_clean_up_command_removes_expired_uploads_and_their_files(user):
    upload = Upload(owner=user, original_name="old.json", size=2, sha256="0" * 64)
    upload.file.save("old.json", ContentFile(b"{}"), save=False)
    upload.problems_file.save("problems.csv", ContentFile(b"problem\n"), save=False)
    upload.expires_at = timezone.now()
    upload.save()
    stored = [upload.file.name, upload.problems_file.name]
    out = io.StringIO()
    call_command("delete_expired_uploads", stdout=out)
    assert out.getvalue().strip() == "Deleted 1 expired upload."
    assert not Upload.objects.exists()
    assert not any(default_storage.exists(name) for name in stored)


# --- Time limits (issue 15, item 1) ------------------------------------------------------

TOO_SLOW = checker.CHECK_TOO_SLOW.format(seconds=120)


def test_every_upload_task_has_a_soft_and_a_hard_time_limit_within_the_visibility_timeout(
    settings,
):
    from contextevals.celery import app

    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    ours = [task for name, task in app.tasks.items() if name.startswith("datasets_app.")]
    assert {tasks.check_upload.name, tasks.delete_expired_uploads.name} <= {t.name for t in ours}
    for task in ours:
        # A task without limits of its own has the app's (task_soft_time_limit, ...).
        soft = task.soft_time_limit or app.conf.task_soft_time_limit
        hard = task.time_limit or app.conf.task_time_limit
        assert 0 < soft < hard < visibility, task.name
    assert tasks.check_upload.soft_time_limit == settings.CHECK_TIME_LIMIT_SECONDS


def test_a_check_past_its_soft_time_limit_is_a_problem_the_person_reads(
    auth_client, make_dataset, user, monkeypatch
):
    from celery.exceptions import SoftTimeLimitExceeded

    dataset = make_dataset()

    def slow_check(*, upload):
        raise SoftTimeLimitExceeded  # what Celery raises in the task at the soft limit

    monkeypatch.setattr(imports, "upload_check", slow_check)
    upload = checked_upload(user, dataset, "huge.xlsx", b"PK\x03\x04")

    assert upload.state == Upload.State.CHECKED
    assert [p["message"] for p in upload.result["problems"]] == [TOO_SLOW]
    page = auth_client.get(
        reverse("datasets_app:import_status", args=[dataset.pk, upload.key])
    ).content.decode()
    assert "This file took too long to check (more than 120 seconds)" in page
    download = auth_client.get(reverse("datasets_app:upload_problems", args=[upload.key]))
    assert "took too long to check" in download.content.decode("utf-8-sig")


def test_a_check_killed_at_its_hard_time_limit_is_the_same_problem(make_dataset, user):
    from celery.exceptions import TimeLimitExceeded

    dataset = make_dataset()
    upload = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=SimpleUploadedFile("huge.xlsx", b"PK")
    )

    # The worker's main process calls this once it has killed the process running the task.
    tasks.check_upload.on_failure(TimeLimitExceeded(150), "task-id", (upload.pk,), {}, None)

    upload.refresh_from_db()
    assert upload.state == Upload.State.CHECKED
    assert [p["message"] for p in upload.result["problems"]] == [TOO_SLOW]


def test_an_import_past_its_soft_time_limit_writes_nothing_and_says_so(
    make_dataset, user, monkeypatch
):
    from celery.exceptions import SoftTimeLimitExceeded

    dataset = make_dataset()
    upload = checked_upload(user, dataset, "set.zip", dataset_zip(THREE))

    def slow_write(**kwargs):
        raise SoftTimeLimitExceeded

    monkeypatch.setattr(imports, "_write_plan", slow_write)
    upload = start_import(upload)

    assert upload.state == Upload.State.CHECKED
    assert upload.error.startswith("The import took too long (more than 15 minutes)")
    assert not dataset.tasks.exists()
    assert not TaskFile.objects.exists()
    assert default_storage.listdir(imports.task_files_folder(upload))[1] == []
