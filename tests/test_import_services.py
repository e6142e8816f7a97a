"""The import's services that the dialog, the commands and the API share: starting a check,
claiming an upload for import, creating a dataset with a file, and the guards in front."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import guards, tasks
from datasets_app.models import Dataset, Upload
from datasets_app.services import imports
from tests.conftest import FILES

EXPECTED = (FILES / "json" / "expected_answers_template.json").read_bytes()
HTMX = {"HTTP_HX_REQUEST": "true"}


def _checked(user, dataset=None, data: bytes = EXPECTED, name: str = "qa.json") -> Upload:
    upload = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=SimpleUploadedFile(name, data)
    )
    return imports.upload_check_start(upload=upload)


@pytest.mark.django_db
def test_an_upload_is_claimed_for_import_once(user, make_dataset, monkeypatch):
    dataset = make_dataset()
    upload = _checked(user, dataset)
    queued: list[tuple] = []
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: queued.append((task, args)))

    assert imports.upload_import_start(upload=upload, mode="replace") is True
    assert imports.upload_import_start(upload=upload, mode="add") is False
    assert queued == [(tasks.import_upload, (upload.pk, "replace"))]
    assert upload.state == Upload.State.IMPORTING and upload.mode == "replace"


@pytest.mark.django_db
def test_a_check_started_with_an_import_mode_imports_a_good_file(user, make_dataset):
    dataset = make_dataset()
    upload = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=SimpleUploadedFile("qa.json", EXPECTED)
    )
    upload = imports.upload_check_start(upload=upload, import_mode="add")
    upload.refresh_from_db()
    assert upload.state == Upload.State.IMPORTED
    assert dataset.tasks.count() == 2


@pytest.mark.django_db
def test_a_check_started_with_an_import_mode_imports_nothing_from_a_bad_file(user, make_dataset):
    dataset = make_dataset()
    upload = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=SimpleUploadedFile("bad.jsonl", b'{"id": 1}\n')
    )
    upload = imports.upload_check_start(upload=upload, import_mode="add")
    assert upload.state == Upload.State.CHECKED and not upload.result["ok"]
    assert not dataset.tasks.exists()


@pytest.mark.django_db
def test_a_dataset_is_created_with_a_file_once(user):
    upload = _checked(user)
    dataset = imports.dataset_create_with_file(owner=user, upload=upload)
    assert dataset.name == "Finance QA (expected answers)"
    assert dataset.tasks.count() == 2
    with pytest.raises(imports.ImportRefused):
        imports.dataset_create_with_file(owner=user, upload=upload)
    assert Dataset.objects.count() == 1


@pytest.mark.django_db
def test_a_dataset_is_not_created_with_someone_elses_file_or_a_bad_one(user, other_user):
    with pytest.raises(imports.ImportRefused):
        imports.dataset_create_with_file(owner=other_user, upload=_checked(user))
    with pytest.raises(imports.ImportRefused):
        imports.dataset_create_with_file(
            owner=user, upload=_checked(user, data=b'{"id": 1}\n', name="bad.jsonl")
        )
    assert not Dataset.objects.exists()


@pytest.mark.django_db
def test_checks_count_once_per_person_whichever_page_the_file_came_from(
    auth_client, make_dataset, settings
):
    settings.RATELIMIT_CHECKS = "2/m"
    dataset = make_dataset()
    dialog = reverse("datasets_app:import_check", args=[dataset.pk])
    new_dataset = reverse("datasets_app:dataset_create_check")
    statuses = [
        auth_client.post(url, {"file": SimpleUploadedFile("qa.json", EXPECTED)}, **HTMX)
        for url in (dialog, new_dataset, new_dataset)
    ]
    assert [r.status_code for r in statuses] == [200, 200, 429]
    assert guards.TOO_MANY_CHECKS in statuses[-1].content.decode()
    assert 1 <= int(statuses[-1]["Retry-After"]) <= 60


@pytest.mark.django_db
def test_imports_past_the_rate_are_refused_with_retry_after(
    auth_client, user, make_dataset, settings
):
    settings.RATELIMIT_IMPORTS = "1/m"
    dataset = make_dataset()
    first, second = _checked(user, dataset), _checked(user, dataset, name="again.json")
    ok = auth_client.post(
        reverse("datasets_app:import_commit", args=[dataset.pk, first.key]), {"mode": "add"}
    )
    refused = auth_client.post(
        reverse("datasets_app:import_commit", args=[dataset.pk, second.key]),
        {"mode": "add"},
        **HTMX,
    )
    assert ok.status_code == 302
    assert refused.status_code == 429 and refused["Retry-After"]
    assert guards.TOO_MANY_IMPORTS in refused.content.decode()
    second.refresh_from_db()
    assert second.state == Upload.State.CHECKED
