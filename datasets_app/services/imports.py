"""Importing a dataset file, in the dialog's two steps: `upload_create` + `upload_check`
keep the chosen file and check it (writing nothing but the upload); `import_run` checks that
exact file again and commits it, all or nothing. Also what the files cost: the stored task
files, each person's storage quota, and removing expired uploads."""

from __future__ import annotations

import hashlib
import posixpath
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.conf import settings as project_settings
from django.contrib.auth.models import User
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Max, Sum
from django.template.defaultfilters import filesizeformat
from django.utils import timezone
from django.utils.text import get_valid_filename

from datasets_app import selectors
from datasets_app.checked import FileDataset, StoredCheck
from datasets_app.importing import checker, problems_csv, zip_format
from datasets_app.importing.aliases import FIELD_KEYS
from datasets_app.importing.spec import (
    MAX_FILE_BYTES,
    READ_OPTIONS,
    CheckOptions,
    CheckResult,
    DatasetSpec,
    FieldMap,
    Problem,
    TaskSpec,
    graded_as_rubric,
)
from datasets_app.models import (
    Criterion,
    Dataset,
    ImportMode,
    Task,
    TaskFile,
    TaskState,
    Upload,
)
from datasets_app.services import bulk, checks, datasets


class ImportRefused(Exception):
    """The upload cannot be imported as it is; the message says why, for the person."""


UPLOAD_EXPIRED = "This upload has expired. Choose the file again."
UPLOAD_HAS_PROBLEMS = "The file has problems. Fix them and choose the file again."
UPLOAD_CHECK_FAILED = (
    "The file's check did not finish (it says why below), so nothing was created. Choose "
    "the file again."
)
UPLOAD_STILL_CHECKING = (
    "The file is still being checked, so nothing was created yet. Its preview shows here "
    "when the check is done; then press Create again."
)
UPLOAD_ALREADY_IMPORTED = "This file has already been imported."
UPLOAD_CHANGED = "The file changed since it was checked, so it was checked again."
REPLACE_LIST_CHANGED = (
    "The dataset's tasks changed since this list was made. Check what Replace archives now, "
    "then import."
)
IMPORT_TOO_SLOW = (
    "The import took too long (more than {duration}) and was stopped; nothing was written. "
    "Split the file into smaller imports."
)


def _duration(seconds: int) -> str:
    """ "15 minutes", "90 seconds": a time limit as a person reads it."""
    if seconds >= 120 and seconds % 60 == 0:
        return f"{seconds // 60:,} minutes"
    return f"{seconds:,} second{'' if seconds == 1 else 's'}"


def _sha256_of(fileobj) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    for chunk in iter(lambda: fileobj.read(1024 * 1024), b""):
        digest.update(chunk)
        size += len(chunk)
    fileobj.seek(0)
    return digest.hexdigest(), size


# --- Keeping and checking a file ------------------------------------------------------------


def upload_create(
    *,
    owner: User,
    dataset: Dataset | None,
    uploaded_file: File,
    mode: str = "add",
    mapping: dict[str, str] | None = None,
    read_options: Mapping[str, Any] | None = None,
) -> Upload:
    """Keep a chosen file in the media storage under a random key, owned by `owner`.

    `mapping` ({"prompt": "question"}) says which of the file's columns or keys fills each
    field, as `--map` gives it; None lets the checker recognise them. `read_options`
    (`READ_OPTIONS`: {"encoding": "gb18030"}) say how to read it, as `--encoding` does.

    The file counts against `owner`'s storage quota until it expires: checked and kept
    under a lock on their user row, so that uploads sent at once are counted one after
    the other and cannot together pass the quota each would pass alone (`OverQuota`).
    """
    sha256, size = _sha256_of(uploaded_file)
    with transaction.atomic():
        _lock_storage_of(owner)
        over = upload_over_quota(owner=owner, size=size)
        if over is not None:
            raise OverQuota(over)
        upload = Upload(
            owner=owner,
            dataset=dataset,
            original_name=Path(uploaded_file.name or "upload").name[:255],
            size=size,
            sha256=sha256,
            mode=mode,
            mapping=mapping or {},
            read_options=_read_said(read_options or {}),
        )
        upload.file.save(upload.original_name, uploaded_file, save=False)
        upload.full_clean()
        upload.save()
    return upload


# How often a running check or import writes its progress to the upload's row: often
# enough for a dialog that polls every second, rarely enough to cost nothing.
PROGRESS_EVERY_SECONDS = 0.5


class _ProgressWriter:
    """Keeps (done, total) on the upload's row, at most every PROGRESS_EVERY_SECONDS.

    One cheap UPDATE in autocommit, never inside the import's transaction: a person polling
    the dialog reads it from the database, so it survives a closed tab and a worker restart.
    """

    def __init__(self, upload: Upload) -> None:
        self._pk = upload.pk
        self._last = float("-inf")

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < PROGRESS_EVERY_SECONDS:
            return
        self._last = now
        Upload.objects.filter(pk=self._pk).update(progress_done=done, progress_total=total)


def upload_heartbeat(*, upload_id: int) -> None:
    """The worker checking or importing the upload is alive (one UPDATE, in autocommit)."""
    Upload.objects.filter(pk=upload_id).update(heartbeat_at=timezone.now())


def _check(
    upload: Upload,
    *,
    first_task_number: int,
    progress: Callable[[int, int], None] | None = None,
    measured: dict[str, tuple[int, str]] | None = None,
) -> CheckResult:
    options = replace(
        selectors.checker_options().read_as(upload.read_options),
        mapping=upload.mapping or None,
        remembered_mappings=upload.dataset.import_mappings if upload.dataset else None,
        first_task_number=first_task_number,
    )
    with upload.file.open("rb") as fileobj:
        return checker.check_file(
            fileobj,
            upload.original_name,
            options=options,
            progress=progress,
            measured=measured,
        )


def _measured_members(plan: DatasetSpec) -> dict[str, list[Any]]:
    """{zip member: [size, sha256]} of the files a checked zip's tasks attach."""
    return {
        f.path: [f.size, f.sha256]
        for task in plan.tasks
        for f in (*task.input_files, *task.expected_files)
        if f.path and f.size is not None and f.sha256
    }


def upload_check(*, upload: Upload) -> Upload:
    """Check the upload's file and keep the outcome on the upload (writes nothing else).

    A zip's check reports its progress on the upload's row as it reads the attached files.
    """
    # Ids the file leaves out are numbered after the dataset's tasks as they are now, and
    # kept: the import numbers them alike, so it writes the ids this check showed (and
    # `add_conflicts` compared with the dataset).
    live = selectors.live_task_ids(upload.dataset) if upload.dataset else set()
    first = selectors.first_task_number(live)
    result = _check(upload, first_task_number=first, progress=_ProgressWriter(upload))
    stored = replace(StoredCheck.of(result), first_task_number=first)
    if result.plan is not None:
        # The import proves the file unchanged by its SHA-256 and then need not read every
        # attached file twice more: storing verifies each against these measurements.
        stored = replace(
            stored,
            members=_measured_members(result.plan),
            texts=tuple(selectors.preview_texts(result.plan)),
        )
        if upload.dataset is not None:
            stored = _against_dataset(stored, upload, result, live)
    upload.result = stored.to_json()
    _store_problems_csv(upload, result)
    upload.state = Upload.State.CHECKED
    upload.progress_done = upload.progress_total = result.task_count
    upload.save(
        update_fields=["result", "problems_file", "state", "progress_done", "progress_total"]
    )
    return upload


def _against_dataset(
    stored: StoredCheck, upload: Upload, result: CheckResult, live: set[str]
) -> StoredCheck:
    """The check with what it found against the upload's dataset as it is now (`live`: its
    live task ids). What Replace would change is worked out when the dialog shows it, against
    the dataset as it is then; the file's side of it is kept here, for the tasks whose ids
    the dataset has (a digest of every task would cost more than the check)."""
    plan = result.plan
    assert upload.dataset is not None and plan is not None
    # Added, the file's tasks are also graded by the dataset's criteria for every task.
    added = plan_as_added(dataset=upload.dataset, plan=plan)
    shared = tuple(map(selectors.criterion_spec, selectors.dataset_criteria(upload.dataset)))
    added = replace(added, criteria=(*shared, *added.criteria))
    file_ids = [task.id for task in plan.tasks]
    return replace(
        stored,
        digests={task.id: selectors.task_digest(task) for task in plan.tasks if task.id in live},
        added_tasks=tuple(checker.preview(replace(result, plan=added))),
        places=selectors.clash_places(upload=upload, file_ids=file_ids, live=live),
    )


def _store_problems_csv(upload: Upload, result: CheckResult) -> None:
    """Keep what "download the problems" serves, written now while the file is open to the
    check anyway; for a .csv or .xlsx it is the person's own sheet with a problem column."""
    if upload.problems_file:
        upload.problems_file.delete(save=False)
    if not result.problems:
        return
    data = None
    if result.format in ("csv", "xlsx"):
        with upload.file.open("rb") as fileobj:
            data = fileobj.read(MAX_FILE_BYTES + 1)
    options = CheckOptions().read_as(upload.read_options)
    body = problems_csv.problems_csv(result, data, options)
    upload.problems_file.save(PROBLEMS_FILE_NAME, ContentFile(body), save=False)


PROBLEMS_FILE_NAME = "problems.csv"


def upload_timed_out(*, upload_id: int) -> None:
    """Record that the upload's check or import ran past its time limit and was stopped.

    A check ends as a checked file with one problem (so the dialog, the problems download
    and the API show it like any other); an import goes back to checked with a message, as
    a failed import does (it wrote nothing: its transaction rolled back).
    """
    upload = Upload.objects.filter(pk=upload_id).first()
    if upload is None:
        return
    if upload.state == Upload.State.CHECKING:
        upload.result = StoredCheck.of(checks.check_too_slow(upload.original_name)).to_json()
        upload.state = Upload.State.CHECKED
        upload.save(update_fields=["result", "state"])
    elif upload.state == Upload.State.IMPORTING:
        duration = _duration(project_settings.IMPORT_TIME_LIMIT_SECONDS)
        Upload.objects.filter(pk=upload_id, state=Upload.State.IMPORTING).update(
            state=Upload.State.CHECKED, error=IMPORT_TOO_SLOW.format(duration=duration)
        )


def upload_map(*, upload: Upload, mapping: dict[str, str]) -> Upload:
    """Check the upload again with the person's mapping of fields to its columns or keys.

    `mapping` is {field: source} for the fields `shapes.FIELD_KEYS` names; a field left
    out is not read. The check runs as any other (on a worker when there is one).
    """
    fields = {key: source for key, source in mapping.items() if key in FIELD_KEYS and source}
    return _check_again(upload, mapping=fields)


def upload_read(*, upload: Upload, read_options: Mapping[str, Any]) -> Upload:
    """Check the upload again, read as the person said (`READ_OPTIONS`: its encoding); the
    mapping they chose stays. The check runs as any other (on a worker when there is one)."""
    return _check_again(upload, read_options=_read_said(read_options))


def _read_said(read_options: Mapping[str, Any]) -> dict[str, Any]:
    """What the person said of how to read the file: `READ_OPTIONS` given a value."""
    return {key: value for key, value in read_options.items() if key in READ_OPTIONS and value}


def _check_again(upload: Upload, **changed: Any) -> Upload:
    """A checked upload with `changed` fields, checked again from the start."""
    Upload.objects.filter(pk=upload.pk, state=Upload.State.CHECKED).update(
        **changed,
        state=Upload.State.CHECKING,
        progress_done=0,
        progress_total=0,
        heartbeat_at=None,
    )
    return upload_check_start(upload=upload)


def _tasks():
    # The Celery tasks call these services; the services hand work to them only once their
    # writes commit, so the module is imported here rather than at the top.
    from datasets_app import tasks

    return tasks


def upload_check_start(*, upload: Upload, import_mode: str | None = None) -> Upload:
    """Hand a kept upload to a worker to check, once this transaction commits.

    With `import_mode`, a file the check finds importable is then imported in that mode
    (the API's one-step import), through the same claim as the dialog's Import button.
    Without a broker the check runs here and now; the upload comes back as it then is.
    """
    tasks = _tasks()
    transaction.on_commit(lambda: tasks.enqueue(tasks.check_upload, upload.pk, import_mode))
    upload.refresh_from_db()
    return upload


def upload_problems_csv(*, upload: Upload) -> bytes:
    """The problems of a checked upload as a CSV: for a CSV or XLSX file its own rows with a
    `problem` column, for the others one row per problem.

    Served from what the check stored: checking again here would be a check in the web
    process, unthrottled (seconds of work per request for a large sheet). An upload whose
    check stored no file (one checked before there was one) gets its stored problems as a
    list.
    """
    if upload.problems_file:
        with upload.problems_file.open("rb") as fileobj:
            return fileobj.read()
    stored = upload.stored_check.problems
    return problems_csv.problem_list(Problem.from_json(problem) for problem in stored)


# --- Importing a checked file ---------------------------------------------------------------


@dataclass(frozen=True)
class ImportOutcome:
    dataset: Dataset
    tasks: int
    files: int
    next_version: int


def import_run(*, upload: Upload, mode: str) -> ImportOutcome:
    """Import the checked upload into its dataset, all or nothing.

    The file is checked again (it is the commit's own check, and the stored file may have
    changed); files are streamed to the storage first and removed again if anything fails;
    the rows go in one transaction under a lock on the dataset, so that two imports into one
    dataset land one after the other. Running it again for an imported upload does
    nothing: the upload's row is locked and its state read again inside the transaction,
    so a redelivered Celery task (or a second click) imports once. Progress ("3 of 12
    files stored") is kept on the upload's row as the files are stored, before the
    transaction opens.
    """
    _refuse_stale(upload)
    result, plan = _checked_for_import(upload)
    assert upload.dataset_id is not None  # an upload to import has its dataset
    contents = _attached_contents(plan)
    # The files go to the dataset owner's storage, whoever imports them: asked here before
    # any byte is stored, and again under the lock below, where the answer holds.
    owner = Dataset.objects.select_related("owner").get(pk=upload.dataset_id).owner
    _check_quota(owner, contents, importer=upload.owner)
    kept = _stored_contents(set(contents))
    stored: list[str] = []
    try:
        placed = _store_files(upload, plan, stored, _ProgressWriter(upload), kept)
        with transaction.atomic():
            locked = Upload.objects.select_for_update().get(pk=upload.pk)
            if locked.state == Upload.State.IMPORTED:
                raise ImportRefused(UPLOAD_ALREADY_IMPORTED)
            dataset = Dataset.objects.select_for_update().get(pk=upload.dataset_id)
            _lock_storage_of(dataset.owner)
            _check_quota(dataset.owner, contents, importer=upload.owner)
            _refuse_changed_meanwhile(
                dataset=dataset,
                upload=upload,
                locked=locked,
                mode=mode,
                reused=set(placed.values()) - set(stored),
            )
            file_count = _write_plan(dataset=dataset, plan=plan, mode=mode, placed=placed)
            _remember_mapping(dataset, result.mapping)
            locked.state = Upload.State.IMPORTED
            locked.mode = mode
            locked.save(update_fields=["state", "mode"])
    except BaseException:
        # Nothing of a failed import stays: the transaction rolled back the rows, and the
        # files it stored go too.
        for name in stored:
            default_storage.delete(name)
        raise
    upload.state = Upload.State.IMPORTED
    return ImportOutcome(
        dataset=dataset,
        tasks=len(plan.tasks),
        files=file_count,
        next_version=selectors.next_version_number(dataset),
    )


def _refuse_stale(upload: Upload) -> None:
    """Refuse an upload imported already or expired, or whose stored file is not the one
    checked (it is checked again then, and its new figures kept)."""
    if upload.state == Upload.State.IMPORTED:
        raise ImportRefused(UPLOAD_ALREADY_IMPORTED)
    if upload.is_expired:
        raise ImportRefused(UPLOAD_EXPIRED)
    with upload.file.open("rb") as fileobj:
        sha256, size = _sha256_of(fileobj)
    if sha256 != upload.sha256:
        upload.sha256, upload.size = sha256, size
        upload.save(update_fields=["sha256", "size"])
        upload_check(upload=upload)
        raise ImportRefused(UPLOAD_CHANGED)


def _checked_for_import(upload: Upload) -> tuple[CheckResult, DatasetSpec]:
    """The import's own check of the file, with what the stored check measured; refused
    when it finds problems."""
    checked = upload.stored_check
    result = _check(
        upload,
        first_task_number=checked.first_task_number,
        measured={path: tuple(m) for path, m in checked.members.items()},
    )
    if not result.ok:
        raise ImportRefused(UPLOAD_HAS_PROBLEMS)
    plan = result.plan
    assert plan is not None  # result.ok
    return result, plan


def _refuse_changed_meanwhile(
    *, dataset: Dataset, upload: Upload, locked: Upload, mode: str, reused: set[str]
) -> None:
    """Under the dataset's lock (`locked`: the upload's row, read under its own), refuse
    what changed since the upload was checked: Add's task ids taken, Replace's list no
    longer what the dialog showed, stored files it reuses (`reused`) removed."""
    if mode == ImportMode.ADD and selectors.add_conflicts(dataset=dataset, upload=upload):
        raise ImportRefused(UPLOAD_HAS_PROBLEMS)
    if mode == ImportMode.REPLACE and not _replace_list_current(dataset, locked):
        raise ImportRefused(REPLACE_LIST_CHANGED)
    if not _still_kept(reused):
        raise ImportRefused(FILES_REMOVED_MEANWHILE)


def _replace_list_current(dataset: Dataset, upload: Upload) -> bool:
    """Whether Replace would archive what the dialog listed (asked under the dataset's lock,
    so nothing can arrive between the answer and the archiving). An import that was never
    listed (the command line, the API) archives whatever the dataset holds then."""
    listed = upload.archives_listed
    return not listed or listed == selectors.replace_fingerprint(dataset)


def _apply_settings(dataset: Dataset, plan: DatasetSpec, mode: str) -> None:
    # As the dialog said it would (`selectors.import_effects`).
    dataset.settings = selectors.imported_settings(
        dataset=dataset, file_settings=plan.settings, mode=mode
    )


def plan_as_added(*, dataset: Dataset, plan: DatasetSpec) -> DatasetSpec:
    """The file's plan as Add writes it into `dataset`: its tasks graded by the rule
    (`spec.lands_as_rubric`) against the criteria for every task the dataset will have, the
    dataset's own as well as the file's, so an answer task added to a rubric dataset gets
    "Matches the expected answer" as it would from one file holding both."""
    shared = bool(plan.criteria) or selectors.dataset_criteria(dataset).exists()
    verifier = datasets.expected_answer_verifier({**plan.settings, **(dataset.settings or {})})
    tasks = tuple(
        graded_as_rubric(task, shared_criteria=shared, expected_answer_verifier=verifier)
        for task in plan.tasks
    )
    return replace(plan, tasks=tasks)


def _archive_replaced(dataset: Dataset) -> None:
    """Archive what Replace replaces: the live tasks and the criteria for every task."""
    dataset.tasks.live().update(state=TaskState.ARCHIVED)
    dataset.criteria.filter(task__isnull=True, archived=False).update(archived=True)


def _next_positions(dataset: Dataset) -> tuple[int, int]:
    """Where Add's tasks and its criteria for every task start: after the dataset's own."""
    last_task = dataset.tasks.live().aggregate(n=Max("position"))["n"]
    last_shared = dataset.criteria.filter(task__isnull=True, archived=False).aggregate(
        n=Max("position")
    )["n"]
    return (last_task or -1) + 1, (last_shared or -1) + 1


def _task_row(dataset: Dataset, spec: TaskSpec, *, position: int) -> Task:
    """The unsaved draft row of a task of the plan."""
    return Task(
        dataset=dataset,
        task_id=spec.id,
        name=spec.name,
        prompt=spec.prompt,
        expected_text=spec.expected_text or "",
        expected_verifier=spec.expected_verifier.to_json() if spec.expected_verifier else None,
        evidence=spec.evidence or {},
        metadata=dict(spec.metadata),
        position=position,
        state=TaskState.DRAFT,
    )


def _task_file_rows(task: Task, spec: TaskSpec, placed: dict[str, str]) -> list[TaskFile]:
    """The unsaved rows of a task's input files, then its expected files; a zip member's
    file is where `_store_files` placed it (`placed`: {path: stored name})."""
    return [
        TaskFile(
            task=task,
            role=role,
            name=file_spec.name,
            url=file_spec.url or "",
            file=placed.get(file_spec.path, "") if file_spec.path else "",
            size=file_spec.size,
            sha256=file_spec.sha256 or "",
            position=position,
        )
        for role, specs in (("input", spec.input_files), ("expected", spec.expected_files))
        for position, file_spec in enumerate(specs)
    ]


def _write_plan(*, dataset: Dataset, plan: DatasetSpec, mode: str, placed: dict[str, str]) -> int:
    """Write the plan's tasks, criteria and files as drafts; a fixed number of queries
    (COPY on PostgreSQL, `bulk.insert_rows`)."""
    if mode == ImportMode.ADD:
        plan = plan_as_added(dataset=dataset, plan=plan)
    if mode == ImportMode.REPLACE:
        _archive_replaced(dataset)
        start, shared_start = 0, 0
    else:
        start, shared_start = _next_positions(dataset)
    _apply_settings(dataset, plan, mode)
    dataset.save(update_fields=["settings", "updated_at"])

    tasks = [
        _task_row(dataset, spec, position=start + index) for index, spec in enumerate(plan.tasks)
    ]
    bulk.insert_rows(Task, tasks)
    datasets.dataset_tasks_changed(dataset_id=dataset.pk)
    criteria = [
        datasets.criterion_row(dataset, None, position=shared_start + position, spec=spec)
        for position, spec in enumerate(plan.criteria)
    ]
    files = []
    for task, spec in zip(tasks, plan.tasks, strict=True):
        criteria += [
            datasets.criterion_row(dataset, task, position=position, spec=criterion)
            for position, criterion in enumerate(spec.criteria)
        ]
        files += _task_file_rows(task, spec, placed)
    bulk.insert_rows(Criterion, criteria)
    bulk.insert_rows(TaskFile, files)
    if mode == ImportMode.ADD and plan.criteria:
        datasets.tasks_grade_as_rubrics(dataset=dataset)
    return len(files)


def _remember_mapping(dataset: Dataset, mapping: FieldMap | None) -> None:
    """Keep the mapping a person gave for this shape of file, to offer it again."""
    if mapping is None or mapping.how != "given":
        return
    dataset.import_mappings = {**dataset.import_mappings, mapping.signature: mapping.fields}
    dataset.save(update_fields=["import_mappings"])


def upload_import_start(*, upload: Upload, mode: str, archives_listed: str = "") -> bool:
    """Claim a checked upload for importing and hand it to a worker once the claim commits.

    The claim is one conditional UPDATE (checked -> importing), so a second click, a second
    request or a second process claims nothing and starts nothing; True when this call
    claimed it. Whether the file can be imported is the import's own decision (it checks
    the file again, all or nothing, and a Replace archives exactly `archives_listed`, what
    the dialog showed, or nothing). `upload` is refreshed from the database.
    """
    claimed = Upload.objects.filter(pk=upload.pk, state=Upload.State.CHECKED).update(
        state=Upload.State.IMPORTING,
        mode=mode,
        archives_listed=archives_listed if mode == ImportMode.REPLACE else "",
        error="",
        progress_done=0,
        progress_total=0,
        heartbeat_at=None,  # the check's beats say nothing of the import's worker
    )
    if claimed:
        tasks = _tasks()
        transaction.on_commit(lambda: tasks.enqueue(tasks.import_upload, upload.pk, mode))
    upload.refresh_from_db()
    return bool(claimed)


@transaction.atomic
def dataset_create_with_file(
    *, owner: User, upload: Upload, name: str = "", description: str = ""
) -> Dataset:
    """New dataset with a checked file of `owner`'s: the file's name, description and
    settings unless the person typed their own; the file is then imported into it (Add).

    Refused (ImportRefused) for a file still being checked, with problems, or already in a
    dataset. The upload's row is locked while the dataset is made and the upload claimed,
    so one file makes one dataset.
    """
    locked = (
        Upload.objects.select_for_update()
        .filter(pk=upload.pk, owner=owner, dataset__isnull=True, state=Upload.State.CHECKED)
        .first()
    )
    if locked is None or not locked.stored_check.ok:
        raise ImportRefused(_not_creatable(upload, owner=owner))
    about = locked.stored_check.dataset or FileDataset()
    dataset = datasets.dataset_create(
        owner=owner,
        name=(name or about.name or Path(locked.original_name).stem)[:200],
        description=description or about.description,
        settings=dict(about.settings),
    )
    Upload.objects.filter(pk=upload.pk).update(dataset=dataset)
    upload_import_start(upload=upload, mode=ImportMode.ADD)
    return dataset


def _not_creatable(upload: Upload, *, owner: User) -> str:
    """Why a new dataset cannot be made from this upload, as the New dataset page says it."""
    now = Upload.objects.filter(pk=upload.pk, owner=owner).first()
    if now is not None and now.dataset_id is not None:
        return UPLOAD_ALREADY_IMPORTED
    if now is not None and now.state == Upload.State.CHECKING:
        return UPLOAD_STILL_CHECKING
    if now is not None and now.state == Upload.State.FAILED:
        return UPLOAD_CHECK_FAILED
    return UPLOAD_HAS_PROBLEMS


# --- The files tasks attach, stored once per content, within each person's quota ------------


def _stored_paths(plan: DatasetSpec) -> set[str]:
    return {
        f.path for task in plan.tasks for f in (*task.input_files, *task.expected_files) if f.path
    }


def task_files_folder(upload: Upload) -> str:
    """Where an upload's imports store the files its tasks attach (one folder per run)."""
    return f"task-files/{upload.key}"


def _attached_contents(plan: DatasetSpec) -> dict[str, int]:
    """{sha256: size} of the zip members the plan's tasks attach, each content once."""
    return {
        f.sha256: f.size or 0
        for task in plan.tasks
        for f in (*task.input_files, *task.expected_files)
        if f.path and f.sha256
    }


# Queries with a list of values send at most this many at once (SQLite's limit on the
# parameters of one statement is 32,766; PostgreSQL's 65,535).
_IN_BATCH = 1_000


def _batches(values: list[str]) -> list[list[str]]:
    return [values[start : start + _IN_BATCH] for start in range(0, len(values), _IN_BATCH)]


def _stored_contents(hashes: set[str], **scope: Any) -> dict[str, str]:
    """{sha256: storage name} of files already stored for a task (in `scope`, a filter on
    TaskFile) with these contents: files are hashed as they are stored, so identical bytes
    are found by their SHA-256 and kept once (the storage is addressed by content)."""
    found: dict[str, str] = {}
    for batch in _batches(sorted(hashes)):
        rows = TaskFile.objects.filter(sha256__in=batch, **scope).exclude(file="")
        for sha256, name in rows.values_list("sha256", "file"):
            found.setdefault(sha256, name)
    return found


def _store_files(
    upload: Upload,
    plan: DatasetSpec,
    stored: list[str],
    progress: Callable[[int, int], None],
    kept: dict[str, str],
) -> dict[str, str]:
    """Stream each zip member a task attaches to the storage, once per content; returns
    path -> storage name.

    A member whose bytes are already stored (`kept`: {sha256: name} of files tasks hold, or
    a member of this zip stored a moment ago) is not written again, nor even read: the
    task points at the stored file. Others go through the storage API in chunks, never
    whole, each verified against the size and SHA-256 of the check as it streams. Each run
    writes to its own folder, so a run that a dead worker left half done never mixes with
    the rerun, and what a run wrote is its own to remove. `stored` collects the storage
    names as they are written, so that the caller can remove them if anything later fails.
    """
    placed: dict[str, str] = {}
    total = len(_stored_paths(plan))
    progress(0, total)
    if not total:
        return placed
    by_content = dict(kept)
    folder = f"{task_files_folder(upload)}/{uuid.uuid4().hex}"
    with upload.file.open("rb") as zip_file:
        for spec, stream in zip_format.iter_attachments(zip_file, plan):
            name = by_content.get(spec.sha256 or "")
            if name is None:
                target = f"{folder}/{len(stored)}/{get_valid_filename(spec.name) or 'file'}"
                # Noted before the save: a save that fails half way (a full disk) leaves a
                # partial file under this name, and the clean-up must find it. The folder is
                # new to this run, so the storage keeps the name as given.
                stored.append(target)
                name = default_storage.save(target, File(stream, name=spec.name))
                if name != target:
                    stored[-1] = name
                if spec.sha256:
                    by_content[spec.sha256] = name
            assert spec.path is not None  # iter_attachments gives the zip's members only
            placed[spec.path] = name
            progress(len(placed), total)
    return placed


def _still_kept(names: set[str]) -> bool:
    """Whether every stored file in `names` is still held by a task, locking those tasks'
    file rows until the transaction ends: a draft removed meanwhile (which deletes a file
    no task holds any more) then waits for this import, and sees its tasks hold the file."""
    present: set[str] = set()
    for batch in _batches(sorted(names)):
        rows = TaskFile.objects.select_for_update().filter(file__in=batch)
        present.update(rows.values_list("file", flat=True))
    return present == names


def task_save_with_files(
    *,
    dataset: Dataset,
    task: Task | None,
    spec: TaskSpec,
    files: list[tuple[str, File]],
    user: User,
    remove: list[int] | None = None,
) -> Task:
    """Save the task form (`datasets.task_save`) with the files a person chose on it, stored
    as an import stores a zip's: hashed, bytes already stored kept once, in the dataset
    owner's storage quota, under the lock that counts it; and without the files (their
    ids) ticked to remove. All or nothing: files stored for an edit that does not land are
    removed again. The form's checker has held the files to an import's limits (how many,
    how large, their names) before this is called. A saved task's copy in its versions
    keeps the files it had."""
    if not files and not remove:
        return datasets.task_save(dataset=dataset, task=task, spec=spec)
    hashed = [(role, upload, *_sha256_of(upload)) for role, upload in files]
    contents = {sha256: size for _role, _upload, sha256, size in hashed}
    stored: list[str] = []
    try:
        with transaction.atomic():
            saved = datasets.task_save(dataset=dataset, task=task, spec=spec, changes_files=True)
            if remove:
                removed = saved.files.filter(pk__in=remove)
                names = set(removed.exclude(file="").values_list("file", flat=True))
                removed.delete()
                datasets.stored_files_delete_unheld(names)
            owner = Dataset.objects.select_related("owner").get(pk=dataset.pk).owner
            _lock_storage_of(owner)
            _check_quota(owner, contents, importer=user)
            kept = _stored_contents(set(contents))
            if not _still_kept(set(kept.values())):
                raise ImportRefused(FILES_REMOVED_MEANWHILE)
            _attach(saved, hashed, kept, stored)
    except BaseException:
        for name in stored:
            default_storage.delete(name)
        raise
    return saved


def _attach(
    task: Task, files: list[tuple[str, File, str, int]], kept: dict[str, str], stored: list[str]
) -> None:
    """TaskFile rows for `files` (role, file, SHA-256, size), after the task's own of each
    role; bytes not stored yet
    (by content, `kept`) go to a folder of their own, their names noted in `stored`."""
    after = {
        row["role"]: row["last"] + 1
        for row in task.files.values("role").annotate(last=Max("position")).order_by()
    }
    folder = f"task-files/form/{uuid.uuid4().hex}"
    rows = []
    for role, upload, sha256, size in files:
        name = kept.get(sha256)
        if name is None:
            target = f"{folder}/{len(stored)}/{get_valid_filename(upload.name or '') or 'file'}"
            stored.append(target)
            name = default_storage.save(target, upload)
            stored[-1] = name
            kept[sha256] = name
        position = after.get(role, 0)
        after[role] = position + 1
        rows.append(
            TaskFile(
                task=task,
                role=role,
                name=Path(upload.name or "file").name,
                file=name,
                size=size,
                sha256=sha256,
                position=position,
            )
        )
    TaskFile.objects.bulk_create(rows)


class OverQuota(ImportRefused):
    """The import would take its owner past the storage each person may use."""


OVER_QUOTA = (
    "This import would store {adding} more, and you already store {used} of the {quota} "
    "each person can. Nothing was stored. Remove what you no longer need, or ask an "
    "administrator to raise the limit."
)
# A dataset shared with the importer: its files take its owner's storage, not theirs.
OVER_OWNERS_QUOTA = (
    "This import would store {adding} more in the storage of {owner}, who owns this "
    "dataset, and they already store {used} of the {quota} each person can. Nothing was "
    "stored. Ask {owner} to make room, or an administrator to raise the limit."
)
FILES_REMOVED_MEANWHILE = (
    "A file this import shares with another task was removed while it ran, so nothing was "
    "written. Import again."
)


UPLOAD_OVER_QUOTA = (
    "This file ({size}) would take you past the {quota} each person can store: the files "
    "your datasets keep and the files you chose in the last day (kept a day) take {used}. "
    "Remove what you no longer need, or ask an administrator to raise the limit."
)


def _lock_storage_of(owner: User) -> None:
    """Take the lock under which what `owner` stores is counted and added to (their user
    row), for the rest of the transaction: two uploads or imports that would each fit, but
    not both, are counted one after the other."""
    User.objects.select_for_update().filter(pk=owner.pk).exists()


def storage_used(*, owner: User) -> int:
    """Bytes the person keeps in the storage: the files their datasets' tasks hold, each
    stored file once however many tasks hold it (links take none), and the files they chose
    to import, until those expire."""
    rows = TaskFile.objects.filter(task__dataset__owner=owner).exclude(file="").order_by()
    files = sum(size or 0 for _name, size in rows.values_list("file", "size").distinct())
    live = Upload.objects.filter(owner=owner, expires_at__gt=timezone.now())
    return files + (live.aggregate(total=Sum("size"))["total"] or 0)


def upload_over_quota(*, owner: User, size: int) -> str | None:
    """Why a new file of `size` bytes cannot be kept for `owner` (their storage quota), or
    None. Asked before the file is read, from the size its request declares."""
    quota = project_settings.STORAGE_QUOTA_BYTES
    used = storage_used(owner=owner)
    if used + size <= quota:
        return None
    return UPLOAD_OVER_QUOTA.format(
        size=filesizeformat(size), quota=filesizeformat(quota), used=filesizeformat(used)
    )


def _check_quota(owner: User, contents: dict[str, int], *, importer: User) -> None:
    """Refuse an import that would take `owner` (the dataset's owner, whose storage its
    files take) past STORAGE_QUOTA_BYTES; contents they already store add nothing.
    `importer`, the person importing, is told whose storage it is."""
    quota = project_settings.STORAGE_QUOTA_BYTES
    mine = _stored_contents(set(contents), task__dataset__owner=owner)
    adding = sum(size for sha256, size in contents.items() if sha256 not in mine)
    if not adding:
        return
    used = storage_used(owner=owner)
    if used + adding > quota:
        sizes = {key: filesizeformat(value) for key, value in (("adding", adding), ("used", used))}
        if owner.pk == importer.pk:
            raise OverQuota(OVER_QUOTA.format(quota=filesizeformat(quota), **sizes))
        message = OVER_OWNERS_QUOTA.format(
            owner=owner.get_username(), quota=filesizeformat(quota), **sizes
        )
        raise OverQuota(message)


# --- Removing expired uploads ---------------------------------------------------------------


def uploads_delete_expired() -> int:
    """Remove uploads past their expiry, with their files; returns how many went.

    Also removes what imports killed mid-way left behind: the folders under the upload's
    `task-files/<key>/` that no task file points to (a dead worker cannot clean up after
    itself, and an import never runs on an expired upload, so nothing is still writing).
    """
    count = 0
    for upload in Upload.objects.filter(expires_at__lte=timezone.now()).iterator():
        _delete_unreferenced_runs(upload)
        for kept in (upload.file, upload.problems_file):
            if kept and kept.name:
                default_storage.delete(kept.name)
        upload.delete()
        count += 1
    return count


def _delete_unreferenced_runs(upload: Upload) -> None:
    folder = task_files_folder(upload)
    try:
        runs, _files = default_storage.listdir(folder)
    except FileNotFoundError:
        return
    for run in runs:
        prefix = f"{folder}/{run}/"
        if TaskFile.objects.filter(file__startswith=prefix).exists():
            continue
        _delete_tree(prefix.rstrip("/"))


def _delete_tree(folder: str) -> None:
    folders, files = default_storage.listdir(folder)
    for name in files:
        default_storage.delete(posixpath.join(folder, name))
    for name in folders:
        _delete_tree(posixpath.join(folder, name))
    # A local folder stays behind empty; object storage has no folders to remove.
    default_storage.delete(folder)
