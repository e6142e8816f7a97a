"""The data model, in the reference page's words: datasets, their tasks and criteria, the
versions they are saved as, and the runs that grade a version.

A task is a *draft* until its dataset is saved, then *saved*; replacing a dataset's tasks
*archives* them (never deletes them), so a run's results keep pointing at what they graded.

A task a version holds, with its criteria and files, never changes: the database refuses
it (triggers, migration 0007), and every edit of one is copy-on-write
(`services.datasets.task_keep_saved_copy`).
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings as project_settings
from django.core.cache import cache
from django.core.validators import MinValueValidator
from django.db import models, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from datasets_app import wording
from datasets_app.checked import StoredCheck
from datasets_app.importing.spec import (
    MAX_FILE_NAME_BYTES,
    MAX_ID_CHARS,
    MAX_TASK_NAME_CHARS,
    MAX_URL_CHARS,
)

# The kinds' and output types' names on screens (`datasets_app.wording`), as choices.
VERIFIER_KINDS = list(wording.VERIFIER_KIND_NAMES.items())
OUTPUT_TYPES = list(wording.OUTPUT_TYPE_NAMES.items())


class SiteSettings(models.Model):
    """Settings an administrator changes in the admin; one row (pk=1)."""

    python_checks_enabled = models.BooleanField(
        "Python checks",
        default=False,
        help_text=(
            "Allow criteria graded by Python code (code_verifier). Off: such criteria are "
            "imported and shown but not graded. Can be turned on only while the last "
            "sandbox self-test passed."
        ),
    )
    # The last sandbox self-test (`manage.py check_verifier_sandbox`, or a worker starting):
    # None until one has run. Its report is the lines the command prints.
    sandbox_self_test_passed = models.BooleanField(
        "last sandbox self-test passed", null=True, editable=False
    )
    sandbox_self_test_at = models.DateTimeField("last sandbox self-test", null=True, editable=False)
    sandbox_self_test_report = models.TextField(
        "last sandbox self-test report", blank=True, editable=False
    )

    class Meta:
        verbose_name = "site settings"
        verbose_name_plural = "site settings"

    def __str__(self) -> str:
        return "Site settings"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save, and forget the cached copy `load` reads: now, and again once the
        transaction commits (a reader in between would have cached the row as it was)."""
        super().save(*args, **kwargs)
        cache.delete(SITE_SETTINGS_CACHE_KEY)
        transaction.on_commit(lambda: cache.delete(SITE_SETTINGS_CACHE_KEY))

    @classmethod
    def load(cls) -> SiteSettings:
        """The settings, from the cache when a request has read them in the last
        SITE_SETTINGS_KEPT_SECONDS: every check and every try reads them."""
        obj = cache.get(SITE_SETTINGS_CACHE_KEY)
        if not isinstance(obj, cls):
            obj, _ = cls.objects.get_or_create(pk=1)
            cache.set(SITE_SETTINGS_CACHE_KEY, obj, SITE_SETTINGS_KEPT_SECONDS)
        return obj


# SiteSettings.load's copy. Saving forgets it; with CACHE_URL every process shares it, and
# without one (a cache per process, which `check --deploy` warns of) a switch changed in one
# process still holds in the others within SITE_SETTINGS_KEPT_SECONDS.
SITE_SETTINGS_CACHE_KEY = "site-settings:1"
SITE_SETTINGS_KEPT_SECONDS = 10


class Dataset(models.Model):
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # The verifier defaults the page shows: {"expectedAnswerVerifier": {...},
    # "defaultVerifier": {...}}, kept as the file writes them.
    settings = models.JSONField(default=dict, blank=True)
    # The column or key mappings people confirmed when importing files into this dataset,
    # by the shape of the file (`spec.signature_of` its columns): {shape: {field:
    # source}}. Offered again, pre-filled, for the next file of the same shape.
    import_mappings = models.JSONField(default=dict, blank=True)
    # Saving a version waits until every draft is reviewed (`services.datasets.version_save`).
    require_review = models.BooleanField(
        "require every draft reviewed before saving",
        default=False,
        help_text=(
            "Save as vN is refused while a draft is not reviewed since it last changed "
            "(Review drafts)."
        ),
    )
    owner = models.ForeignKey(
        project_settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="datasets"
    )
    shared_with = models.ManyToManyField(
        project_settings.AUTH_USER_MODEL, blank=True, related_name="shared_datasets"
    )
    # Set by `dataset_delete` in its transaction, just before the rows go: the one case in
    # which the database lets the rows a version holds be deleted (migration 0007).
    deleting = models.BooleanField(default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("datasets_app:dataset_detail", args=[self.pk])


class DatasetTasksChange(models.Model):
    """How many times a dataset's tasks have been written (added, edited, removed, archived):
    the stamp under which the Metadata filter's choices are cached (`metadata_keys`), one
    row read instead of every task's. Moved by `services.datasets.dataset_tasks_changed`
    in the transaction of each write, so a stamp read never runs ahead of the tasks; a row
    of its own, so that saving a Dataset loaded earlier never writes an older count back."""

    dataset = models.OneToOneField(
        Dataset, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    changes = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.changes} writes of dataset {self.dataset_id}'s tasks"


class TaskState(models.TextChoices):
    DRAFT = "draft", "Draft"
    SAVED = "saved", "Saved"
    ARCHIVED = "archived", "Archived"


# `Task.is_reviewed` as the database asks it: reviewed, and not changed since.
REVIEWED = Q(reviewed_at__isnull=False, reviewed_at__gte=models.F("updated_at"))


class TaskQuerySet(models.QuerySet["Task"]):
    def live(self) -> TaskQuerySet:
        """Tasks that belong to the dataset now: drafts and saved ones, not archived."""
        return self.exclude(state=TaskState.ARCHIVED)

    def deletable(self) -> TaskQuerySet:
        """Drafts that removing deletes for good: no version and no run holds them (any
        other task removed is archived, so that what was saved and graded stays)."""
        held = Version.tasks.through.objects.filter(task_id=models.OuterRef("pk"))
        graded = RunResult.objects.filter(task_id=models.OuterRef("pk"))
        return self.filter(state=TaskState.DRAFT).exclude(
            models.Exists(held) | models.Exists(graded)
        )


class Task(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="tasks")
    # The checker knows these limits (importing.spec), so what it passes fits.
    task_id = models.CharField("id", max_length=MAX_ID_CHARS)
    name = models.CharField(max_length=MAX_TASK_NAME_CHARS, blank=True)
    prompt = models.TextField()
    # Empty when the task is graded by criteria only.
    expected_text = models.TextField("expected answer", blank=True)
    # The expected answer's own verifier ({"kind", "outputType", ...}); null = the dataset's
    # expectedAnswerVerifier grades it.
    expected_verifier = models.JSONField(blank=True, null=True)
    position = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=TaskState.choices, default=TaskState.DRAFT)
    # An administrator looked at this draft in the admin ("Mark reviewed"). A change to the
    # task after that (its updated_at) means it needs looking at again: see `is_reviewed`.
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    reviewed_by = models.ForeignKey(
        project_settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="+",
    )
    # Retrieval evidence from a contextgrid eval set (anchors, gold spans, gold documents).
    evidence = models.JSONField(default=dict, blank=True)
    # What the dataset cannot otherwise hold ({"category": "math", "difficulty": 3, ...}):
    # plain JSON by key, as the file's `metadata` object or `metadata.<key>` columns say.
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TaskQuerySet.as_manager()

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "task_id"],
                condition=~Q(state="archived"),
                name="unique_live_task_id_per_dataset",
            ),
        ]
        indexes = [
            models.Index(fields=["dataset", "state", "position"]),
            # The dataset page's list, in order, a page at a time (no sort of every task).
            models.Index(fields=["dataset", "position", "id"], name="task_dataset_position"),
        ]

    def __str__(self) -> str:
        return self.name or self.task_id

    def get_absolute_url(self) -> str:
        return reverse("datasets_app:task_detail", args=[self.dataset_id, self.pk])

    @property
    def is_draft(self) -> bool:
        return self.state == TaskState.DRAFT

    @property
    def is_reviewed(self) -> bool:
        """Reviewed in the admin, and not changed since."""
        return self.reviewed_at is not None and self.reviewed_at >= self.updated_at


class Criterion(models.Model):
    """A rubric criterion: of one task, or (task empty) of every task in its dataset."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="criteria")
    task = models.ForeignKey(
        Task, on_delete=models.CASCADE, related_name="criteria", null=True, blank=True
    )
    criterion_id = models.CharField("id", max_length=MAX_ID_CHARS)
    text = models.TextField("criterion")
    weight = models.FloatField(default=1.0, validators=[MinValueValidator(0.0)])
    verifier = models.JSONField(blank=True, null=True)
    position = models.PositiveIntegerField(default=0)
    # A dataset-wide criterion replaced by an import is archived with the tasks it graded.
    archived = models.BooleanField(default=False)

    class Meta:
        ordering = ["position", "pk"]
        verbose_name_plural = "criteria"
        # A dataset's criteria for every task (task empty), found without reading its tasks'.
        indexes = [models.Index(fields=["dataset", "task"], name="criterion_dataset_task")]
        constraints = [
            models.CheckConstraint(condition=Q(weight__gt=0), name="criterion_weight_positive"),
        ]

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def verifier_kind(self) -> str:
        return (self.verifier or {}).get("kind", "")


class TaskFile(models.Model):
    """An input or expected file of a task: stored in our storage, or an https:// link."""

    class Role(models.TextChoices):
        INPUT = "input", "Input file"
        EXPECTED = "expected", "Expected file"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="files")
    role = models.CharField(max_length=10, choices=Role.choices)
    name = models.CharField(max_length=MAX_FILE_NAME_BYTES)
    file = models.FileField(upload_to="task-files/%Y/%m/", max_length=500, blank=True)
    url = models.URLField(max_length=MAX_URL_CHARS, blank=True)
    size = models.BigIntegerField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["role", "position", "pk"]
        # Stored files are found by content: an import stores bytes a task already holds once.
        indexes = [models.Index(fields=["sha256"], name="taskfile_sha256")]
        constraints = [
            models.CheckConstraint(
                condition=(~Q(file="") & Q(url="")) | (Q(file="") & ~Q(url="")),
                name="task_file_stored_or_linked",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Version(models.Model):
    """A dataset saved as vN: its head (name, description, settings, criteria for every
    task) and the list of the task rows it holds, none of which ever changes.

    A task row is shared by every version that saved it unchanged (an edit of a saved task
    is a new row, `services.datasets.task_keep_saved_copy`), so saving a version writes
    what changed since the last one and a list of keys. Read a version's tasks only through
    `selectors.version_tasks`.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    # The head as the .json format writes it, without the tasks (migration 0015 took them
    # out of the versions saved before it): `selectors.version_head` reads it.
    snapshot = models.JSONField()
    tasks = models.ManyToManyField(Task, related_name="versions", blank=True)
    # How many tasks it holds, written once by the save from the rows its list received
    # (migration 0020; empty only inside that transaction): never counted again.
    task_count = models.PositiveIntegerField(editable=False, null=True)
    created_by = models.ForeignKey(
        project_settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "number"], name="unique_version_number"),
        ]

    def __str__(self) -> str:
        return f"{self.dataset} v{self.number}"

    def get_absolute_url(self) -> str:
        return reverse("datasets_app:version_detail", args=[self.dataset_id, self.number])

    @property
    def label(self) -> str:
        return f"v{self.number}"


class RunState(models.TextChoices):
    """Where a run is: its outputs file being checked, waiting for a worker, being graded,
    or ended (done, done with some criteria in error, stopped by a person, or failed)."""

    CHECKING = "checking", "Checking"
    QUEUED = "queued", "Queued"
    GRADING = "grading", "Grading"
    DONE = "done", "Done"
    DONE_WITH_ERRORS = "done_with_errors", "Done with errors"
    STOPPED = "stopped", "Stopped"
    FAILED = "failed", "Failed"


RUN_ENDED = frozenset({RunState.DONE, RunState.DONE_WITH_ERRORS, RunState.STOPPED, RunState.FAILED})


def run_outputs_path(run: Run, filename: str) -> str:
    # A random folder per file: names people give their files never collide or leak.
    return f"run-outputs/{uuid.uuid4()}/{filename}"


class Run(models.Model):
    """A grading run of one saved version: an agent's outputs, each task's result and each
    criterion's outcome, graded in the background (`services.runs`)."""

    version = models.ForeignKey(Version, on_delete=models.PROTECT, related_name="runs")
    name = models.CharField(max_length=200, blank=True)
    state = models.CharField(max_length=20, choices=RunState.choices, default=RunState.QUEUED)
    # The outputs file as the person chose it, kept from the check to the start.
    outputs_file = models.FileField(upload_to=run_outputs_path, max_length=500, blank=True)
    outputs_name = models.CharField(max_length=255, blank=True)
    # What the check found (`services.runs.RunPlan.to_json`): counts for the preview.
    plan = models.JSONField(default=dict, blank=True)
    task_count = models.PositiveIntegerField(default=0)
    outcome_count = models.PositiveIntegerField(default=0)
    # Criteria outcomes written so far (each once: see RunOutcome's claim).
    outcomes_done = models.PositiveIntegerField(default=0)
    judge_model = models.CharField(max_length=200, blank=True)
    # The run's figures when it ended (`services.runs.RunSummary.to_json`), so that its page
    # reads one row whatever the run's size.
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    # The most judge calls / tokens it may take; a run past them is refused before it starts.
    budget_judge_calls = models.PositiveIntegerField(null=True, blank=True)
    budget_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        project_settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.name or f"Run {self.pk} of {self.version}"

    def get_absolute_url(self) -> str:
        return reverse("datasets_app:run_detail", args=[self.version.dataset_id, self.pk])

    @property
    def ended(self) -> bool:
        return self.state in RUN_ENDED


class RunResult(models.Model):
    """One task of a run: the agent's output (if it gave one), what it cost, and the
    task's score and coverage once its criteria are graded."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="results")
    # PROTECT: a task that a run graded can be archived, never deleted.
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="results")
    # The task's id in the version, as the outputs file named it.
    task_key = models.CharField("task id", max_length=MAX_ID_CHARS, blank=True)
    position = models.PositiveIntegerField(default=0)
    output = models.TextField(blank=True)
    # Whether the file gave this task an output at all (an empty one is no answer too).
    has_output = models.BooleanField(default=False)
    score = models.FloatField(null=True, blank=True)
    coverage = models.FloatField(default=0.0)
    graded = models.BooleanField(default=False)
    failed_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    latency_ms = models.FloatField(null=True, blank=True)
    tokens = models.PositiveBigIntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)
    model = models.CharField(max_length=200, blank=True)
    trace = models.URLField(max_length=MAX_URL_CHARS, blank=True)
    # A person's verdict per criterion id (judge calibration): {"c1": true, "c2": 0.7}.
    labels = models.JSONField(default=dict, blank=True)
    # The files of the agent's output, from an outputs .zip (read from the run's kept zip
    # as its criteria are graded): [{"name", "member", "size"}].
    files = models.JSONField(default=list, blank=True)
    # Who is grading the task's criteria (a Celery task's lease) and since when: a claim
    # older than the run's lease is taken over, so that a worker killed mid-run holds
    # nothing for ever. The task's outcomes are written together, once, as it is graded.
    lease = models.CharField(max_length=64, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["run", "task"], name="one_result_per_task_per_run"),
        ]
        indexes = [
            models.Index(fields=["run", "position"], name="runresult_run_position"),
            models.Index(fields=["run", "score"], name="runresult_run_score"),
        ]

    def __str__(self) -> str:
        return f"{self.task_key or self.task}: {self.score}"


class OutcomeStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    CLAIMED = "claimed", "Being graded"
    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    SCORED = "scored", "Scored"
    ERROR = "error", "Error"
    SKIPPED = "skipped", "Skipped"


class RunOutcome(models.Model):
    """One criterion of one task in a run, with its outcome
    (`context_verifiers.outcome.Outcome`): inserted once, with the task's other criteria,
    by the worker holding the task's claim (`RunResult.lease`). A criterion not graded yet
    has no row: it shows as pending (`selectors.result_outcomes`)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="outcomes")
    result = models.ForeignKey(RunResult, on_delete=models.CASCADE, related_name="outcomes")
    position = models.PositiveIntegerField(default=0)
    criterion_key = models.CharField("criterion id", max_length=MAX_ID_CHARS)
    text = models.TextField(blank=True)
    weight = models.FloatField(default=1.0)
    kind = models.CharField(max_length=20)
    status = models.CharField(
        max_length=10, choices=OutcomeStatus.choices, default=OutcomeStatus.PENDING
    )
    score = models.FloatField(null=True, blank=True)
    reasoning = models.TextField(blank=True)
    code = models.CharField(max_length=40, blank=True)
    detail = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    # The judge's calls for this outcome as sent and answered (`JudgeCall.to_json`).
    calls = models.JSONField(default=list, blank=True)
    written_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["result_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["result", "position"], name="one_outcome_per_criterion_per_result"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.criterion_key}: {self.status}"


class JudgeCall(models.Model):
    """One request to a judge as it was sent and answered, by a try or a run: what "the
    raw reply, tokens and latency" show. A try keeps nothing else."""

    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="judge_calls", null=True, blank=True
    )
    created_by = models.ForeignKey(
        project_settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    model = models.CharField(max_length=200)
    # `context_verifiers.judges.PROMPT_VERSION`: which system message and schema it used.
    prompt_version = models.CharField(max_length=40)
    # The chat completions request as sent: its messages, schema, temperature and seed.
    request = models.JSONField()
    # The server's reply as it came (empty when none came: see `error`).
    reply = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.FloatField(validators=[MinValueValidator(0.0)])
    # Answered from the cache of deterministic replies (temperature 0 and a seed): no cost.
    cached = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["dataset", "created_at"])]

    def __str__(self) -> str:
        return f"{self.model} at {self.created_at:%Y-%m-%d %H:%M}"


def upload_expiry() -> datetime:
    return timezone.now() + timedelta(days=1)


class ImportMode(models.TextChoices):
    """What a file does to the dataset (the reference page's words)."""

    ADD = "add", "Add to its tasks"
    REPLACE = "replace", "Replace its tasks"


def upload_path(upload: Upload, filename: str) -> str:
    # A random key per upload: names people give their files never collide or leak.
    return f"uploads/{upload.key}/{filename}"


class Upload(models.Model):
    """A file a person chose in the import dialog, kept until it is imported or expires.

    The check's outcome is stored with it, so the import step imports this exact file and a
    person can close the dialog and come back.
    """

    class State(models.TextChoices):
        CHECKING = "checking", "Checking"
        CHECKED = "checked", "Checked"
        IMPORTING = "importing", "Importing"
        IMPORTED = "imported", "Imported"
        FAILED = "failed", "Failed"

    key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    owner = models.ForeignKey(
        project_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="uploads"
    )
    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="uploads", null=True, blank=True
    )
    file = models.FileField(upload_to=upload_path, max_length=500)
    original_name = models.CharField(max_length=255)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    state = models.CharField(max_length=10, choices=State.choices, default=State.CHECKING)
    mode = models.CharField(max_length=10, choices=ImportMode.choices, default=ImportMode.ADD)
    # What the dialog listed for a Replace to archive (`selectors.replace_fingerprint`),
    # when it listed it: the import archives exactly that, or is refused as out of date.
    archives_listed = models.CharField(max_length=64, blank=True)
    # The check, as `StoredCheck.to_json` keeps it: read it through `stored_check`.
    result = models.JSONField(default=dict, blank=True)
    # The person's mapping of fields to the file's columns or keys ({"prompt": "question"}),
    # from the dialog's mapping step or `--map`; empty to let the checker recognise them.
    mapping = models.JSONField(default=dict, blank=True)
    # How the person said to read the file ({"encoding": "gb18030"}), from the dialog's Read
    # options or `--encoding`; empty to read it as the checker finds best (`READ_OPTIONS`).
    read_options = models.JSONField(default=dict, blank=True)
    # The "download the problems" CSV, written by the check itself (on a worker): the
    # download only serves it, and never checks the file again in a web request.
    problems_file = models.FileField(upload_to=upload_path, max_length=500, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    # When the worker checking or importing it last said it was alive (every few seconds,
    # whatever the progress); empty until a worker takes it up. See selectors.worker_stopped.
    heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(default=upload_expiry)

    class Meta:
        indexes = [models.Index(fields=["expires_at"])]

    def __str__(self) -> str:
        return self.original_name

    @property
    def is_expired(self) -> bool:
        return timezone.now() >= self.expires_at

    @property
    def stored_check(self) -> StoredCheck:
        """The check kept on the upload (an empty one until its file is checked), read once
        for each value of `result`: a page asks it several things (a 1,000-task check holds
        2,000 preview rows), and `refresh_from_db` or a new check gives `result` a new value."""
        kept = self.__dict__.get("_stored_check")
        if kept is None or kept[0] is not self.result:
            kept = self.__dict__["_stored_check"] = (
                self.result,
                StoredCheck.from_json(self.result),
            )
        return kept[1]


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        """Tokens that still open the API: not revoked, not expired."""
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=now)
        )


class ApiToken(models.Model):
    """A personal token for the HTTP API: it can do what its owner can, nothing more, and
    opens the API only (never the pages).

    The token itself is shown once, when it is made; only its SHA-256 is kept. A token is
    32 random bytes, so a fast hash is enough: there is nothing to guess a word list
    against, and looking one up stays a single indexed query per request.
    """

    user = models.ForeignKey(
        project_settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    # The token's first characters, so that a person can tell their tokens apart.
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @staticmethod
    def digest_of(secret: str) -> str:
        return hashlib.sha256(secret.encode()).hexdigest()

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and timezone.now() >= self.expires_at

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and not self.is_expired


def export_expiry() -> datetime:
    return timezone.now() + timedelta(hours=project_settings.EXPORT_KEEP_HOURS)


def export_path(job: ExportJob, filename: str) -> str:
    # The job's random key: a stored export's name never says whose dataset it is.
    return f"exports/{job.key}/{filename}"


class ExportJob(models.Model):
    """An export too large to build within a request (more than EXPORT_IN_REQUEST_TASKS
    tasks), built by a worker into the storage and downloaded from its page until it
    expires. Its address is its random key: `/exports/<key>/`, seen by whoever may see the
    dataset (`selectors.export_job_for`)."""

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        BUILDING = "building", "Building"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"
        EXPIRED = "expired", "Expired"

    key = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="export_jobs")
    # The saved version exported; empty for the dataset's current tasks (drafts included).
    version = models.ForeignKey(
        Version, on_delete=models.CASCADE, related_name="export_jobs", null=True, blank=True
    )
    # An `exporting.EXPORT_FORMATS` slug.
    format = models.CharField(max_length=10)
    requested_by = models.ForeignKey(
        project_settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    # Tasks written so far, of how many (counted when the worker starts).
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    file = models.FileField(upload_to=export_path, max_length=500, blank=True)
    # The built file's size in bytes, once it is stored.
    size = models.PositiveBigIntegerField(null=True, blank=True)
    # What a person reads when the export failed: why, and what to do.
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(default=export_expiry)

    class Meta:
        indexes = [models.Index(fields=["expires_at"])]

    def __str__(self) -> str:
        return f"{self.dataset} {self.format} export {self.key}"

    def get_absolute_url(self) -> str:
        return reverse("datasets_app:export_job", args=[self.key])

    @property
    def in_progress(self) -> bool:
        return self.state in (self.State.QUEUED, self.State.BUILDING)

    @property
    def expired(self) -> bool:
        """Gone, or past its expiry and about to go (the hourly clean-up removes it)."""
        return self.state == self.State.EXPIRED or (
            self.state == self.State.READY and timezone.now() >= self.expires_at
        )

    @property
    def stored_name(self) -> str:
        """Where the built file is in the storage; empty until it is built."""
        return self.file.name or ""

    @property
    def downloadable(self) -> bool:
        return self.state == self.State.READY and bool(self.file) and not self.expired
