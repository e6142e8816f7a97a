"""Exports past EXPORT_IN_REQUEST_TASKS built by a real Celery worker on the Redis at
127.0.0.1:6379, through the pages: the job's page shows the worker's progress, then the
download; past its time limit the export fails with the reason and keeps nothing. Redis
database 7 and a queue per test. Skipped, with the reason shown, when no Redis answers."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from datasets_app import tasks
from datasets_app.models import ExportJob, Task, TaskFile
from datasets_app.services import exports
from tests.test_worker import (  # noqa: F401 - fixtures
    broker,
    shared_db,
    start_worker,
    wait_for,
)

pytestmark = [pytest.mark.redis, pytest.mark.slow]

# Tasks of one stored file each: the worker's storage takes 0.2 s to open each
# (tests.worker_storage), so a .zip export of them takes 2.4 s.
FILES = 12


@pytest.fixture
def broker_url() -> str:
    return "redis://127.0.0.1:6379/7"


def text_of(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def job_state(job: ExportJob) -> ExportJob:
    job.refresh_from_db()
    return job


def dataset_of_stored_files(make_dataset):
    dataset = make_dataset()
    for number in range(FILES):
        task = Task.objects.create(
            dataset=dataset, task_id=f"t{number}", prompt=f"Read file {number}.", position=number
        )
        name = default_storage.save(f"task-files/{number}.txt", ContentFile(b"x" * number))
        TaskFile.objects.create(
            task=task, role="input", name=f"{number}.txt", file=name, size=number
        )
    return dataset


def test_a_worker_builds_a_large_zip_export_and_its_page_follows_it(
    start_worker,  # noqa: F811 - the fixture
    make_dataset,
    client,
    user,
    settings,
):
    settings.EXPORT_IN_REQUEST_TASKS = 3
    # The worker notes its progress every 0.1 s.
    worker = start_worker(UPLOAD_HEARTBEAT_SECONDS="0.1")
    dataset = dataset_of_stored_files(make_dataset)
    client.force_login(user)

    started = client.post(reverse("datasets_app:dataset_export", args=[dataset.pk, "zip"]))
    job = ExportJob.objects.get()
    assert started.url == job.get_absolute_url()
    wait_for(lambda: 0 < job_state(job).progress_done < FILES, worker.log)
    page = client.get(started.url, HTTP_HX_REQUEST="true")
    assert re.search(rf"Building: \d+ of {FILES} tasks written\.", text_of(page))

    wait_for(lambda: job_state(job).state == ExportJob.State.READY, worker.log)
    page = client.get(started.url)
    assert f"Ready: {FILES} tasks" in text_of(page)
    download = client.get(reverse("datasets_app:export_job_download", args=[job.key]))
    assert download.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))) as archive:
        stored = sorted(n for n in archive.namelist() if not n.endswith(".json"))
    assert len(stored) == FILES


def test_an_export_past_its_time_limit_on_a_real_worker_fails_and_keeps_nothing(
    start_worker,  # noqa: F811 - the fixture
    make_dataset,
    client,
    user,
):
    # A limit of 1 s, as the worker words it and as the message runs it.
    worker = start_worker(EXPORT_TIME_LIMIT_SECONDS="1")
    dataset = dataset_of_stored_files(make_dataset)
    job = ExportJob.objects.create(dataset=dataset, format="zip", requested_by=user)
    tasks.build_export.apply_async(args=[str(job.key)], soft_time_limit=1, time_limit=31)
    wait_for(lambda: job_state(job).state == ExportJob.State.FAILED, worker.log)
    assert job.error == exports.EXPORT_TOO_LONG.format(limit="1 second")
    assert not default_storage.exists(f"exports/{job.key}")
    client.force_login(user)
    page = text_of(client.get(job.get_absolute_url()))
    assert "The export took longer than 1 second and was stopped." in page
    assert "Try again" in page
