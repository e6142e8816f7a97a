"""Contract: versions (save, list, export in every format) and tasks (filters, one task with
its criteria and files)."""

from __future__ import annotations

import io
import json
import zipfile

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import exporting
from datasets_app.api.schemas import TaskOut, VersionOut
from datasets_app.models import Task, TaskFile, TaskState, Version
from datasets_app.services import datasets
from tests.api.conftest import error_of

pytestmark = pytest.mark.django_db


def versions_of(dataset) -> str:
    return f"/api/v1/datasets/{dataset.pk}/versions"


def test_save_the_drafts_as_the_next_version_then_409_when_nothing_changed(api, make_dataset):
    dataset = make_dataset(tasks=2)
    response = api.post(versions_of(dataset))
    assert response.status_code == 201
    assert response.json()["number"] == 1 and response.json()["task_count"] == 2
    VersionOut.model_validate(response.json())
    assert set(dataset.tasks.values_list("state", flat=True)) == {TaskState.SAVED}

    again = api.post(versions_of(dataset))
    assert again.status_code == 409
    error = error_of(again)
    assert error["code"] == "nothing_to_save" and error["message"] == datasets.NOTHING_TO_SAVE
    assert Version.objects.count() == 1


def test_versions_are_listed_newest_first(api, make_dataset, user):
    dataset = make_dataset(tasks=1)
    datasets.version_save(dataset=dataset, user=user)
    Task.objects.create(dataset=dataset, task_id="new", prompt="p", expected_text="x", position=5)
    datasets.version_save(dataset=dataset, user=user)
    body = api.get(versions_of(dataset)).json()
    assert [(v["number"], v["label"], v["task_count"], v["created_by"]) for v in body] == [
        (2, "v2", 2, "ada"),
        (1, "v1", 1, "ada"),
    ]


@pytest.mark.parametrize("fmt", [f.slug for f in exporting.EXPORT_FORMATS])
def test_a_version_downloads_in_every_format_as_the_page_serves_it(
    api, auth_client, make_dataset, user, fmt
):
    dataset = make_dataset(tasks=2)
    datasets.version_save(dataset=dataset, user=user)
    response = api.get(f"{versions_of(dataset)}/1/export?format={fmt}")
    assert response.status_code == 200
    expected = exporting.export_format(fmt)
    assert response["Content-Type"] == expected.content_type
    assert f".{expected.extension}" in response["Content-Disposition"]
    page = auth_client.get(reverse("datasets_app:version_export", args=[dataset.pk, 1, fmt]))
    ours, pages = (b"".join(r.streaming_content) for r in (response, page))
    assert contents(fmt, ours) == contents(fmt, pages)


def contents(fmt: str, data: bytes) -> object:
    """What a download holds: a zip's members and an xlsx's cells carry the time they were
    built, so two downloads a second apart compare by what is in them."""
    if fmt == "zip":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {name: archive.read(name) for name in archive.namelist()}
    if fmt == "xlsx":
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
        return {sheet.title: list(sheet.iter_rows(values_only=True)) for sheet in book}
    return data


def test_export_defaults_to_json_and_refuses_an_unknown_format(api, make_dataset, user):
    dataset = make_dataset(tasks=1)
    datasets.version_save(dataset=dataset, user=user)
    response = api.get(f"{versions_of(dataset)}/1/export")
    assert json.loads(b"".join(response.streaming_content))["tasks"][0]["id"] == "t1"
    bad = api.get(f"{versions_of(dataset)}/1/export?format=pdf")
    assert bad.status_code == 400
    assert error_of(bad)["details"][0]["field"] == "query.format"
    missing = api.get(f"{versions_of(dataset)}/9/export")
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"


def test_others_versions_are_a_404(api, make_dataset, other_user):
    theirs = make_dataset(owner=other_user, tasks=1)
    datasets.version_save(dataset=theirs, user=other_user)
    for response in (
        api.get(versions_of(theirs)),
        api.post(versions_of(theirs)),
        api.get(f"{versions_of(theirs)}/1/export?format=json"),
    ):
        assert response.status_code == 404
    assert Version.objects.count() == 1


# --- Tasks ----------------------------------------------------------------------------------


def tasks_of(dataset, query: str = "") -> str:
    return f"/api/v1/datasets/{dataset.pk}/tasks{query}"


def test_tasks_filter_by_state_and_version(api, make_dataset, user):
    dataset = make_dataset(tasks=2)
    datasets.version_save(dataset=dataset, user=user)
    Task.objects.create(dataset=dataset, task_id="t3", prompt="p", expected_text="x", position=3)

    def ids(query: str) -> list[str]:
        response = api.get(tasks_of(dataset, query))
        assert response.status_code == 200
        return [t["task_id"] for t in response.json()]

    assert ids("") == ["t1", "t2", "t3"]
    assert ids("?state=draft") == ["t3"]
    assert ids("?state=saved") == ["t1", "t2"]
    assert ids("?version=1") == ["t1", "t2"]
    assert ids("?version=1&state=draft") == []


@pytest.mark.parametrize("query", ["?state=archived", "?state=x", "?version=0", "?colour=red"])
def test_task_filters_refuse_what_they_do_not_know(api, make_dataset, query):
    dataset = make_dataset(tasks=1)
    response = api.get(tasks_of(dataset, query))
    assert response.status_code == 400 and error_of(response)["code"] == "invalid"


def test_tasks_of_a_version_that_does_not_exist_are_a_404(api, make_dataset):
    response = api.get(tasks_of(make_dataset(tasks=1), "?version=3"))
    assert response.status_code == 404


def test_a_task_comes_with_its_criteria_and_files(api, make_dataset):
    dataset = make_dataset(tasks=2)
    task = dataset.tasks.get(task_id="t2")  # the fixture gives every other task a criterion
    TaskFile.objects.create(
        task=task,
        role="input",
        name="table.csv",
        file=SimpleUploadedFile("table.csv", b"a,b\n").name,
        size=4,
        sha256="0" * 64,
    )
    TaskFile.objects.create(task=task, role="expected", name="doc", url="https://example.com/d")
    body = api.get(f"/api/v1/tasks/{task.pk}").json()
    TaskOut.model_validate(body)
    assert body["task_id"] == "t2" and body["dataset"] == dataset.pk
    assert body["prompt"] == "Prompt 2" and body["expected_answer"] == "Answer 2"
    assert body["criteria"] == [
        {"id": "c1", "criterion": "Is right", "weight": 2, "verifier": None}
    ]
    assert [(f["role"], f["name"], f["url"], f["size"]) for f in body["files"]] == [
        ("expected", "doc", "https://example.com/d", None),
        ("input", "table.csv", None, 4),
    ]
    listed = api.get(tasks_of(dataset)).json()
    assert listed[1] == body


def test_someone_elses_task_is_a_404(api, make_dataset, other_user):
    theirs = make_dataset(owner=other_user, tasks=1)
    response = api.get(f"/api/v1/tasks/{theirs.tasks.get().pk}")
    assert response.status_code == 404 and error_of(response)["code"] == "not_found"
    assert api.get(tasks_of(theirs)).status_code == 404


def test_a_shared_datasets_tasks_can_be_read(api, make_dataset, other_user, user):
    shared = make_dataset(owner=other_user, tasks=1)
    shared.shared_with.add(user)
    assert api.get(f"/api/v1/tasks/{shared.tasks.get().pk}").status_code == 200
