"""Deleting a dataset, by its owner (its Settings page) or an administrator (the admin):
everything it holds goes, in one transaction, and its stored files once that commits.

The order matters: a run's results PROTECT the tasks they graded and a run PROTECTs its
version, so results, runs and versions go first; the dataset's delete then cascades to its
tasks, criteria, files and uploads.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.db import transaction

from datasets_app.importing.spec import counted
from datasets_app.models import (
    Dataset,
    ExportJob,
    Run,
    RunOutcome,
    RunResult,
    TaskFile,
    TaskState,
    Upload,
    Version,
)
from datasets_app.services import datasets


class DeleteRefused(Exception):
    """The person may not delete the dataset; the message says why."""


ONLY_THE_OWNER = "Only the dataset's owner (or an administrator) can delete it."


@dataclass(frozen=True)
class DatasetContents:
    """What deleting a dataset deletes, counted, for the confirmation to name."""

    tasks: int
    archived_tasks: int
    versions: int
    runs: int
    files: int

    @property
    def described(self) -> str:
        """ "12 tasks (3 of them archived), 2 versions, 1 run and 5 files"."""
        tasks = counted(self.tasks, "task")
        if self.archived_tasks:
            tasks += f" ({self.archived_tasks:,} of them archived)"
        parts = [
            tasks,
            counted(self.versions, "version"),
            counted(self.runs, "run"),
            counted(self.files, "file"),
        ]
        return ", ".join(parts[:-1]) + " and " + parts[-1]


def dataset_contents(dataset: Dataset) -> DatasetContents:
    """Its tasks (archived ones too: versions and runs hold them), versions, runs, and the
    files its tasks attach (stored or linked)."""
    tasks = dataset.tasks.all()
    return DatasetContents(
        tasks=tasks.count(),
        archived_tasks=tasks.filter(state=TaskState.ARCHIVED).count(),
        versions=dataset.versions.count(),
        runs=Run.objects.filter(version__dataset=dataset).count(),
        files=TaskFile.objects.filter(task__dataset=dataset).count(),
    )


def may_delete(dataset: Dataset, user: User) -> bool:
    return dataset.owner_id == user.pk or user.has_perm("datasets_app.delete_dataset")


@transaction.atomic
def dataset_delete(*, dataset: Dataset, user: User) -> DatasetContents:
    """Delete the dataset with everything it holds; returns what went. DeleteRefused for
    anyone but its owner or someone allowed to delete any dataset.

    The dataset's row is locked first, so an import into it finishes before (and its tasks
    go too) or finds it gone. Stored files are removed once the transaction commits, and
    only those no other dataset's task holds (identical bytes are stored once).
    """
    if not may_delete(dataset, user):
        raise DeleteRefused(ONLY_THE_OWNER)
    dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
    # The one case in which the database lets the rows a saved version holds go (migration
    # 0007's triggers): marked here, inside this transaction, just before they do.
    Dataset.objects.filter(pk=dataset.pk).update(deleting=True)
    contents = dataset_contents(dataset)
    names = set(
        TaskFile.objects.filter(task__dataset=dataset)
        .exclude(file="")
        .values_list("file", flat=True)
    )
    kept_uploads = [
        name
        for pair in Upload.objects.filter(dataset=dataset).values_list("file", "problems_file")
        for name in pair
        if name
    ]
    # The outputs files its runs were given: kept for those runs alone.
    kept_uploads += [
        name
        for name in Run.objects.filter(version__dataset=dataset).values_list(
            "outputs_file", flat=True
        )
        if name
    ]
    # Its exports built by a worker (`ExportJob`): kept for it alone, under a random key.
    kept_uploads += [
        name
        for name in ExportJob.objects.filter(dataset=dataset).values_list("file", flat=True)
        if name
    ]
    RunOutcome.objects.filter(run__version__dataset=dataset).delete()
    RunResult.objects.filter(run__version__dataset=dataset).delete()
    Run.objects.filter(version__dataset=dataset).delete()
    Version.objects.filter(dataset=dataset).delete()
    dataset.delete()
    datasets.stored_files_delete_unheld(names)
    transaction.on_commit(lambda: _delete_stored(kept_uploads))
    return contents


def _delete_stored(names: list[str]) -> None:
    # The files people chose to import into it: kept for it alone, under a random key.
    for name in names:
        default_storage.delete(name)
