"""Imports through a real Celery worker on the Redis at 127.0.0.1:6379 (CI has one): the
tasks and files land, and a worker killed mid-import leaves the dataset as it was and the
redelivered task imports once. Skipped, with the reason shown, when no Redis answers."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import DEFAULT_DB_ALIAS, connection, connections

from contextevals.celery import app
from datasets_app import selectors, tasks
from datasets_app.models import TaskFile, Upload
from datasets_app.services import imports
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.redis, pytest.mark.slow]

REDIS = ("127.0.0.1", 6379)
# A database number of its own, and a queue per test: runs on one Redis never mix.
BROKER_URL = "redis://127.0.0.1:6379/13"
FILES = 20


def _redis_answers() -> bool:
    try:
        socket.create_connection(REDIS, timeout=1).close()
    except OSError:
        return False
    return True


@pytest.fixture
def shared_db(transactional_db, tmp_path) -> Iterator[str]:
    """A DATABASE_URL the worker can open: PostgreSQL's test database as it is, or SQLite's
    in-memory test database copied to a file that both processes then use."""
    settings_dict = connection.settings_dict
    if connection.vendor == "postgresql":
        user = quote(settings_dict["USER"] or "")
        password = f":{quote(settings_dict['PASSWORD'])}" if settings_dict["PASSWORD"] else ""
        host = settings_dict["HOST"] or "127.0.0.1"
        port = settings_dict["PORT"] or 5432
        yield f"postgres://{user}{password}@{host}:{port}/{settings_dict['NAME']}"
        return
    path = tmp_path / "shared.sqlite3"
    connection.ensure_connection()
    with sqlite3.connect(path) as target:
        connection.connection.backup(target)
    target.close()
    # This thread reads and writes the file through a connection of its own until the test
    # ends. The in-memory one stays open and untouched (closing it would drop the test
    # database): a live server left running by a browser test shares that very connection
    # from its own thread, and pointing it at the file made that thread close it under this
    # one's feet ("bad parameter or other API misuse").
    in_memory = connections[DEFAULT_DB_ALIAS]
    on_file = in_memory.__class__({**in_memory.settings_dict, "NAME": str(path)})
    connections[DEFAULT_DB_ALIAS] = on_file
    try:
        yield f"sqlite:///{path}"
    finally:
        on_file.close()
        connections[DEFAULT_DB_ALIAS] = in_memory


@pytest.fixture
def broker_url() -> str:
    """The Redis database the workers take tasks from: a module of tests may name its own."""
    return BROKER_URL


@pytest.fixture
def broker(monkeypatch, broker_url) -> Iterator[str]:
    """This process sends tasks to Redis instead of running them, on a queue of its own
    (also what the pages hand the workers)."""
    if not _redis_answers():
        pytest.skip("no Redis answered on 127.0.0.1:6379 (CI has one): worker tests skipped")
    queue = f"test-{uuid.uuid4().hex[:12]}"
    keys = ("task_always_eager", "broker_url", "task_default_queue")
    saved = {key: app.conf[key] for key in keys}
    app.conf.update(task_always_eager=False, broker_url=broker_url, task_default_queue=queue)
    # Fresh connection pools, so that nothing another test opened sends elsewhere.
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    try:
        yield queue
    finally:
        app.conf.update(saved)


class Worker:
    """`celery -A contextevals worker` in a process group of its own, always stopped."""

    def __init__(
        self,
        queue: str,
        database_url: str,
        media: Path,
        log: Path,
        broker_url: str = BROKER_URL,
        **extra_env: str,
    ) -> None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.worker_settings",
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": broker_url,
            "MEDIA_ROOT": str(media),
            **extra_env,
        }
        self.log = log
        command = [sys.executable, "-m", "celery", "-A", "contextevals", "worker"]
        command += ["-Q", queue, "-n", f"{queue}-{uuid.uuid4().hex[:6]}@%h", "-c", "1"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO"]
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self) -> None:
        """SIGKILL the whole worker, pool process included: no chance to clean up."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


@pytest.fixture
def start_worker(
    broker, broker_url, shared_db, settings, tmp_path
) -> Iterator[Callable[..., Worker]]:
    workers: list[Worker] = []

    def start(**env: str) -> Worker:
        log = tmp_path / "worker.log"
        workers.append(Worker(broker, shared_db, settings.MEDIA_ROOT, log, broker_url, **env))
        return workers[-1]

    try:
        yield start
    finally:
        for worker in workers:
            worker.kill()
        # The queue of this test goes with it.
        app.connection_for_write(broker_url).default_channel.queue_delete(broker)


def wait_for(condition: Callable[[], bool], log: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            pytest.fail(f"timed out after {seconds} s; the worker's log ends:\n{tail}")
        time.sleep(0.1)


def upload_state(upload: Upload) -> Upload:
    upload.refresh_from_db()
    return upload


def zip_with_files(count: int) -> bytes:
    rng = random.Random(count)
    buffer = io.BytesIO()
    document = {"tasks": []}
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for number in range(count):
            archive.writestr(f"files/f{number}.bin", rng.randbytes(64 * 1024))
            document["tasks"].append(
                {
                    "id": f"task-{number}",
                    "prompt": f"Read file {number}.",
                    "expected": "ok",
                    "inputFiles": [f"files/f{number}.bin"],
                }
            )
        archive.writestr("dataset.json", json.dumps(document))
    return buffer.getvalue()


def check_on_worker(user, dataset, queue: str, log: Path) -> Upload:
    upload = imports.upload_create(
        owner=user,
        dataset=dataset,
        uploaded_file=SimpleUploadedFile("set.zip", zip_with_files(FILES)),
    )
    tasks.check_upload.apply_async(args=[upload.pk], queue=queue)
    wait_for(lambda: upload_state(upload).state != Upload.State.CHECKING, log)
    assert upload.state == Upload.State.CHECKED and upload.result["ok"]
    return upload


def enqueue_import(upload: Upload, queue: str) -> None:
    Upload.objects.filter(pk=upload.pk).update(
        state=Upload.State.IMPORTING, mode="add", progress_done=0, progress_total=0
    )
    tasks.import_upload.apply_async(args=[upload.pk, "add"], queue=queue)


def test_a_worker_checks_and_imports_a_zip_with_its_files(
    start_worker, broker, make_dataset, user, tmp_path
):
    worker = start_worker()
    dataset = make_dataset()
    upload = check_on_worker(user, dataset, broker, worker.log)
    assert (upload.progress_done, upload.progress_total) == (FILES, FILES)

    enqueue_import(upload, broker)
    wait_for(lambda: upload_state(upload).state == Upload.State.IMPORTED, worker.log)
    assert [t.task_id for t in dataset.tasks.order_by("position")] == [
        f"task-{n}" for n in range(FILES)
    ]
    stored = TaskFile.objects.filter(task__dataset=dataset)
    assert stored.count() == FILES
    for task_file in stored:
        assert default_storage.size(task_file.file.name) == task_file.size == 64 * 1024
    assert (upload.progress_done, upload.progress_total) == (FILES, FILES)


def test_a_worker_killed_mid_import_changes_nothing_and_the_task_comes_back(
    start_worker, broker, make_dataset, user
):
    worker = start_worker()
    dataset = make_dataset(tasks=1)
    upload = check_on_worker(user, dataset, broker, worker.log)
    enqueue_import(upload, broker)
    # Storing takes 0.2 s a file here; kill the worker once a few are stored.
    wait_for(lambda: upload_state(upload).progress_done >= 3, worker.log)
    worker.kill()

    assert upload_state(upload).state == Upload.State.IMPORTING
    assert [t.task_id for t in dataset.tasks.all()] == ["t1"]
    assert not TaskFile.objects.exists()
    folder = imports.task_files_folder(upload)
    (dead_run,) = default_storage.listdir(folder)[0]

    # A new worker gets the message back (acks_late: it was never acknowledged).
    again = start_worker()
    wait_for(lambda: upload_state(upload).state != Upload.State.IMPORTING, again.log)
    assert (upload.state, upload.error) == (Upload.State.IMPORTED, "")
    assert dataset.tasks.count() == 1 + FILES
    assert TaskFile.objects.count() == FILES
    runs = default_storage.listdir(folder)[0]
    assert len(runs) == 2

    # The hourly clean-up removes what the killed run stored, and nothing else.
    Upload.objects.filter(pk=upload.pk).update(expires_at=upload.created_at)
    imports.uploads_delete_expired()
    assert dead_run not in default_storage.listdir(folder)[0]
    assert all(default_storage.exists(f.file.name) for f in TaskFile.objects.all())


def test_an_import_past_its_time_limit_on_a_real_worker_writes_nothing_and_says_so(
    start_worker, broker, make_dataset, user
):
    # Storing takes 0.2 s a file here, 4 s for the 20: past a limit of 1 s, Celery raises
    # SoftTimeLimitExceeded inside the task while it stores them. A task's limits travel
    # with its message, as the sender set them (web and workers read the same settings).
    worker = start_worker(IMPORT_TIME_LIMIT_SECONDS="1")
    dataset = make_dataset(tasks=1)
    upload = check_on_worker(user, dataset, broker, worker.log)
    Upload.objects.filter(pk=upload.pk).update(state=Upload.State.IMPORTING, mode="add")
    tasks.import_upload.apply_async(args=[upload.pk, "add"], queue=broker, soft_time_limit=1)

    wait_for(lambda: upload_state(upload).state != Upload.State.IMPORTING, worker.log)

    assert upload.state == Upload.State.CHECKED
    assert upload.error == imports.IMPORT_TOO_SLOW.format(duration="1 second")
    assert [t.task_id for t in dataset.tasks.all()] == ["t1"]
    assert not TaskFile.objects.exists()
    assert files_under(imports.task_files_folder(upload)) == []  # its files went with it


def files_under(folder: str) -> list[str]:
    """Every file in the storage under `folder` (a local folder stays, empty, when its
    files are deleted)."""
    folders, files = default_storage.listdir(folder)
    return [f"{folder}/{name}" for name in files] + [
        path for name in folders for path in files_under(f"{folder}/{name}")
    ]


def test_a_killed_worker_is_reported_and_the_import_resumes(
    start_worker, broker, make_dataset, user, settings
):
    settings.WORKER_STOPPED_AFTER_SECONDS = 1
    worker = start_worker(UPLOAD_HEARTBEAT_SECONDS="0.2")
    dataset = make_dataset()
    upload = check_on_worker(user, dataset, broker, worker.log)
    enqueue_import(upload, broker)
    # Storing takes 0.2 s a file here: kill the worker while it stores them.
    wait_for(lambda: upload_state(upload).progress_done >= 3, worker.log)
    assert upload.heartbeat_at is not None and selectors.worker_stopped(upload) == ""
    worker.kill()
    time.sleep(1.5)
    stopped = selectors.WORKER_STOPPED.format(doing="importing")
    assert selectors.worker_stopped(upload_state(upload)) == stopped
    again = start_worker(UPLOAD_HEARTBEAT_SECONDS="0.2")
    wait_for(lambda: upload_state(upload).state == Upload.State.IMPORTED, again.log)
    assert (upload.error, dataset.tasks.count()) == ("", 20)
