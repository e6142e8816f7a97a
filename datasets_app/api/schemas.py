"""What the API takes and answers, as pydantic models (the OpenAPI schema is made from these).

Inputs forbid unknown fields, so that a misspelt field is a 400 rather than silently ignored.
Field names follow the dataset file's own where the file has one (`criterion`, `weight`,
`verifier`, settings in camelCase as the file writes them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from ninja import Schema
from pydantic import ConfigDict, Field

from datasets_app.importing.encodings import CHOICES
from datasets_app.importing.spec import MAX_HEADER_ROW, READ_OPTIONS

# --- Errors ---------------------------------------------------------------------------------


class ErrorBody(Schema):
    code: str = Field(description="Stable, for programs: invalid, unauthorized, not_found, …")
    message: str = Field(description="For people: what went wrong and what to do.")
    details: Any = Field(None, description="More, when there is more: the fields at fault.")


class ErrorOut(Schema):
    """Every error the API answers has this one shape."""

    error: ErrorBody


# --- Checking a file ------------------------------------------------------------------------


class ProblemOut(Schema):
    """A problem (or warning) with where it is: the file (a zip member, in a zip), the row
    (spreadsheets) or line (text), the field, and a stable code."""

    file: str
    row: int | None = None
    line: int | None = None
    field: str | None = None
    message: str
    code: str | None = None


class PreviewTask(Schema):
    id: str
    name: str
    scored_by: Literal["criteria", "expected_answer"]
    criteria: int
    total_weight: float


class MappingOut(Schema):
    """Which of the file's columns or keys filled each field, and why: "recognised" (a known
    shape or field names), "given" (`map`), "remembered" (this dataset's last file of the
    same shape) or "guessed" (the file is not ok until `map` confirms it)."""

    how: Literal["recognised", "guessed", "given", "remembered"]
    fields: dict[str, str]
    sources: list[str]
    shape: str
    needs_confirmation: bool
    sample: list[dict[str, Any]] = Field(description="The first tasks as they would import.")


class CheckOut(Schema):
    """Exactly what `manage.py check_dataset_file --json` prints."""

    model_config = ConfigDict(extra="forbid")

    ok: bool = Field(description="True when the file can be imported as it is.")
    format: str | None = Field(description="json, jsonl, csv, xlsx, zip, or null if unknown.")
    task_count: int
    detected: str = Field(description="What the file was read as, in words.")
    problems: list[ProblemOut]
    warnings: list[ProblemOut]
    mapping: MappingOut | None = Field(
        description="How a file from another tool was read into tasks; null for our formats."
    )
    tasks: list[PreviewTask]


# --- Datasets -------------------------------------------------------------------------------


class CriterionOut(Schema):
    id: str
    criterion: str
    weight: float
    verifier: dict[str, Any] | None = None


class TaskSummary(Schema):
    id: int = Field(description="The task's number in the API (GET /tasks/{id}).")
    task_id: str = Field(description="The task's id in its dataset file.")
    name: str
    state: Literal["draft", "saved", "archived"]
    reviewed: bool = Field(description="A draft reviewed since it last changed.")


class DatasetSummary(Schema):
    id: int
    name: str
    description: str
    owner: str
    latest_version: int | None = Field(description="The number of its latest saved version.")
    created_at: datetime
    updated_at: datetime


class DatasetOut(DatasetSummary):
    settings: dict[str, Any] = Field(
        description="Verifier defaults, as the .json file writes them: expectedAnswerVerifier "
        "and defaultVerifier."
    )
    criteria: list[CriterionOut] = Field(description="The criteria for every task.")
    tasks: list[TaskSummary] = Field(description="Its tasks now: drafts and saved ones.")
    unsaved_changes: bool = Field(description="Whether saving would make a new version.")
    next_version: int
    require_review: bool = Field(
        description="Saving requires every draft reviewed (else 409 not_all_reviewed)."
    )
    unreviewed_drafts: int = Field(description="Drafts not reviewed since they last changed.")


class DatasetIn(Schema):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)


class DatasetPatch(Schema):
    """Only the fields sent change."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = None
    settings: dict[str, Any] | None = None
    require_review: bool | None = None


# --- Imports --------------------------------------------------------------------------------


class Progress(Schema):
    done: int
    total: int


class ImportOut(Schema):
    id: UUID
    dataset: int | None
    file: str
    mode: Literal["add", "replace"]
    state: Literal["checking", "checked", "importing", "imported", "failed"] = Field(
        description="checking, then importing, then imported; failed when the file has "
        "problems or could not be imported (nothing was written). checked: checked in the "
        "import dialog and waiting for its Import button."
    )
    ok: bool | None = Field(
        description="Whether the file can be (or was) imported: false whenever `state` is "
        "failed or there are problems; null while checking."
    )
    progress: Progress = Field(description="Tasks checked, then files stored, so far.")
    task_count: int
    problems: list[ProblemOut]
    warnings: list[ProblemOut]
    error: str | None = Field(description="Why the import stopped, for people.")
    mapping: MappingOut | None
    tasks: list[TaskSummary] = Field(description="The tasks it created, once imported.")
    created_at: datetime
    expires_at: datetime


# --- Versions and tasks ---------------------------------------------------------------------


class ExportOut(Schema):
    id: UUID
    dataset: int
    version: int | None = Field(description="The version's number; null for the current tasks.")
    format: str
    state: Literal["queued", "building", "ready", "failed", "expired"] = Field(
        description="queued, then building, then ready to download until `expires_at`, "
        "then expired (the file is removed); failed when it could not be built (`error`)."
    )
    progress: Progress = Field(description="Tasks written so far, of how many.")
    size: int | None = Field(description="The file's size in bytes, once ready.")
    error: str | None = Field(description="Why the export failed, for people.")
    url: str = Field(description="This export's address in the API, to poll.")
    download_url: str | None = Field(description="Where to download the file, once ready.")
    created_at: datetime
    finished_at: datetime | None
    expires_at: datetime


class VersionOut(Schema):
    number: int
    label: str
    task_count: int
    created_by: str | None
    created_at: datetime


class FileOut(Schema):
    role: Literal["input", "expected"]
    name: str
    url: str | None = Field(description="For a linked file; null for a stored one.")
    size: int | None
    sha256: str | None


class TaskOut(TaskSummary):
    dataset: int
    prompt: str
    expected_answer: str | None
    expected_verifier: dict[str, Any] | None
    criteria: list[CriterionOut] = Field(description="The task's own criteria.")
    files: list[FileOut]
    evidence: dict[str, Any]
    metadata: dict[str, Any] = Field(
        description="What the dataset cannot otherwise hold (category, difficulty, split, "
        "…), as the file's `metadata` object or `metadata.<key>` columns gave it."
    )
    created_at: datetime
    updated_at: datetime


class TaskFilters(Schema):
    model_config = ConfigDict(extra="forbid")

    state: Literal["draft", "saved"] | None = Field(None, description="Only drafts, or saved.")
    version: int | None = Field(None, ge=1, description="Only the tasks of this version.")


# A CSV's encoding, as a person may choose it (`encodings.CHOICES`): read strictly.
Encoding = Literal[tuple(CHOICES)]  # type: ignore[valid-type]


class ReadFields(Schema):
    """The form fields that say how to read a file: the dialog's Read options."""

    encoding: Encoding | None = None  # type: ignore[valid-type]
    number_tasks: bool = False
    header_row: int | None = Field(default=None, ge=1, le=MAX_HEADER_ROW)

    def read_options(self) -> dict[str, Any]:
        """As an upload keeps them (`READ_OPTIONS`)."""
        return self.model_dump(include=set(READ_OPTIONS))


class ImportFields(ReadFields):
    """The form fields that come with an import's file."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["add", "replace"] = "add"


# --- Runs -----------------------------------------------------------------------------------


class RunFields(Schema):
    """The multipart fields of a new run, besides its `outputs` file."""

    model_config = ConfigDict(extra="forbid")
    version: int | None = Field(
        None, ge=1, description="The version to grade; default: the latest saved one."
    )
    name: str = Field("", max_length=200, description="A name for the run.")
    task_column: str | None = Field(
        None, description="In a .csv: the column of task ids, when the headers leave it open."
    )
    output_column: str | None = Field(
        None, description="In a .csv: the column of outputs, when the headers leave it open."
    )
    budget_judge_calls: int | None = Field(
        None, ge=0, description="Refuse the run if it needs more judge calls than this."
    )
    budget_tokens: int | None = Field(
        None, ge=0, description="Refuse the run if its judges need about more tokens than this."
    )


class RunCounts(Schema):
    tasks: int = Field(description="Tasks the version holds, each graded.")
    graded: int = Field(description="Tasks every criterion of which is written.")
    failed: int = Field(description="Tasks that scored below 1.")
    errored: int = Field(description="Tasks with a criterion in error.")
    no_output: int = Field(description="Tasks the outputs gave no answer for (scored 0).")


class RunCosts(Schema):
    latency_ms: float | None = Field(description="The agent's latency over its tasks, summed.")
    latency_mean_ms: float | None = Field(
        description="The mean latency of the tasks whose outputs line gave one."
    )
    tokens: int | None = Field(description="The agent's tokens, summed.")
    cost: float | None = Field(description="The agent's cost, summed (as its lines gave it).")
    models: list[str] = Field(description="The models the outputs lines named.")


class RunOut(Schema):
    id: int
    dataset: int
    version: int = Field(description="The number of the version it grades.")
    name: str
    state: Literal[
        "checking", "queued", "grading", "done", "done_with_errors", "stopped", "failed"
    ] = Field(description="Poll until done, done_with_errors, stopped or failed.")
    progress: Progress = Field(description="Criteria outcomes written, of all of them.")
    score: float | None = Field(description="The mean of the tasks' scores, once it ended.")
    stderr: float | None = Field(description="The score's standard error, over tasks.")
    coverage: float | None = Field(description="How much of the score's weight was graded.")
    counts: RunCounts | None = Field(description="How its tasks ended, once it ended.")
    costs: RunCosts | None = Field(
        description="What the agent's runs cost, as the outputs said, once it ended."
    )
    judge_model: str | None = Field(description="The judge's model, if a judge grades it.")
    outputs: str = Field(description="The outputs file's name.")
    error: str | None = Field(description="Why it failed, for people.")
    created_by: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class CriterionResultOut(Schema):
    id: str
    status: Literal["pending", "claimed", "passed", "failed", "scored", "error", "skipped"]
    score: float | None
    reasoning: str
    code: str | None
    detail: str
    weight: float
    verifier: str
    warnings: list[str]


class AgentCostsOut(Schema):
    """What the agent's run of a task cost, as its outputs line said; only what it said."""

    latency_ms: float | None = None
    tokens: int | None = None
    cost: float | None = None
    model: str | None = None
    trace: str | None = Field(None, description="A link to the agent's trace (http or https).")


class TaskResultOut(Schema):
    task: str = Field(description="The task's id in the version.")
    score: float | None
    coverage: float
    criteria: list[CriterionResultOut]
    agent: AgentCostsOut | None = Field(
        None, description="What the agent's run cost; left out when its line said nothing."
    )


class RunResultsOut(Schema):
    """As `python -m context_verifiers grade --json` prints it: the total, then each task."""

    score: float | None
    coverage: float
    tasks: list[TaskResultOut]
