"""Storage is charged to whoever's storage it takes (issue 22, item 5): a file imported into a
dataset shared with you takes its owner's storage and is checked against theirs; uploads
sent at once are counted one after the other, so together they cannot pass the quota."""

from __future__ import annotations

import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from datasets_app.models import Upload
from datasets_app.services import imports
from tests.test_background_imports import checked_upload, dataset_zip, start_import

pytestmark = pytest.mark.django_db
MiB = 1024 * 1024


def test_an_import_into_a_shared_dataset_is_checked_against_its_owners_storage(
    make_dataset, user, other_user, settings
):
    settings.STORAGE_QUOTA_BYTES = 3 * MiB
    # The owner already keeps 2 MiB of files; the collaborator keeps nothing.
    start_import(
        checked_upload(
            user, make_dataset(), "mine.zip", dataset_zip({"a": [("a", b"a" * 2 * MiB)]})
        )
    )
    shared = make_dataset(name="Shared")
    shared.shared_with.add(other_user)
    theirs = dataset_zip({"b": [("b", b"b" * MiB)], "c": [("c", b"c" * MiB)]})

    upload = start_import(checked_upload(other_user, shared, "theirs.zip", theirs))

    assert upload.state == Upload.State.CHECKED
    assert upload.error == imports.OVER_OWNERS_QUOTA.format(
        adding="2.0\xa0MB", owner=user.get_username(), used="2.0\xa0MB", quota="3.0\xa0MB"
    )
    assert not shared.tasks.exists()
    files_used = imports.storage_used(owner=user) - sum(
        Upload.objects.filter(owner=user).values_list("size", flat=True)
    )
    assert files_used == 2 * MiB, "the owner's storage holds what it held"


def test_what_a_collaborator_imports_counts_in_the_owners_storage(make_dataset, user, other_user):
    shared = make_dataset(name="Shared")
    shared.shared_with.add(other_user)
    before = imports.storage_used(owner=user)

    start_import(
        checked_upload(other_user, shared, "t.zip", dataset_zip({"b": [("b", b"b" * MiB)]}))
    )

    assert imports.storage_used(owner=user) == before + MiB


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_uploads_sent_at_once_cannot_pass_the_quota_together(user, settings):
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL; this runs in the PostgreSQL pass of make test")
    settings.STORAGE_QUOTA_BYTES = 3 * MiB
    size = int(0.9 * MiB)
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def send(n: int) -> None:
        try:
            barrier.wait()
            file = SimpleUploadedFile(f"{n}.csv", b"x" * size)
            imports.upload_create(owner=user, dataset=None, uploaded_file=file)
            outcomes.append("kept")
        except imports.OverQuota:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(outcomes) == ["kept"] * 3 + ["refused"] * 5
    assert imports.storage_used(owner=user) == 3 * size <= settings.STORAGE_QUOTA_BYTES
