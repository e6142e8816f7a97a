"""Exports past EXPORT_IN_REQUEST_TASKS tasks are built by a worker (`ExportJob`): through
the real views, with Celery eager as without a broker (the worker on Redis is in
test_export_worker.py). The threshold is lowered to 3 tasks here."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core.files.storage import FileSystemStorage, default_storage
from django.urls import reverse
from django.utils import timezone

from datasets_app import tasks
from datasets_app.models import ExportJob
from datasets_app.services import datasets, exports

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def small_threshold(settings):
    settings.EXPORT_IN_REQUEST_TASKS = 3


def text_of(response) -> str:
    """The page's words, without its markup."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def export_url(dataset, slug: str, version=None) -> str:
    if version is None:
        return reverse("datasets_app:dataset_export", args=[dataset.pk, slug])
    return reverse("datasets_app:version_export", args=[dataset.pk, version.number, slug])


def test_a_small_export_still_downloads_within_the_request(auth_client, make_dataset):
    dataset = make_dataset(tasks=3)
    response = auth_client.get(export_url(dataset, "csv"))
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    assert not ExportJob.objects.exists()


def test_the_export_page_of_a_large_dataset_starts_jobs_with_buttons(auth_client, make_dataset):
    dataset = make_dataset(tasks=4)
    page = auth_client.get(reverse("datasets_app:dataset_export_page", args=[dataset.pk]))
    html = page.content.decode()
    assert "More than 3 tasks: a worker builds each export" in text_of(page)
    assert f'<form method="post" class="inline" action="{export_url(dataset, "csv")}">' in html
    assert " download>" not in html


@pytest.mark.parametrize("slug", ["json", "csv", "xlsx", "zip", "evalset"])
def test_a_large_export_is_built_by_a_worker_and_downloads_as_the_request_builds_it(
    auth_client, make_dataset, settings, slug
):
    dataset = make_dataset(tasks=4)
    started = auth_client.post(export_url(dataset, slug))
    job = ExportJob.objects.get()
    assert started.status_code == 302 and started.url == f"/exports/{job.key}/"

    page = auth_client.get(started.url)
    words = text_of(page)
    assert "Ready: 4 tasks" in words
    download = reverse("datasets_app:export_job_download", args=[job.key])
    assert f'href="{download}"' in page.content.decode()
    assert "Finance_QA." in words  # the file's name on the button
    built = auth_client.get(download)
    assert built.status_code == 200
    assert (
        f'filename="Finance_QA.{job.file.name.rsplit(".", 1)[1]}"' in (built["Content-Disposition"])
    )

    settings.EXPORT_IN_REQUEST_TASKS = 10
    in_request = auth_client.get(export_url(dataset, slug))
    if slug not in ("zip", "xlsx"):  # they carry the time they were written
        assert body(built) == body(in_request)
    job.refresh_from_db()
    assert (job.state, job.progress_done, job.progress_total) == ("ready", 4, 4)
    assert job.size == default_storage.size(job.file.name)


def test_a_get_never_starts_a_job_it_asks_and_the_post_does(auth_client, make_dataset):
    dataset = make_dataset(tasks=4)
    asked = auth_client.get(export_url(dataset, "json"))
    assert asked.status_code == 200
    assert "4 tasks: more than the 3 an export builds while you wait" in text_of(asked)
    assert not ExportJob.objects.exists()
    assert auth_client.post(export_url(dataset, "json")).status_code == 302
    assert ExportJob.objects.count() == 1


def test_a_version_is_built_once_and_every_request_finds_that_job(
    auth_client, make_dataset, user, other_user
):
    dataset = make_dataset(tasks=5)
    version = datasets.version_save(dataset=dataset, user=user)
    dataset.shared_with.add(other_user)
    first = auth_client.post(export_url(dataset, "csv", version))
    # Read again (a reload, the link followed later) it opens the same job.
    assert auth_client.get(export_url(dataset, "csv", version)).url == first.url
    auth_client.force_login(other_user)
    assert auth_client.post(export_url(dataset, "csv", version)).url == first.url
    assert ExportJob.objects.count() == 1
    words = text_of(auth_client.get(first.url))
    assert "Export Finance QA v1 as CSV (.csv)" in words
    assert "Built by a worker from the saved version v1." in words


def test_a_job_in_progress_is_polled_until_it_ends(auth_client, make_dataset, user):
    dataset = make_dataset(tasks=4)
    job = ExportJob.objects.create(dataset=dataset, format="csv", requested_by=user)
    url = job.get_absolute_url()

    queued = auth_client.get(url)
    assert "Waiting for a worker to start building it." in text_of(queued)
    assert 'hx-trigger="every 2s"' in queued.content.decode()
    assert f'<a href="{url}">Refresh</a>' in queued.content.decode()  # the plain twin

    ExportJob.objects.filter(pk=job.pk).update(
        state="building", progress_done=1500, progress_total=20000
    )
    polled = auth_client.get(url, **HTMX)
    html = polled.content.decode()
    assert html.lstrip().startswith('<div id="export-status"')  # the partial alone
    assert "Building: 1,500 of 20,000 tasks written." in text_of(polled)
    assert 'value="1500"' in html and 'max="20000"' in html

    # Its second click finds it rather than queue it again.
    assert auth_client.post(export_url(dataset, "csv")).url == url
    assert ExportJob.objects.count() == 1

    tasks.build_export.delay(str(job.key))
    ended = auth_client.get(url, **HTMX)
    assert "Ready: 4 tasks" in text_of(ended)
    assert "hx-trigger" not in ended.content.decode()  # polling stops


def test_only_people_who_see_the_dataset_see_its_exports(
    client, make_dataset, user, other_user, admin_user
):
    dataset = make_dataset(tasks=4)
    client.force_login(user)
    job_url = client.post(export_url(dataset, "json")).url
    key = ExportJob.objects.get().key
    download = reverse("datasets_app:export_job_download", args=[key])

    client.force_login(other_user)
    assert client.get(job_url).status_code == 404
    assert client.get(download).status_code == 404
    assert client.get(job_url, **HTMX).status_code == 404
    dataset.shared_with.add(other_user)
    assert client.get(job_url).status_code == 200
    assert client.get(download).status_code == 200
    client.force_login(admin_user)
    assert client.get(download).status_code == 200
    client.logout()
    assert client.get(download).url.startswith(reverse("login"))


class FullStorage(FileSystemStorage):
    """A local storage with no room left for exports."""

    def _save(self, name, content):
        if name.startswith("exports/"):
            raise OSError(28, "No space left on device")
        return super()._save(name, content)


def test_an_export_that_cannot_be_stored_says_so_and_can_be_tried_again(
    auth_client, make_dataset, settings
):
    dataset = make_dataset(tasks=4)
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": f"{__name__}.FullStorage"},
    }
    job_url = auth_client.post(export_url(dataset, "csv")).url
    page = auth_client.get(job_url)
    assert exports.EXPORT_NOT_STORED in text_of(page)
    assert f'href="{export_url(dataset, "csv")}"' in page.content.decode()
    download = reverse("datasets_app:export_job_download", args=[ExportJob.objects.get().key])
    assert auth_client.get(download).url == job_url
    # Tried again, a new job is built.
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    }
    again = auth_client.post(export_url(dataset, "csv")).url
    assert again != job_url and "Ready: 4 tasks" in text_of(auth_client.get(again))


def test_an_export_past_its_time_limit_fails_with_the_reason(make_dataset, user, settings):
    dataset = make_dataset(tasks=4)
    job = ExportJob.objects.create(dataset=dataset, format="csv", requested_by=user)
    settings.EXPORT_TIME_LIMIT_SECONDS = 900
    tasks.ExportTask().on_failure(tasks.TimeLimitExceeded(930), "id", [str(job.key)], {}, None)
    job.refresh_from_db()
    assert job.state == "failed"
    assert job.error == exports.EXPORT_TOO_LONG.format(limit="15 minutes")


def test_an_expired_export_is_removed_and_its_page_offers_to_build_it_again(
    auth_client, make_dataset
):
    dataset = make_dataset(tasks=4)
    job_url = auth_client.post(export_url(dataset, "json")).url
    job = ExportJob.objects.get()
    name = job.file.name
    assert default_storage.exists(name)
    ExportJob.objects.filter(pk=job.pk).update(expires_at=timezone.now() - timedelta(minutes=1))

    # Past its expiry, before the hourly clean-up: already gone for the person.
    download = reverse("datasets_app:export_job_download", args=[job.key])
    assert auth_client.get(download).url == job_url
    assert tasks.delete_expired_exports.delay().get() == 1
    assert not default_storage.exists(name)
    page = text_of(auth_client.get(job_url))
    assert "has been removed" in page and "Build it again" in page
    job.refresh_from_db()
    assert (job.state, job.file.name) == ("expired", "")

    # A week later the job itself goes.
    ExportJob.objects.filter(pk=job.pk).update(expires_at=timezone.now() - timedelta(days=8))
    tasks.delete_expired_exports.delay()
    assert auth_client.get(job_url).status_code == 404


def test_deleting_a_dataset_removes_its_built_exports(auth_client, make_dataset):
    dataset = make_dataset(tasks=4)
    auth_client.post(export_url(dataset, "json"))
    name = ExportJob.objects.get().file.name
    response = auth_client.post(
        reverse("datasets_app:dataset_delete", args=[dataset.pk]), {"confirm": dataset.name}
    )
    assert response.status_code in (200, 302)
    assert not ExportJob.objects.exists()
    assert not default_storage.exists(name)


def test_the_version_page_of_a_large_version_starts_jobs_with_buttons(
    auth_client, make_dataset, user
):
    dataset = make_dataset(tasks=4)
    version = datasets.version_save(dataset=dataset, user=user)
    page = auth_client.get(version.get_absolute_url())
    html = page.content.decode()
    action = export_url(dataset, "xlsx", version)
    assert f'<form method="post" class="inline" action="{action}">' in html
    assert "More than 3 tasks: a worker builds each export" in text_of(page)
    assert auth_client.post(action).url == ExportJob.objects.get().get_absolute_url()
