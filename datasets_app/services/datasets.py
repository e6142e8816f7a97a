"""A dataset's own life: creating and editing it, its tasks and settings, saving it as a
version, and recording runs of a version."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.db.models import F, Max, QuerySet
from django.utils import timezone

from datasets_app import selectors
from datasets_app.importing import json_format
from datasets_app.importing.spec import (
    EXPECTED_ANSWER_CRITERION_ID,
    CriterionSpec,
    TaskSpec,
    expected_answer_verifier,
    graded_as_rubric,
)
from datasets_app.models import (
    Criterion,
    Dataset,
    RunResult,
    Task,
    TaskFile,
    TaskState,
    Version,
)
from datasets_app.services import limits


class NothingToSave(Exception):
    """Saving a version needs a change since the last one (a draft, a removed task, edited
    settings or criteria for every task)."""


NOTHING_TO_SAVE = "Nothing has changed since the latest version, so there is nothing to save."


class NotAllReviewed(Exception):
    """The dataset requires every draft reviewed before it is saved, and some are not."""


NOT_ALL_REVIEWED = (
    "{name} requires every draft reviewed before it is saved, and {count} not reviewed yet. "
    "Review them (Review drafts), or turn the requirement off in its Settings."
)


@transaction.atomic
def dataset_create(
    *,
    owner: User,
    name: str,
    description: str = "",
    settings: dict[str, Any] | None = None,
) -> Dataset:
    """A new, empty dataset; LimitReached past MAX_DATASETS_PER_PERSON of `owner`'s."""
    limits.datasets_check(owner=owner)
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
    require_review: bool | None = None,
) -> Dataset:
    """Change its name, description and settings; `require_review` None leaves it as is."""
    dataset.name = name
    dataset.description = description
    dataset.settings = settings
    if require_review is not None:
        dataset.require_review = require_review
    dataset.full_clean()
    dataset.save()
    return dataset


@transaction.atomic
def version_save(*, dataset: Dataset, user: User | None) -> Version:
    """Freeze the dataset's live tasks as its next version; its drafts become saved.

    The dataset row is locked first, so two people saving at once get v2 and v3, never two
    v2s; the unique constraint on (dataset, number) backs that up in the database.

    A dataset that requires its drafts reviewed is saved only once every one is
    (`NotAllReviewed` otherwise), as they are under the lock.
    """
    dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
    if not selectors.unsaved_changes(dataset):
        raise NothingToSave(NOTHING_TO_SAVE)
    if dataset.require_review:
        unreviewed = selectors.draft_counts(dataset).unreviewed
        if unreviewed:
            count = "1 is" if unreviewed == 1 else f"{unreviewed:,} are"
            raise NotAllReviewed(NOT_ALL_REVIEWED.format(name=dataset.name, count=count))
    last = dataset.versions.aggregate(n=Max("number"))["n"] or 0
    version = Version.objects.create(
        dataset=dataset,
        number=last + 1,
        snapshot=version_head_document(dataset),
        created_by=user,
    )
    # Drafts become saved before the version holds them: a task no version holds yet
    # changes without the held-row check of migration 0007 running for each of them. The
    # live drafts are the dataset's drafts (an archived task is never a draft): one
    # statement, not a list of ids. Only what changed since the last version is a draft.
    dataset.tasks.filter(state=TaskState.DRAFT).update(state=TaskState.SAVED)
    # The count is what the list received, whatever changed meanwhile: written once, here
    # (the database refuses to change it after, migration 0020).
    version.task_count = version_link_live_tasks(version=version)
    Version.objects.filter(pk=version.pk).update(task_count=version.task_count)
    return version


def version_head_document(dataset: Dataset) -> dict[str, Any]:
    """What a version's row keeps (`Version.snapshot`): the dataset's name, description,
    settings and criteria for every task, as the .json format writes them. Its tasks are
    the rows it holds, never copied into it."""
    document = json_format.to_document(selectors.dataset_spec(dataset=dataset, tasks=()))
    del document["tasks"]
    return document


def version_link_live_tasks(*, version: Version) -> int:
    """Make `version` hold its dataset's live tasks, and say how many: one INSERT ... SELECT
    of their keys, written by the database itself (no row passes through Python), whatever
    their number.

    The rows it links are shared with the versions before it wherever a task did not
    change since: a task a version holds never changes (migration 0007), and an edit of
    one is a new row (`task_keep_saved_copy`). So a version costs one small row a task
    in the database, and its content costs what changed.
    """
    through = Version.tasks.through
    quote = connection.ops.quote_name
    task = Task._meta
    # Only the models' own quoted names are put in the statement; the values are parameters.
    sql = (
        f"INSERT INTO {quote(through._meta.db_table)} ({quote('version_id')}, {quote('task_id')}) "  # noqa: S608
        f"SELECT %s, {quote('id')} FROM {quote(task.db_table)} "
        f"WHERE {quote('dataset_id')} = %s AND {quote('state')} <> %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [version.pk, version.dataset_id, TaskState.ARCHIVED])
        return cursor.rowcount


# --- Editing tasks and settings by hand -----------------------------------------------------


def task_unchanged(task: Task, spec: TaskSpec) -> bool:
    """Whether `spec` says what the task already holds (the task form carries no files and
    no retrieval evidence, so those are the task's own)."""
    current = selectors.task_spec(task)
    return (
        replace(
            spec,
            input_files=current.input_files,
            expected_files=current.expected_files,
            evidence=current.evidence,
        )
        == current
    )


def task_keep_saved_copy(*, task: Task) -> Task:
    """Before a saved task changes: an archived copy of it takes its place in the versions
    and runs that hold it, so that they keep what they graded, and the task becomes a draft
    (so the dataset offers its next Save as vN). Returns the copy.

    The one way a saved task is changed, by the task form and the admin alike.
    """
    copy = Task.objects.get(pk=task.pk)
    criteria, files = list(copy.criteria.all()), list(copy.files.all())
    copy.pk = None
    copy.state = TaskState.ARCHIVED
    copy.save()
    for row in (*criteria, *files):
        row.pk = None
        row.task = copy  # type: ignore[attr-defined]  # both kinds of row have a task
    Criterion.objects.bulk_create(criteria)
    TaskFile.objects.bulk_create(files)
    Version.tasks.through.objects.filter(task_id=task.pk).update(task_id=copy.pk)
    RunResult.objects.filter(task_id=task.pk).update(task_id=copy.pk)
    Task.objects.filter(pk=task.pk).update(state=TaskState.DRAFT, updated_at=timezone.now())
    task.state = TaskState.DRAFT
    return copy


def dataset_tasks_changed(*, dataset_id: int) -> None:
    """Count a write of the dataset's tasks (`DatasetTasksChange`), in the caller's
    transaction: one statement, which waits for another write of the same dataset's tasks
    to commit first, so that the count read afterwards covers both."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO datasets_app_datasettaskschange (dataset_id, changes) VALUES (%s, 1) "
            "ON CONFLICT (dataset_id) DO UPDATE "
            "SET changes = datasets_app_datasettaskschange.changes + 1",
            [dataset_id],
        )


class TaskNotEditable(Exception):
    """An edit that cannot land as it is: the task left the dataset, or its id was taken,
    while the person was editing it. The message says which, for the person."""


TASK_ARCHIVED_MEANWHILE = (
    "This task was removed from the dataset while you were editing it (a Replace or a "
    "removal archived it), so your changes were not saved. What you typed is still in the "
    "form: add it as a new task if you still need it."
)
TASK_ID_TAKEN_MEANWHILE = (
    "Another task of this dataset took the id '{id}' while you were editing (an import or "
    "another person). Give this task another id."
)


@transaction.atomic
def task_save(
    *, dataset: Dataset, task: Task | None, spec: TaskSpec, changes_files: bool = False
) -> Task:
    """Create a task or save an edit of one, as a draft; saving it unchanged changes nothing.
    `changes_files`: the caller adds or removes files next (`imports.task_save_with_files`),
    so it changes even when the rest is as it was.

    Everything is decided under the dataset's lock, on the rows as they are then: a task
    archived meanwhile (by a Replace, say) is refused, never brought back to life, and so
    is an id another task took meanwhile (`TaskNotEditable`). Editing a saved task does not
    touch what was saved: an archived copy keeps its place in the versions and runs that
    hold it (`task_keep_saved_copy`), and the task becomes a draft.
    """
    dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
    if task is None:
        limits.tasks_check(dataset=dataset)
        position = (dataset.tasks.live().aggregate(n=Max("position"))["n"] or -1) + 1
        draft = Task(dataset=dataset, position=position)
    else:
        draft = (
            Task.objects.select_for_update().prefetch_related("criteria", "files").get(pk=task.pk)
        )
        if draft.state == TaskState.ARCHIVED:
            raise TaskNotEditable(TASK_ARCHIVED_MEANWHILE)
        if not changes_files and task_unchanged(draft, spec):
            return draft
    if dataset.tasks.live().filter(task_id=spec.id).exclude(pk=draft.pk).exists():
        raise TaskNotEditable(TASK_ID_TAKEN_MEANWHILE.format(id=spec.id))
    if draft.pk is not None:
        if draft.state == TaskState.SAVED:
            task_keep_saved_copy(task=draft)
        draft.criteria.all().delete()
    draft.task_id = spec.id
    draft.name = spec.name
    draft.prompt = spec.prompt
    draft.expected_text = spec.expected_text or ""
    draft.expected_verifier = spec.expected_verifier.to_json() if spec.expected_verifier else None
    draft.metadata = dict(spec.metadata)
    draft.state = TaskState.DRAFT
    draft.full_clean(validate_constraints=False)
    draft.save()
    dataset_tasks_changed(dataset_id=dataset.pk)
    Criterion.objects.bulk_create(
        criterion_row(dataset, draft, position=position, spec=criterion)
        for position, criterion in enumerate(spec.criteria)
    )
    return draft


def task_remove_deletes(task: Task) -> bool:
    """Whether removing the task deletes it for good (a draft no version or run holds) rather
    than archiving it; the page asks first when it does."""
    return Task.objects.filter(pk=task.pk).deletable().exists()


def tasks_mark_reviewed(*, tasks: QuerySet[Task], user: User) -> int:
    """An administrator has looked at these drafts; returns how many were marked.

    `update()` leaves `updated_at` alone, so a task counts as reviewed until it next changes.
    """
    return tasks.filter(state=TaskState.DRAFT).update(reviewed_at=timezone.now(), reviewed_by=user)


@transaction.atomic
def task_remove(*, task: Task) -> None:
    """Take a task out of the dataset: a draft no version holds is deleted, any other task
    archived (versions and run results keep it)."""
    if task_remove_deletes(task):
        names = set(task.files.exclude(file="").values_list("file", flat=True))
        # The rows go first: an import that shares one of these files holds its rows locked
        # until it commits, so the check below, once it runs, sees that import's tasks.
        task.delete()
        stored_files_delete_unheld(names)
    else:
        task.state = TaskState.ARCHIVED
        task.save(update_fields=["state", "updated_at"])
    dataset_tasks_changed(dataset_id=task.dataset_id)


def stored_files_delete_unheld(names: set[str]) -> None:
    """Once the transaction commits, remove from the storage those of `names` (stored task
    files whose rows were just deleted) that no task holds any more: identical bytes are
    stored once, and another task, of any dataset, may hold the same file."""

    def delete_unheld() -> None:
        held = set(TaskFile.objects.filter(file__in=names).values_list("file", flat=True))
        for name in names - held:
            default_storage.delete(name)

    transaction.on_commit(delete_unheld)


@transaction.atomic
def dataset_settings_update(
    *,
    dataset: Dataset,
    name: str,
    description: str,
    settings: dict[str, Any],
    criteria: list[CriterionSpec],
    require_review: bool,
) -> Dataset:
    """Save the settings form: name, description, verifier defaults, criteria for every task,
    whether saving requires every draft reviewed.

    Saved unchanged, it changes nothing (the criteria keep their rows). Compared with the
    row as stored, not with `dataset`, which a model form has already changed in memory.
    """
    stored = Dataset.objects.select_for_update().get(pk=dataset.pk)
    current = [selectors.criterion_spec(c) for c in selectors.dataset_criteria(stored)]
    if (name, description, settings, list(criteria), require_review) == (
        stored.name,
        stored.description,
        stored.settings or {},
        current,
        stored.require_review,
    ):
        return stored
    dataset = stored
    dataset_update(
        dataset=dataset,
        name=name,
        description=description,
        settings=settings,
        require_review=require_review,
    )
    dataset.criteria.filter(task__isnull=True, archived=False).update(archived=True)
    Criterion.objects.bulk_create(
        criterion_row(dataset, None, position=position, spec=criterion)
        for position, criterion in enumerate(criteria)
    )
    tasks_grade_as_rubrics(dataset=dataset)
    return dataset


# --- Criteria: the rule that makes answer tasks rubrics, and a criterion's row --------------


def tasks_grade_as_rubrics(*, dataset: Dataset) -> None:
    """After the dataset's criteria for every task changed (its settings form, or an Add):
    each live task the rule now makes a rubric gets "Matches the expected answer" first among
    its criteria (a saved one leaves its copy to its versions first, and becomes a draft)."""
    if not selectors.dataset_criteria(dataset).exists():
        return
    verifier = expected_answer_verifier(dataset.settings or {})
    tasks = (
        dataset.tasks.live()
        .exclude(expected_text="")
        .exclude(criteria__criterion_id=EXPECTED_ANSWER_CRITERION_ID)
        .prefetch_related("criteria", "files")
    )
    for task in tasks:
        graded = graded_as_rubric(
            selectors.task_spec(task), shared_criteria=True, expected_answer_verifier=verifier
        )
        if task.state == TaskState.SAVED:
            task_keep_saved_copy(task=task)
        task.criteria.update(position=F("position") + 1)
        criterion_row(dataset, task, position=0, spec=graded.criteria[0]).save()


def criterion_row(
    dataset: Dataset, task: Task | None, *, position: int, spec: CriterionSpec
) -> Criterion:
    """The unsaved row of a criterion: `task` None for one of the criteria for every task."""
    return Criterion(
        dataset=dataset,
        task=task,
        criterion_id=spec.id,
        text=spec.criterion,
        weight=spec.weight,
        verifier=spec.verifier.to_json() if spec.verifier else None,
        position=position,
    )


# --- Acting on many tasks at once (the dataset page's selection) ----------------------------


@transaction.atomic
def tasks_delete_drafts(*, dataset: Dataset, tasks: QuerySet[Task]) -> int:
    """Delete for good the drafts among `tasks` that no version or run holds
    (`task_remove_deletes`' rule, asked of all of them in one query), in one transaction;
    every other task is left as it is. Returns how many were deleted.

    The dataset row is locked first, as saving a version locks it: a draft being saved as
    a version at this moment is either in it or deleted, never both.
    """
    dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
    doomed = selectors.tasks_deletable(tasks.filter(dataset=dataset))
    names = set(
        TaskFile.objects.filter(task__in=doomed).exclude(file="").values_list("file", flat=True)
    )
    _total, deleted = doomed.delete()
    dataset_tasks_changed(dataset_id=dataset.pk)
    stored_files_delete_unheld(names)
    return deleted.get(Task._meta.label, 0)
