"""What imports keep in the storage (issue 15, items 4 and 7): identical bytes once, whoever
imports them and however often, no more than a person's quota, and everything the checker
passes fits the database. A 2.3 MB zip of 2,000 files of 1 MiB of zeros used to store
2 GiB, every time it was imported."""

from __future__ import annotations

import io
import json
import os
import zipfile

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app.importing.spec import (
    MAX_FILE_NAME_BYTES,
    MAX_ID_CHARS,
    MAX_TASK_NAME_CHARS,
    MAX_URL_CHARS,
)
from datasets_app.models import Task, TaskFile, Upload
from datasets_app.services import datasets, imports
from tests.test_background_imports import checked_upload, dataset_zip, start_import

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024


def stored_files() -> list[str]:
    """Every file under the storage's task-files/ folder."""
    root = default_storage.path("task-files")
    return [os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names]


def uploads_bytes(owner) -> int:
    """What the person's uploads (kept a day) take."""
    return sum(upload.size for upload in Upload.objects.filter(owner=owner))


def stored_bytes() -> int:
    return sum(os.path.getsize(path) for path in stored_files())


def test_identical_members_of_one_zip_are_stored_once(make_dataset, user):
    zeros = bytes(MiB)
    files = {f"t{n}": [(f"{n}-a.bin", zeros), (f"{n}-b.bin", zeros)] for n in range(10)}
    upload = start_import(checked_upload(user, make_dataset(), "zeros.zip", dataset_zip(files)))

    assert upload.state == Upload.State.IMPORTED
    assert TaskFile.objects.count() == 20
    assert len({task_file.file.name for task_file in TaskFile.objects.all()}) == 1
    assert stored_bytes() == MiB


def test_importing_the_same_files_again_stores_nothing_more(make_dataset, user, other_user):
    files = {"a": [("one.csv", b"x,y\n1,2\n")], "b": [("two.pdf", b"%PDF-1.4 two")]}
    data = dataset_zip(files)
    start_import(checked_upload(user, make_dataset(), "set.zip", data))
    before = sorted(stored_files())

    # Into another dataset, by another person: their tasks hold the same stored files.
    theirs = make_dataset(owner=other_user, name="Theirs")
    upload = start_import(checked_upload(other_user, theirs, "set.zip", data))

    assert upload.state == Upload.State.IMPORTED
    assert sorted(stored_files()) == before
    for task in Task.objects.filter(dataset=theirs):
        with task.files.get().file.open("rb") as stored:
            assert stored.read() == dict(files[task.task_id])[task.files.get().name]


def test_a_shared_file_removed_while_an_import_runs_stops_the_import(
    make_dataset, user, monkeypatch
):
    data = dataset_zip({"a": [("one.csv", b"x,y\n1,2\n")]})
    first = make_dataset()
    start_import(checked_upload(user, first, "set.zip", data))
    second = make_dataset(name="Second")
    upload = checked_upload(user, second, "set.zip", data)
    store = imports._store_files

    def store_then_remove_the_draft(*args, **kwargs):
        placed = store(*args, **kwargs)
        datasets.task_remove(task=first.tasks.get())  # the only other task holding the file
        return placed

    monkeypatch.setattr(imports, "_store_files", store_then_remove_the_draft)
    upload = start_import(upload)

    assert upload.state == Upload.State.CHECKED
    assert upload.error == imports.FILES_REMOVED_MEANWHILE
    assert not second.tasks.exists()
    assert stored_files() == []  # the removed draft's file went with it; nothing was left


def test_removing_a_draft_keeps_a_file_another_task_holds(make_dataset, user):
    data = dataset_zip({"a": [("one.csv", b"x,y\n1,2\n")]})
    first, second = make_dataset(), make_dataset(name="Second")
    start_import(checked_upload(user, first, "set.zip", data))
    start_import(checked_upload(user, second, "set.zip", data))

    datasets.task_remove(task=first.tasks.get())

    kept = second.tasks.get().files.get()
    assert default_storage.exists(kept.file.name)
    datasets.task_remove(task=second.tasks.get())
    assert not default_storage.exists(kept.file.name)


def test_an_import_past_the_persons_quota_is_refused_and_stores_nothing(
    make_dataset, user, settings
):
    settings.STORAGE_QUOTA_BYTES = 3 * MiB
    first = {"a": [("a.bin", b"a" * MiB)], "b": [("b.bin", b"b" * MiB)]}
    start_import(checked_upload(user, make_dataset(), "first.zip", dataset_zip(first)))
    dataset = make_dataset(name="Second")
    more = {"c": [("c.bin", b"c" * MiB)], "d": [("d.bin", b"d" * MiB)]}

    upload = start_import(checked_upload(user, dataset, "more.zip", dataset_zip(more)))

    assert upload.state == Upload.State.CHECKED
    assert upload.error == imports.OVER_QUOTA.format(
        adding="2.0\xa0MB", used="2.0\xa0MB", quota="3.0\xa0MB"
    )
    assert not dataset.tasks.exists()
    assert stored_bytes() == 2 * MiB
    assert imports.storage_used(owner=user) == 2 * MiB + uploads_bytes(user)


def test_files_a_person_already_stores_do_not_count_again(make_dataset, user, settings):
    settings.STORAGE_QUOTA_BYTES = 3 * MiB
    data = dataset_zip({"a": [("a.bin", b"a" * MiB)], "b": [("b.bin", b"b" * MiB)]})
    start_import(checked_upload(user, make_dataset(), "first.zip", data))

    upload = start_import(checked_upload(user, make_dataset(name="Again"), "first.zip", data))

    assert upload.state == Upload.State.IMPORTED
    assert imports.storage_used(owner=user) == 2 * MiB + uploads_bytes(user)


def test_a_file_past_the_persons_quota_is_refused_before_it_is_kept(
    auth_client, make_dataset, settings
):
    settings.STORAGE_QUOTA_BYTES = 100_000
    dataset = make_dataset()
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    big = SimpleUploadedFile("big.json", b'{"tasks": []}' + b" " * 120_000)

    page = auth_client.post(url, {"file": big}, HTTP_HX_REQUEST="true").content.decode()

    assert "would take you past the 97.7\xa0KB each person can store" in page
    assert not Upload.objects.exists()


def test_values_at_every_database_limit_pass_the_check_and_import(make_dataset, user):
    # The checker's limits are the database's (run on PostgreSQL too, whose columns enforce
    # them): what it passes, the import writes.
    link = "https://example.com/" + "a" * (MAX_URL_CHARS - len("https://example.com/"))
    name = "é" * (MAX_FILE_NAME_BYTES // 2) + "x"  # 255 bytes
    task = {
        "id": "i" * MAX_ID_CHARS,
        "name": "n" * MAX_TASK_NAME_CHARS,
        "prompt": "Read both.",
        "criteria": [{"id": "c" * MAX_ID_CHARS, "criterion": "Reads both"}],
        "inputFiles": [{"url": link, "name": "page.html"}, {"path": "a.csv", "name": name}],
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dataset.json", json.dumps({"tasks": [task]}))
        archive.writestr("a.csv", "x\n1\n")
    dataset = make_dataset()

    upload = start_import(checked_upload(user, dataset, "limits.zip", buffer.getvalue()))

    assert upload.state == Upload.State.IMPORTED, upload.error
    imported = dataset.tasks.get()
    assert (imported.task_id, imported.name) == (task["id"], task["name"])
    assert imported.criteria.get().criterion_id == "c" * MAX_ID_CHARS
    assert sorted((f.name, f.url) for f in imported.files.all()) == sorted(
        [("page.html", link), (name, "")]
    )
