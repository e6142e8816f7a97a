"""Every write the app makes. Views, commands, the admin and Celery tasks call these.

Each service is keyword-only, typed and atomic. Importing a checked file lives in
`importing_services.py`; this module holds the dataset's own life: create, edit, save as
a version, archive.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max

from datasets_app.importing.spec import CriterionSpec, DatasetSpec, FileSpec, TaskSpec, Verifier
from datasets_app.models import (
    Criterion,
    Dataset,
    Run,
    RunResult,
    Task,
    TaskFile,
    TaskState,
    Version,
)


class NothingToSave(Exception):
    """Saving a version needs at least one draft (or a change since the last version)."""


def dataset_create(
    *,
    owner: AbstractBaseUser,
    name: str,
    description: str = "",
    settings: dict[str, Any] | None = None,
) -> Dataset:
    dataset = Dataset(owner=owner, name=name, description=description, settings=settings or {})
    dataset.full_clean()
    dataset.save()
    return dataset


def dataset_update(
    *,
    dataset: Dataset,
    name: str,
    description: str,
    settings: dict[str, Any],
) -> Dataset:
    dataset.name = name
    dataset.description = description
    dataset.settings = settings
    dataset.full_clean()
    dataset.save()
    return dataset


def _criterion_spec(criterion: Criterion) -> CriterionSpec:
    return CriterionSpec(
        id=criterion.criterion_id,
        criterion=criterion.text,
        weight=criterion.weight,
        verifier=Verifier.from_json(criterion.verifier),
    )


def _file_spec(task_file: TaskFile) -> FileSpec:
    if task_file.url:
        return FileSpec(name=task_file.name, url=task_file.url, size=task_file.size)
    return FileSpec(
        name=task_file.name,
        path=task_file.file.name,
        size=task_file.size,
        sha256=task_file.sha256 or None,
    )


def task_spec(task: Task) -> TaskSpec:
    """One task as the checker's plan describes it (for export and snapshots).

    Expects `criteria` and `files` prefetched when called in a loop.
    """
    files = list(task.files.all())
    return TaskSpec(
        id=task.task_id,
        name=task.name,
        prompt=task.prompt,
        expected_text=task.expected_text or None,
        expected_verifier=Verifier.from_json(task.expected_verifier),
        criteria=tuple(_criterion_spec(c) for c in task.criteria.all()),
        input_files=tuple(_file_spec(f) for f in files if f.role == TaskFile.Role.INPUT),
        expected_files=tuple(_file_spec(f) for f in files if f.role == TaskFile.Role.EXPECTED),
        evidence=task.evidence or {},
    )


def dataset_spec(*, dataset: Dataset, tasks: Iterable[Task] | None = None) -> DatasetSpec:
    """The dataset's live tasks and criteria as a DatasetSpec (what a version freezes)."""
    if tasks is None:
        tasks = dataset.tasks.live().prefetch_related("criteria", "files")
    return DatasetSpec(
        name=dataset.name,
        description=dataset.description,
        settings=dataset.settings or {},
        criteria=tuple(
            _criterion_spec(c) for c in dataset.criteria.filter(task__isnull=True, archived=False)
        ),
        tasks=tuple(task_spec(t) for t in tasks),
    )


@transaction.atomic
def version_save(*, dataset: Dataset, user: AbstractBaseUser | None) -> Version:
    """Freeze the dataset's live tasks as its next version; its drafts become saved.

    The dataset row is locked first, so two people saving at once get v2 and v3, never two
    v2s; the unique constraint on (dataset, number) backs that up in the database.
    """
    from datasets_app.importing import json_format

    dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
    live = list(dataset.tasks.live().prefetch_related("criteria", "files"))
    has_drafts = any(task.state == TaskState.DRAFT for task in live)
    last = dataset.versions.aggregate(n=Max("number"))["n"] or 0
    if not has_drafts and last:
        raise NothingToSave("There are no drafts to save.")
    version = Version.objects.create(
        dataset=dataset,
        number=last + 1,
        snapshot=json.loads(json_format.write(dataset_spec(dataset=dataset, tasks=live))),
        created_by=user,
    )
    version.tasks.set(live)
    Task.objects.filter(pk__in=[t.pk for t in live if t.state == TaskState.DRAFT]).update(
        state=TaskState.SAVED
    )
    return version


def next_version_number(dataset: Dataset) -> int:
    return (dataset.versions.aggregate(n=Max("number"))["n"] or 0) + 1


@transaction.atomic
def run_create(
    *, version: Version, user: AbstractBaseUser | None, name: str = "", scores: dict[str, float]
) -> Run:
    """Record a run of `version` with a score per task id (grading happens elsewhere)."""
    run = Run.objects.create(version=version, name=name, created_by=user)
    tasks = {t.task_id: t for t in version.tasks.all()}
    RunResult.objects.bulk_create(
        RunResult(run=run, task=tasks[task_id], score=score) for task_id, score in scores.items()
    )
    return run


def latest_version(dataset: Dataset) -> Version | None:
    return dataset.versions.order_by("-number").first()


@transaction.atomic
def run_create_for_latest(
    *, dataset: Dataset, user: AbstractBaseUser | None, name: str = "", scores: dict[str, float]
) -> Run:
    """A run grades the dataset's latest saved version, never its drafts."""
    version = latest_version(dataset)
    if version is None:
        raise NothingToSave("Save the dataset as v1 before running it.")
    return run_create(version=version, user=user, name=name, scores=scores)
