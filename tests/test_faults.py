"""What the import dialog does when the machinery under it fails: the database connection
drops mid-import, the storage's disk fills up, the Celery broker is down.

Each fault must end in a message in the dialog, never a 500, with nothing half-written, and
the same import must succeed once the fault is gone.
"""

from __future__ import annotations

import errno
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.storage import FileSystemStorage
from django.db import connection, connections

from contextevals.celery import app as celery_app
from datasets_app.models import Task, TaskFile, Upload
from datasets_app.services import imports
from datasets_app.tasks import IMPORT_FAILED
from tests.test_import_views import EXPECTED, check, commit

FILE_BODIES = {
    "data/q1.csv": b"quarter,revenue\nQ1,10\n",
    "data/q2.csv": b"quarter,revenue\nQ2,12\n",
}


def zip_with_files() -> bytes:
    """Two tasks, each attaching one file from the zip: an import stores two files."""
    document = {
        "tasks": [
            {
                "id": f"sum-{number}",
                "prompt": f"Summarise {path}.",
                "expected": "A summary",
                "inputFiles": [path],
            }
            for number, path in enumerate(FILE_BODIES, start=1)
        ]
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dataset.json", json.dumps(document))
        for path, body in FILE_BODIES.items():
            archive.writestr(path, body)
    return buffer.getvalue()


def stored_task_files(settings) -> list[Path]:
    root = Path(settings.MEDIA_ROOT) / "task-files"
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


def assert_imported_with_files(dataset) -> None:
    tasks = list(dataset.tasks.live())
    assert [t.task_id for t in tasks] == ["t1", "sum-1", "sum-2"]
    bodies = {f.name: f.file.read() for f in TaskFile.objects.filter(task__dataset=dataset)}
    assert bodies == {"q1.csv": FILE_BODIES["data/q1.csv"], "q2.csv": FILE_BODIES["data/q2.csv"]}


# --- The database connection drops in the middle of an import -------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_dropped_database_connection_mid_import_writes_nothing_and_a_retry_imports(
    auth_client, make_dataset, monkeypatch, settings
):
    """PostgreSQL restarting (or a proxy dropping the connection) while the rows are being
    written: the server ends our backend from a second connection, the way a restart does,
    after the files are stored and inside the import's transaction."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite has no server connection to drop")
    dataset = make_dataset(tasks=1)
    check(auth_client, dataset, "set.zip", zip_with_files())
    upload = Upload.objects.get()
    write_plan = imports._write_plan
    dropped = []

    def drop_connection_then_write(**kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            (pid,) = cursor.fetchone()
        killer = connections.create_connection("default")
        try:
            with killer.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        finally:
            killer.close()
        dropped.append(pid)
        return write_plan(**kwargs)

    monkeypatch.setattr(imports, "_write_plan", drop_connection_then_write)
    response = commit(auth_client, dataset, upload)

    assert dropped, "the fault was injected"
    assert response.status_code == 200
    assert IMPORT_FAILED in response.content.decode()
    assert [t.task_id for t in Task.objects.all()] == ["t1"]
    assert not TaskFile.objects.exists()
    assert stored_task_files(settings) == []

    monkeypatch.setattr(imports, "_write_plan", write_plan)
    response = commit(auth_client, dataset, upload)
    assert response["HX-Redirect"] == dataset.get_absolute_url()
    assert_imported_with_files(dataset)


# --- The storage's disk fills up while the files of a zip are stored ------------------------


class DiskFillsUpStorage(FileSystemStorage):
    """Local storage whose disk is full from the `fail_at`-th task file on (0: never).

    With `partly_written`, the failing file is left behind half written, as Django's
    FileSystemStorage leaves it when the disk fills up during the write.
    """

    fail_at = 0
    partly_written = False
    task_files_saved = 0

    def _save(self, name: str, content) -> str:
        if name.startswith("task-files/"):
            type(self).task_files_saved += 1
            if self.fail_at and self.task_files_saved >= self.fail_at:
                if self.partly_written:
                    path = Path(self.path(name))
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(content.read(8))
                raise OSError(errno.ENOSPC, "No space left on device", name)
        return super()._save(name, content)


@pytest.fixture
def full_disk(settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": f"{__name__}.DiskFillsUpStorage"},
    }
    DiskFillsUpStorage.task_files_saved = 0
    DiskFillsUpStorage.fail_at = 2
    yield DiskFillsUpStorage
    DiskFillsUpStorage.fail_at = 0
    DiskFillsUpStorage.partly_written = False


@pytest.mark.django_db
def test_a_full_disk_mid_import_removes_the_files_already_stored_and_changes_nothing(
    auth_client, make_dataset, settings, full_disk
):
    dataset = make_dataset(tasks=1)
    check(auth_client, dataset, "set.zip", zip_with_files())
    upload = Upload.objects.get()

    response = commit(auth_client, dataset, upload)

    assert full_disk.task_files_saved == 2, "the first file was stored, the second failed"
    assert response.status_code == 200
    assert IMPORT_FAILED in response.content.decode()
    assert stored_task_files(settings) == []
    assert [t.task_id for t in Task.objects.all()] == ["t1"]
    assert not TaskFile.objects.exists()
    assert Upload.objects.get().state == Upload.State.CHECKED

    full_disk.fail_at = 0
    response = commit(auth_client, dataset, upload)
    assert response["HX-Redirect"] == dataset.get_absolute_url()
    assert_imported_with_files(dataset)


@pytest.mark.django_db
def test_a_full_disk_leaves_no_half_written_file_behind(
    auth_client, make_dataset, settings, full_disk
):
    full_disk.partly_written = True
    dataset = make_dataset(tasks=1)
    check(auth_client, dataset, "set.zip", zip_with_files())

    response = commit(auth_client, dataset, Upload.objects.get())

    assert IMPORT_FAILED in response.content.decode()
    assert stored_task_files(settings) == []


# --- The Celery broker (Redis) does not answer ----------------------------------------------


@pytest.fixture
def broker_down(settings, monkeypatch):
    """A broker URL nothing listens on (port 1 on the loopback refuses at once), not eager."""
    url = "redis://127.0.0.1:1/0"
    # The Celery app reads Django's settings once, on first use: keep what it has now (that
    # first use must come before the settings change), then tell it directly as well.
    saved = {
        key: celery_app.conf[key]
        for key in ("broker_url", "task_always_eager", "broker_connection_timeout")
    }
    settings.CELERY_BROKER_URL = url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    celery_app.conf.update(broker_url=url, task_always_eager=False, broker_connection_timeout=1)
    # The app keeps its connection and producer pools, made for the URL of their first use;
    # start without them, and afterwards put back what was there, so that no later test
    # sends to this dead broker (app.close() leaves an empty producer pool in place).
    monkeypatch.setattr(celery_app, "_pool", None)
    monkeypatch.setattr(celery_app.amqp, "_producer_pool", None)
    yield
    celery_app.conf.update(saved)


@pytest.mark.django_db
def test_with_the_broker_down_choosing_a_file_still_checks_it(
    auth_client, make_dataset, broker_down
):
    dataset = make_dataset()
    response = check(auth_client, dataset, "qa.json", EXPECTED)
    assert response.status_code == 200
    assert "Import 2 tasks" in response.content.decode()
    assert Upload.objects.get().state == Upload.State.CHECKED
