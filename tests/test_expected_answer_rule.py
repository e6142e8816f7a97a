""" "Matches the expected answer" gives one answer everywhere: a task with an expected answer
and criteria (its own, or its dataset's for every task) is a rubric with that criterion
among its own, in the preview, on the dataset and task pages, in a version and after any
round trip, however the task arrived."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import selectors
from datasets_app.importing.spec import EXPECTED_ANSWER_CRITERION_ID
from datasets_app.models import Dataset, Upload
from datasets_app.services import datasets
from tests.as_rendered import form_data
from tests.datasets import import_file

pytestmark = pytest.mark.django_db

RUBRIC = {
    "format": "context-evals-dataset",
    "version": 1,
    "criteria": [{"id": "polite", "criterion": "Is polite.", "weight": 2}],
    "tasks": [{"id": "r1", "prompt": "Reply to the customer.", "criteria": []}],
}
ANSWERS = {
    "format": "context-evals-dataset",
    "version": 1,
    "tasks": [{"id": "a1", "prompt": "What is 2 + 2?", "expected": "4"}],
}


def rows(dataset) -> dict[str, tuple]:
    return {
        row.task.task_id: (row.scored_by, row.criteria, row.total_weight)
        for row in selectors.task_rows(dataset)
    }


def own_criteria(dataset, task_id: str) -> list[tuple[str, float]]:
    task = dataset.tasks.live().get(task_id=task_id)
    return [(c.criterion_id, c.weight) for c in task.criteria.all()]


def exported_and_back(client, dataset) -> Dataset:
    """Export as .json, import the file into a new dataset."""
    url = reverse("datasets_app:dataset_export", args=[dataset.pk, "json"])
    data = b"".join(client.get(url).streaming_content)
    copy = Dataset.objects.create(owner=dataset.owner, name="Copy")
    import_file(client, copy, "copy.json", data)
    return copy


def test_an_answers_file_added_to_a_rubric_dataset_is_graded_by_both(auth_client, user):
    # The defect: the preview said "expected answer, 0 criteria", the stored task had no
    # expected-answer criterion, and a JSON round trip added it (total weight changed).
    dataset = Dataset.objects.create(owner=user, name="Support")
    import_file(auth_client, dataset, "rubric.json", json.dumps(RUBRIC).encode())

    auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("answers.json", json.dumps(ANSWERS).encode())},
    )
    upload = Upload.objects.filter(dataset=dataset).latest("pk")
    preview = selectors.import_preview(upload=upload, mode="add")["preview_tasks"]
    assert [(t.scored_by, t.criteria, t.total_weight) for t in preview] == [("criteria", 2, 3)]
    auth_client.post(
        reverse("datasets_app:import_commit", args=[dataset.pk, upload.key]), {"mode": "add"}
    )

    assert rows(dataset)["a1"] == ("criteria", 2, 3.0)
    assert own_criteria(dataset, "a1") == [(EXPECTED_ANSWER_CRITERION_ID, 1.0)]
    page = auth_client.get(dataset.tasks.get(task_id="a1").get_absolute_url()).content.decode()
    assert "Matches the expected answer" in page

    copy = exported_and_back(auth_client, dataset)
    assert rows(copy) == rows(dataset)
    assert own_criteria(copy, "a1") == own_criteria(dataset, "a1")


def test_criteria_for_every_task_added_in_settings_make_answer_tasks_rubrics(auth_client, user):
    dataset = Dataset.objects.create(owner=user, name="QA")
    import_file(auth_client, dataset, "answers.json", json.dumps(ANSWERS).encode())
    version = datasets.version_save(dataset=dataset, user=user)
    assert rows(dataset)["a1"] == ("expected answer", 0, 0.0)

    url = reverse("datasets_app:dataset_settings", args=[dataset.pk])
    data = form_data(auth_client.get(url).content.decode())
    data["criteria-0-text"] = ["Shows the working."]
    data["criteria-0-weight"] = ["2"]
    assert auth_client.post(url, data).status_code == 302

    assert rows(dataset)["a1"] == ("criteria", 2, 3.0)
    assert own_criteria(dataset, "a1") == [(EXPECTED_ANSWER_CRITERION_ID, 1.0)]
    assert selectors.version_spec(version).tasks[0].criteria == (), "v1 keeps it as it was"
    copy = exported_and_back(auth_client, dataset)
    assert rows(copy) == rows(dataset)


def test_a_file_s_criteria_for_every_task_make_the_dataset_s_answer_tasks_rubrics(
    auth_client, user
):
    dataset = Dataset.objects.create(owner=user, name="QA")
    import_file(auth_client, dataset, "answers.json", json.dumps(ANSWERS).encode())
    datasets.version_save(dataset=dataset, user=user)
    auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("rubric.json", json.dumps(RUBRIC).encode())},
    )
    upload = Upload.objects.filter(dataset=dataset).latest("pk")
    effects = selectors.import_preview(upload=upload, mode="add")["effects"]
    assert (effects.regraded, effects.answer_tasks) == (1, 1), "said before the import"
    assert effects.answer_share_words == "33%", "1 of 1 + 2"
    auth_client.post(
        reverse("datasets_app:import_commit", args=[dataset.pk, upload.key]), {"mode": "add"}
    )
    assert rows(dataset)["a1"] == ("criteria", 2, 3.0)
    assert dataset.tasks.get(task_id="a1", state="draft"), "a saved task changed is a draft"
    assert dataset.versions.get().tasks.get().criteria.count() == 0, "v1 keeps it as it was"
    copy = exported_and_back(auth_client, dataset)
    assert rows(copy) == rows(dataset)
