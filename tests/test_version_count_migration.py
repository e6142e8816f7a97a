"""Migration 0020: every version knows how many tasks it holds. Versions saved before it
are counted from their lists, and the count is then as frozen as the rest of a version."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from datasets_app import selectors
from datasets_app.models import Version
from datasets_app.services import datasets
from tests.migrating import migrate_to_latest, tables_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("datasets_app", "0019_upload_read_options")]


@pytest.fixture
def old_apps():
    """The tables as they were at 0019; back to the latest migration afterwards."""
    with tables_at(BEFORE) as apps:
        yield apps


def test_versions_saved_before_are_counted_and_their_count_cannot_change(old_apps, user):
    Dataset = old_apps.get_model("datasets_app", "Dataset")
    Task = old_apps.get_model("datasets_app", "Task")
    OldVersion = old_apps.get_model("datasets_app", "Version")
    dataset = Dataset.objects.create(owner_id=user.pk, name="Old")
    tasks = [
        Task.objects.create(dataset=dataset, task_id=f"t{n}", prompt="?", position=n, state="saved")
        for n in range(3)
    ]
    for number, held in ((1, tasks[:2]), (2, tasks), (3, [])):
        OldVersion.objects.create(dataset=dataset, number=number, snapshot={}).tasks.set(held)

    migrate_to_latest()

    versions = Version.objects.filter(dataset_id=dataset.pk).order_by("number")
    assert [v.task_count for v in versions] == [2, 3, 0]
    assert [v.task_count for v in selectors.versions_of(versions[0].dataset)] == [0, 3, 2]
    with pytest.raises(IntegrityError), transaction.atomic():
        Version.objects.filter(dataset_id=dataset.pk, number=2).update(task_count=7)
    assert Version.objects.get(dataset_id=dataset.pk, number=2).task_count == 3


def test_a_version_saved_now_keeps_the_count_of_the_rows_it_holds(make_dataset, user):
    dataset = make_dataset(tasks=3)

    version = datasets.version_save(dataset=dataset, user=user)

    held = Version.tasks.through.objects.filter(version=version).count()
    assert Version.objects.get(pk=version.pk).task_count == held == 3
    # Written once: not even back to empty.
    with pytest.raises(IntegrityError), transaction.atomic():
        Version.objects.filter(pk=version.pk).update(task_count=None)
