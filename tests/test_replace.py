"""Replace lists everything it will archive, drafts and saved tasks alike, and the criteria
for every task it replaces, before the button is clicked; nothing disappears without
having been listed."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app.models import Dataset, TaskState, Upload
from datasets_app.services import datasets, imports
from tests.as_rendered import form_data
from tests.datasets import import_file

pytestmark = pytest.mark.django_db


def dataset_file(*task_ids: str, criteria: tuple[str, ...] = ()) -> bytes:
    return json.dumps(
        {
            "format": "context-evals-dataset",
            "version": 1,
            "criteria": [{"id": c, "criterion": f"Says {c}."} for c in criteria],
            "tasks": [{"id": i, "prompt": f"Prompt {i}", "expected": "Yes"} for i in task_ids],
        }
    ).encode()


@pytest.fixture
def saved_and_draft(auth_client, user):
    """v1 holds `s1` and the criterion `shared`; a later import brought the draft `d1`."""
    dataset = Dataset.objects.create(owner=user, name="Support")
    import_file(auth_client, dataset, "v1.json", dataset_file("s1", criteria=("shared",)))
    datasets.version_save(dataset=dataset, user=user)
    import_file(auth_client, dataset, "more.json", dataset_file("d1"))
    assert dict(dataset.tasks.values_list("task_id", "state")) == {
        "s1": TaskState.SAVED,
        "d1": TaskState.DRAFT,
    }
    return dataset


def replace_dialog(client, dataset, data: bytes):
    cache.clear()  # the rate limit on checks: these tests choose many files a minute
    client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("new.json", data), "mode": "replace"},
    )
    upload = Upload.objects.filter(dataset=dataset).latest("pk")
    url = reverse("datasets_app:import_status", args=[dataset.pk, upload.key]) + "?mode=replace"
    return upload, client.get(url).content.decode()


def test_replace_lists_drafts_saved_tasks_and_criteria_for_every_task(auth_client, saved_and_draft):
    # The defect: the diff compared against the latest version only, said "no changes",
    # and the draft d1 was archived without ever being shown.
    dataset = saved_and_draft
    _upload, page = replace_dialog(auth_client, dataset, dataset_file("s1", criteria=("new",)))
    assert "Replace archives 2 tasks and 1 criterion for every task" in page
    assert "Drafts (1)" in page and "<code>d1</code>" in page
    assert "Saved (1)" in page and "<code>s1</code>" in page
    assert "<code>shared</code>" in page and "take their place: <code>new</code>" in page
    assert "Removed (1)" in page and "not in the file" in page
    assert "no changes" not in page


def test_replace_tells_unchanged_tasks_from_changed_ones(auth_client, saved_and_draft):
    dataset = saved_and_draft
    same = dataset_file("s1", "d1", criteria=("shared",))
    _upload, page = replace_dialog(auth_client, dataset, same)
    assert "Unchanged (2)" in page and "Changed" not in page

    other = json.loads(same)
    other["tasks"][0]["prompt"] = "Another prompt"
    _upload, page = replace_dialog(auth_client, dataset, json.dumps(other).encode())
    assert "Changed (1):</strong> <code>s1</code>" in page and "Unchanged (1)" in page


def test_replace_into_an_empty_dataset_archives_nothing(auth_client, user):
    dataset = Dataset.objects.create(owner=user, name="Empty")
    _upload, page = replace_dialog(auth_client, dataset, dataset_file("a"))
    assert "Replace archives nothing" in page


def test_replace_refuses_when_the_dataset_changed_since_the_list(auth_client, saved_and_draft):
    dataset = saved_and_draft
    upload, page = replace_dialog(auth_client, dataset, dataset_file("s1"))
    data = form_data(page, having="archives")
    # Someone adds a task after the list was shown: it is not in the list.
    import_file(auth_client, dataset, "late.json", dataset_file("late"))
    upload.refresh_from_db()

    url = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    page = auth_client.post(url, data).content.decode()

    assert imports.REPLACE_LIST_CHANGED.replace("'", "&#x27;") in page
    assert "<code>late</code>" in page, "the list is shown again, with the new task"
    assert dataset.tasks.get(task_id="late").state == TaskState.DRAFT
    upload.refresh_from_db()
    assert upload.state == Upload.State.CHECKED

    data = form_data(page, having="archives")
    auth_client.post(url, data)
    assert sorted(dataset.tasks.live().values_list("task_id", flat=True)) == ["s1"]
