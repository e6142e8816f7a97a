"""The API's version download past EXPORT_IN_REQUEST_TASKS: a 202 with the export a worker
builds (Celery eager here; the docs' recipes run it on a real worker), then its state and
its file. The threshold is lowered to 2 tasks."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from datasets_app.models import ExportJob
from datasets_app.services import datasets
from tests.api.conftest import error_of

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def small_threshold(settings):
    settings.EXPORT_IN_REQUEST_TASKS = 2


def export_path(dataset, fmt: str = "csv") -> str:
    return f"/api/v1/datasets/{dataset.pk}/versions/1/export?format={fmt}"


def test_a_large_version_answers_202_with_its_export_then_downloads(
    api, auth_client, make_dataset, user, settings
):
    dataset = make_dataset(tasks=3)
    datasets.version_save(dataset=dataset, user=user)
    started = api.get(export_path(dataset))
    assert started.status_code == 202
    job = ExportJob.objects.get()
    url = f"http://testserver/api/v1/exports/{job.key}"
    assert started["Location"] == url
    body = started.json()
    assert (body["id"], body["dataset"], body["version"], body["format"]) == (
        str(job.key),
        dataset.pk,
        1,
        "csv",
    )
    assert body["url"] == url

    read = api.get(url).json()
    assert read["state"] == "ready"
    assert read["progress"] == {"done": 3, "total": 3}
    assert read["download_url"] == f"{url}/download"
    assert read["size"] > 0 and read["error"] is None
    download = api.get(read["download_url"])
    assert download.status_code == 200
    assert download["Content-Type"] == "text/csv; charset=utf-8"
    built = b"".join(download.streaming_content)
    assert len(built) == read["size"]

    # Asked again, the same export answers; the page's download holds the same file.
    assert api.get(export_path(dataset)).json()["id"] == str(job.key)
    settings.EXPORT_IN_REQUEST_TASKS = 10
    in_request = api.get(export_path(dataset))
    assert in_request.status_code == 200
    assert b"".join(in_request.streaming_content) == built


def test_an_export_not_ready_is_a_409_and_others_get_404(api, other_api, make_dataset, user):
    dataset = make_dataset(tasks=3)
    version = datasets.version_save(dataset=dataset, user=user)
    job = ExportJob.objects.create(dataset=dataset, version=version, format="json")
    url = f"/api/v1/exports/{job.key}"
    assert api.get(url).json()["state"] == "queued"
    assert api.get(url).json()["download_url"] is None
    refused = api.get(f"{url}/download")
    assert refused.status_code == 409
    assert error_of(refused)["code"] == "export_not_ready"
    assert "queued" in error_of(refused)["message"]
    for path in (url, f"{url}/download"):
        assert error_of(other_api.get(path))["code"] == "not_found"

    ExportJob.objects.filter(pk=job.pk).update(
        state="ready", expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert api.get(url).json()["state"] == "expired"
    assert api.get(f"{url}/download").status_code == 409
