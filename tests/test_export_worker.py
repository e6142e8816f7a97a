"""Exports past EXPORT_IN_REQUEST_TASKS built by a real Celery worker on the Redis at
127.0.0.1:6379, through the pages: the job's page shows the worker's progress, then the
download. Redis database 7 and a queue per test. Skipped, with the reason shown, when no
Redis answers."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from datasets_app.models import ExportJob, Task, TaskFile
from tests.test_worker import (  # noqa: F401 - fixtures
    broker,
    shared_db,
    start_worker,
    wait_for,
)

pytestmark = [pytest.mark.redis, pytest.mark.slow]

FILES = 12


@pytest.fixture
def broker_url() -> str:
    return "redis://127.0.0.1:6379/7"


def text_of(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def job_state(job: ExportJob) -> ExportJob:
    job.refresh_from_db()
    return job


def test_a_worker_builds_a_large_zip_export_and_its_page_follows_it(
    start_worker,  # noqa: F811 - the fixture
    make_dataset,
    client,
    user,
    settings,
):
    settings.EXPORT_IN_REQUEST_TASKS = 3
    # Progress noted every 0.1 s; the worker's storage takes 0.2 s to open each task file.
    worker = start_worker(UPLOAD_HEARTBEAT_SECONDS="0.1")
    dataset = make_dataset()
    for number in range(FILES):
        task = Task.objects.create(
            dataset=dataset, task_id=f"t{number}", prompt=f"Read file {number}.", position=number
        )
        name = default_storage.save(f"task-files/{number}.txt", ContentFile(b"x" * number))
        TaskFile.objects.create(
            task=task, role="input", name=f"{number}.txt", file=name, size=number
        )
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
