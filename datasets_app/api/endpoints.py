"""The endpoints, in the order of the issue's table; each calls one service or selector.

Paths are part of the contract (scripts written today keep working): change one only with a
new API version, which the schema test asks for.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import wraps
from typing import Any, Literal, TypeVar
from uuid import UUID

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db.models import Max
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.urls import path, re_path
from ninja import NinjaAPI, Query, Status, Swagger
from pydantic import ValidationError as PydanticValidationError

from datasets_app import exporting, guards, selectors
from datasets_app.api import errors
from datasets_app.api.auth import TokenAuth, signed_in_or_token
from datasets_app.api.errors import ApiError
from datasets_app.api.schemas import (
    CheckOut,
    DatasetIn,
    DatasetOut,
    DatasetPatch,
    DatasetSummary,
    ErrorOut,
    ExportOut,
    ImportFields,
    ImportOut,
    ReadFields,
    RunFields,
    RunOut,
    RunResultsOut,
    TaskFilters,
    TaskOut,
    VersionOut,
)
from datasets_app.importing import checker
from datasets_app.importing.encodings import CHOICES as ENCODINGS
from datasets_app.importing.shapes import parse_map_options
from datasets_app.importing.spec import MAX_HEADER_ROW
from datasets_app.models import Dataset, ExportJob, Run, RunState, Task, Upload, Version
from datasets_app.services import checks, datasets, exports, imports, limits, runs

# The API's version: bump it (and commit the schema snapshot it asks for) whenever an
# endpoint changes shape. tests/api/test_schema.py holds this promise.
API_VERSION = "1.9.0"


class ContextEvalsAPI(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        # "dataset_list", not "datasets_app_api_endpoints_dataset_list": the names that
        # generated clients give their methods.
        return operation.view_func.__name__


api = ContextEvalsAPI(
    title="Context Evals API",
    version=API_VERSION,
    description=(
        "Check, import, version and export evaluation datasets from pipelines. "
        "Authenticate with a personal API token: `Authorization: Bearer <token>`. "
        'Every error answers `{"error": {"code", "message", "details"}}`.'
    ),
    auth=TokenAuth(),
    urls_namespace="api",
    docs=Swagger(settings={"persistAuthorization": False}),
    docs_decorator=signed_in_or_token,
)
errors.install(api)

ERRORS = {400: ErrorOut, 401: ErrorOut, 404: ErrorOut}
UPLOAD_ERRORS = {**ERRORS, 413: ErrorOut, 429: ErrorOut}

CHOOSE_A_FILE = "Send the dataset file as the multipart field 'file'."
INVALID_MAP = "Each 'map' is FIELD=SOURCE, e.g. prompt=question; details says which is not."
NOTHING_TO_SAVE = "nothing_to_save"
NOT_ALL_REVIEWED = "not_all_reviewed"
LIMIT_REACHED = "limit_reached"
INVALID_SETTINGS = "The settings are not valid; details lists each problem."
# The export formats' slugs, as the schema's enum.
ExportSlug = Literal[tuple(f.slug for f in exporting.EXPORT_FORMATS)]  # type: ignore[valid-type]


def _multipart(fields: list[tuple[str, str, bool]]) -> dict[str, Any]:
    """The OpenAPI request body of an endpoint that reads its multipart form itself."""
    properties: dict[str, Any] = {}
    for name, kind, _required in fields:
        if kind == "file":
            properties[name] = {"type": "string", "format": "binary"}
        elif kind == "mode":
            properties[name] = {"type": "string", "enum": ["add", "replace"], "default": "add"}
        elif kind == "encoding":
            properties[name] = {
                "type": "string",
                "enum": list(ENCODINGS),
                "description": "A CSV's text encoding, read strictly (a byte order mark "
                "wins); left out, it is found from the text, as --encoding takes it.",
            }
        elif kind == "flag":
            properties[name] = {
                "type": "boolean",
                "default": False,
                "description": "Number the tasks task-1, task-2… instead of the file's ids "
                "(ids that repeat), as --number-tasks does.",
            }
        elif kind == "row":
            properties[name] = {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_HEADER_ROW,
                "description": "The row of a CSV's or a workbook's column names, from 1 (as "
                "--header-row); "
                "left out, the first row below any title lines.",
            }
        elif kind == "map":
            properties[name] = {
                "type": "array",
                "items": {"type": "string"},
                "description": "FIELD=SOURCE, once per field: which column or key fills it "
                "(id, name, prompt, expected, criterion, weight), as --map takes it.",
            }
        else:
            properties[name] = {"type": "string"}
    schema = {
        "type": "object",
        "properties": properties,
        "required": [name for name, _kind, required in fields if required],
    }
    return {
        "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": schema}}}
    }


def _person(request: HttpRequest) -> User:
    """Who is calling: the API lets no one in without a token (`auth.TokenAuth`)."""
    assert isinstance(request.user, User)
    return request.user


def _guard(request: HttpRequest, *rates: guards.Rate, kept: bool) -> None:
    """Count the request against the person's rates and refuse a body too large (or, for a
    file that is `kept`, past the storage quota) before anything reads it: the dialog's own
    rule (guards.refusal), as the API's errors."""
    for index, rate in enumerate(rates):
        last = index == len(rates) - 1
        refused = guards.refusal(request, rate=rate, check_size=last, kept=kept)
        if refused is None:
            continue
        if refused.status == 429:
            headers = {"Retry-After": str(refused.retry_after)}
            raise ApiError(429, "rate_limited", refused.message, headers=headers)
        raise ApiError(413, "too_large", refused.message)


def _known_query(request: HttpRequest, *known: str) -> None:
    """A misspelt filter is a 400, not a silently unfiltered answer."""
    unknown = sorted(set(request.GET) - set(known))
    if unknown:
        details = [{"field": f"query.{name}", "message": "Unknown parameter."} for name in unknown]
        raise ApiError(400, "invalid", errors.INVALID, details)


def _mapping(request: HttpRequest) -> dict[str, str] | None:
    """The `map` fields, as `--map` takes them; None lets the checker recognise the file."""
    mapping, problems = parse_map_options(request.POST.getlist("map"))
    if problems:
        details = [{"field": "form.map", "message": problem} for problem in problems]
        raise ApiError(400, "invalid_map", INVALID_MAP, details)
    return mapping or None


ReadFieldsT = TypeVar("ReadFieldsT", bound=ReadFields)


def _form(request: HttpRequest, fields: type[ReadFieldsT]) -> ReadFieldsT:
    """The request's form fields (but `map`, read by `_mapping`) as `fields` checks them."""
    try:
        return fields.model_validate({k: v for k, v in request.POST.items() if k != "map"})
    except PydanticValidationError as exc:
        details = errors.field_errors(
            [{**e, "loc": ("form", *e["loc"])} for e in exc.errors(include_url=False)]
        )
        raise ApiError(400, "invalid", errors.INVALID, details) from exc


def _uploaded_file(request: HttpRequest) -> UploadedFile:
    uploaded = request.FILES.get("file")
    if uploaded is None:
        raise ApiError(400, "invalid", CHOOSE_A_FILE, [{"field": "form.file"}])
    return uploaded


# --- Datasets -------------------------------------------------------------------------------


def _summary(dataset: Dataset) -> dict[str, Any]:
    return {
        "id": dataset.pk,
        "name": dataset.name,
        "description": dataset.description,
        "owner": dataset.owner.get_username(),
        # Annotated by the queries that list datasets, set by `_dataset_out`.
        "latest_version": dataset.latest_version,  # type: ignore[attr-defined]
        "created_at": dataset.created_at,
        "updated_at": dataset.updated_at,
    }


def _criterion(criterion) -> dict[str, Any]:
    return {
        "id": criterion.criterion_id,
        "criterion": criterion.text,
        "weight": criterion.weight,
        "verifier": criterion.verifier,
    }


def _task_summary(task: Task) -> dict[str, Any]:
    return {
        "id": task.pk,
        "task_id": task.task_id,
        "name": task.name,
        "state": task.state,
        "reviewed": task.is_reviewed,
    }


def _visible(request: HttpRequest):
    return selectors.datasets_for(_person(request)).annotate(latest_version=Max("versions__number"))


def _dataset(request: HttpRequest, dataset_id: int) -> Dataset:
    return selectors.dataset_for(_person(request), dataset_id)


def _dataset_out(dataset: Dataset) -> dict[str, Any]:
    latest = selectors.latest_version(dataset)
    dataset.latest_version = latest.number if latest else None  # type: ignore[attr-defined]
    return {
        **_summary(dataset),
        "settings": dataset.settings or {},
        "criteria": [_criterion(c) for c in selectors.dataset_criteria(dataset)],
        "tasks": [_task_summary(t) for t in dataset.tasks.live()],
        "unsaved_changes": selectors.unsaved_changes(dataset),
        "next_version": selectors.next_version_number(dataset),
        "require_review": dataset.require_review,
        "unreviewed_drafts": selectors.draft_counts(dataset).unreviewed,
    }


def _checked_settings(given: dict[str, Any]) -> dict[str, Any]:
    """Settings as the checker reads them from a .json file (one validator for both), or a
    400 naming each problem."""
    probe = {
        "settings": given,
        "tasks": [{"id": "probe", "prompt": "probe", "expected": {"text": "probe"}}],
    }
    result = checker.check_file(
        json.dumps(probe).encode(), "settings.json", options=selectors.checker_options()
    )
    found = [
        p for p in (*result.problems, *result.warnings) if (p.field or "").startswith("settings")
    ]
    if found:
        details = [{"field": p.field, "message": p.message, "code": p.code} for p in found]
        raise ApiError(400, "invalid_settings", INVALID_SETTINGS, details)
    return dict(result.plan.settings) if result.plan is not None else given


@api.get("/datasets", response={200: list[DatasetSummary], 401: ErrorOut}, tags=["datasets"])
def dataset_list(request: HttpRequest):
    """The datasets the caller may see: their own, those shared with them."""
    return [_summary(d) for d in _visible(request).select_related("owner")]


@api.post("/datasets", response={201: DatasetOut, **ERRORS}, tags=["datasets"])
def dataset_create(request: HttpRequest, body: DatasetIn):
    """A new, empty dataset; import a file into it next."""
    # The pages' rate of new datasets and bound on datasets per person (limits.py); the
    # docstring is the schema's description, which changes only with a new API version.
    _guard(request, guards.DATASETS, kept=False)
    try:
        dataset = datasets.dataset_create(
            owner=_person(request),
            name=body.name,
            description=body.description,
            settings=_checked_settings(body.settings),
        )
    except limits.LimitReached as exc:
        raise ApiError(400, LIMIT_REACHED, str(exc)) from exc
    return Status(201, _dataset_out(dataset))


@api.get("/datasets/{dataset_id}", response={200: DatasetOut, **ERRORS}, tags=["datasets"])
def dataset_read(request: HttpRequest, dataset_id: int):
    """Its settings, its criteria for every task, and its tasks with their state."""
    return _dataset_out(_dataset(request, dataset_id))


@api.patch("/datasets/{dataset_id}", response={200: DatasetOut, **ERRORS}, tags=["datasets"])
def dataset_update(request: HttpRequest, dataset_id: int, body: DatasetPatch):
    """Change its name, description, settings or whether saving requires every draft
    reviewed (only the fields sent)."""
    dataset = _dataset(request, dataset_id)
    dataset = datasets.dataset_update(
        dataset=dataset,
        name=dataset.name if body.name is None else body.name,
        description=dataset.description if body.description is None else body.description,
        settings=dataset.settings if body.settings is None else _checked_settings(body.settings),
        require_review=body.require_review,
    )
    return _dataset_out(dataset)


# --- Checking and importing files -----------------------------------------------------------


@api.post(
    "/check",
    response={200: CheckOut, **UPLOAD_ERRORS},
    tags=["files"],
    openapi_extra=_multipart(
        [
            ("file", "file", True),
            ("map", "map", False),
            ("encoding", "encoding", False),
            ("number_tasks", "flag", False),
            ("header_row", "row", False),
        ]
    ),
)
def check(request: HttpRequest):
    """Check a dataset file as the import dialog does; writes nothing.

    Answers exactly what `manage.py check_dataset_file --json` prints: `ok`, every problem
    with its file, row or line, field and code, and a preview of the tasks. A file with
    problems is a 200 with `ok: false` (the check worked; the file needs fixing).
    """
    _guard(request, guards.CHECKS, kept=False)
    mapping = _mapping(request)
    uploaded = _uploaded_file(request)
    read = _form(request, ReadFields).read_options()
    options = replace(selectors.checker_options().read_as(read), mapping=mapping)
    # Within the check's time limit, as the dialog's check on a worker (`services.checks`):
    # the check's JSON as the command prints it, serialised once as plain JSON (not
    # revalidated against the schema: tests hold the two equal).
    body = checks.file_check_bounded(
        source=uploaded, file_name=uploaded.name or "upload", options=options
    )
    return HttpResponse(body, content_type="application/json")


API_STATES = {
    Upload.State.CHECKING: "checking",
    Upload.State.IMPORTING: "importing",
    Upload.State.IMPORTED: "imported",
    Upload.State.FAILED: "failed",
}


def _import_out(upload: Upload, *, sees_dataset: bool = True) -> dict[str, Any]:
    """The upload as the API shows it. Without `sees_dataset` (the dataset was unshared
    from the person since), only what they uploaded: none of the dataset's tasks."""
    result = upload.stored_check
    state = API_STATES.get(Upload.State(upload.state))
    problems = list(result.problems)
    if state is None:
        # Checked: waiting for the dialog's Import button, unless the file has problems or
        # its import was refused (an API import never waits there).
        state = "checked" if result.ok and not upload.error else "failed"
        if result.ok and upload.mode == "add" and upload.dataset and sees_dataset:
            problems += selectors.add_conflicts(dataset=upload.dataset, upload=upload)
    return {
        "id": upload.key,
        "dataset": upload.dataset_id,
        "file": upload.original_name,
        "mode": upload.mode,
        "state": state,
        # The verdict on this import, never at odds with its state: a file that checked
        # fine but cannot be added (its ids are the dataset's, say) is not ok.
        "ok": None if state == "checking" else state != "failed" and not problems,
        "progress": {"done": upload.progress_done, "total": upload.progress_total},
        "task_count": result.task_count,
        "problems": problems,
        "warnings": list(result.warnings),
        "error": upload.error or selectors.worker_stopped(upload) or None,
        "mapping": result.mapping.to_json() if result.mapping is not None else None,
        "tasks": [_task_summary(t) for t in selectors.tasks_from_upload(upload)]
        if sees_dataset
        else [],
        "created_at": upload.created_at,
        "expires_at": upload.expires_at,
    }


@api.post(
    "/datasets/{dataset_id}/imports",
    response={202: ImportOut, **UPLOAD_ERRORS},
    tags=["files"],
    openapi_extra=_multipart(
        [
            ("file", "file", True),
            ("mode", "mode", False),
            ("map", "map", False),
            ("encoding", "encoding", False),
            ("number_tasks", "flag", False),
            ("header_row", "row", False),
        ]
    ),
)
def import_create(request: HttpRequest, dataset_id: int):
    """Import a file into the dataset: checked, then imported as drafts, all or nothing,
    by the same workers as the import dialog. Answers 202 at once; GET /imports/{id} until
    its state is `imported` or `failed`. It counts as a check and an import against the
    caller's rate limits, as choosing a file and pressing Import do in the dialog.
    """
    dataset = _dataset(request, dataset_id)
    _guard(request, guards.CHECKS, guards.IMPORTS, kept=True)
    fields = _form(request, ImportFields)
    mapping = _mapping(request)
    uploaded = _uploaded_file(request)
    try:
        upload = imports.upload_create(
            owner=_person(request),
            dataset=dataset,
            uploaded_file=uploaded,
            mode=fields.mode,
            mapping=mapping,
            read_options=fields.read_options(),
        )
    except imports.OverQuota as over:
        raise ApiError(413, "too_large", str(over)) from over
    upload = imports.upload_check_start(upload=upload, import_mode=fields.mode)
    return Status(202, _import_out(upload))


@api.get("/imports/{import_id}", response={200: ImportOut, **ERRORS}, tags=["files"])
def import_read(request: HttpRequest, import_id: UUID):
    """An import's state and progress, its problems, and (once imported) the tasks it made."""
    person = _person(request)
    upload = selectors.upload_of(person, import_id)
    sees = upload.dataset_id is None or _visible(request).filter(pk=upload.dataset_id).exists()
    return _import_out(upload, sees_dataset=sees)


# --- Versions -------------------------------------------------------------------------------


def _version_out(version: Version) -> dict[str, Any]:
    return {
        "number": version.number,
        "label": version.label,
        "task_count": version.task_count,
        "created_by": version.created_by.get_username() if version.created_by else None,
        "created_at": version.created_at,
    }


@api.get(
    "/datasets/{dataset_id}/versions",
    response={200: list[VersionOut], **ERRORS},
    tags=["versions"],
)
def version_list(request: HttpRequest, dataset_id: int):
    """Its saved versions, newest first."""
    versions = selectors.versions_of(_dataset(request, dataset_id)).order_by("-number")
    return [_version_out(v) for v in versions]


@api.post(
    "/datasets/{dataset_id}/versions",
    response={201: VersionOut, **ERRORS, 409: ErrorOut},
    tags=["versions"],
)
def version_create(request: HttpRequest, dataset_id: int):
    """Save its drafts (and any other change) as the next version; 409 when nothing changed
    since the latest one (`nothing_to_save`), or when the dataset requires every draft
    reviewed and some are not (`not_all_reviewed`)."""
    dataset = _dataset(request, dataset_id)
    try:
        version = datasets.version_save(dataset=dataset, user=_person(request))
    except datasets.NothingToSave as exc:
        raise ApiError(409, NOTHING_TO_SAVE, str(exc)) from exc
    except datasets.NotAllReviewed as exc:
        raise ApiError(409, NOT_ALL_REVIEWED, str(exc)) from exc
    return Status(201, _version_out(selectors.versions_of(dataset).get(pk=version.pk)))


@api.get(
    "/datasets/{dataset_id}/versions/{number}/export",
    response={200: None, 202: ExportOut, **ERRORS},
    tags=["versions"],
    openapi_extra={
        "responses": {
            200: {
                "description": "The version as a file, as an attachment.",
                "content": {
                    f.content_type.split(";")[0]: {"schema": {"type": "string", "format": "binary"}}
                    for f in exporting.EXPORT_FORMATS
                },
            }
        }
    },
)
def version_export(
    request: HttpRequest,
    response: HttpResponse,
    dataset_id: int,
    number: int,
    format: ExportSlug = "json",  # type: ignore[valid-type]
):
    """Download the version in any export format: json, csv, xlsx, zip (with its files) or
    evalset (contextgrid's .jsonl). A version of more tasks than an export builds within a
    request (10,000 by default) answers 202 with the export a worker builds it in, and its
    address in `Location`: poll it until it is `ready`, then download its `download_url`.
    Asking again answers with the same export while it is kept."""
    _known_query(request, "format")
    dataset = _dataset(request, dataset_id)
    version = selectors.version_for(dataset, number)
    if not exports.export_in_request(dataset=dataset, version=version):
        fmt = exporting.export_format(format)
        assert fmt is not None  # the schema's enum
        job = exports.export_job_start(
            dataset=dataset, version=version, fmt=fmt, user=_person(request)
        )
        out = _export_out(request, job)
        response["Location"] = out["url"]
        return Status(202, out)
    return exporting.export_response(
        selectors.version_spec_streamed(version), format, f"{dataset.name}-{version.label}"
    )


def _export_out(request: HttpRequest, job: ExportJob) -> dict[str, Any]:
    url = request.build_absolute_uri(f"/api/v1/exports/{job.key}")
    downloadable = job.downloadable
    return {
        "id": job.key,
        "dataset": job.dataset_id,
        "version": job.version.number if job.version else None,
        "format": job.format,
        "state": ExportJob.State.EXPIRED if job.expired else job.state,
        "progress": {"done": job.progress_done, "total": job.progress_total},
        "size": job.size if downloadable else None,
        "error": job.error or None,
        "url": url,
        "download_url": f"{url}/download" if downloadable else None,
        "created_at": job.created_at,
        "finished_at": job.finished_at,
        "expires_at": job.expires_at,
    }


@api.get("/exports/{export_id}", response={200: ExportOut, **ERRORS}, tags=["versions"])
def export_read(request: HttpRequest, export_id: UUID):
    """An export a worker builds: its state and progress, then where to download it."""
    return _export_out(request, selectors.export_job_for(_person(request), export_id))


EXPORT_NOT_READY = "export_not_ready"


@api.get(
    "/exports/{export_id}/download",
    response={200: None, **ERRORS, 409: ErrorOut},
    tags=["versions"],
    openapi_extra={
        "responses": {
            200: {
                "description": "The built export, as an attachment.",
                "content": {
                    f.content_type.split(";")[0]: {"schema": {"type": "string", "format": "binary"}}
                    for f in exporting.EXPORT_FORMATS
                },
            }
        }
    },
)
def export_download(request: HttpRequest, export_id: UUID):
    """The built file; 409 (`export_not_ready`) while it is building, or once it failed or
    expired (the export's `state` and `error` say which)."""
    job = selectors.export_job_for(_person(request), export_id)
    fmt = exporting.export_format(job.format)
    if not job.downloadable or fmt is None:
        state = "expired" if job.expired else job.state
        raise ApiError(409, EXPORT_NOT_READY, f"The export is {state}, not ready to download.")
    return exporting.stored_export_response(job.stored_name, fmt)


# --- Tasks ----------------------------------------------------------------------------------


def _task_out(task: Task) -> dict[str, Any]:
    files = list(task.files.all())
    return {
        **_task_summary(task),
        "dataset": task.dataset_id,
        "prompt": task.prompt,
        "expected_answer": task.expected_text or None,
        "expected_verifier": task.expected_verifier,
        "criteria": [_criterion(c) for c in task.criteria.all()],
        "files": [
            {
                "role": f.role,
                "name": f.name,
                "url": f.url or None,
                "size": f.size,
                "sha256": f.sha256 or None,
            }
            for f in files
        ],
        "evidence": task.evidence or {},
        "metadata": task.metadata or {},
        "created_at": task.created_at,
        "updated_at": task.updated_at,
    }


@api.get("/datasets/{dataset_id}/tasks", response={200: list[TaskOut], **ERRORS}, tags=["tasks"])
def task_list(request: HttpRequest, dataset_id: int, filters: Query[TaskFilters]):
    """Its tasks now (drafts and saved), or a version's; with their criteria and files."""
    _known_query(request, *TaskFilters.model_fields)
    dataset = _dataset(request, dataset_id)
    if filters.version is not None:
        tasks = selectors.version_tasks(selectors.version_for(dataset, filters.version))
    else:
        tasks = dataset.tasks.live()
    if filters.state is not None:
        tasks = tasks.filter(state=filters.state)
    tasks = tasks.order_by("position", "pk").prefetch_related("criteria", "files")
    return [_task_out(t) for t in tasks]


@api.get("/tasks/{task_id}", response={200: TaskOut, **ERRORS}, tags=["tasks"])
def task_read(request: HttpRequest, task_id: int):
    """One task, with its criteria and files."""
    return _task_out(selectors.task_visible(_person(request), task_id))


# --- Runs -----------------------------------------------------------------------------------

CHOOSE_OUTPUTS = "Send the outputs file as the multipart field 'outputs'."
OUTPUTS_HAVE_PROBLEMS = "The outputs have problems; details lists each, with its line or row."


def _run_costs(costs: dict[str, Any]) -> dict[str, Any]:
    keys = ("latency_ms", "latency_mean_ms", "tokens", "cost")
    return {**{key: costs.get(key) for key in keys}, "models": list(costs.get("models") or [])}


def _run_out(run: Run) -> dict[str, Any]:
    summary = selectors.run_summary_of(run)
    return {
        "id": run.pk,
        "dataset": run.version.dataset_id,
        "version": run.version.number,
        "name": run.name,
        "state": run.state,
        "progress": {"done": run.outcomes_done, "total": run.outcome_count},
        "score": summary.score.value if summary else None,
        "stderr": summary.score.stderr if summary else None,
        "coverage": summary.coverage if summary else None,
        "counts": {
            "tasks": summary.tasks,
            "graded": summary.graded_tasks,
            "failed": summary.failed_tasks,
            "errored": summary.errored_tasks,
            "no_output": summary.no_output,
        }
        if summary
        else None,
        "costs": _run_costs(summary.costs) if summary else None,
        "judge_model": run.judge_model or None,
        "outputs": run.outputs_name,
        "error": run.error or None,
        "created_by": run.created_by.get_username() if run.created_by else None,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


def _run_fields(request: HttpRequest) -> RunFields:
    try:
        return RunFields.model_validate(dict(request.POST.items()))
    except PydanticValidationError as exc:
        details = errors.field_errors(
            [{**e, "loc": ("form", *e["loc"])} for e in exc.errors(include_url=False)]
        )
        raise ApiError(400, "invalid", errors.INVALID, details) from exc


@api.post(
    "/datasets/{dataset_id}/runs",
    response={202: RunOut, **UPLOAD_ERRORS},
    tags=["runs"],
    openapi_extra=_multipart(
        [
            ("outputs", "file", True),
            ("version", "text", False),
            ("name", "text", False),
            ("task_column", "text", False),
            ("output_column", "text", False),
            ("budget_judge_calls", "text", False),
            ("budget_tokens", "text", False),
        ]
    ),
)
def run_create(request: HttpRequest, dataset_id: int):
    """Grade an agent's outputs against a saved version (the latest, or `version`): a
    `.jsonl` of `{"task", "output"}` lines or a `.csv` with task and output columns. The
    file is checked first and refused whole (400, every problem in `details`) or the run is
    queued: 202 with its `id`; GET /runs/{id} until its state has ended. Counts as a check
    against the caller's rate limits."""
    dataset = _dataset(request, dataset_id)
    _guard(request, guards.CHECKS, kept=True)
    fields = _run_fields(request)
    uploaded = request.FILES.get("outputs")
    if uploaded is None:
        raise ApiError(400, "invalid", CHOOSE_OUTPUTS, [{"field": "form.outputs"}])
    if fields.version is None:
        version = selectors.latest_version(dataset)
        if version is None:
            raise ApiError(409, "no_version", runs.NO_VERSION)
    else:
        version = selectors.version_for(dataset, fields.version)
    mapping = {
        role: column
        for role, column in (("task", fields.task_column), ("output", fields.output_column))
        if column
    }
    try:
        run = runs.run_create(
            version=version,
            user=_person(request),
            data=uploaded.read(runs.MAX_OUTPUTS_BYTES + 1),
            file_name=uploaded.name or "outputs.jsonl",
            name=fields.name,
            mapping=mapping or None,
            budget_judge_calls=fields.budget_judge_calls,
            budget_tokens=fields.budget_tokens,
        )
    except runs.RunRefused as refused:
        details = [p.to_json() for p in refused.problems]
        raise ApiError(400, "invalid_outputs", OUTPUTS_HAVE_PROBLEMS, details) from refused
    return Status(202, _run_out(run))


@api.get("/datasets/{dataset_id}/runs", response={200: list[RunOut], **ERRORS}, tags=["runs"])
def run_list(request: HttpRequest, dataset_id: int):
    """Its runs, newest first: the first that is `done` is the one to compare with."""
    return [_run_out(run) for run in selectors.runs_of(_dataset(request, dataset_id))]


@api.get("/runs/{run_id}", response={200: RunOut, **ERRORS}, tags=["runs"])
def run_read(request: HttpRequest, run_id: int):
    """A run's state, progress and (once it ended) its score, coverage and counts."""
    return _run_out(selectors.run_for(_person(request), run_id))


@api.get("/runs/{run_id}/results", response={200: RunResultsOut, **ERRORS}, tags=["runs"])
def run_results(request: HttpRequest, run_id: int):
    """Every verdict, as `python -m context_verifiers grade --json` prints it: the score
    and coverage, then each task with each criterion's status, score, reasoning and code."""
    run = selectors.run_for(_person(request), run_id)
    body = json.dumps(selectors.run_results_document(run), ensure_ascii=False)
    return HttpResponse(body, content_type="application/json")


@api.post("/runs/{run_id}/stop", response={200: RunOut, **ERRORS}, tags=["runs"])
def run_stop(request: HttpRequest, run_id: int):
    """Stop a queued or grading run; it keeps what it graded. A run that ended stays so."""
    run = selectors.run_for(_person(request), run_id)
    if run.state in (RunState.QUEUED, RunState.GRADING):
        runs.run_stop(run=run)
    return _run_out(selectors.run_for(_person(request), run_id))


# --- URLs -----------------------------------------------------------------------------------


def _not_found(request: HttpRequest) -> HttpResponse:
    return errors.error_response(404, "not_found", errors.NOT_FOUND)


def _api_view(view):
    """An API view as the site serves it: past the site's login redirect (the API answers
    for itself who may call it: a token, never a session), and with what ninja answers
    outside its handlers (a 405, the bare root's 404) in the one error shape."""

    @wraps(view)
    def answered(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            response = view(request, *args, **kwargs)
        except Http404:
            return errors.error_response(404, "not_found", errors.NOT_FOUND)
        if isinstance(response, HttpResponseNotAllowed):
            allowed = response["Allow"]
            message = f"This path answers {allowed.replace(',', ', ')} only."
            response = errors.error_response(405, "method_not_allowed", message)
            response["Allow"] = allowed
        return response

    answered.login_required = False
    return answered


# The paths whose bodies carry a dataset file, up to MAX_UPLOAD_BYTES (BodyLimitMiddleware
# holds every other body to the small form limit).
UPLOAD_ROUTES = {"check", "datasets/<dataset_id>/imports", "datasets/<dataset_id>/runs"}


def _answer_refusal(status: int, message: str) -> HttpResponse:
    code = errors.CODES.get(status, "invalid")
    return errors.error_response(status, "length_required" if status == 411 else code, message)


def _serve(patterns: list) -> list:
    for pattern in patterns:
        pattern.callback = _api_view(pattern.callback)
        pattern.callback.answer_refusal = _answer_refusal
        if str(pattern.pattern) in UPLOAD_ROUTES:
            guards.accepts_upload(pattern.callback)
    return patterns


_patterns, _app_name, _namespace = api.urls
urlpatterns = [
    path("api/v1/", (_serve(_patterns), _app_name, _namespace)),
    # Anything else under the API is a JSON 404, not the site's HTML page.
    re_path(r"^api/v1/", _api_view(_not_found)),
]
