"""Who may see what, CSRF, headers, and hostile uploads over HTTP (issue 7)."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from datasets_app.models import Task, TaskFile, Upload
from datasets_app.services import datasets
from tests.conftest import FILES, REPO_ROOT

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
EXPECTED = (FILES / "json" / "expected_answers_template.json").read_bytes()


@pytest.fixture
def owned(client, user, make_dataset):
    """A dataset of Ada's with a saved version, a draft, a stored file and an upload."""
    dataset = make_dataset(tasks=2)
    version = datasets.version_save(dataset=dataset, user=user)
    task = dataset.tasks.first()
    task_file = TaskFile.objects.create(
        task=task, role="input", name="a.txt", file="task-files/x/a.txt", size=1
    )
    client.force_login(user)
    client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("qa.json", EXPECTED)},
    )
    upload = Upload.objects.get()
    client.logout()
    return dataset, version, task, task_file, upload


def urls_of(dataset, version, task, task_file, upload) -> list[tuple[str, str]]:
    d, t = dataset.pk, task.pk
    return [
        ("get", reverse("datasets_app:dataset_detail", args=[d])),
        ("get", reverse("datasets_app:dataset_settings", args=[d])),
        ("post", reverse("datasets_app:dataset_settings", args=[d])),
        ("get", reverse("datasets_app:dataset_sharing", args=[d])),
        ("post", reverse("datasets_app:dataset_sharing", args=[d])),
        ("post", reverse("datasets_app:version_save", args=[d])),
        ("get", reverse("datasets_app:dataset_export_page", args=[d])),
        ("get", reverse("datasets_app:dataset_export", args=[d, "json"])),
        ("get", reverse("datasets_app:import_dialog", args=[d])),
        ("post", reverse("datasets_app:import_check", args=[d])),
        ("get", reverse("datasets_app:import_status", args=[d, upload.key])),
        ("post", reverse("datasets_app:import_commit", args=[d, upload.key])),
        ("get", reverse("datasets_app:upload_problems", args=[upload.key])),
        ("get", reverse("datasets_app:task_create", args=[d])),
        ("get", reverse("datasets_app:task_detail", args=[d, t])),
        ("get", reverse("datasets_app:task_edit", args=[d, t])),
        ("post", reverse("datasets_app:task_delete", args=[d, t])),
        ("get", reverse("datasets_app:task_file_download", args=[d, t, task_file.pk])),
        ("get", reverse("datasets_app:version_detail", args=[d, version.number])),
        ("get", reverse("datasets_app:version_export", args=[d, version.number, "csv"])),
    ]


def test_anyone_else_gets_404_for_every_page_file_upload_and_export(client, other_user, owned):
    client.force_login(other_user)
    for method, url in urls_of(*owned):
        response = getattr(client, method)(url)
        assert response.status_code == 404, (method, url, response.status_code)
    dataset = owned[0]
    assert dataset.tasks.count() == 2
    assert "Finance QA" not in client.get(reverse("datasets_app:dataset_list")).content.decode()


def test_every_page_asks_for_a_login(client, owned):
    for method, url in urls_of(*owned):
        response = getattr(client, method)(url)
        assert response.status_code == 302, (method, url)
        assert response.url.startswith(reverse("login"))


def test_a_shared_dataset_opens_for_the_person_it_is_shared_with(client, user, other_user, owned):
    dataset = owned[0]
    client.force_login(other_user)
    assert client.get(dataset.get_absolute_url()).status_code == 404
    client.force_login(user)
    client.post(reverse("datasets_app:dataset_sharing", args=[dataset.pk]), {"username": "bob"})
    client.force_login(other_user)
    assert client.get(dataset.get_absolute_url()).status_code == 200
    assert "Finance QA" in client.get(reverse("datasets_app:dataset_list")).content.decode()
    # ... but only the owner changes who it is shared with.
    client.post(
        reverse("datasets_app:dataset_sharing", args=[dataset.pk]), {"remove": other_user.pk}
    )
    assert dataset.shared_with.filter(pk=other_user.pk).exists()


def test_staff_see_every_dataset(client, admin_user, owned):
    client.force_login(admin_user)
    assert client.get(owned[0].get_absolute_url()).status_code == 200


def test_every_state_change_needs_the_csrf_token(user, owned):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    for method, url in urls_of(*owned):
        if method == "post":
            response = client.post(url, **HTMX)
            assert response.status_code == 403, url
    assert owned[0].tasks.count() == 2


def test_no_state_changes_on_get(client, user, owned):
    dataset, _version, task, _task_file, upload = owned
    client.force_login(user)
    post_only = [
        reverse("datasets_app:version_save", args=[dataset.pk]),
        reverse("datasets_app:import_check", args=[dataset.pk]),
        reverse("datasets_app:import_commit", args=[dataset.pk, upload.key]),
    ]
    for url in post_only:
        assert client.get(url).status_code == 405, url
    # Delete asks first: its GET is the question, which changes nothing.
    assert (
        client.get(reverse("datasets_app:task_delete", args=[dataset.pk, task.pk])).status_code
        == 200
    )
    assert dataset.tasks.live().count() == 2
    assert dataset.versions.count() == 1


def test_security_headers(auth_client):
    response = auth_client.get(reverse("datasets_app:dataset_list"))
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def test_check_deploy_passes_with_production_settings(tmp_path):
    # The browser tests' conftest allows ORM calls beside Playwright's loop; not production.
    inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {
        **inherited,
        "DEBUG": "0",
        "SECRET_KEY": "a-production-secret-key-that-is-long-and-random-0123456789abcdef",
        "ALLOWED_HOSTS": "evals.example.com",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CACHE_URL": "redis://127.0.0.1:6379/9",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def _zip(members: dict[str, bytes], *, method=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


HOSTILE = [
    ("bomb.zip", _zip({"dataset.json": b"{}", "zeros.bin": b"\0" * (50 * 1024 * 1024)})),
    ("escape.zip", _zip({"../../etc/passwd": b"x", "dataset.json": EXPECTED})),
    ("junk.json", os.urandom(4096)),
    ("junk.zip", b"PK\x03\x04" + os.urandom(2048)),
    ("deep.json", b"[" * 10_000 + b"]" * 10_000),
    ("nul.csv", b"prompt,expected_answer\nhi\0,there\n"),
    ("image.csv", b"\x89PNG\r\n\x1a\n" + os.urandom(512)),
]


@pytest.mark.parametrize(("name", "data"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_hostile_uploads_get_a_message_in_the_dialog_never_a_500(
    auth_client, make_dataset, name, data
):
    dataset = make_dataset()
    response = auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile(name, data)},
        **HTMX,
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "problem" in page
    assert "disabled" in page.split("Import tasks")[0].rsplit("<button", 1)[1]
    assert not Task.objects.exists()


def test_an_upload_over_the_limit_is_refused_before_it_is_read(auth_client, make_dataset, settings):
    settings.MAX_UPLOAD_BYTES = 1024
    dataset = make_dataset()
    response = auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("big.json", b" " * 4096)},
        **HTMX,
    )
    assert response.status_code == 200
    assert "larger than" in response.content.decode()
    assert not Upload.objects.exists()


def test_checks_are_rate_limited_per_person(auth_client, make_dataset, settings):
    settings.RATELIMIT_CHECKS = "2/m"
    dataset = make_dataset()
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    codes = [
        auth_client.post(url, {"file": SimpleUploadedFile("qa.json", EXPECTED)}, **HTMX)
        for _ in range(3)
    ]
    assert [r.status_code for r in codes] == [200, 200, 429]
    assert "Wait a minute, then try again." in codes[-1].content.decode()


def test_python_checks_are_never_run_by_the_check_or_the_import(
    auth_client, make_dataset, tmp_path
):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\n\ndef verify(task, output):\n    return True\n"
    document = {
        "tasks": [
            {
                "id": "t",
                "prompt": "p",
                "criteria": [
                    {"criterion": "c", "verifier": {"kind": "code_verifier", "code": code}}
                ],
            }
        ]
    }
    dataset = make_dataset()
    auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("code.json", json.dumps(document).encode())},
        **HTMX,
    )
    upload = Upload.objects.get()
    auth_client.post(reverse("datasets_app:import_commit", args=[dataset.pk, upload.key]))
    assert dataset.tasks.count() == 1
    assert not marker.exists()


def test_links_in_a_file_are_stored_never_fetched(auth_client, make_dataset, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the server tried to open a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    document = {
        "tasks": [
            {
                "id": "t",
                "prompt": "p",
                "expected": "e",
                "inputFiles": ["https://example.com/report.pdf"],
            }
        ]
    }
    dataset = make_dataset()
    auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("links.json", json.dumps(document).encode())},
        **HTMX,
    )
    upload = Upload.objects.get()
    auth_client.post(reverse("datasets_app:import_commit", args=[dataset.pk, upload.key]))
    assert TaskFile.objects.get().url == "https://example.com/report.pdf"


def test_a_new_dataset_with_a_file_over_the_limit_is_refused_with_a_message(auth_client, settings):
    """Issue 15, item 6: this answered 500 (an error added to an unbound form)."""
    from datasets_app.models import Dataset

    settings.MAX_UPLOAD_BYTES = 1024
    response = auth_client.post(
        reverse("datasets_app:dataset_create"),
        {"name": "Big", "file": SimpleUploadedFile("big.json", b" " * 4096)},
    )
    assert response.status_code == 200
    assert "This file is larger than" in response.content.decode()
    assert not Dataset.objects.exists() and not Upload.objects.exists()
