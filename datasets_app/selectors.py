"""Reads that pages, commands and tasks share, each with the queries it needs and no more."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import operator
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import reduce
from itertools import groupby
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.paginator import Paginator
from django.db import DEFAULT_DB_ALIAS, connection, transaction
from django.db.models import (
    Count,
    Exists,
    F,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Sum,
    TextField,
)
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Cast, Substr
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone

from context_verifiers import metrics
from context_verifiers.grading import Check, CriterionResult, DatasetResult, TaskResult, checks_for
from context_verifiers.outcome import Outcome
from context_verifiers.scoring import Score, dataset_score
from datasets_app import exporting, wording
from datasets_app.checked import FileDataset, StoredCheck
from datasets_app.exporting import ExportFacts, ExportFormat, ExportNotes
from datasets_app.importing import checker, columns, evalset_format, json_format, xlsx_format
from datasets_app.importing.outputs import COST_KEYS, costs_json
from datasets_app.importing.spec import (
    DEFAULT_CRITERION_VERIFIER,
    DEFAULT_EXPECTED_ANSWER_VERIFIER,
    EXPECTED_ANSWER_CRITERION_ID,
    CheckOptions,
    CriterionSpec,
    DatasetSpec,
    FileSpec,
    Rule,
    TaskSpec,
    Verifier,
    counted,
    expected_answer_criterion,
    shorten,
)
from datasets_app.models import (
    REVIEWED,
    ApiToken,
    Criterion,
    Dataset,
    ExportJob,
    ImportMode,
    OutcomeStatus,
    Run,
    RunOutcome,
    RunResult,
    RunState,
    SiteSettings,
    Task,
    TaskFile,
    TaskQuerySet,
    TaskState,
    Upload,
    Version,
)
from datasets_app.prepared import Prepared


def checker_options() -> CheckOptions:
    """The checker's options as the administrator has set them."""
    return CheckOptions(python_checks_enabled=SiteSettings.load().python_checks_enabled)


_MADE_UP_ID = re.compile(r"task-([1-9][0-9]{0,8})")


def first_task_number(ids: set[str]) -> int:
    """The number of the first `task-N` id a file without ids gets in a dataset whose live
    tasks have `ids` (`live_task_ids`): past them, counted and by their own `task-N` ids,
    so that none of them is taken and a second file numbers on from the first."""
    numbers = (int(match[1]) for task_id in ids if (match := _MADE_UP_ID.fullmatch(task_id)))
    return max(len(ids), max(numbers, default=0)) + 1


# Seeing and changing everyone's datasets takes what the admin asks for before it lets a
# person change a dataset: staff status *and* the change permission (superusers have every
# permission). Staff status alone only opens the admin's door.
EVERY_DATASET_PERMISSION = "datasets_app.change_dataset"


def manages_every_dataset(user: User) -> bool:
    """Whether the person may see and change datasets that are not theirs nor shared."""
    # is_staff first: for everyone else, no permission query at all.
    return bool(user.is_staff) and user.has_perm(EVERY_DATASET_PERMISSION)


def datasets_for(user: User) -> QuerySet[Dataset]:
    """The datasets a person may see: their own, those shared with them; all of them for
    someone with the permission to change any dataset."""
    datasets = Dataset.objects.all()
    if not manages_every_dataset(user):
        datasets = datasets.filter(Q(owner=user) | Q(shared_with=user)).distinct()
    return datasets


def dataset_for(user: User, pk: int) -> Dataset:
    """The dataset, or 404 when it does not exist *or* the person may not see it."""
    return get_object_or_404(datasets_for(user).select_related("owner"), pk=pk)


@dataclass(frozen=True)
class TaskRow:
    task: Task
    criteria: int
    total_weight: float
    # Where a search matched the task beyond its id and name (`Match`).
    matches: tuple[Match, ...] = ()

    @property
    def scored_by(self) -> str:
        return "criteria" if self.criteria else "expected answer"


# A dataset's criteria for every task: those of no task, not archived.
FOR_EVERY_TASK = Q(task__isnull=True, archived=False)


def dataset_criteria(dataset: Dataset) -> QuerySet[Criterion]:
    """The dataset's criteria for every task (not archived)."""
    return dataset.criteria.filter(FOR_EVERY_TASK)


def task_rows(dataset: Dataset) -> list[TaskRow]:
    """The dataset's live tasks with how each is scored, in two queries."""
    shared = dataset_criteria(dataset).aggregate(n=Count("pk"), w=Sum("weight"))
    shared_count, shared_weight = shared["n"] or 0, shared["w"] or 0.0
    tasks = dataset.tasks.live().annotate(
        own_criteria=Count("criteria"), own_weight=Sum("criteria__weight")
    )
    return [
        TaskRow(
            task=task,
            criteria=task.own_criteria + shared_count,
            total_weight=(task.own_weight or 0.0) + shared_weight,
        )
        for task in tasks
    ]


@dataclass(frozen=True)
class SpecRow:
    """A task of a saved version as its page lists it, counted like the dataset page."""

    task: TaskSpec
    criteria: int
    total_weight: float


def spec_rows(spec: DatasetSpec) -> list[SpecRow]:
    """The tasks of a version with their criteria and weight, the criteria for every task
    included (as the dataset page and the import preview count them)."""
    shared_weight = math.fsum(c.weight for c in spec.criteria)
    return [
        SpecRow(
            task=task,
            criteria=len(task.criteria) + len(spec.criteria),
            total_weight=math.fsum(c.weight for c in task.criteria) + shared_weight,
        )
        for task in spec.tasks
    ]


def versions_of(dataset: Dataset) -> QuerySet[Version]:
    # A list of versions needs none of their heads (`version_head`); each knows how many
    # tasks it holds (`Version.task_count`).
    return dataset.versions.defer("snapshot").select_related("created_by")


def runs_of(dataset: Dataset) -> QuerySet[Run]:
    """The dataset's runs, newest first; not those still being checked (nothing is graded
    before "Grade N tasks")."""
    return (
        Run.objects.filter(version__dataset=dataset)
        .exclude(state=RunState.CHECKING)
        .select_related("version", "created_by")
        .defer("version__snapshot")
    )


def task_for(dataset: Dataset, pk: int) -> Task:
    return get_object_or_404(dataset.tasks.prefetch_related("criteria", "files"), pk=pk)


def task_files(task: Task) -> list[TaskFile]:
    """A task's files as its page lists them: input files, then expected files."""
    return sorted(task.files.all(), key=lambda f: (f.role != TaskFile.Role.INPUT, f.position))


def version_for(dataset: Dataset, number: int) -> Version:
    """The version, without its head (`version_head` reads and caches it)."""
    versions = dataset.versions.defer("snapshot").select_related("created_by")
    return get_object_or_404(versions, number=number)


@dataclass(frozen=True)
class ProblemGroup:
    """The problems found on one row or line of a file, as the dialog lists them: each
    problem's dict gains `place` (the value it is about, in words) and `column` (the
    column's key on the help page, for a problem about a spreadsheet column)."""

    where: str
    problems: list[dict]


def group_problems(problems: list[dict]) -> list[ProblemGroup]:
    """Problems grouped by file and row or line, in file order; file-wide ones first."""

    def order(problem: dict) -> tuple:
        return (problem["file"], problem.get("row") or problem.get("line") or 0)

    groups: dict[str, list[dict]] = {}
    for problem in sorted(problems, key=order):
        shown = {**problem, "place": wording.place(problem), "column": _column(problem)}
        groups.setdefault(wording.where(problem), []).append(shown)
    return [ProblemGroup(where=where, problems=items) for where, items in groups.items()]


def _column(problem: dict) -> str | None:
    """The help page's key for the column a spreadsheet problem is about, if it is."""
    file = str(problem.get("file") or "").lower()
    if not file.endswith((".csv", ".tsv", ".xlsx")):
        return None
    field = problem.get("field")
    if field:
        return columns.field_for_header(field)
    return "" if str(problem.get("code") or "").startswith("csv_") else None


def _detected(upload: Upload, result: StoredCheck) -> str:
    """What the file was taken for; a file refused before it was read still says something."""
    if result.detected:
        return result.detected
    extension = os.path.splitext(upload.original_name)[1].lower()
    if not extension:
        return "a file with no extension, not read as a dataset"
    return f"a {extension} file, not read as a dataset"


def import_preview(*, upload: Upload, mode: str) -> dict:
    """What the dialog shows for a checked upload and a chosen mode."""
    result = upload.stored_check
    problems = list(result.problems)
    if mode == ImportMode.ADD and upload.dataset is not None and result.ok:
        problems += add_conflicts(dataset=upload.dataset, upload=upload)
    task_count = result.task_count
    can_import = result.ok and not problems
    # Added, a file's tasks are graded by the dataset's criteria for every task too.
    added = result.added_tasks if mode == ImportMode.ADD else None
    preview_tasks = result.tasks if added is None else added
    return {
        "result": result,
        "detected": _detected(upload, result),
        # The problems CSV is the file's own rows with a problem column: a spreadsheet's.
        "problems_spreadsheet": result.format in ("csv", "xlsx"),
        "preview_tasks": preview_tasks,
        # Tasks graded by their answers alone have no Criteria and Total weight columns.
        "preview_criteria": any(task.criteria for task in preview_tasks),
        "problem_groups": group_problems(problems),
        "problem_count": len(problems),
        "warning_groups": group_problems(
            [w for w in result.warnings if w.get("code") not in NOT_IMPORTED_CODES]
        ),
        "notes": result.notes,
        "effects": import_effects(upload=upload, mode=mode) if result.ok else None,
        "texts": result.texts,
        "replace": (
            replace_preview(dataset=upload.dataset, upload=upload)
            if mode == ImportMode.REPLACE and upload.dataset is not None and result.ok
            else None
        ),
        "can_import": can_import,
        "task_count": task_count,
        # The page's words: the button reads "Import tasks" until a checked file gives it a
        # count ("Import 12 tasks"); a file with problems, ids the dataset has included,
        # has none to count.
        "import_label": f"Import {counted(task_count, 'task')}" if can_import else "Import tasks",
    }


# --- What an import will do, said at the top of its preview ---------------------------------

# Warnings that say part of the file is not imported: shown first, as what the import does.
NOT_IMPORTED_CODES = frozenset(
    {
        "csv_ignored_columns",
        "ignored_keys",
        "unknown_field",
        "pandas_index_column",
        "promptfoo_assertions_left_out",
        "nul_in_ignored_column",
    }
)

# The settings an import can change, in people's words.
SETTING_NAMES = {
    "expectedAnswerVerifier": wording.EXPECTED_ANSWER_SETTING,
    "defaultVerifier": wording.DEFAULT_VERIFIER_SETTING,
}
SETTING_DEFAULTS = {
    "expectedAnswerVerifier": DEFAULT_EXPECTED_ANSWER_VERIFIER,
    "defaultVerifier": DEFAULT_CRITERION_VERIFIER,
}


def imported_settings(*, dataset: Dataset | None, file_settings: dict[str, Any], mode: str) -> dict:
    """The dataset's settings once the file is imported. Replace: the file's (when it has
    any) become the dataset's. Add: the file only fills in what the dataset has not set, so
    an import never undoes the settings form."""
    own = dict(dataset.settings or {}) if dataset is not None else {}
    if not file_settings:
        return own
    if mode == ImportMode.REPLACE:
        return dict(file_settings)
    return {**file_settings, **own}


@dataclass(frozen=True)
class SettingChange:
    name: str
    before: str
    after: str


@dataclass(frozen=True)
class ImportEffects:
    """What importing a checked file in a mode will do to its dataset, for the dialog to
    say before Import: tasks added and archived, the file's criteria for every task and
    what they do to the tasks already there, settings changed, what is not imported."""

    adds: int
    archives: int
    # The file's criteria for every task that join the dataset's (Add), and their weight.
    joining: list[str]
    joining_weight: float
    # The dataset's tasks they will grade too; those with an expected answer, and the
    # least and most of their score that answer will then carry.
    regraded: int
    answer_tasks: int
    answer_share: tuple[float, float] | None
    settings: list[SettingChange]
    not_imported: list[ProblemGroup]
    # The keys the file's tasks keep as their metadata, in the order they first come.
    metadata_keys: list[str]

    @property
    def answer_share_words(self) -> str:
        if self.answer_share is None:
            return ""
        low, high = (_percent(share) for share in self.answer_share)
        return low if low == high else f"between {low} and {high}"


def _percent(share: float) -> str:
    value = share * 100
    return f"{value:.1f}%" if value < 1 else f"{round(value):,}%"


def verifier_words(verifier: dict[str, Any] | None) -> str:
    """A verifier as a person reads it: `LLM judge (pass or fail), instructions “…”`."""
    if not verifier:
        return "none"
    words = wording.verifier_kind(verifier.get("kind"))
    if verifier.get("outputType"):
        words += f" ({wording.output_type(verifier['outputType']).lower()})"
    if verifier.get("instructions"):
        words += f", instructions “{shorten(verifier['instructions'], 60)}”"
    if verifier.get("code"):
        words += ", its own Python code"
    return words


def _setting_changes(before: dict[str, Any], after: dict[str, Any]) -> list[SettingChange]:
    changes = []
    for key in sorted(before.keys() | after.keys(), key=list(SETTING_NAMES).index):
        old = before.get(key) or SETTING_DEFAULTS.get(key)
        new = after.get(key) or SETTING_DEFAULTS.get(key)
        if old != new:
            changes.append(
                SettingChange(SETTING_NAMES.get(key, key), verifier_words(old), verifier_words(new))
            )
    return changes


def _answer_shares(dataset: Dataset, added_weight: float) -> tuple[int, tuple[float, float] | None]:
    """Of the dataset's live tasks with an expected answer: how many, and the least and most
    share of their score that answer keeps once `added_weight` more grades every task (a
    task without "Matches the expected answer" gets it, weight 1, as the import gives it)."""
    shared = dataset_criteria(dataset).aggregate(w=Sum("weight"))["w"] or 0.0
    answer = expected_answer_criterion(Verifier(kind="exact_match")).weight
    pairs = (
        dataset.tasks.live()
        .exclude(expected_text="")
        .annotate(
            own=Sum("criteria__weight"),
            answer=Sum(
                "criteria__weight", filter=Q(criteria__criterion_id=EXPECTED_ANSWER_CRITERION_ID)
            ),
        )
        .values_list("own", "answer")
        .distinct()
    )
    shares = []
    for own, weight in pairs:
        kept = answer if weight is None else weight
        total = (own or 0.0) + (answer if weight is None else 0.0) + shared + added_weight
        shares.append(kept / total if total else 1.0)
    count = dataset.tasks.live().exclude(expected_text="").count()
    return count, ((min(shares), max(shares)) if shares else None)


# How much of a prompt or expected answer the preview keeps, for its "the rest" (a file may
# hold 1,000 tasks of 1 MiB each; the check's stored result stays a few MiB at most).
PREVIEW_TEXT_CHARS = 2_000


def preview_texts(plan: DatasetSpec) -> list[list[Any]]:
    """[prompt, its length, expected answer, its length] of each task, for the preview,
    each text cut at PREVIEW_TEXT_CHARS."""
    return [
        [
            task.prompt[:PREVIEW_TEXT_CHARS],
            len(task.prompt),
            (task.expected_text or "")[:PREVIEW_TEXT_CHARS],
            len(task.expected_text or ""),
        ]
        for task in plan.tasks
    ]


def import_effects(*, upload: Upload, mode: str) -> ImportEffects:
    """What importing the checked upload in `mode` will do to its dataset as it is now."""
    result = upload.stored_check
    dataset = upload.dataset
    stored = result.dataset or FileDataset()
    joining = list(stored.criteria) if mode == ImportMode.ADD else []
    joining_weight = stored.criteria_weight
    regraded, answer_tasks, share = 0, 0, None
    if joining and dataset is not None:
        regraded = dataset.tasks.live().count()
        answer_tasks, share = _answer_shares(dataset, joining_weight)
    before = dict(dataset.settings or {}) if dataset is not None else {}
    file_settings = stored.settings
    after = imported_settings(dataset=dataset, file_settings=file_settings, mode=mode)
    archives = 0
    if mode == ImportMode.REPLACE and dataset is not None:
        archives = dataset.tasks.live().count()
    not_imported = [w for w in result.warnings if w.get("code") in NOT_IMPORTED_CODES]
    return ImportEffects(
        adds=result.task_count,
        archives=archives,
        joining=joining,
        joining_weight=joining_weight,
        regraded=regraded,
        answer_tasks=answer_tasks,
        answer_share=share,
        settings=_setting_changes(before, after) if dataset is not None else [],
        not_imported=group_problems(not_imported),
        metadata_keys=list(result.metadata_keys),
    )


def imported_message(upload: Upload) -> str:
    count = upload.stored_check.task_count
    assert upload.dataset is not None  # an imported upload has its dataset
    version = next_version_label(upload.dataset)
    if count == 1:
        return f"Imported 1 task as a draft. Check it, then Save as {version}."
    return f"Imported {counted(count, 'task')} as drafts. Check them, then Save as {version}."


def next_version_label(dataset: Dataset) -> str:
    return f"v{next_version_number(dataset)}"


def next_version_number(dataset: Dataset) -> int:
    return (dataset.versions.aggregate(n=Max("number"))["n"] or 0) + 1


def latest_version(dataset: Dataset) -> Version | None:
    return dataset.versions.defer("snapshot").order_by("-number").first()


TASK_ID_TAKEN = Rule(
    "task_id_taken",
    "Task id '{id}' is already one of this dataset's tasks. Give it another id, or choose "
    "Replace its tasks.",
)
TOO_MANY_TASKS = Rule(
    "too_many_tasks",
    "This dataset has {count} tasks and the file adds {adding}: more than the {limit} one "
    "dataset can hold. Import fewer, choose Replace its tasks, or use another dataset.",
)
CRITERION_ID_TAKEN = Rule(
    "criterion_id_taken",
    "Criterion id '{id}' is already one of this dataset's criteria for every task. Give it "
    "another id, or choose Replace its tasks.",
)


def add_conflicts(*, dataset: Dataset, upload: Upload) -> list[dict[str, Any]]:
    """Problems that only Add has: ids the file shares with the dataset's live tasks, and
    more tasks than a dataset may hold (MAX_TASKS_PER_DATASET).

    As the stored check holds its problems (`Problem.to_json`), so that both are shown,
    printed and counted alike.
    """
    result = upload.stored_check
    file_ids = result.file_ids
    # Looked up in the index of live ids, and the live tasks counted from it: the work of
    # the file's ids, not of the dataset's (reading 100,000 ids cost 40 ms an import).
    live = dataset.tasks.live()
    taken = set(live.filter(task_id__in=file_ids).values_list("task_id", flat=True))
    live_count = live.count()
    shared = set(result.dataset.criteria if result.dataset else ())
    taken_criteria = shared.intersection(
        dataset_criteria(dataset).values_list("criterion_id", flat=True)
    )
    clashes = [index for index, task_id in enumerate(file_ids) if task_id in taken]
    # Where they stand, as the check found them (`clash_places`): never read here, since a
    # page or an import's transaction would otherwise parse the whole file again.
    places = result.places
    problems = []
    for index in clashes:
        file, row, line = places.get(str(index)) or (upload.original_name, None, None)
        problems.append(TASK_ID_TAKEN.at(file, row=row, line=line, field="id", id=file_ids[index]))
    problems += [
        CRITERION_ID_TAKEN.at(upload.original_name, field="criteria", id=criterion_id)
        for criterion_id in sorted(taken_criteria)
    ]
    limit = settings.MAX_TASKS_PER_DATASET
    if live_count + len(file_ids) > limit:
        problems.append(
            TOO_MANY_TASKS.at(
                upload.original_name, count=live_count, adding=len(file_ids), limit=limit
            )
        )
    return [problem.to_json() for problem in problems]


def clash_places(*, upload: Upload, file_ids: list[str], live: set[str]) -> dict[str, list[Any]]:
    """{task index: [file, row, line]} of the file's tasks whose ids the upload's dataset
    already has (`live`: its live task ids), for `add_conflicts` to show; found by the check
    (on a worker), which reads the file again only when there is such a clash."""
    if upload.dataset is None:
        return {}
    taken = live.intersection(file_ids)
    clashes = [index for index, task_id in enumerate(file_ids) if task_id in taken]
    if not clashes:
        return {}
    # The file read as it was checked: with the person's mapping of its columns, if any.
    options = CheckOptions(mapping=upload.mapping or None).read_as(upload.read_options)
    with upload.file.open("rb") as fileobj:
        places = checker.locate_tasks(fileobj, upload.original_name, clashes, options)
    return {str(index): list(place) for index, place in places.items()}


# --- The dataset as the checker's plan (export, snapshots, diffs) ---------------------------


def criterion_spec(criterion: Criterion) -> CriterionSpec:
    """One criterion as the checker's plan describes it."""
    return _criterion_spec_of(
        criterion.criterion_id, criterion.text, criterion.weight, criterion.verifier
    )


def _criterion_spec_of(
    criterion_id: str, text: str, weight: float, verifier: dict[str, Any] | None
) -> CriterionSpec:
    return CriterionSpec(
        id=criterion_id, criterion=text, weight=weight, verifier=Verifier.from_json(verifier)
    )


def _file_spec(task_file: TaskFile) -> FileSpec:
    return _file_spec_of(
        task_file.name, task_file.url, task_file.file.name, task_file.size, task_file.sha256
    )


def _file_spec_of(
    name: str, url: str, stored: str | None, size: int | None, sha256: str
) -> FileSpec:
    if url:
        return FileSpec(name=name, url=url, size=size)
    return FileSpec(name=name, path=stored, size=size, sha256=sha256 or None)


def task_spec(task: Task) -> TaskSpec:
    """One task as the checker's plan describes it (for export and snapshots).

    Expects `criteria` and `files` prefetched when called in a loop.
    """
    return _task_spec_of(
        _task_row(task),
        [criterion_spec(c) for c in task.criteria.all()],
        [(f.role, _file_spec(f)) for f in task.files.all()],
    )


def _task_row(task: Task) -> tuple[Any, ...]:
    return tuple(getattr(task, column) for column in _TASK_COLUMNS)


def _task_to_grade_query(
    sees_every: bool, *, user_id: int, dataset_id: int, task_id: int
) -> QuerySet[Task]:
    # The person as `datasets_for` asks about them: a stand-in with their key, and the
    # permission to see every dataset when they have it (a superuser needs no query).
    person = User(pk=user_id, is_staff=sees_every, is_superuser=sees_every)
    tasks = Task.objects.filter(pk=task_id, dataset_id=dataset_id, dataset__in=datasets_for(person))
    return tasks.values_list(*_TASK_FIELDS, *(f"dataset__{name}" for name in _DATASET_FIELDS))


def _criteria_to_grade_query(
    variant: object, *, dataset_id: int, task_id: int
) -> QuerySet[Criterion]:
    return (
        Criterion.objects.filter(Q(task_id=task_id) | FOR_EVERY_TASK)
        .filter(dataset_id=dataset_id)
        .order_by("position", "pk")
        .values_list("task_id", *_CRITERION_COLUMNS)
    )


def _files_to_grade_query(variant: object, *, task_id: int) -> QuerySet[TaskFile]:
    return (
        TaskFile.objects.filter(task_id=task_id)
        .order_by("role", "position", "pk")
        .values_list(*_FILE_COLUMNS)
    )


_TASK_FIELDS = tuple(field.attname for field in Task._meta.concrete_fields)
_DATASET_FIELDS = tuple(field.attname for field in Dataset._meta.concrete_fields)
# A try is asked for at each pause in typing, and these three reads were most of its cost
# beside the verifiers, nearly all of it the ORM compiling them: compiled once (`prepared`).
_TASK_TO_GRADE = Prepared(_task_to_grade_query, ("user_id", "dataset_id", "task_id"))
_CRITERIA_TO_GRADE = Prepared(_criteria_to_grade_query, ("dataset_id", "task_id"))
_FILES_TO_GRADE = Prepared(_files_to_grade_query, ("task_id",))


def task_to_grade(user: User, pk: int, task_pk: int) -> tuple[Task, DatasetSpec, TaskSpec]:
    """The person's task `task_pk` of dataset `pk` (with `task.dataset`), what grades every
    task of the dataset and the task itself, as a try grades it: in three queries, the
    task with its dataset (404 when either is missing or not the person's to see), both
    kinds of criteria at once and its files, each compiled once (`prepared`)."""
    found = _TASK_TO_GRADE.rows(
        variant=manages_every_dataset(user), user_id=user.pk, dataset_id=pk, task_id=task_pk
    )
    if not found:
        raise Http404("No Task matches the given query.")
    values = found[0]
    dataset = Dataset.from_db(DEFAULT_DB_ALIAS, _DATASET_FIELDS, values[len(_TASK_FIELDS) :])
    task = Task.from_db(DEFAULT_DB_ALIAS, _TASK_FIELDS, values[: len(_TASK_FIELDS)])
    task.dataset = dataset
    own: list[CriterionSpec] = []
    shared: list[CriterionSpec] = []
    for task_key, *criterion in _CRITERIA_TO_GRADE.rows(dataset_id=pk, task_id=task.pk):
        (own if task_key else shared).append(_criterion_spec_of(*criterion))
    files = [(role, _file_spec_of(*file)) for role, *file in _FILES_TO_GRADE.rows(task_id=task.pk)]
    dataset_head = _dataset_spec_of(dataset, criteria=shared, tasks=())
    return task, dataset_head, _task_spec_of(_task_row(task), own, files)


# A task's columns `_task_spec_of` reads, in its order (after the key, for `TaskStream`).
_TASK_COLUMNS = (
    "task_id",
    "name",
    "prompt",
    "expected_text",
    "expected_verifier",
    "evidence",
    "metadata",
)
_CRITERION_COLUMNS = ("criterion_id", "text", "weight", "verifier")
_FILE_COLUMNS = ("role", "name", "url", "file", "size", "sha256")


def _task_spec_of(
    row: tuple[Any, ...], criteria: list[CriterionSpec], files: list[tuple[str, FileSpec]]
) -> TaskSpec:
    task_id, name, prompt, expected_text, expected_verifier, evidence, metadata = row
    return TaskSpec(
        id=task_id,
        name=name,
        prompt=prompt,
        expected_text=expected_text or None,
        expected_verifier=Verifier.from_json(expected_verifier),
        criteria=tuple(criteria),
        input_files=tuple(f for role, f in files if role == TaskFile.Role.INPUT),
        expected_files=tuple(f for role, f in files if role == TaskFile.Role.EXPECTED),
        evidence=evidence or {},
        metadata=metadata or {},
    )


def dataset_spec(*, dataset: Dataset, tasks: Iterable[Task] | None = None) -> DatasetSpec:
    """The dataset's live tasks and criteria as a DatasetSpec (what a version freezes)."""
    if tasks is None:
        tasks = dataset.tasks.live().prefetch_related("criteria", "files")
    return _dataset_spec_of(
        dataset,
        criteria=[criterion_spec(c) for c in dataset_criteria(dataset)],
        tasks=[task_spec(t) for t in tasks],
    )


def _dataset_spec_of(
    dataset: Dataset, *, criteria: Iterable[CriterionSpec], tasks: Iterable[TaskSpec]
) -> DatasetSpec:
    return DatasetSpec(
        name=dataset.name,
        description=dataset.description,
        settings=dataset.settings or {},
        criteria=tuple(criteria),
        tasks=tuple(tasks),
    )


# Tasks a streamed spec reads from the database at a time (criteria: five times as many).
STREAM_CHUNK = 1_000


def _json_text(column: str) -> Cast:
    """A JSON column read as its text: decoded only where it holds something (`_loaded`),
    without Django's converter called for every row of the stream."""
    return Cast(column, output_field=TextField())


def _loaded(text: str | None) -> Any:
    if text is None:
        return None
    # Most tasks' evidence and metadata: a new empty object, without the JSON decoder.
    return {} if text == "{}" else json.loads(text)


def _grouped(rows: Iterator[tuple[Any, ...]]) -> Iterator[tuple[Any, list[tuple[Any, ...]]]]:
    """Rows that start with a task's key, as (key, the rest of each of its rows)."""
    for key, group in groupby(rows, key=operator.itemgetter(0)):
        yield key, [row[1:] for row in group]


@contextmanager
def _one_snapshot() -> Iterator[None]:
    """What is read inside sees the database as it was at the first query: on PostgreSQL a
    REPEATABLE READ transaction, unless the caller's transaction already holds the reads
    (a version's save reads under its dataset's lock). SQLite's statements of one
    connection read one snapshot while any of them is open."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


class TaskStream(Sequence[TaskSpec]):
    """Tasks as specs, read from the database as they are iterated, so that a writer that
    reads them in order (every export) never holds them all.

    Three queries for the whole stream, whatever its size: its tasks, their criteria and
    their files, each in the tasks' order and read through a server-side cursor (on
    PostgreSQL) STREAM_CHUNK rows at a time, merged as they come. Plain values, never a
    model instance per row; one snapshot of the database for the three (REPEATABLE READ),
    so that an edit made meanwhile never pairs a task with another's criteria. Counted
    once, when asked."""

    def __init__(self, tasks: QuerySet[Task]) -> None:
        self._tasks = tasks.order_by("position", "pk")
        self._count: int | None = None

    def __iter__(self) -> Iterator[TaskSpec]:
        with _one_snapshot():
            yield from self._specs()

    def _specs(self) -> Iterator[TaskSpec]:
        chosen = self._tasks.order_by().values("pk")
        rows = self._tasks.values_list(
            "pk",
            *_TASK_COLUMNS[:4],
            _json_text("expected_verifier"),
            _json_text("evidence"),
            _json_text("metadata"),
        ).iterator(chunk_size=STREAM_CHUNK)
        criteria = _grouped(
            Criterion.objects.filter(task__in=chosen)
            .order_by("task__position", "task_id", "position", "pk")
            .values_list("task_id", *_CRITERION_COLUMNS[:3], _json_text("verifier"))
            .iterator(chunk_size=5 * STREAM_CHUNK)
        )
        files = _grouped(
            TaskFile.objects.filter(task__in=chosen)
            .order_by("task__position", "task_id", "role", "position", "pk")
            .values_list("task_id", *_FILE_COLUMNS)
            .iterator(chunk_size=STREAM_CHUNK)
        )
        next_criteria, next_files = next(criteria, None), next(files, None)
        for key, task_id, name, prompt, expected_text, answer_verifier, evidence, metadata in rows:
            specs: list[CriterionSpec] = []
            if next_criteria is not None and next_criteria[0] == key:
                specs = [
                    _criterion_spec_of(c_id, text, weight, _loaded(verifier))
                    for c_id, text, weight, verifier in next_criteria[1]
                ]
                next_criteria = next(criteria, None)
            attached: list[tuple[str, FileSpec]] = []
            if next_files is not None and next_files[0] == key:
                attached = [(role, _file_spec_of(*values)) for role, *values in next_files[1]]
                next_files = next(files, None)
            yield _task_spec_of(
                (
                    task_id,
                    name,
                    prompt,
                    expected_text,
                    _loaded(answer_verifier),
                    _loaded(evidence),
                    _loaded(metadata),
                ),
                specs,
                attached,
            )

    def __len__(self) -> int:
        if self._count is None:
            self._count = self._tasks.count()
        return self._count

    def __getitem__(self, index):  # an int or a slice, as a Sequence takes
        return tuple(self)[index]


def dataset_spec_streamed(dataset: Dataset) -> DatasetSpec:
    """`dataset_spec` with its tasks read as they are used (`TaskStream`): for exports."""
    return replace(dataset_spec(dataset=dataset, tasks=()), tasks=TaskStream(dataset.tasks.live()))


def version_tasks(version: Version) -> TaskQuerySet:
    """The tasks `version` holds, as it saved them, in its order: the one way anything reads
    a version's tasks. Its page and its task pages (`version_task_page`, `version_task_for`),
    its exports and runs (`version_spec_streamed`), the API's `?version=N` and the comparison
    of two versions all read through it.

    Its rows never change (migration 0007): a page of them is read with its criteria and
    files (`task_page`), or a chunk at a time (`TaskStream`), never the whole version at
    once. The criteria for every task are the version's head (`version_head`).
    """
    return Task.objects.filter(dataset_id=version.dataset_id, versions=version).order_by(
        "position", "pk"
    )


def version_task_count(version: Version) -> int:
    """How many tasks `version` holds: kept on it as it was saved (it never changes)."""
    return version.task_count or 0


def version_spec_streamed(version: Version) -> DatasetSpec:
    """What a version froze: its head (`version_head`) and its tasks (`version_tasks`), read
    a chunk at a time as they are used (`TaskStream`): for exports, and for runs."""
    head = version_head(version)
    spec = json_format.from_document(
        {
            "name": head.name,
            "description": head.description,
            "settings": head.settings,
            "criteria": head.criteria_documents,
        }
    )
    return replace(spec, tasks=TaskStream(version_tasks(version)))


def version_spec(version: Version) -> DatasetSpec:
    """`version_spec_streamed` read once and held whole: for what goes over a version's
    tasks more than once (a run's checks, the export notes, each format in turn)."""
    spec = version_spec_streamed(version)
    return replace(spec, tasks=tuple(spec.tasks))


def task_digest(task: TaskSpec) -> str:
    """A task's content as one value, to tell a file's task from the dataset's of that id:
    files compare by name, link and bytes (SHA-256), not by where they are stored."""
    document = json_format.to_document(DatasetSpec(tasks=(task,)))["tasks"][0]
    for key, files in (("inputFiles", task.input_files), ("expectedFiles", task.expected_files)):
        document[key] = [[f.name, f.url, f.sha256] for f in files]
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class ReplacePreview:
    """What Replace would do to the dataset now: everything it archives, and the file's
    tasks against the dataset's. `fingerprint` names what was listed, so that an import
    whose dataset changed since is refused rather than archiving what nobody saw."""

    drafts: list[str]
    saved: list[str]
    criteria: list[str]
    file_criteria: list[str]
    added: list[str]
    changed: list[str]
    unchanged: list[str]
    removed: list[str]
    fingerprint: str

    @property
    def archives(self) -> int:
        return len(self.drafts) + len(self.saved)


def replace_fingerprint(dataset: Dataset) -> str:
    """What Replace would archive in the dataset now, as one value."""
    tasks = sorted(dataset.tasks.live().values_list("pk", "state"))
    criteria = sorted(dataset_criteria(dataset).values_list("pk", flat=True))
    return hashlib.sha256(json.dumps([tasks, criteria]).encode()).hexdigest()[:32]


def _file_tasks_against(
    file_ids: list[str], digests: dict[str, str], mine: dict[str, str]
) -> tuple[list[str], list[str], list[str]]:
    """The file's task ids, in its order, as added (the dataset has no live task of that
    id), changed (the digest the check kept differs from the live task's) and unchanged."""
    added: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    for task_id in file_ids:
        if task_id not in mine:
            added.append(task_id)
        elif digests.get(task_id) != mine[task_id]:
            changed.append(task_id)
        else:
            unchanged.append(task_id)
    return added, changed, unchanged


def replace_preview(*, dataset: Dataset, upload: Upload) -> ReplacePreview:
    """Replace, as the dialog lists it before the button is clicked (read fresh each time)."""
    result = upload.stored_check
    file_ids = result.file_ids
    live = list(dataset.tasks.live().prefetch_related("criteria", "files"))
    # The check kept the digests of the file's tasks whose ids the dataset had then; a task
    # of that id added since has none, and counts as changed (Replace writes it anew).
    mine = {task.task_id: task_digest(task_spec(task)) for task in live}
    added, changed, unchanged = _file_tasks_against(file_ids, result.digests, mine)
    return ReplacePreview(
        drafts=[t.task_id for t in live if t.state == TaskState.DRAFT],
        saved=[t.task_id for t in live if t.state == TaskState.SAVED],
        criteria=list(dataset_criteria(dataset).values_list("criterion_id", flat=True)),
        file_criteria=list(result.dataset.criteria if result.dataset else ()),
        added=added,
        changed=changed,
        unchanged=unchanged,
        removed=[task_id for task_id in mine if task_id not in set(file_ids)],
        fingerprint=replace_fingerprint(dataset),
    )


def shared_criteria_documents(dataset: Dataset) -> list[dict[str, Any]]:
    """The dataset's criteria for every task as the .json format writes them."""
    spec = DatasetSpec(criteria=tuple(criterion_spec(c) for c in dataset_criteria(dataset)))
    return json_format.to_document(spec).get("criteria", [])


def live_task_ids(dataset: Dataset, *, exclude: Task | None = None) -> set[str]:
    tasks = dataset.tasks.live()
    if exclude is not None:
        tasks = tasks.exclude(pk=exclude.pk)
    return set(tasks.values_list("task_id", flat=True))


def imports_in_progress(dataset: Dataset) -> QuerySet[Upload]:
    """Imports into the dataset that a worker is running now (the dataset page says so)."""
    return dataset.uploads.filter(state=Upload.State.IMPORTING).order_by("created_at")


def unsaved_changes(dataset: Dataset, *, live_count: int | None = None) -> bool:
    """Whether saving would make a version that differs from the latest one.

    Drafts, tasks removed since the latest version, and edited settings or criteria for
    every task all count; a dataset with nothing in it has nothing to save. `live_count`:
    its live tasks, when the caller counted them already (the dataset page's heading).
    """
    # Asked of the database, which answers from its indexes at any size.
    live = dataset.tasks.live()
    if live.filter(state=TaskState.DRAFT).exists():
        return True
    version = latest_version(dataset)
    if version is None:
        return live.exists()
    # The same tasks as the version's: as many, and none of the version's archived since
    # (each question one index's answer, where comparing the two sets reads both).
    if (live.count() if live_count is None else live_count) != version.task_count:
        return True
    if dataset.tasks.filter(state=TaskState.ARCHIVED, versions=version).exists():
        return True
    current = json_format.to_document(
        DatasetSpec(
            settings=dataset.settings or {},
            criteria=tuple(criterion_spec(c) for c in dataset_criteria(dataset)),
        )
    )
    head = version_head(version)
    return (current["settings"], current["criteria"]) != (head.settings, head.criteria_documents)


def unfinished_upload(*, user: User, dataset: Dataset) -> Upload | None:
    """What the import dialog comes back to after it was closed or the page reloaded: the
    person's latest file for this dataset that is still being checked or imported, checked
    and ready to import, or waiting for its mapping. A file with problems is not: it has to
    be fixed and chosen again anyway."""
    latest = (
        Upload.objects.filter(owner=user, dataset=dataset, expires_at__gt=timezone.now())
        .order_by("-created_at", "-pk")
        .first()
    )
    if latest is None or latest.state == Upload.State.IMPORTED:
        return None
    checked = latest.state == Upload.State.CHECKED
    ready = checked and (latest.stored_check.ok or latest.stored_check.mapping_step_due)
    in_progress = latest.state in (Upload.State.CHECKING, Upload.State.IMPORTING)
    return latest if ready or in_progress else None


def api_token_for(secret: str) -> ApiToken | None:
    """The token row a secret names (active or not: the API says which), with its owner."""
    return (
        ApiToken.objects.select_related("user")
        .filter(digest=ApiToken.digest_of(secret), user__is_active=True)
        .first()
    )


def api_tokens_of(user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user)


def task_visible(user: User, pk: int) -> Task:
    """A task of a dataset the person may see, with its criteria and files; 404 otherwise."""
    tasks = Task.objects.filter(dataset__in=datasets_for(user)).select_related("dataset")
    return get_object_or_404(tasks.prefetch_related("criteria", "files"), pk=pk)


WORKER_STOPPED = (
    "The worker {doing} this file stopped (it has not been heard from for over a minute). "
    "It carries on by itself once another worker takes it up; nothing is written until it "
    "has finished."
)


def worker_stopped(upload: Upload) -> str:
    """What to say when the worker checking or importing the upload stopped beating
    (`tasks.heartbeat`): a crash, a kill, a lost machine; "" while it is alive, or before
    a worker has taken it up."""
    if upload.state not in (Upload.State.CHECKING, Upload.State.IMPORTING) or not (
        upload.heartbeat_at
    ):
        return ""
    silent = (timezone.now() - upload.heartbeat_at).total_seconds()
    if silent <= settings.WORKER_STOPPED_AFTER_SECONDS:
        return ""
    doing = "checking" if upload.state == Upload.State.CHECKING else "importing"
    return WORKER_STOPPED.format(doing=doing)


def upload_of(user: User, key: Any) -> Upload:
    """An upload of this person's (404 for anyone else's)."""
    return get_object_or_404(Upload.objects.select_related("dataset"), key=key, owner=user)


def export_job_for(user: User, key: Any) -> ExportJob:
    """An export job of a dataset the person may see (404 for any other, as the dataset)."""
    visible = ExportJob.objects.filter(dataset__in=datasets_for(user).values("pk"))
    return get_object_or_404(visible.select_related("dataset", "version"), pk=key)


def export_job_answering(
    *, dataset: Dataset, version: Version | None, fmt: ExportFormat, user: User
) -> ExportJob | None:
    """The job that already answers for this export, if any: asking for it again (a second
    click, a reload, a script polling the API) finds it rather than building it twice.

    A saved version never changes, so its export is built once and shared until it
    expires. The current tasks do change: a job of theirs answers only while it is still
    queued or building, and only for the person who asked.
    """
    jobs = ExportJob.objects.filter(
        dataset=dataset, version=version, format=fmt.slug, expires_at__gt=timezone.now()
    )
    waiting = [ExportJob.State.QUEUED, ExportJob.State.BUILDING]
    if version is None:
        jobs = jobs.filter(requested_by=user, state__in=waiting)
    else:
        jobs = jobs.filter(state__in=[*waiting, ExportJob.State.READY])
    return jobs.order_by("-created_at").first()


def tasks_from_upload(upload: Upload) -> QuerySet[Task]:
    """The live tasks an imported upload created (by the ids its file gave them)."""
    if upload.state != Upload.State.IMPORTED or upload.dataset_id is None:
        return Task.objects.none()
    ids = upload.stored_check.file_ids
    return Task.objects.filter(dataset_id=upload.dataset_id, task_id__in=ids).live()


def people() -> QuerySet[User]:
    """Everyone who may sign in, for the People page."""
    return User.objects.filter(is_active=True).order_by("username")


# --- Task lists: the dataset and version pages, one page of tasks at a time -----------------

DEFAULT_PAGE_SIZE = 50
# A matched prompt, answer or criterion is shown as this much of its text around the match.
SNIPPET_CHARS = 120
SNIPPET_BEFORE = 40
# Numbered page links either side of the current page (first and last always shown).
PAGES_AROUND = 2


@dataclass(frozen=True)
class TaskListing:
    """What a task list shows: the URL's search, filters, sort and page (`TaskListForm`)."""

    query: str = ""
    state: str = ""
    scored_by: str = ""
    verifier: str = ""
    files: str = ""
    # `key=value` (or `key`): tasks whose metadata has it.
    metadata: str = ""
    sort: str = ""
    per_page: int = DEFAULT_PAGE_SIZE
    page: int = 1

    @property
    def filtered(self) -> bool:
        """Whether the search or a filter leaves tasks out."""
        return any(
            (self.query, self.state, self.scored_by, self.verifier, self.files, self.metadata)
        )

    def fields(self) -> dict[str, Any]:
        """The listing as the URL's fields (`TaskListForm`'s), defaults included."""
        return {
            "q": self.query,
            "state": self.state,
            "scored_by": self.scored_by,
            "verifier": self.verifier,
            "has_files": self.files,
            "metadata": self.metadata,
            "sort": self.sort,
            "per_page": self.per_page,
            "page": self.page,
        }

    def params(self, **changes: Any) -> str:
        """The URL's query string for this listing with `changes` (defaults left out), so
        that every link keeps the search, filters and sort it was made under."""
        defaults = {"per_page": DEFAULT_PAGE_SIZE, "page": 1}
        values = self.fields() | changes
        kept = {
            key: value
            for key, value in values.items()
            if value not in ("", None) and value != defaults.get(key)
        }
        return f"?{urlencode(kept)}" if kept else "?"


@dataclass(frozen=True)
class SharedCriteria:
    """A list's criteria for every task: counted in each row, and graders of every task."""

    count: int = 0
    weight: float = 0.0
    kinds: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Match:
    """Where a search matched a task beyond its id and name, with the text around it."""

    where: str
    text: str


@dataclass(frozen=True)
class PageLink:
    """A numbered page link of a task list; `number` None is the gap between numbers."""

    number: int | None
    url: str = ""
    current: bool = False


@dataclass(frozen=True)
class TaskPage:
    """One page of a task list, with the counts its headings print."""

    rows: list[TaskRow]
    listing: TaskListing
    total: int
    matching: int
    number: int
    pages: int
    first: int
    last: int
    links: list[PageLink]
    previous: str | None
    next: str | None

    @property
    def graded_by_criteria(self) -> bool:
        """Whether a task listed has criteria: a page of tasks graded by their expected
        answers alone shows no Criteria and Total weight columns (each would say 0)."""
        return any(row.criteria for row in self.rows)

    @property
    def unfiltered(self) -> str:
        """This list with no page: where a change of sort or page size starts from."""
        return self.listing.params(page="")


TASK_SORTS: dict[str, tuple[str, ...]] = {
    "": ("position", "pk"),
    "name": ("name", "task_id", "pk"),
    "changed": ("-updated_at", "-pk"),
}


def _in_state(tasks: TaskQuerySet, state: str) -> QuerySet[Task]:
    """Drafts (not reviewed since they changed), reviewed drafts, saved or archived tasks;
    with no state, the dataset's tasks now: drafts and saved ones."""
    if state == "draft":
        return tasks.filter(state=TaskState.DRAFT).exclude(REVIEWED)
    if state == "reviewed":
        return tasks.filter(REVIEWED, state=TaskState.DRAFT)
    if state in (TaskState.SAVED, TaskState.ARCHIVED):
        return tasks.filter(state=state)
    return tasks.live()


SEARCHED_COLUMNS = ("task_id", "name", "prompt", "expected_text", "metadata")


def tasks_searched(tasks: QuerySet[Task], query: str, *, dataset_id: int) -> QuerySet[Task]:
    """Tasks whose id, name, prompt, expected answer or one of its criteria holds `query`,
    in any case.

    A substring match everywhere: people search for ids ("gsm8k-01"), numbers and parts of
    words as often as for words. On PostgreSQL each column is asked on its own and the
    answers united, so that each is one trigram index scan (migration 0007) whose few rows
    `tasks` then keeps to its dataset: an OR across the columns, or the dataset's rows
    filtered, would read every prompt (see `_searching_by_index`). SQLite has no such index:
    there one pass over the dataset's rows, with the same OR, is the plain way and the
    fastest.
    """
    if not query:
        return tasks
    in_columns = [Q(**{f"{column}__icontains": query}) for column in SEARCHED_COLUMNS]
    in_criteria = Criterion.objects.filter(task__isnull=False, text__icontains=query)
    if connection.vendor != "postgresql":
        matched = reduce(operator.or_, in_columns)
        in_dataset = in_criteria.filter(dataset_id=dataset_id).values("task")
        return tasks.filter(matched | Q(pk__in=in_dataset))
    found = [Task.objects.filter(match).order_by().values("pk") for match in in_columns]
    return tasks.filter(pk__in=found[0].union(*found[1:], in_criteria.order_by().values("task")))


# pg_trgm finds a pattern by its three-letter pieces: a shorter search has none to look up.
TRIGRAM = 3


@contextmanager
def _searching_by_index(query: str) -> Iterator[None]:
    """On PostgreSQL, have a search use its trigram indexes.

    The planner costs `UPPER(prompt) LIKE` on a long prompt as it does on a short word, so
    below some 20,000 tasks it reads every prompt rather than the index: measured at 10,000
    tasks, 35-50 ms against 2.5 ms. Inside this transaction only, reading every row is
    costed as what it is (`enable_seqscan` only raises its cost; nothing is refused).
    """
    if connection.vendor != "postgresql" or len(query) < TRIGRAM:
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        yield


def _scored_by(tasks: QuerySet[Task], scored_by: str, shared: SharedCriteria) -> QuerySet[Task]:
    # As `TaskRow.scored_by` says it: by criteria when any criterion grades the task.
    if not scored_by:
        return tasks
    own = Exists(Criterion.objects.filter(task=OuterRef("pk")))
    if scored_by == "criteria":
        return tasks if shared.count else tasks.filter(own)
    return tasks.none() if shared.count else tasks.filter(~own)


def default_kinds(settings: dict[str, Any]) -> tuple[str, str]:
    """The verifier kinds that grade an expected answer and a criterion naming none."""
    answer = settings.get("expectedAnswerVerifier") or DEFAULT_EXPECTED_ANSWER_VERIFIER
    criterion = settings.get("defaultVerifier") or DEFAULT_CRITERION_VERIFIER
    return answer.get("kind", ""), criterion.get("kind", "")


def _graded_by(
    tasks: QuerySet[Task], kind: str, settings: dict[str, Any], shared: SharedCriteria
) -> QuerySet[Task]:
    """Tasks a verifier of this kind grades: their expected answer's, one of their criteria's
    (a verifier named, or the dataset's default for those naming none), or one of the
    criteria for every task's."""
    if not kind or kind in shared.kinds:
        return tasks
    answer_default, criterion_default = default_kinds(settings)
    answer = Q(expected_verifier__kind=kind)
    if answer_default == kind:
        answer |= Q(expected_verifier__isnull=True) & ~Q(expected_text="")
    graded = Q(verifier__kind=kind)
    if criterion_default == kind:
        graded |= Q(verifier__isnull=True)
    return tasks.filter(answer | Exists(Criterion.objects.filter(graded, task=OuterRef("pk"))))


def _with_files(tasks: QuerySet[Task], files: str) -> QuerySet[Task]:
    if not files:
        return tasks
    has = Exists(TaskFile.objects.filter(task=OuterRef("pk")))
    return tasks.filter(has if files == "yes" else ~has)


def snippet(text: str, query: str) -> str | None:
    """The text around the first match of `query` (any case), or None without one."""
    found = re.search(re.escape(query), text, re.IGNORECASE) if query else None
    if found is None:
        return None
    start = max(0, found.start() - SNIPPET_BEFORE)
    end = min(len(text), max(found.end(), start + SNIPPET_CHARS))
    return f"{'…' if start else ''}{text[start:end]}{'…' if end < len(text) else ''}"


def _matches(task: Task, query: str) -> tuple[Match, ...]:
    """Where the search matched besides the id and name (which the row marks in place)."""
    if not query:
        return ()
    found = [
        ("prompt", snippet(task.prompt, query)),
        ("expected answer", snippet(task.expected_text, query)),
        *(
            (f"metadata {key}", snippet(columns.metadata_cell(value), query))
            for key, value in (task.metadata or {}).items()
        ),
        *(("criterion", snippet(c.text, query)) for c in task.criteria.all()),
    ]
    return tuple(Match(where=where, text=text) for where, text in found if text)


def _page_links(listing: TaskListing, number: int, pages: int) -> list[PageLink]:
    """1 … 4 5 [6] 7 8 … 20: the first, the last, and the pages around this one."""
    shown = sorted(
        {1, pages, *range(max(1, number - PAGES_AROUND), min(pages, number + PAGES_AROUND) + 1)}
    )
    links: list[PageLink] = []
    for page in shown:
        if links and links[-1].number is not None and page - links[-1].number > 1:
            links.append(PageLink(number=None))
        links.append(PageLink(number=page, url=listing.params(page=page), current=page == number))
    return links


def _listed(
    tasks: QuerySet[Task],
    listing: TaskListing,
    *,
    dataset_id: int,
    settings: dict[str, Any],
    shared: SharedCriteria,
) -> QuerySet[Task]:
    tasks = tasks_searched(tasks, listing.query, dataset_id=dataset_id)
    tasks = _scored_by(tasks, listing.scored_by, shared)
    tasks = _graded_by(tasks, listing.verifier, settings, shared)
    tasks = _with_metadata(tasks, listing.metadata)
    return _with_files(tasks, listing.files)


def _with_metadata(tasks: QuerySet[Task], wanted: str) -> QuerySet[Task]:
    """Tasks whose metadata has `key=value` (the value read as a sheet's cell is, and as
    the text typed: `difficulty=3` finds 3 and "3"), or the key at all for `key`."""
    if not wanted:
        return tasks
    key, equals, typed = wanted.partition("=")
    key = key.strip()
    if not equals:
        return tasks.filter(metadata__has_key=key)
    value = typed.strip()
    parsed = columns.metadata_value(value)
    matches = Q(_metadata_value=value)
    if parsed != value and parsed is not None:
        matches |= Q(_metadata_value=parsed)
    return tasks.annotate(_metadata_value=KeyTransform(key, "metadata")).filter(matches)


def task_page(
    tasks: QuerySet[Task],
    *,
    listing: TaskListing,
    total: int,
    dataset_id: int,
    settings: dict[str, Any],
    shared: SharedCriteria,
) -> TaskPage:
    """One page of `tasks` as `listing` asks: searched, filtered, sorted, with the page's
    criteria and files read for its rows only. A fixed number of queries at any size: the
    count of what matches, the page, its criteria, its files."""
    tasks = _listed(tasks, listing, dataset_id=dataset_id, settings=settings, shared=shared)
    tasks = tasks.order_by(*TASK_SORTS[listing.sort])
    if not listing.query:
        # Only a search shows the prompt; a page of long prompts is not read to be dropped.
        tasks = tasks.defer("prompt", "evidence")
    with _searching_by_index(listing.query):
        matching = tasks.count() if listing.filtered else total
        paginator = Paginator(tasks.prefetch_related("criteria", "files"), listing.per_page)
        paginator.count = matching  # counted above: the paginator need not count again
        page = paginator.get_page(listing.page)
        rows = [
            TaskRow(
                task=task,
                criteria=len(task.criteria.all()) + shared.count,
                total_weight=math.fsum(c.weight for c in task.criteria.all()) + shared.weight,
                matches=_matches(task, listing.query),
            )
            for task in page.object_list
        ]
    number, pages = page.number, paginator.num_pages
    return TaskPage(
        rows=rows,
        listing=listing,
        total=total,
        matching=matching,
        number=number,
        pages=pages,
        first=page.start_index(),
        last=page.end_index(),
        links=_page_links(listing, number, pages) if pages > 1 else [],
        previous=listing.params(page=number - 1) if page.has_previous() else None,
        next=listing.params(page=number + 1) if page.has_next() else None,
    )


def _dataset_shared(dataset: Dataset) -> SharedCriteria:
    rows = list(dataset_criteria(dataset).values_list("weight", "verifier"))
    _answer, criterion_default = default_kinds(dataset.settings or {})
    return SharedCriteria(
        count=len(rows),
        weight=math.fsum(weight for weight, _ in rows),
        kinds=frozenset((v or {}).get("kind") or criterion_default for _, v in rows),
    )


def dataset_tasks_listed(dataset: Dataset, listing: TaskListing) -> QuerySet[Task]:
    """Every task of the dataset that the listing's search and filters leave (all pages):
    what "all N tasks that match" acts on."""
    return _listed(
        _in_state(Task.objects.filter(dataset=dataset), listing.state),
        listing,
        dataset_id=dataset.pk,
        settings=dataset.settings or {},
        shared=_dataset_shared(dataset),
    )


def dataset_task_page(dataset: Dataset, listing: TaskListing) -> TaskPage:
    """The dataset page's tasks: live ones, or those of the state the listing asks for."""
    return task_page(
        _in_state(Task.objects.filter(dataset=dataset), listing.state),
        listing=listing,
        # The heading counts the dataset's tasks now, whatever state is listed.
        total=dataset.tasks.live().count(),
        dataset_id=dataset.pk,
        settings=dataset.settings or {},
        shared=_dataset_shared(dataset),
    )


@dataclass(frozen=True)
class VersionHead:
    """What a version's page shows above its tasks, and what the dataset page compares with
    its settings: the name, settings and criteria for every task it saved (as documents)."""

    name: str
    settings: dict[str, Any]
    criteria_documents: list[dict[str, Any]]
    description: str = ""

    @property
    def criteria(self) -> tuple[CriterionSpec, ...]:
        return json_format.from_document({"criteria": self.criteria_documents}).criteria


def version_head(version: Version) -> VersionHead:
    """A version's head (`Version.snapshot`: name, description, settings, criteria for
    every task), read once and kept in the cache from then on: a saved version never
    changes. Its tasks are `version_tasks`.
    """
    # "-2": heads cached before they held the description are not read back.
    key = f"version-head-2:{version.pk}:{version.created_at.timestamp()}"
    head: VersionHead | None = cache.get(key)
    if head is None:
        name, description, settings, criteria = (
            Version.objects.filter(pk=version.pk)
            .values_list(
                "snapshot__name",
                "snapshot__description",
                "snapshot__settings",
                "snapshot__criteria",
            )
            .get()
        )
        head = VersionHead(
            name=name or "",
            settings=settings or {},
            criteria_documents=criteria or [],
            description=description or "",
        )
        cache.set(key, head, timeout=None)
    return head


def version_task_page(version: Version, head: VersionHead, listing: TaskListing) -> TaskPage:
    """A version's tasks, a page at a time: its rows (`Version.tasks`), never the whole
    snapshot."""
    _answer, criterion_default = default_kinds(head.settings)
    shared = SharedCriteria(
        count=len(head.criteria),
        weight=math.fsum(c.weight for c in head.criteria),
        kinds=frozenset(
            (c.verifier.kind if c.verifier else "") or criterion_default for c in head.criteria
        ),
    )
    # The version's rows, asked from the dataset's tasks in their order: a page is read by
    # walking the dataset's index (task_dataset_position) until it is full, never by
    # sorting every task the version holds.
    return task_page(
        version_tasks(version),
        listing=replace(listing, state=""),
        total=version_task_count(version),
        dataset_id=version.dataset_id,
        settings=head.settings,
        shared=shared,
    )


def version_task_for(version: Version, task_id: str) -> Task:
    """The task of that id as `version` holds it (its row never changes), with criteria
    and files; 404 for an id the version does not hold."""
    tasks = version_tasks(version).filter(task_id=task_id)
    task = tasks.prefetch_related("criteria", "files").order_by("pk").first()
    if task is None:
        raise Http404
    return task


def version_shared_criteria(head: VersionHead) -> list[Criterion]:
    """The criteria for every task a version saved, as rows to show (never saved): what
    the task pages list beside a task's own."""
    return [
        Criterion(
            criterion_id=c.id,
            text=c.criterion,
            weight=c.weight,
            verifier=c.verifier.to_json() if c.verifier else None,
        )
        for c in head.criteria
    ]


def version_export_notes(version: Version) -> list[ExportNotes]:
    """What each format cannot carry of the version. A saved version never changes, so they
    are worked out once (`export_facts`, from its whole content) and kept in the cache."""
    key = f"version-export-notes:{version.pk}:{version.created_at.timestamp()}"
    notes: list[ExportNotes] | None = cache.get(key)
    if notes is None:
        head = replace(version_spec_streamed(version), tasks=())
        notes = exporting.export_notes(head, export_facts(version_tasks(version), head))
        cache.set(key, notes, timeout=None)
    return notes


def dataset_export_notes(dataset: Dataset) -> list[ExportNotes]:
    """What each format cannot carry of the dataset's current tasks (the export page)."""
    head = dataset_spec(dataset=dataset, tasks=())
    return exporting.export_notes(head, export_facts(dataset.tasks.live(), head))


# A character an .xlsx cannot store as it is (`xlsx_format.cells_xml_changes`: the ones XML
# refuses, and a carriage return), in a text column; in a JSON column's text also as the
# escape JSON writes it (\r, \u0001, \ufffe; PostgreSQL's jsonb writes control characters
# so, SQLite keeps Django's ASCII-only JSON). Either may match more than such a cell (a
# backslash before an r): the tasks it finds are then read and their cells counted exactly.
_XML_CHANGES = "[\x01-\x08\x0b\x0c\x0e-\x1f\r\ufffe\uffff]"
_XML_CHANGES_JSON = _XML_CHANGES + r"|\\(r|b|f|u00[01][0-9a-fA-F]|u[fF]{3}[eEfF])"


def _may_change_in_xml(tasks: QuerySet[Task]) -> QuerySet[Task]:
    """The tasks among `tasks` that may have a cell whose characters XML changes."""
    text, json_text = _XML_CHANGES, _XML_CHANGES_JSON
    criteria = Criterion.objects.filter(task=OuterRef("pk")).annotate(
        verifier_text=_json_text("verifier")
    )
    files = TaskFile.objects.filter(task=OuterRef("pk"))
    return tasks.annotate(
        metadata_text=_json_text("metadata"), verifier_text=_json_text("expected_verifier")
    ).filter(
        Q(task_id__regex=text)
        | Q(name__regex=text)
        | Q(prompt__regex=text)
        | Q(expected_text__regex=text)
        | Q(metadata_text__regex=json_text)
        | Q(verifier_text__regex=json_text)
        | Exists(
            criteria.filter(
                Q(criterion_id__regex=text)
                | Q(text__regex=text)
                | Q(verifier_text__regex=json_text)
            )
        )
        | Exists(files.filter(Q(name__regex=text) | Q(url__regex=text) | Q(file__regex=text)))
    )


def export_facts(tasks: QuerySet[Task], head: DatasetSpec) -> ExportFacts:
    """`exporting.ExportFacts` of `tasks` (the dataset's or a version's) by aggregate
    queries, without loading every task: a handful of queries whatever their number. Read
    as specs (`TaskStream`) are only the tasks a count needs the content of: those with
    evidence (whose shape decides what an eval set keeps) and those that may hold a
    character XML changes; `head` is the dataset's name, settings and criteria for every
    task."""
    no_evidence = Q(evidence={})
    no_answer = Q(expected_text="") | Q(expected_text__isnull=True)
    graded_by_criteria = Exists(
        Criterion.objects.filter(task=OuterRef("pk")).exclude(
            criterion_id=evalset_format.RETRIEVAL_CRITERION_ID
        )
    )
    counts = tasks.order_by().aggregate(
        plain=Count("pk", filter=no_evidence),
        plain_left_out=Count("pk", filter=no_evidence & no_answer),
        plain_answer_only=Count("pk", filter=no_evidence & ~no_answer & Q(graded_by_criteria)),
        with_files=Count("pk", filter=Q(Exists(TaskFile.objects.filter(task=OuterRef("pk"))))),
        verifiers=Count("pk", filter=Q(expected_verifier__isnull=False)),
    )
    with_evidence = [0]

    def counting(specs: Iterable[TaskSpec]) -> Iterator[TaskSpec]:
        for spec in specs:
            with_evidence[0] += bool(spec.evidence)
            yield spec

    tally = evalset_format.export_tally(counting(TaskStream(tasks.exclude(no_evidence))))
    tally.tasks += counts["plain"]
    tally.left_out_count += counts["plain_left_out"]
    tally.answer_only += counts["plain_answer_only"]
    tally.with_files, tally.verifiers = counts["with_files"], counts["verifiers"]
    tally.left_out = _first_left_out(tasks, tally.left_out, tasks.filter(no_evidence & no_answer))
    stored = TaskFile.objects.filter(task__in=tasks.order_by().values("pk"), url="").order_by(
        "task__position", "task_id", "role", "position", "pk"
    )
    return exporting.ExportFacts(
        with_evidence=with_evidence[0],
        xlsx_cells=xlsx_format.cells_xml_changes(
            replace(head, tasks=TaskStream(_may_change_in_xml(tasks)))
        ),
        evalset=tally,
        stored_files=list(
            stored.values_list("task__task_id", "name")[: exporting.STORED_FILES_NAMED]
        ),
        stored_count=stored.count(),
    )


def _first_left_out(tasks: QuerySet[Task], read: list[str], plain: QuerySet[Task]) -> list[str]:
    """The first ids an eval set leaves out, in the tasks' order: of those read (with
    evidence) and those counted (no evidence, no answer), each the first of its own."""
    named = evalset_format.LEFT_OUT_NAMED
    rows = list(plain.values_list("position", "pk", "task_id")[:named])
    if read:
        rows += tasks.filter(task_id__in=read).values_list("position", "pk", "task_id")
    return [task_id for _position, _pk, task_id in sorted(rows)[:named]]


def tasks_deletable(tasks: QuerySet[Task]) -> QuerySet[Task]:
    """The drafts among `tasks` that removing deletes for good (`TaskQuerySet.deletable`)."""
    return Task.objects.filter(pk__in=tasks.values("pk")).deletable()


# --- Reviewing drafts one at a time (the review page) ---------------------------------------


@dataclass(frozen=True)
class DraftCounts:
    """How many drafts the dataset has, and how many of them are not reviewed since they
    last changed (`Task.is_reviewed`): what Save as vN and the review page say."""

    drafts: int
    unreviewed: int


def draft_counts(dataset: Dataset) -> DraftCounts:
    """The dataset's drafts, counted in one query."""
    counts = dataset.tasks.filter(state=TaskState.DRAFT).aggregate(
        drafts=Count("pk"), unreviewed=Count("pk", filter=~REVIEWED)
    )
    return DraftCounts(drafts=counts["drafts"], unreviewed=counts["unreviewed"])


@dataclass(frozen=True)
class ReviewStep:
    """The draft the review page shows, where it stands among the drafts it walks (all of
    them, or those not reviewed yet), and its neighbours there, by the dataset's order."""

    task: Task
    unreviewed_only: bool
    # Its place among the drafts walked (from 1), None when it is not one of them (a draft
    # reviewed a moment ago, shown until the person moves on).
    number: int | None
    walked: int
    previous: int | None
    next: int | None
    counts: DraftCounts


def review_step(
    dataset: Dataset, *, task_pk: int | None, unreviewed_only: bool
) -> ReviewStep | None:
    """The review page's draft: `task_pk` if it is a draft of the dataset, else the first
    draft walked; None when there is none to show.

    Its neighbours and number are asked of the database along the dataset's order, so a
    step costs the same few queries whatever the number of drafts.
    """
    drafts = dataset.tasks.filter(state=TaskState.DRAFT)
    walked = drafts.exclude(REVIEWED) if unreviewed_only else drafts
    shown = drafts.prefetch_related("criteria", "files").select_related("reviewed_by")
    task = shown.filter(pk=task_pk).first() if task_pk is not None else None
    if task is None:
        task = shown.filter(pk__in=walked.order_by("position", "pk").values("pk")[:1]).first()
    if task is None:
        return None
    before = Q(position__lt=task.position) | Q(position=task.position, pk__lt=task.pk)
    after = Q(position__gt=task.position) | Q(position=task.position, pk__gt=task.pk)
    previous = walked.filter(before).order_by("-position", "-pk").values_list("pk", flat=True)
    following = walked.filter(after).order_by("position", "pk").values_list("pk", flat=True)
    is_walked = walked.filter(pk=task.pk).exists()
    counts = draft_counts(dataset)
    return ReviewStep(
        task=task,
        unreviewed_only=unreviewed_only,
        number=walked.filter(before).count() + 1 if is_walked else None,
        walked=counts.unreviewed if unreviewed_only else counts.drafts,
        previous=previous.first(),
        next=following.first(),
        counts=counts,
    )


# --- Runs ---------------------------------------------------------------------------------


def run_for(user: User, pk: int) -> Run:
    """A run of a dataset the person may see (as for its exports); 404 otherwise."""
    visible = Run.objects.filter(version__dataset__in=datasets_for(user))
    return get_object_or_404(
        visible.select_related("version__dataset", "created_by").defer("version__snapshot"),
        pk=pk,
    )


@dataclass(frozen=True)
class FrozenVersion:
    """A saved version as its runs grade it: its content, each task by its id, and what
    grades each task (`checks_for`), worked out once."""

    spec: DatasetSpec
    tasks: Mapping[str, TaskSpec]
    checks: Mapping[str, tuple[Check, ...]]


@functools.lru_cache(maxsize=4)
def _frozen_version(version_pk: int, created_at: float) -> FrozenVersion:
    # A saved version never changes, so each process reads it once (the key holds when it
    # was saved, as the version page's caches do).
    spec = version_spec(Version.objects.get(pk=version_pk))
    tasks = {task.id: task for task in spec.tasks}
    return FrozenVersion(spec, tasks, {key: checks_for(spec, task) for key, task in tasks.items()})


def frozen_version(version: Version) -> FrozenVersion:
    """The version's frozen content, as every run grades it."""
    return _frozen_version(version.pk, version.created_at.timestamp())


def result_outcomes(
    run: Run, results: Sequence[RunResult], stored: Sequence[RunOutcome]
) -> dict[int, list[RunOutcome]]:
    """Each result's criteria in order (by its pk): the outcomes written (`stored`), and
    for a criterion not graded yet, an unsaved row that says so, "claimed" while a worker
    holds its task (else "pending"), its text from the version."""
    outcomes: dict[int, list[RunOutcome]] = {result.pk: [] for result in results}
    for row in stored:
        outcomes[row.result_id].append(row)
    ungraded = [result for result in results if not result.graded]
    if not ungraded:
        return outcomes
    checks = frozen_version(run.version).checks
    for result in ungraded:
        written = {row.position: row for row in outcomes[result.pk]}
        status = OutcomeStatus.CLAIMED if result.lease and not run.ended else OutcomeStatus.PENDING
        outcomes[result.pk] = [
            written.get(position)
            or RunOutcome(
                run=run,
                result=result,
                position=position,
                criterion_key=check.id,
                text=check.text,
                weight=check.weight,
                kind=check.verifier.kind,
                status=status,
            )
            for position, check in enumerate(checks.get(result.task_key, ()))
        ]
    return outcomes


def task_result_of(result: RunResult, rows: Sequence[RunOutcome]) -> TaskResult:
    """A stored task's outcomes as the library's `TaskResult`, so that they are written as
    `python -m context_verifiers grade --json` writes them."""
    criteria = tuple(
        CriterionResult(
            id=row.criterion_key,
            text=row.text,
            weight=row.weight,
            kind=row.kind,
            outcome=Outcome(
                status=row.status,  # type: ignore[arg-type]  # pending shows as it is
                score=row.score,
                reasoning=row.reasoning,
                code=row.code or None,
                detail=row.detail,
                warnings=tuple(row.warnings or ()),
            ),
        )
        for row in rows
    )
    agent = costs_json({key: getattr(result, key) for key in COST_KEYS})
    return TaskResult(
        task=result.task_key,
        score=Score(result.score, result.coverage),
        criteria=criteria,
        agent=agent,
    )


def run_results_document(run: Run) -> dict[str, Any]:
    """Every verdict of the run, as the command-line grader's --json prints them."""
    results = list(RunResult.objects.filter(run=run).order_by("position"))
    stored = RunOutcome.objects.filter(run=run).defer("calls").order_by("result_id", "position")
    outcomes = result_outcomes(run, results, list(stored))
    tasks = [task_result_of(result, outcomes[result.pk]) for result in results]
    summary = run_summary_of(run)
    score = (
        Score(summary.score.value, summary.coverage)
        if summary
        else dataset_score(t.score for t in tasks)
    )
    return DatasetResult(score=score, tasks=tuple(tasks)).to_json()


HISTOGRAM_BINS = 10


@dataclass(frozen=True)
class RunSummary:
    """A run's figures, made once when it ends (and kept on it)."""

    VERSION = 1

    score: metrics.Mean
    coverage: float
    pass_rate: metrics.Mean
    tasks: int
    graded_tasks: int
    failed_tasks: int
    errored_tasks: int
    no_output: int
    outcomes: dict[str, int]
    criteria: list[dict[str, Any]]
    histogram: list[int]
    costs: dict[str, Any] = field(default_factory=dict)
    judge_calls: int = 0
    # How the judge agrees with people's labels, per judged criterion, and where it does not.
    calibration: list[dict[str, Any]] = field(default_factory=list)
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "summary_version": self.VERSION,
            **{k: v for k, v in vars(self).items() if k not in ("score", "pass_rate")},
            "score": self.score.to_json(),
            "pass_rate": self.pass_rate.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunSummary | None:
        if data.get("summary_version") != cls.VERSION:
            return None
        fields = {k: v for k, v in data.items() if k != "summary_version"}
        fields["score"] = metrics.Mean.from_json(fields["score"])
        fields["pass_rate"] = metrics.Mean.from_json(fields["pass_rate"])
        return cls(**fields)


def _histogram(values: Iterable[float]) -> list[int]:
    bins = [0] * HISTOGRAM_BINS
    for value in values:
        bins[min(HISTOGRAM_BINS - 1, int(value * HISTOGRAM_BINS))] += 1
    return bins


def _costs(results: Sequence[tuple[Any, ...]]) -> dict[str, Any]:
    """What the agent's runs cost, summed over the tasks whose lines said (`run_summary`'s
    rows: latency, tokens, cost and model at 7 to 10); the mean latency is of those."""
    latencies = [row[7] for row in results if row[7] is not None]
    tokens = [row[8] for row in results if row[8] is not None]
    costs = [row[9] for row in results if row[9] is not None]
    return {
        "latency_ms": math.fsum(latencies) if latencies else None,
        "latency_mean_ms": math.fsum(latencies) / len(latencies) if latencies else None,
        "tokens": sum(tokens) if tokens else None,
        "cost": math.fsum(costs) if costs else None,
        "models": sorted({row[10] for row in results if row[10]}),
    }


def _no_output(results: Sequence[tuple[Any, ...]]) -> int:
    """The tasks given nothing to grade: no text and no files (`run_summary`'s rows)."""
    return sum(1 for row in results if not (row[4] or "").strip() and not row[11])


# Outcomes whose score counts in their task's pass rate.
SCORED_STATUSES = ("passed", "failed", "scored")


@dataclass
class _OutcomeTally:
    """What `run_summary` takes from a run's outcomes, in one pass over them."""

    counts: dict[str, int] = field(default_factory=dict)
    by_task: dict[int, list[float]] = field(default_factory=dict)
    rate_rows: list[tuple[str, str, str, str, float | None, str | None]] = field(
        default_factory=list
    )
    judge_calls: int = 0

    def add(
        self,
        result_id: int,
        key: str,
        text: str,
        kind: str,
        status: str,
        score: float | None,
        code: str | None,
        calls: list[Any] | None,
    ) -> None:
        self.counts[status] = self.counts.get(status, 0) + 1
        self.judge_calls += len(calls or [])
        self.rate_rows.append((key, text, kind, status, score, code or None))
        if status in SCORED_STATUSES:
            self.by_task.setdefault(result_id, []).append(score or 0.0)


def _tally_outcomes(run_id: int) -> _OutcomeTally:
    """The outcomes written, and those not graded yet counted as pending (they have no
    rows: `services.runs`)."""
    outcomes = RunOutcome.objects.filter(run_id=run_id).values_list(
        "result_id", "criterion_key", "text", "kind", "status", "score", "code", "calls"
    )
    tally = _OutcomeTally()
    for row in outcomes.iterator(2000):
        tally.add(*row)
    expected = Run.objects.values_list("outcome_count", flat=True).get(pk=run_id)
    pending = expected - sum(tally.counts.values())
    if pending > 0:
        tally.counts[OutcomeStatus.PENDING.value] = pending
    return tally


def run_summary(*, run_id: int) -> RunSummary:
    """The run's figures from its rows: three reads, whatever its size."""
    results = list(
        RunResult.objects.filter(run_id=run_id).values_list(
            "pk",
            "score",
            "coverage",
            "graded",
            "output",
            "failed_count",
            "error_count",
            "latency_ms",
            "tokens",
            "cost",
            "model",
            "files",
            "task_key",
            "labels",
        )
    )
    tally = _tally_outcomes(run_id)
    scores = [row[1] for row in results if row[3] and row[1] is not None]
    graded = [row for row in results if row[3]]
    calibration, disagreements = _calibration(run_id, results)
    return RunSummary(
        calibration=calibration,
        disagreements=disagreements,
        score=metrics.mean(scores),
        coverage=dataset_score(Score(row[1], row[2]) for row in graded).coverage,
        pass_rate=metrics.clustered_mean(tally.by_task.values()),
        tasks=len(results),
        graded_tasks=len(graded),
        failed_tasks=sum(1 for row in graded if row[1] is not None and row[1] < 1),
        errored_tasks=sum(1 for row in graded if row[6]),
        no_output=_no_output(results),
        outcomes=tally.counts,
        criteria=[rate.to_json() for rate in metrics.criterion_rates(tally.rate_rows)],
        histogram=_histogram(scores),
        costs=_costs(results),
        judge_calls=tally.judge_calls,
    )


# The disagreements a run page lists (the first, in task order).
MAX_DISAGREEMENTS = 50
JUDGED = ("llm_judge", "agent_judge")


def _calibration(
    run_id: int, results: Sequence[tuple[Any, ...]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each judged criterion's agreement with the people's labels (results: `run_summary`'s
    rows, task id and labels last), and the disagreements with both verdicts and the
    judge's reasoning."""
    labelled: dict[int, tuple[str, dict[str, Any]]] = {
        row[0]: (row[-2], row[-1]) for row in results if row[-1]
    }
    if not labelled:
        return [], []
    rows = (
        RunOutcome.objects.filter(
            run_id=run_id,
            result_id__in=list(labelled),
            kind__in=JUDGED,
            status__in=SCORED_STATUSES,
        )
        .order_by("result__position", "position")
        .values_list("result_id", "criterion_key", "status", "score", "reasoning")
    )
    pairs: dict[str, list[tuple[float, bool | float]]] = {}
    disagreements: list[dict[str, Any]] = []
    for result_id, key, status, score, reasoning in rows:
        task_key, labels = labelled[result_id]
        if key not in labels:
            continue
        label, points = labels[key], score or 0.0
        pairs.setdefault(key, []).append((points, label))
        agrees = abs(points - float(label)) <= metrics.SCORE_AGREES
        if not agrees and len(disagreements) < MAX_DISAGREEMENTS:
            disagreements.append(
                {
                    "task": task_key,
                    "criterion": key,
                    "judge": status,
                    "score": score,
                    "label": label,
                    "reasoning": reasoning,
                }
            )
    return [metrics.calibration(key, got).to_json() for key, got in pairs.items()], disagreements


def run_summary_of(run: Run) -> RunSummary | None:
    """The run's figures as it ended (None while it has not)."""
    return RunSummary.from_json(run.summary or {})


def run_of(dataset: Dataset, pk: int) -> Run:
    """A run of this dataset (the person may see it: `dataset_for` said so); 404 otherwise."""
    runs = Run.objects.filter(version__dataset=dataset).select_related("version", "created_by")
    return get_object_or_404(runs.defer("version__snapshot"), pk=pk)


def runs_of_version(version: Version) -> QuerySet[Run]:
    return (
        Run.objects.filter(version=version)
        .exclude(state=RunState.CHECKING)
        .select_related("version", "created_by")
        .defer("version__snapshot")
    )


def previous_run(run: Run) -> Run | None:
    """The run of the same dataset before this one that graded everything."""
    return (
        Run.objects.filter(
            version__dataset_id=run.version.dataset_id,
            state__in=[RunState.DONE, RunState.DONE_WITH_ERRORS],
            pk__lt=run.pk,
        )
        .order_by("-pk")
        .select_related("version")
        .defer("version__snapshot", "summary", "plan")
        .first()
    )


RUN_PAGE_SIZE = 50
# How a run's tasks are ordered: the version's, or by score (tasks with no score first,
# so that nothing graded partially hides at the bottom of "lowest first").
RUN_TASK_ORDER = {
    "": ("position",),
    "score": (F("score").asc(nulls_first=True), "position"),
    "-score": (F("score").desc(nulls_last=True), "position"),
}


@dataclass(frozen=True)
class RunTaskListing:
    """Which of a run's tasks its page lists: all, failed, errored, with no output, or
    failed on one criterion; in order or by score; one page of them."""

    show: str = ""
    criterion: str = ""
    sort: str = ""
    page: int = 1
    per_page: int = RUN_PAGE_SIZE

    @property
    def filtered(self) -> bool:
        return bool(self.show)

    def params(self, **changes: Any) -> str:
        values = {"show": self.show, "criterion": self.criterion, "sort": self.sort}
        values |= {"page": self.page} | changes
        if values["show"] != "criterion":
            values["criterion"] = ""
        kept = {k: v for k, v in values.items() if v not in ("", None) and (k, v) != ("page", 1)}
        return f"?{urlencode(kept)}" if kept else "?"


@dataclass(frozen=True)
class RunTaskPage:
    rows: list[RunResult]
    listing: RunTaskListing
    total: int
    matching: int
    number: int
    pages: int
    first: int
    last: int
    links: list[PageLink]
    previous: str | None
    next: str | None


def run_task_page(run: Run, listing: RunTaskListing) -> RunTaskPage:
    """One page of the run's tasks: a count, and the page (outputs cut to their start)."""
    results = RunResult.objects.filter(run=run)
    if listing.show == "failed":
        results = results.filter(graded=True, score__lt=1)
    elif listing.show == "errored":
        results = results.filter(error_count__gt=0)
    elif listing.show == "no_output":
        results = results.filter((Q(has_output=False) | Q(output="")) & Q(files=[]))
    elif listing.show == "criterion" and listing.criterion:
        failed = RunOutcome.objects.filter(
            result=OuterRef("pk"), criterion_key=listing.criterion, status="failed"
        )
        results = results.filter(Exists(failed))
    matching = results.count() if listing.filtered else run.task_count
    rows = (
        results.select_related("task")
        .only(*RUN_ROW_FIELDS)
        .annotate(output_start=Substr("output", 1, 120))
        .order_by(*RUN_TASK_ORDER.get(listing.sort, ("position",)))
    )
    paginator = Paginator(rows, listing.per_page)
    paginator.count = matching
    page = paginator.get_page(listing.page)
    number, pages = page.number, paginator.num_pages
    return RunTaskPage(
        rows=list(page.object_list),
        listing=listing,
        total=run.task_count,
        matching=matching,
        number=number,
        pages=pages,
        first=page.start_index(),
        last=page.end_index(),
        links=_page_links(listing, number, pages) if pages > 1 else [],  # type: ignore[arg-type]
        previous=listing.params(page=number - 1) if page.has_previous() else None,
        next=listing.params(page=number + 1) if page.has_next() else None,
    )


RUN_ROW_FIELDS = (
    "pk",
    "run_id",
    "task_key",
    "position",
    "has_output",
    "score",
    "coverage",
    "graded",
    "failed_count",
    "error_count",
    "latency_ms",
    "tokens",
    "cost",
    "files",
    "task__name",
)


def run_result_for(run: Run, pk: int) -> tuple[RunResult, list[RunOutcome]]:
    """One task of the run with each criterion's outcome, in order."""
    result = get_object_or_404(RunResult.objects.filter(run=run).select_related("task"), pk=pk)
    stored = list(result.outcomes.order_by("position"))
    return result, result_outcomes(run, [result], stored)[result.pk]


# The run page's pictures, in the SVG's own units: a label column, then bars at most
# BAR_WIDTH wide, a row each.
BAR_LEFT = 110
BAR_WIDTH = 240
BAR_ROW = 14


@dataclass(frozen=True)
class Bar:
    """One bar of a picture, with the numbers the table beside it prints."""

    label: str
    value: float | None
    count: int
    width: float
    y: int
    note: str = ""

    @property
    def text_y(self) -> int:
        return self.y + 10

    @property
    def end_x(self) -> float:
        return BAR_LEFT + self.width + 4


@dataclass(frozen=True)
class Bars:
    rows: list[Bar]

    @property
    def height(self) -> int:
        return max(1, len(self.rows)) * BAR_ROW

    @property
    def width(self) -> int:
        return BAR_LEFT + BAR_WIDTH + 50

    @property
    def left(self) -> int:
        return BAR_LEFT


def score_bars(summary: RunSummary) -> Bars:
    """The distribution of task scores: how many tasks in each tenth."""
    bins = summary.histogram
    most = max(bins) if bins else 0
    step = 1 / len(bins) if bins else 0
    return Bars(
        [
            Bar(
                label=f"{i * step:.1f} to {(i + 1) * step:.1f}",
                value=None,
                count=count,
                width=BAR_WIDTH * count / most if most else 0.0,
                y=i * BAR_ROW,
            )
            for i, count in enumerate(bins)
        ]
    )


def criterion_bars(summary: RunSummary) -> Bars:
    """Each criterion's pass rate (of the outcomes graded); errors and skips are beside it."""
    return Bars(
        [
            Bar(
                label=criterion["id"],
                value=criterion["rate"]["value"],
                count=criterion["graded"],
                width=BAR_WIDTH * (criterion["rate"]["value"] or 0.0),
                y=i * BAR_ROW,
                note=criterion["text"],
            )
            for i, criterion in enumerate(summary.criteria)
        ]
    )


# --- Comparing two runs ---------------------------------------------------------------------

# A compare page lists this many tasks (those that changed most first); the rest are counted.
COMPARE_ROWS = 200
# Its picture draws at most this many tasks, in a square of SCATTER_SIZE units.
SCATTER_POINTS = 2_000
SCATTER_SIZE = 200
PASS_FAIL = {"passed", "failed"}


@dataclass(frozen=True)
class Flip:
    criterion: str
    before: str
    after: str


@dataclass(frozen=True)
class TaskDelta:
    task: str
    before: float | None
    after: float | None
    before_pk: int
    after_pk: int
    flips: tuple[Flip, ...] = ()

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    @property
    def x(self) -> float:
        return SCATTER_SIZE * (self.before or 0.0)

    @property
    def y(self) -> float:
        return SCATTER_SIZE * (1 - (self.after or 0.0))


@dataclass(frozen=True)
class RunComparison:
    """Run B (after) against run A (before), over the tasks both graded."""

    before: metrics.Mean
    after: metrics.Mean
    difference: metrics.Difference
    tasks: list[TaskDelta]
    changed: int
    worse: int
    better: int
    to_fail: int
    to_pass: int
    only_before: list[str]
    only_after: list[str]
    points: list[TaskDelta]

    @property
    def shown(self) -> list[TaskDelta]:
        return self.tasks[:COMPARE_ROWS]

    @property
    def size(self) -> int:
        return SCATTER_SIZE


# A run's rows: {task key: (score if graded, result pk)}, {task key: {criterion: status}}.
_RunScores = dict[str, tuple[float | None, int]]
_RunStatuses = dict[str, dict[str, str]]
_RunRows = tuple[_RunScores, _RunStatuses]


def _run_rows(run: Run) -> _RunRows:
    results = {
        key: (score if graded else None, pk)
        for key, score, graded, pk in RunResult.objects.filter(run=run).values_list(
            "task_key", "score", "graded", "pk"
        )
    }
    statuses: _RunStatuses = {}
    for key, criterion, status in RunOutcome.objects.filter(run=run).values_list(
        "result__task_key", "criterion_key", "status"
    ):
        statuses.setdefault(key, {})[criterion] = status
    return results, statuses


def _flips(before: dict[str, str], after: dict[str, str]) -> tuple[Flip, ...]:
    """The criteria of one task that went from passed to failed or from failed to passed."""
    return tuple(
        Flip(criterion, before[criterion], status)
        for criterion, status in after.items()
        if {before.get(criterion), status} == PASS_FAIL
    )


def _task_deltas(before: _RunRows, after: _RunRows) -> list[TaskDelta]:
    """The tasks both runs have, what got worse first and those without a delta last."""
    a_results, a_statuses = before
    b_results, b_statuses = after
    tasks = []
    for key, (a_score, a_pk) in a_results.items():
        if key not in b_results:
            continue
        b_score, b_pk = b_results[key]
        flips = _flips(a_statuses.get(key, {}), b_statuses.get(key, {}))
        tasks.append(TaskDelta(key, a_score, b_score, a_pk, b_pk, flips))
    tasks.sort(key=lambda t: (t.delta is None, t.delta or 0.0, t.task))
    return tasks


def _mean_score(results: _RunScores) -> metrics.Mean:
    """The mean over the tasks a run graded."""
    return metrics.mean([score for score, _ in results.values() if score is not None])


def _scored_pairs(tasks: list[TaskDelta]) -> list[tuple[float, float]]:
    """(before, after) of the tasks both runs graded."""
    return [(t.before, t.after) for t in tasks if t.before is not None and t.after is not None]


def run_comparison(before: Run, after: Run) -> RunComparison:
    """Per-task score deltas (what got worse first), criteria that flipped between passed
    and failed, tasks only one run has, and the difference of the means with its noise
    (paired over the tasks both graded)."""
    before_rows, after_rows = _run_rows(before), _run_rows(after)
    a_results, b_results = before_rows[0], after_rows[0]
    tasks = _task_deltas(before_rows, after_rows)
    changed = [t for t in tasks if t.delta != 0 or t.flips]
    deltas = [t.delta or 0 for t in tasks]
    flipped_to = Counter(flip.after for task in tasks for flip in task.flips)
    return RunComparison(
        before=_mean_score(a_results),
        after=_mean_score(b_results),
        difference=metrics.paired_difference(_scored_pairs(tasks)),
        tasks=changed,
        changed=len(changed),
        worse=sum(1 for delta in deltas if delta < 0),
        better=sum(1 for delta in deltas if delta > 0),
        to_fail=flipped_to["failed"],
        to_pass=flipped_to["passed"],
        only_before=sorted(set(a_results) - set(b_results)),
        only_after=sorted(set(b_results) - set(a_results)),
        # A task has a delta when both runs graded it.
        points=[t for t in tasks if t.delta is not None][:SCATTER_POINTS],
    )
