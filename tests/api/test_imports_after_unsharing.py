"""GET /imports/{id} after the dataset was unshared from the person who imported: what
they uploaded (the file's name, its check), none of the dataset's tasks."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from datasets_app.services import sharing
from tests.conftest import FILES

TWO_TASKS = (FILES / "json" / "expected_answers_template.json").read_bytes()


@pytest.mark.django_db
def test_after_unsharing_an_import_shows_none_of_the_datasets_tasks(
    api, user, other_user, make_dataset
):
    dataset = make_dataset(owner=other_user)
    dataset.shared_with.add(user)
    body = api.post(
        f"/api/v1/datasets/{dataset.pk}/imports", {"file": SimpleUploadedFile("qa.json", TWO_TASKS)}
    ).json()
    assert body["state"] == "imported" and len(body["tasks"]) == 2
    # The owner renames a task, then stops sharing.
    dataset.tasks.filter(task_id="yoy-growth").update(name="Owner's secret plan")
    sharing.dataset_unshare(dataset=dataset, by=other_user, user_id=user.pk)
    after = api.get(f"/api/v1/imports/{body['id']}")
    assert after.status_code == 200
    shown = after.json()
    assert shown["tasks"] == [] and "secret" not in after.content.decode()
    assert (shown["file"], shown["task_count"], shown["state"]) == ("qa.json", 2, "imported")


@pytest.mark.django_db
def test_after_unsharing_a_checked_add_shows_no_clash_with_the_datasets_ids(
    api, user, other_user, make_dataset
):
    dataset = make_dataset(owner=other_user)
    dataset.shared_with.add(user)
    path = f"/api/v1/datasets/{dataset.pk}/imports"
    api.post(path, {"file": SimpleUploadedFile("qa.json", TWO_TASKS)})
    second = api.post(path, {"file": SimpleUploadedFile("qa.json", TWO_TASKS)}).json()
    assert {p["code"] for p in second["problems"]} == {"task_id_taken"}
    sharing.dataset_unshare(dataset=dataset, by=other_user, user_id=user.pk)
    shown = api.get(f"/api/v1/imports/{second['id']}").json()
    assert shown["problems"] == []
