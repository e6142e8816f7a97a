"""A saved version never changes: its page, its downloads and its snapshot stay what was
saved, whatever is edited afterwards, in the app or in the admin. Editing a saved task
anywhere makes it a draft, and the dataset offers its next Save as vN."""

from __future__ import annotations

import pytest
from django.urls import reverse

from datasets_app import admin as datasets_admin
from datasets_app import exporting
from datasets_app.models import Task, TaskState
from datasets_app.services import datasets
from tests.as_rendered import form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def v1(make_dataset, user):
    dataset = make_dataset(tasks=2)
    version = datasets.version_save(dataset=dataset, user=user)
    return dataset, version


def downloads(client, dataset, version) -> dict[str, bytes]:
    out = {}
    for fmt in exporting.EXPORT_FORMATS:
        url = reverse("datasets_app:version_export", args=[dataset.pk, version.number, fmt.slug])
        response = client.get(url)
        assert response.status_code == 200
        out[fmt.slug] = b"".join(response.streaming_content)
    return out


def zip_entries(data: bytes) -> dict[str, bytes]:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def page_and_downloads(client, dataset, version) -> tuple[str, dict]:
    page = client.get(version.get_absolute_url()).content.decode()
    files = downloads(client, dataset, version)
    # A zip's members carry the time they were written, and a workbook its own; compare
    # what they hold.
    files["zip"] = zip_entries(files["zip"])
    files["xlsx"] = zip_entries(files["xlsx"])
    files["xlsx"].pop("docProps/core.xml")
    # From its heading on: above it are notices and the way back to the dataset (live).
    return page[page.index("<h1") : page.index("</main>")], files


def admin_edit(client, url: str, **changes) -> None:
    data = form_data(client.get(url).content.decode())
    for name, value in changes.items():
        data[name] = [value]
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()


def test_editing_a_saved_task_in_the_admin_leaves_the_version_as_saved(
    client, admin_user, auth_client, v1
):
    dataset, version = v1
    before = page_and_downloads(auth_client, dataset, version)
    task = dataset.tasks.get(task_id="t1")

    client.force_login(admin_user)
    admin_edit(client, reverse("admin:datasets_app_task_change", args=[task.pk]), prompt="Changed")

    task.refresh_from_db()
    assert task.prompt == "Changed" and task.state == TaskState.DRAFT
    assert page_and_downloads(auth_client, dataset, version) == before
    assert version.tasks.get(task_id="t1").prompt == "Prompt 1"
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Save as v2" in page


def test_editing_a_saved_task_s_criteria_in_the_admin_makes_it_a_draft(
    client, admin_user, auth_client, v1
):
    dataset, version = v1
    before = page_and_downloads(auth_client, dataset, version)
    task = dataset.tasks.get(task_id="t2")  # the one with a criterion
    client.force_login(admin_user)
    admin_edit(
        client,
        reverse("admin:datasets_app_task_change", args=[task.pk]),
        **{"criteria-0-weight": "9"},
    )
    task.refresh_from_db()
    assert task.state == TaskState.DRAFT
    assert [c.weight for c in task.criteria.all()] == [9.0]
    assert [c.weight for c in version.tasks.get(task_id="t2").criteria.all()] == [2.0]
    assert page_and_downloads(auth_client, dataset, version) == before


def test_editing_the_dataset_in_the_admin_leaves_the_version_as_saved(
    client, admin_user, auth_client, v1
):
    dataset, version = v1
    before = page_and_downloads(auth_client, dataset, version)
    client.force_login(admin_user)
    admin_edit(
        client,
        reverse("admin:datasets_app_dataset_change", args=[dataset.pk]),
        name="Renamed",
        expected_answer_verifier_0="exact_match",  # the settings' verifier, in its parts
    )
    assert page_and_downloads(auth_client, dataset, version) == before
    assert "Save as v2" in auth_client.get(dataset.get_absolute_url()).content.decode()


def test_the_admin_cannot_mark_saved_a_task_that_is_in_no_version(client, admin_user, v1):
    dataset, _version = v1
    draft = Task.objects.create(dataset=dataset, task_id="new", prompt="p", expected_text="x")
    client.force_login(admin_user)
    url = reverse("admin:datasets_app_task_change", args=[draft.pk])
    data = form_data(client.get(url).content.decode())
    data["state"] = [TaskState.SAVED]
    page = client.post(url, data).content.decode()
    assert datasets_admin.SAVED_ONLY_BY_A_VERSION in page
    draft.refresh_from_db()
    assert draft.state == TaskState.DRAFT


def test_archiving_a_saved_task_in_the_admin_removes_it_like_the_app(client, admin_user, v1):
    dataset, version = v1
    task = dataset.tasks.get(task_id="t1")
    client.force_login(admin_user)
    admin_edit(client, reverse("admin:datasets_app_task_change", args=[task.pk]), state="archived")
    task.refresh_from_db()
    assert task.state == TaskState.ARCHIVED
    assert version.tasks.filter(pk=task.pk).exists(), "no copy: the version keeps the task"
    assert dataset.tasks.count() == 2


def test_an_app_edit_leaves_every_download_of_the_version_as_saved(auth_client, v1):
    dataset, version = v1
    before = page_and_downloads(auth_client, dataset, version)
    task = dataset.tasks.get(task_id="t2")
    url = reverse("datasets_app:task_edit", args=[dataset.pk, task.pk])
    data = form_data(auth_client.get(url).content.decode())
    data["prompt"] = ["Prompt 2, clearer"]
    data["criteria-0-text"] = ["Is right, and says why"]
    assert auth_client.post(url, data).status_code == 302
    assert page_and_downloads(auth_client, dataset, version) == before
