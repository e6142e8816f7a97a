"""Deleting a dataset: by its owner from its Settings page (a confirmation naming what goes,
with counts), by an administrator in the admin, through one service; its stored files go
once the transaction commits, except those another dataset's task still holds."""

from __future__ import annotations

import html

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.urls import reverse

from datasets_app.models import (
    Dataset,
    Run,
    RunResult,
    Task,
    TaskFile,
    Upload,
    Version,
)
from datasets_app.services import datasets, deletion
from tests.runs import run_outputs

pytestmark = pytest.mark.django_db


def stored(name: str, data: bytes) -> str:
    return default_storage.save(name, ContentFile(data))


@pytest.fixture
def full_dataset(make_dataset, user, other_user):
    """Finance QA: 3 tasks (one archived), 2 versions, a run of each, 3 files (two stored,
    one a link), an upload; one stored file is also held by a task of bob's dataset."""
    dataset = make_dataset(tasks=2)
    own = stored("task-files/a/own.txt", b"own")
    shared = stored("task-files/b/shared.txt", b"shared")
    first, second = dataset.tasks.all()
    TaskFile.objects.create(task=first, role="input", name="own.txt", file=own, size=3)
    TaskFile.objects.create(task=first, role="input", name="shared.txt", file=shared, size=6)
    TaskFile.objects.create(task=second, role="input", name="l", url="https://e.com/l.csv")
    v1 = datasets.version_save(dataset=dataset, user=user)
    datasets.task_remove(task=second)
    Task.objects.create(dataset=dataset, task_id="t3", prompt="P3", expected_text="A3")
    v2 = datasets.version_save(dataset=dataset, user=user)
    run_outputs(v1, user, {"t1": "Answer 1", "t2": "Answer 0"})
    run_outputs(v2, user, {"t1": "Answer 0"})
    upload_file = stored("uploads/k/qa.json", b"{}")
    Upload.objects.create(
        owner=user, dataset=dataset, file=upload_file, original_name="qa.json", size=2, sha256=""
    )
    bobs = make_dataset(owner=other_user, name="Bob's", tasks=1)
    TaskFile.objects.create(
        task=bobs.tasks.get(), role="input", name="shared.txt", file=shared, size=6
    )
    dataset.shared_with.add(other_user)
    return dataset, {"own": own, "shared": shared, "upload": upload_file}


def test_the_settings_page_leads_to_a_confirmation_naming_what_goes(auth_client, full_dataset):
    dataset, _files = full_dataset
    settings_page = auth_client.get(reverse("datasets_app:dataset_settings", args=[dataset.pk]))
    delete_url = reverse("datasets_app:dataset_delete", args=[dataset.pk])
    assert delete_url in settings_page.content.decode()
    page = auth_client.get(delete_url).content.decode()
    assert "Delete Finance QA?" in page
    assert "3 tasks (1 of them archived), 2 versions, 2 runs and 3 files" in page
    assert Dataset.objects.filter(pk=dataset.pk).exists(), "asking deletes nothing"


def test_the_owner_deletes_it_with_everything_and_only_its_own_files(auth_client, full_dataset):
    dataset, files = full_dataset
    response = auth_client.post(reverse("datasets_app:dataset_delete", args=[dataset.pk]))
    assert response.url == reverse("datasets_app:dataset_list")
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    assert not Version.objects.exists() and not Run.objects.exists()
    assert not RunResult.objects.exists() and not Upload.objects.exists()
    assert list(Task.objects.values_list("dataset__name", flat=True)) == ["Bob's"]
    assert not default_storage.exists(files["own"])
    assert not default_storage.exists(files["upload"])
    assert default_storage.exists(files["shared"]), "bob's task still holds it"
    listed = auth_client.get(response.url).content.decode()
    assert "Deleted Finance QA." in listed


def test_someone_it_is_shared_with_may_not_delete_it(client, other_user, full_dataset):
    dataset, _files = full_dataset
    client.force_login(other_user)
    settings_page = client.get(reverse("datasets_app:dataset_settings", args=[dataset.pk]))
    url = reverse("datasets_app:dataset_delete", args=[dataset.pk])
    assert url not in settings_page.content.decode()
    response = client.post(url)
    assert response.status_code == 403
    assert html.escape(deletion.ONLY_THE_OWNER) in response.content.decode()
    assert Dataset.objects.filter(pk=dataset.pk).exists()


def test_someone_it_is_not_shared_with_gets_a_404(client, make_dataset, other_user):
    dataset = make_dataset()
    client.force_login(other_user)
    assert client.post(reverse("datasets_app:dataset_delete", args=[dataset.pk])).status_code == 404
    assert Dataset.objects.filter(pk=dataset.pk).exists()


def test_files_go_only_once_the_deletion_commits(
    full_dataset, user, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.undo()  # on_commit as Django has it, not run at once
    dataset, files = full_dataset
    with pytest.raises(RuntimeError), transaction.atomic():
        deletion.dataset_delete(dataset=dataset, user=user)
        raise RuntimeError("rolled back")
    assert default_storage.exists(files["own"]) and Dataset.objects.filter(pk=dataset.pk).exists()
    with django_capture_on_commit_callbacks(execute=True):
        deletion.dataset_delete(dataset=dataset, user=user)
        assert default_storage.exists(files["own"]), "not before the commit"
    assert not default_storage.exists(files["own"])
    assert default_storage.exists(files["shared"])


def test_an_administrator_deletes_through_the_admin(client, admin_user, full_dataset):
    dataset, files = full_dataset
    client.force_login(admin_user)
    url = reverse("admin:datasets_app_dataset_delete", args=[dataset.pk])
    page = client.get(url).content.decode()
    assert "3 tasks (1 of them archived), 2 versions, 2 runs and 3 files" in page
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    assert not default_storage.exists(files["own"]) and default_storage.exists(files["shared"])


def test_the_admins_bulk_delete_goes_through_the_service(client, admin_user, full_dataset):
    dataset, files = full_dataset
    bobs = Dataset.objects.get(name="Bob's")
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:datasets_app_dataset_changelist"),
        {"action": "delete_selected", "_selected_action": [dataset.pk, bobs.pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert not Dataset.objects.exists() and not TaskFile.objects.exists()
    assert not default_storage.exists(files["shared"]), "no task holds it any more"


def test_the_command_says_what_would_go_then_deletes_through_the_service(
    full_dataset, capsys, user
):
    from django.core.management import call_command

    dataset, files = full_dataset
    what = "3 tasks (1 of them archived), 2 versions, 2 runs and 3 files"

    call_command("delete_dataset", str(dataset.pk), "--user", user.username)
    assert f"Would delete “Finance QA” (id {dataset.pk}): {what}." in capsys.readouterr().out
    assert Dataset.objects.filter(pk=dataset.pk).exists()

    call_command("delete_dataset", "Finance QA", "--user", user.username, "--yes")
    assert f"Deleted “Finance QA” (id {dataset.pk}): {what}." in capsys.readouterr().out
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    assert not default_storage.exists(files["own"]) and not default_storage.exists(files["upload"])
    assert default_storage.exists(files["shared"]), "Bob's task still holds it"


def test_the_command_refuses_someone_it_is_only_shared_with(full_dataset, other_user):
    from django.core.management import CommandError, call_command

    dataset, _files = full_dataset
    with pytest.raises(CommandError, match="Only the dataset's owner"):
        call_command("delete_dataset", str(dataset.pk), "--user", other_user.username, "--yes")
    assert Dataset.objects.filter(pk=dataset.pk).exists()
