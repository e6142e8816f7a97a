"""Imports on S3-compatible object storage (STORAGE_BUCKET set), against moto's in-process S3.

The app stores uploads and task files only through Django's storage API; these tests run
the import dialog, a failed import, the task file download and the expiry clean-up with
django-storages' S3Storage configured as settings.py configures it, and look in the bucket.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import boto3
import pytest
from django.core.files import File
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from moto import mock_aws
from storages.backends.s3 import S3Storage

from datasets_app import tasks
from datasets_app.models import Task, TaskFile, Upload
from datasets_app.services import imports

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
BUCKET = "contextevals-test"
REGION = "us-east-1"
# moto accepts any credentials; explicit ones keep a developer's own AWS setup out of it.
ACCESS_KEY = "testing-access-key"
SECRET_KEY = "testing-secret-key"

TABLE = b"quarter,revenue\nQ1,10\nQ2,12\n"
# Not valid UTF-8, so nothing on the way may decode or re-encode it.
SUMMARY = bytes(range(256)) * 64


def dataset_zip() -> bytes:
    """One task with an input file and an expected file, both inside the zip."""
    document = {
        "tasks": [
            {
                "id": "sum",
                "prompt": "Summarise the table.",
                "expected": "A summary",
                "inputFiles": ["data/table.csv"],
                "expectedFiles": ["expected/summary final.bin"],
            }
        ]
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in (
            ("dataset.json", json.dumps(document)),
            ("data/table.csv", TABLE),
            ("expected/summary final.bin", SUMMARY),
        ):
            # A fixed time stamp: the test compares two builds of this zip byte for byte.
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


@pytest.fixture
def s3(settings):
    """moto's S3 with one bucket, and Django's default storage pointed at it.

    Overriding STORAGES sends `setting_changed`, whose receiver empties Django's storage
    handler and the `default_storage` proxy, so the app's next file operation builds an
    S3Storage; the assert proves it rather than trusting it.
    """
    with mock_aws():
        client = boto3.client(
            "s3",
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )
        client.create_bucket(Bucket=BUCKET)
        settings.STORAGES = {
            **settings.STORAGES,
            "default": {
                "BACKEND": "storages.backends.s3.S3Storage",
                "OPTIONS": {
                    "bucket_name": BUCKET,
                    "region_name": REGION,
                    "access_key": ACCESS_KEY,
                    "secret_key": SECRET_KEY,
                    "default_acl": "private",
                    "querystring_auth": True,
                    "file_overwrite": False,
                },
            },
        }
        # LazyObject proxies __class__, so this builds the storage the app will use.
        assert isinstance(default_storage, S3Storage)
        yield client


def keys(client, prefix: str = "") -> list[str]:
    """Every object key in the bucket under `prefix`, sorted."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


def body(client, key: str) -> bytes:
    return client.get_object(Bucket=BUCKET, Key=key)["Body"].read()


def check_and_import(client, dataset) -> Upload:
    """What a person does in the dialog: choose the file (checked), then press Import."""
    check_url = reverse("datasets_app:import_check", args=[dataset.pk])
    page = client.post(
        check_url, {"file": SimpleUploadedFile("set.zip", dataset_zip())}, **HTMX
    ).content.decode()
    assert "Import 1 task" in page
    upload = Upload.objects.get()
    commit_url = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    client.post(commit_url, {"mode": "add", "upload": str(upload.key)}, **HTMX)
    upload.refresh_from_db()
    return upload


def test_the_fixture_puts_default_storage_on_the_bucket(s3):
    assert isinstance(default_storage, S3Storage)
    assert default_storage.bucket_name == BUCKET
    name = default_storage.save("probe/hello.txt", io.BytesIO(b"hello"))
    assert keys(s3) == ["probe/hello.txt"] and body(s3, name) == b"hello"


def test_a_zip_imports_into_the_bucket_and_the_task_page_streams_it_back(
    s3, auth_client, make_dataset, settings
):
    dataset = make_dataset()
    upload = check_and_import(auth_client, dataset)

    assert upload.state == Upload.State.IMPORTED, upload.error
    upload_keys = keys(s3, "uploads/")
    assert upload_keys == [f"uploads/{upload.key}/set.zip"] == [upload.file.name]
    assert body(s3, upload.file.name) == dataset_zip()

    task = Task.objects.get(dataset=dataset, task_id="sum")
    stored = {f.role: f for f in task.files.all()}
    assert {role: f.name for role, f in stored.items()} == {
        "input": "table.csv",
        "expected": "summary final.bin",
    }
    assert keys(s3, "task-files/") == sorted(f.file.name for f in stored.values())
    for task_file, data in ((stored["input"], TABLE), (stored["expected"], SUMMARY)):
        assert task_file.file.name.startswith(f"{imports.task_files_folder(upload)}/")
        assert body(s3, task_file.file.name) == data
        assert task_file.size == len(data)
        assert task_file.sha256 == hashlib.sha256(data).hexdigest()
        grants = s3.get_object_acl(Bucket=BUCKET, Key=task_file.file.name)["Grants"]
        assert [g["Permission"] for g in grants] == ["FULL_CONTROL"], "private: owner only"

        url = reverse("datasets_app:task_file_download", args=[dataset.pk, task.pk, task_file.pk])
        response = auth_client.get(url)
        assert response.status_code == 200
        assert response["Content-Disposition"] == f'attachment; filename="{task_file.name}"'
        assert response["Content-Length"] == str(len(data))
        assert b"".join(response.streaming_content) == data

    assert not settings.MEDIA_ROOT.exists() or not any(settings.MEDIA_ROOT.rglob("*"))


def test_a_failed_import_leaves_only_the_upload_in_the_bucket(
    s3, auth_client, make_dataset, monkeypatch
):
    dataset = make_dataset()

    stored_when_it_failed: list[str] = []

    def fail_after_the_files_are_stored(**kwargs):
        # Noted, not asserted here: the Celery task would swallow an AssertionError.
        stored_when_it_failed.extend(keys(s3, "task-files/"))
        raise RuntimeError("database went away")

    monkeypatch.setattr(imports, "_write_plan", fail_after_the_files_are_stored)
    upload = check_and_import(auth_client, dataset)

    assert len(stored_when_it_failed) == 2, "both files were in the bucket before it failed"
    assert upload.state == Upload.State.CHECKED
    assert upload.error == tasks.IMPORT_FAILED
    assert not Task.objects.filter(dataset=dataset).exists()
    assert not TaskFile.objects.exists()
    assert keys(s3) == [upload.file.name]


def test_the_expiry_clean_up_removes_an_expired_upload_and_its_dead_runs_from_the_bucket(
    s3, auth_client, make_dataset, user
):
    dataset = make_dataset()
    imported = check_and_import(auth_client, dataset)
    kept = sorted(TaskFile.objects.exclude(file="").values_list("file", flat=True))
    # What a worker killed mid-import leaves: a run folder no task file points to.
    dead = f"{imports.task_files_folder(imported)}/deadrun/0/table.csv"
    default_storage.save(dead, io.BytesIO(b"half"))
    fresh = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=File(io.BytesIO(b"{}"), name="later.json")
    )
    Upload.objects.filter(pk=imported.pk).update(expires_at=timezone.now())

    assert tasks.delete_expired_uploads() == 1

    assert list(Upload.objects.all()) == [fresh]
    assert keys(s3, "uploads/") == [fresh.file.name]
    assert keys(s3, "task-files/") == kept, "the imported tasks' files stay; the dead run goes"
