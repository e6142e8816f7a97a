"""A saved version never changes (issue 22): not through the task form racing a Replace, not
in the admin, not by a raw UPDATE. Whatever happens, `?version=N` over the API reads what
the version's export holds."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import hypothesis
import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from datasets_app import selectors
from datasets_app.admin import TASK_ARCHIVED_BEFORE_SAVED
from datasets_app.models import Criterion, Dataset, Task, TaskFile, TaskState, Upload, Version
from datasets_app.services import datasets, imports
from tests.as_rendered import form_data
from tests.datasets import assert_version_reads_as_exported, import_file, spec_zip
from tests.importing.strategies import dataset_specs

pytestmark = pytest.mark.django_db


def replace_file(*task_ids: str) -> bytes:
    tasks = [{"id": i, "prompt": f"New prompt {i}", "expected": "Yes"} for i in task_ids]
    return json.dumps({"format": "context-evals-dataset", "version": 1, "tasks": tasks}).encode()


@pytest.fixture
def saved(make_dataset, user):
    """v1 holds t1 and t2 (t2 with a criterion)."""
    dataset = make_dataset(tasks=2)
    datasets.version_save(dataset=dataset, user=user)
    return dataset


def assert_v1_intact(user, dataset: Dataset) -> None:
    held = assert_version_reads_as_exported(user, dataset, 1)
    assert [row[2] for row in held] == ["Prompt 1", "Prompt 2"]
    assert [row[5] for row in held] == [[], [("c1", "Is right", 2.0, None)]]


# --- The database refuses, whoever asks --------------------------------------------------


def refused(statement) -> str:
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        statement()
    return str(caught.value)


def test_the_database_refuses_to_change_what_a_version_holds(saved):
    task = saved.tasks.get(task_id="t2")
    criterion = task.criteria.get()
    version = saved.versions.get()

    message = refused(lambda: Task.objects.filter(pk=task.pk).update(prompt="Edited"))
    assert "A saved version holds this task" in message
    table = Task._meta.db_table
    refused(lambda: connection.cursor().execute(f"UPDATE {table} SET name = 'x'"))
    refused(lambda: Task.objects.filter(pk=task.pk).update(position=9))
    refused(lambda: Task.objects.filter(pk=task.pk).update(state=TaskState.DRAFT))
    refused(lambda: Task.objects.filter(pk=task.pk).delete())
    refused(lambda: Criterion.objects.filter(pk=criterion.pk).update(text="Edited"))
    refused(lambda: Criterion.objects.filter(pk=criterion.pk).delete())
    refused(lambda: Version.objects.filter(pk=version.pk).update(snapshot={}))
    refused(lambda: Version.objects.filter(pk=version.pk).update(task_count=99))
    other = Task.objects.create(dataset=saved, task_id="other", prompt="Other", position=5)
    through = Version.tasks.through.objects.filter(task_id=task.pk)
    refused(lambda: through.update(task_id=other.pk))
    refused(lambda: through.delete())

    assert Task.objects.get(pk=task.pk).prompt == "Prompt 2"
    assert Criterion.objects.get(pk=criterion.pk).text == "Is right"


# What of a held row may still change: its place in the live dataset (saved or archived),
# its review marks and when it last changed, and a version's author (a person deleted).
MAY_MOVE = {
    Task: {"id", "state", "reviewed_at", "reviewed_by", "created_at", "updated_at"},
    Criterion: {"id"},
    TaskFile: {"id"},
    Version: {"id", "created_by", "created_at"},
}


def _another_value(field, row, other_dataset):
    value = getattr(row, field.attname)
    kind = field.get_internal_type()
    if field.name == "dataset":
        return other_dataset.pk
    if field.is_relation:
        return Task.objects.exclude(pk=value).values_list("pk", flat=True).first()
    if kind == "BooleanField":
        return not value
    if kind in {"IntegerField", "PositiveIntegerField", "BigIntegerField", "FloatField"}:
        return (value or 0) + 1
    if kind == "JSONField":
        return {"changed": True}
    if kind == "DateTimeField":
        return timezone.now()
    return "z"


@pytest.mark.parametrize("model", [Task, Criterion, TaskFile, Version], ids=lambda m: m.__name__)
def test_every_column_of_a_held_row_is_refused_but_its_place(make_dataset, user, model):
    """Column by column, so that a column added later is held too, or named here as one
    that may move."""
    dataset = make_dataset(tasks=2)
    task = dataset.tasks.get(task_id="t2")
    TaskFile.objects.create(task=task, role="input", name="a.pdf", url="https://example.com/a")
    datasets.version_save(dataset=dataset, user=user)
    row = {
        Task: task,
        Criterion: task.criteria.first(),
        TaskFile: task.files.first(),
        Version: dataset.versions.first(),
    }[model]
    other = make_dataset(name="Other", tasks=1)
    held = [f for f in model._meta.concrete_fields if f.name not in MAY_MOVE[model]]
    assert held, "something is held"
    rows = model.objects.filter(pk=row.pk)
    for field in held:
        change = {field.attname: _another_value(field, row, other)}
        message = refused(lambda change=change: rows.update(**change))
        assert "A saved version holds this" in message, field.name


def test_a_held_task_may_only_move_in_and_out_of_the_live_dataset(saved):
    task = saved.tasks.get(task_id="t1")
    Task.objects.filter(pk=task.pk).update(state=TaskState.ARCHIVED)
    Task.objects.filter(pk=task.pk).update(state=TaskState.SAVED)
    assert Task.objects.get(pk=task.pk).state == TaskState.SAVED
    draft = Task.objects.create(dataset=saved, task_id="d", prompt="Draft", position=3)
    Task.objects.filter(pk=draft.pk).update(prompt="A draft is anyone's to change")
    Task.objects.filter(pk=draft.pk).delete()


def test_files_of_a_held_task_are_refused_too(make_dataset, user):
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    TaskFile.objects.create(task=task, role="input", name="a.pdf", url="https://example.com/a")
    datasets.version_save(dataset=dataset, user=user)
    refused(lambda: TaskFile.objects.filter(task=task).update(url="https://example.com/b"))
    refused(lambda: TaskFile.objects.filter(task=task).delete())


def test_a_dataset_marked_deleting_may_lose_its_held_rows(saved):
    Dataset.objects.filter(pk=saved.pk).update(deleting=True)
    Dataset.objects.get(pk=saved.pk).delete()
    assert not Task.objects.exists() and not Version.objects.exists()


# --- The task form racing a Replace --------------------------------------------------------


def test_an_edit_that_lands_after_a_replace_is_refused_and_keeps_what_was_typed(
    auth_client, saved, user
):
    task = saved.tasks.get(task_id="t1")
    url = reverse("datasets_app:task_edit", args=[saved.pk, task.pk])
    data = form_data(auth_client.get(url).content.decode(), having="prompt")
    data["prompt"] = ["My careful edit"]
    # The Replace lands between opening the form and saving it; its file holds t1 too.
    import_file(auth_client, saved, "new.json", replace_file("t1", "t3"), mode="replace")

    page = auth_client.post(url, data).content.decode()

    assert datasets.TASK_ARCHIVED_MEANWHILE.replace("'", "&#x27;") in page
    assert "My careful edit" in page, "what the person typed is still in the form"
    live = dict(saved.tasks.live().values_list("task_id", "prompt"))
    assert live == {"t1": "New prompt t1", "t3": "New prompt t3"}, "no task came back to life"
    assert_v1_intact(user, saved)


def test_an_id_taken_while_editing_is_refused_under_the_lock(saved):
    # The form refuses a taken id as it is sent; an import can still take it between the
    # form's check and the save, where the save refuses it too (not an IntegrityError).
    Task.objects.create(dataset=saved, task_id="late", prompt="Imported", position=5)
    task = saved.tasks.get(task_id="t1")
    spec = selectors.task_spec(task)

    with pytest.raises(datasets.TaskNotEditable) as caught:
        datasets.task_save(dataset=saved, task=task, spec=replace(spec, id="late"))

    assert str(caught.value) == datasets.TASK_ID_TAKEN_MEANWHILE.format(id="late")
    assert Task.objects.get(pk=task.pk).task_id == "t1"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_edits_racing_a_replace_never_change_the_version(make_dataset, user):
    """Real concurrency: the Replace holds the dataset's lock while it archives; each edit
    waits on it, then must see the task archived and refuse."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL; this runs in the PostgreSQL pass of make test")
    dataset = make_dataset(tasks=2)
    datasets.version_save(dataset=dataset, user=user)
    client = Client()
    client.force_login(user)
    task = dataset.tasks.get(task_id="t1")
    url = reverse("datasets_app:task_edit", args=[dataset.pk, task.pk])
    data = form_data(client.get(url).content.decode(), having="prompt")
    data["prompt"] = ["Edited during the Replace"]
    locked, pages = threading.Event(), []

    def replace() -> None:
        try:
            with transaction.atomic():
                Dataset.objects.select_for_update().get(pk=dataset.pk)
                locked.set()
                time.sleep(0.3)  # the edits arrive and wait on the lock
                Task.objects.filter(dataset=dataset).update(state=TaskState.ARCHIVED)
        finally:
            connection.close()

    def edit() -> None:
        try:
            locked.wait(5)
            pages.append(client.post(url, data).content.decode())
        finally:
            connection.close()

    threads = [threading.Thread(target=replace)] + [threading.Thread(target=edit) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert len(pages) == 3
    assert all(datasets.TASK_ARCHIVED_MEANWHILE.replace("'", "&#x27;") in p for p in pages)
    assert not dataset.tasks.live().exists()
    assert_v1_intact(user, dataset)


# --- The admin ------------------------------------------------------------------------------


@pytest.fixture
def admin_client_(admin_user):
    client = Client()  # beside auth_client, the dataset's owner
    client.force_login(admin_user)
    return client


def test_the_admin_shows_an_archived_task_and_changes_nothing(admin_client_, saved, user):
    task = saved.tasks.get(task_id="t2")
    datasets.task_remove(task=task)
    url = reverse("admin:datasets_app_task_change", args=[task.pk])
    page = admin_client_.get(url).content.decode()
    assert "View task" in page and 'name="prompt"' not in page

    response = admin_client_.post(url, {"prompt": "Edited"}, follow=True)
    assert response.redirect_chain == [(url, 302)]
    assert TASK_ARCHIVED_BEFORE_SAVED in response.content.decode().replace("&#x27;", "'")
    assert 'name="prompt"' not in response.content.decode(), "still view-only"
    assert Task.objects.get(pk=task.pk).prompt == "Prompt 2"
    assert_v1_intact(user, saved)


def test_an_admin_edit_of_a_saved_task_and_its_criteria_leaves_the_version(
    admin_client_, saved, user
):
    task = saved.tasks.get(task_id="t2")
    url = reverse("admin:datasets_app_task_change", args=[task.pk])
    data = form_data(admin_client_.get(url).content.decode(), having="prompt")
    data["prompt"] = ["Edited in the admin"]
    data["criteria-0-text"] = ["Edited criterion"]

    response = admin_client_.post(url, data)

    assert response.status_code == 302
    task.refresh_from_db()
    assert (task.prompt, task.state) == ("Edited in the admin", TaskState.DRAFT)
    assert list(task.criteria.values_list("text", flat=True)) == ["Edited criterion"]
    assert_v1_intact(user, saved)


def test_an_admin_inline_removing_a_saved_tasks_file_and_criterion_leaves_the_version(
    admin_client_, make_dataset, user
):
    dataset = make_dataset(tasks=2)
    task = dataset.tasks.get(task_id="t2")
    TaskFile.objects.create(task=task, role="input", name="a.pdf", url="https://example.com/a")
    datasets.version_save(dataset=dataset, user=user)
    held = assert_version_reads_as_exported(user, dataset, 1)
    url = reverse("admin:datasets_app_task_change", args=[task.pk])
    data = form_data(admin_client_.get(url).content.decode(), having="prompt")
    data["files-0-DELETE"] = ["on"]
    data["criteria-0-DELETE"] = ["on"]

    assert admin_client_.post(url, data).status_code == 302

    task.refresh_from_db()
    assert task.state == TaskState.DRAFT
    assert not task.files.exists() and not task.criteria.exists()
    assert assert_version_reads_as_exported(user, dataset, 1) == held
    assert held[1][5:7] == (
        [("c1", "Is right", 2.0, None)],
        [("input", "a.pdf", "https://example.com/a", None)],
    )


def test_an_admin_edit_of_a_task_a_replace_archived_meanwhile_is_refused(
    admin_client_, auth_client, saved, user
):
    task = saved.tasks.get(task_id="t1")
    url = reverse("admin:datasets_app_task_change", args=[task.pk])
    data = form_data(admin_client_.get(url).content.decode(), having="prompt")
    data["prompt"] = ["Edited in the admin"]
    import_file(auth_client, saved, "new.json", replace_file("t9"), mode="replace")

    response = admin_client_.post(url, data, follow=True)

    # Opened while live, archived by the time it was sent: view-only now, never changed,
    # and the page says why.
    assert response.status_code == 200
    assert TASK_ARCHIVED_BEFORE_SAVED in response.content.decode().replace("&#x27;", "'")
    assert Task.objects.get(pk=task.pk).prompt == "Prompt 1"
    assert_v1_intact(user, saved)


def test_the_admin_never_deletes_a_task_a_version_holds(admin_client_, saved, user):
    task = saved.tasks.get(task_id="t1")
    delete_url = reverse("admin:datasets_app_task_delete", args=[task.pk])
    assert admin_client_.get(delete_url).status_code == 403
    assert admin_client_.post(delete_url, {"post": "yes"}).status_code == 403

    draft = Task.objects.create(dataset=saved, task_id="d1", prompt="Draft", position=2)
    changelist = reverse("admin:datasets_app_task_changelist")
    selected = {"action": "delete_selected", "_selected_action": [task.pk, draft.pk]}
    page = admin_client_.post(changelist, selected).content.decode()
    assert "doesn’t have permission to delete" in page or "permission to delete" in page
    admin_client_.post(changelist, {**selected, "post": "yes"})

    assert saved.tasks.count() == 3, "nothing was deleted"
    assert_v1_intact(user, saved)


@pytest.mark.parametrize("action", ["delete_drafts", "mark_reviewed", "delete_selected"])
def test_the_admins_bulk_actions_on_held_rows_leave_the_version(admin_client_, saved, user, action):
    """Every action of the task list, on all of v1's tasks and a draft, with the held
    archived copy of an edited task among them: v1 reads as exported, as saved."""
    Task.objects.create(dataset=saved, task_id="d1", prompt="Draft", position=2)
    edited = saved.tasks.get(task_id="t1")
    spec = replace(selectors.task_spec(edited), prompt="Edited")
    datasets.task_save(dataset=saved, task=edited, spec=spec)  # v1 keeps an archived copy
    changelist = reverse("admin:datasets_app_task_changelist")
    selected = list(Task.objects.values_list("pk", flat=True))
    admin_client_.post(changelist, {"action": action, "_selected_action": selected, "post": "yes"})

    assert_v1_intact(user, saved)
    held = Task.objects.filter(versions__number=1, versions__dataset=saved)
    assert held.count() == 2


# --- Replace archives exactly what its dialog listed ---------------------------------------


def test_an_add_that_lands_before_the_replace_runs_is_not_archived(
    auth_client, saved, user, monkeypatch
):
    """The Replace was clicked while its list was current; an Add committed before the
    worker took it. The worker refuses the Replace: the Add's tasks stay, nothing is
    archived, and the dialog lists what Replace would archive now."""
    from datasets_app import tasks as celery_tasks

    waiting: list[tuple] = []
    real_enqueue = celery_tasks.enqueue
    monkeypatch.setattr(celery_tasks, "enqueue", lambda task, *args: waiting.append(args))
    auth_client.post(
        reverse("datasets_app:import_check", args=[saved.pk]),
        {"file": _file("new.json", replace_file("t1")), "mode": "replace"},
    )
    upload = Upload.objects.filter(dataset=saved).latest("pk")
    for args in waiting:
        celery_tasks.check_upload(*args)
    waiting.clear()
    status = reverse("datasets_app:import_status", args=[saved.pk, upload.key]) + "?mode=replace"
    data = form_data(auth_client.get(status).content.decode(), having="archives")
    commit = reverse("datasets_app:import_commit", args=[saved.pk, upload.key])
    auth_client.post(commit, data)  # claimed; the worker has not started yet
    assert len(waiting) == 1

    monkeypatch.setattr(celery_tasks, "enqueue", real_enqueue)
    added = replace_file(*(f"late-{n}" for n in range(20)))
    import_file(auth_client, saved, "late.json", added)
    celery_tasks.import_upload(*waiting[0])

    upload.refresh_from_db()
    assert (upload.state, upload.error) == (Upload.State.CHECKED, imports.REPLACE_LIST_CHANGED)
    assert saved.tasks.live().filter(task_id__startswith="late-").count() == 20
    page = auth_client.get(status).content.decode()
    assert "Replace archives 22 tasks" in page
    assert_v1_intact(user, saved)


def _file(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data)


def test_a_held_task_s_metadata_cannot_change(saved):
    task = saved.tasks.get(task_id="t1")

    message = refused(lambda: Task.objects.filter(pk=task.pk).update(metadata={"split": "x"}))

    assert "A saved version holds this task" in message
    draft = Task.objects.create(dataset=saved, task_id="d", prompt="Draft", position=3)
    Task.objects.filter(pk=draft.pk).update(metadata={"split": "dev"})
    assert Task.objects.get(pk=draft.pk).metadata == {"split": "dev"}


# --- ?version=N is the version's export, whatever the tasks hold ---------------------------


@hypothesis.settings(
    max_examples=8,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture],
)
@hypothesis.given(
    first=dataset_specs(with_paths=True, max_tasks=3),
    second=dataset_specs(with_paths=True, max_tasks=3),
)
def test_a_version_reads_as_its_export_before_and_after_a_replace(client, first, second):
    """Generated datasets (stored files, links, criteria, verifiers, metadata): v1 read over
    the API is its export, and stays so, unchanged, after a Replace saved as v2."""
    owner = get_user_model().objects.get_or_create(username="owner")[0]
    client.force_login(owner)
    dataset = Dataset.objects.create(owner=owner, name="Generated")
    import_file(client, dataset, "first.zip", spec_zip(first))
    datasets.version_save(dataset=dataset, user=owner)
    v1 = assert_version_reads_as_exported(owner, dataset, 1)
    assert [row[0] for row in v1] == [task.id for task in first.tasks]

    import_file(client, dataset, "second.zip", spec_zip(second), mode="replace")
    datasets.version_save(dataset=dataset, user=owner)

    assert assert_version_reads_as_exported(owner, dataset, 1) == v1
    v2 = assert_version_reads_as_exported(owner, dataset, 2)
    assert [row[0] for row in v2] == [task.id for task in second.tasks]
