"""New dataset waits for its file's check (issue 27, item 9): the server refuses a create
whose check is unfinished or failed, or found problems, and says why; the form without
JavaScript shows the file's preview before anything is made."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from datasets_app.models import Dataset, Upload
from datasets_app.services import imports
from tests.as_rendered import form_data
from tests.test_import_views import EXPECTED, HTMX, upload_file

pytestmark = pytest.mark.django_db
CREATE = reverse("datasets_app:dataset_create")


@pytest.fixture
def checking(auth_client, monkeypatch) -> Upload:
    """A file chosen on New dataset whose check is still running on a worker."""
    from datasets_app import tasks

    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: None)
    auth_client.post(
        reverse("datasets_app:dataset_create_check"),
        {"file": upload_file("qa.json", EXPECTED)},
        **HTMX,
    )
    upload = Upload.objects.get()
    assert upload.state == Upload.State.CHECKING
    return upload


def create(client, upload: Upload) -> str:
    return html.unescape(
        client.post(CREATE, {"name": "", "upload": str(upload.key)}).content.decode()
    )


def test_create_is_refused_while_the_check_runs_and_says_so(auth_client, checking):
    page = create(auth_client, checking)
    assert imports.UPLOAD_STILL_CHECKING in page
    assert "Give the dataset a name" not in page  # the file may name it
    assert not Dataset.objects.exists()
    # The button waits too: disabled until the check is back.
    assert 'disabled aria-disabled="true">Create dataset' in page

    imports.upload_check(upload=checking)  # the worker's check comes back
    response = auth_client.post(CREATE, {"name": "", "upload": str(checking.key)})
    assert response.status_code == 302 and Dataset.objects.count() == 1


def test_create_is_refused_for_a_failed_check(auth_client, checking):
    Upload.objects.filter(pk=checking.pk).update(
        state=Upload.State.FAILED, error="The worker stopped."
    )
    page = create(auth_client, checking)
    assert imports.UPLOAD_CHECK_FAILED in page and "The worker stopped." in page
    assert not Dataset.objects.exists()


def test_create_is_refused_for_a_file_with_problems(auth_client):
    auth_client.post(
        reverse("datasets_app:dataset_create_check"),
        {"file": upload_file("bad.jsonl", b'{"id": "a"}\n')},
        **HTMX,
    )
    page = create(auth_client, Upload.objects.get())
    assert imports.UPLOAD_HAS_PROBLEMS in page and "line 1" in page
    assert not Dataset.objects.exists()


def test_without_javascript_the_preview_comes_before_anything_is_made(auth_client):
    page = auth_client.post(
        CREATE, {"name": "Mine", "description": "", "file": upload_file("qa.json", EXPECTED)}
    ).content.decode()
    assert "Preview: 2 tasks" in page and not Dataset.objects.exists()
    response = auth_client.post(CREATE, form_data(page, having="upload"))
    assert response.status_code == 302
    assert Dataset.objects.get().name == "Mine"
