"""An import whose worker died says so within a minute (its heartbeat stopped), in the
import dialog and the API. With a real worker killed mid-import: tests/test_worker.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from datasets_app import selectors
from datasets_app.models import Upload
from datasets_app.services import imports, tokens
from tests.api.conftest import bearer
from tests.test_worker import upload_state

STOPPED = selectors.WORKER_STOPPED.format(doing="importing")


def importing(user, dataset, *, heard: timedelta | None) -> Upload:
    upload = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=SimpleUploadedFile("a.json", b"{}")
    )
    beat = timezone.now() - heard if heard is not None else None
    Upload.objects.filter(pk=upload.pk).update(state=Upload.State.IMPORTING, heartbeat_at=beat)
    return upload_state(upload)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("heard", "said"),
    [(timedelta(seconds=61), STOPPED), (timedelta(seconds=5), None), (None, None)],
    ids=["silent-61s", "beating", "not-yet-taken-up"],
)
def test_the_api_says_the_worker_stopped_only_once_it_is_silent(user, make_dataset, heard, said):
    upload = importing(user, make_dataset(), heard=heard)
    api = bearer(tokens.api_token_create(user=user, name="CI")[1])
    body = api.get(f"/api/v1/imports/{upload.key}").json()
    assert (body["state"], body["error"]) == ("importing", said)


@pytest.mark.django_db
def test_the_dialog_says_the_worker_stopped(auth_client, user, make_dataset):
    dataset = make_dataset()
    upload = importing(user, dataset, heard=timedelta(minutes=5))
    url = reverse("datasets_app:import_status", args=[dataset.pk, upload.key])
    page = auth_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Importing…" in page and "has not been heard from for over a minute" in page


@pytest.mark.django_db
def test_claiming_an_import_forgets_the_checks_heartbeat(user, make_dataset):
    dataset = make_dataset()
    upload = importing(user, dataset, heard=timedelta(minutes=5))
    Upload.objects.filter(pk=upload.pk).update(state=Upload.State.CHECKED, result={"ok": True})
    imports.upload_import_start(upload=upload_state(upload), mode="add")
    assert upload_state(upload).heartbeat_at is None


@pytest.mark.django_db
def test_the_new_dataset_page_says_the_worker_checking_its_file_stopped(auth_client, user):
    upload = imports.upload_create(
        owner=user, dataset=None, uploaded_file=SimpleUploadedFile("a.json", b"{}")
    )
    beat = timezone.now() - timedelta(minutes=2)
    Upload.objects.filter(pk=upload.pk).update(heartbeat_at=beat)  # still checking
    url = reverse("datasets_app:dataset_create_status", args=[upload.key])
    page = auth_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert selectors.WORKER_STOPPED.format(doing="checking").split(" (")[0] in page
