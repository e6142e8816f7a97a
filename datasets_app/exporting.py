"""A dataset (or one of its versions) as a file to download, in each format it exports to.

Writers live in `importing/` next to the readers they round-trip with; this module picks
one, opens stored files for the .zip, and says what a format cannot carry.
"""

from __future__ import annotations

import json
import posixpath
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import IO, Any

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.utils.text import get_valid_filename

from datasets_app.importing import csv_format, evalset_format, xlsx_format, zip_format
from datasets_app.importing.columns import spreadsheet_warnings
from datasets_app.importing.formats import WRITERS
from datasets_app.importing.outputs import COST_KEYS
from datasets_app.importing.spec import DatasetSpec, FileSpec, MappedTasks, TaskSpec, counted

# Exports up to this size stay in memory; a larger .zip spools to a temporary file.
SPOOL_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class ExportFormat:
    slug: str
    label: str
    extension: str
    content_type: str


EXPORT_FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat("json", "JSON (.json)", "json", "application/json"),
    ExportFormat("csv", "CSV (.csv)", "csv", "text/csv; charset=utf-8"),
    ExportFormat(
        "xlsx",
        "Excel (.xlsx)",
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ExportFormat("zip", "ZIP with files (.zip)", "zip", "application/zip"),
    ExportFormat("evalset", "contextgrid eval set (.jsonl)", "jsonl", "application/x-ndjson"),
)


def export_format(slug: str) -> ExportFormat | None:
    return next((f for f in EXPORT_FORMATS if f.slug == slug), None)


def _open_stored(spec: FileSpec) -> IO[bytes] | None:
    if not spec.path or not default_storage.exists(spec.path):
        return None
    return default_storage.open(spec.path, "rb")


# Formats that are one text file: they can link files, never hold them.
FLAT_FORMATS = ("json", "csv", "xlsx")

# The page follows it with a link to the .zip, which keeps them.
STORED_FILES_LEFT_OUT = (
    "{files} stored with the tasks cannot go in a {extension} file, which can only link "
    "files, so the export leaves {them} out: {names}."
)
NOTHING_TO_WRITE = "None of the tasks can be written as an eval set."


def links_only(spec: DatasetSpec) -> DatasetSpec:
    """The dataset with its stored files left out and its links kept: what a flat file holds,
    so that it imports back without a problem (a path in it names nothing). Worked out a
    task at a time as the writer reads them."""

    def links(files: tuple[FileSpec, ...]) -> tuple[FileSpec, ...]:
        return tuple(f for f in files if f.url is not None)

    def linked(_index: int, task: TaskSpec) -> TaskSpec:
        if all(f.url is not None for f in (*task.input_files, *task.expected_files)):
            return task
        return replace(
            task, input_files=links(task.input_files), expected_files=links(task.expected_files)
        )

    return replace(spec, tasks=MappedTasks(spec.tasks, linked))


# Each format's writer, writing into a binary stream as it reads the tasks.
# The dataset formats' own writers (`formats.WRITERS`), and contextgrid's eval set.
_WRITERS: dict[str, Callable[[DatasetSpec, IO[bytes]], object]] = {
    **WRITERS,
    "evalset": evalset_format.write_to,
}


def export(spec: DatasetSpec, fmt: ExportFormat) -> IO[bytes]:
    """The export as a readable binary stream at position 0.

    Built into a temporary file that spills to disk past SPOOL_BYTES, as the writer reads
    the tasks (`spec.tasks` may be read from the database a chunk at a time, see
    `selectors.dataset_spec_streamed`): the memory it takes does not grow with the dataset.
    What a format cannot carry is said by the pages before the download (`notes_for`), not
    worked out again here: that would be one more pass over every task.
    """
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - returned open
    export_to(spec, fmt, out)
    out.seek(0)
    return out


def export_to(spec: DatasetSpec, fmt: ExportFormat, out: IO[bytes]) -> None:
    """Write the export into `out`: the one way an export is built, within a request
    (`export`) or by a worker into the storage (`services.exports.export_job_build`)."""
    if fmt.slug == "zip":
        zip_format.write(spec, out, open_file=_open_stored)
    else:
        _WRITERS[fmt.slug](links_only(spec) if fmt.slug in FLAT_FORMATS else spec, out)


def download_name(stem: str, fmt: ExportFormat) -> str:
    """The name an export downloads as: `<stem>.<extension>`, made safe."""
    return f"{get_valid_filename(stem) or 'dataset'}.{fmt.extension}"


@dataclass(frozen=True)
class ExportNotes:
    """What the export page says about one format before anything is downloaded."""

    format: ExportFormat
    warnings: list[str]
    # A flat format leaves stored files out: the page offers the .zip instead.
    offer_zip: bool = False
    # Nothing of the dataset fits the format (an eval set of criteria-only tasks).
    empty: bool = False


# Stored files the flat formats' warning names; the rest are counted.
STORED_FILES_NAMED = 10


@dataclass(frozen=True)
class ExportFacts:
    """What the export notes are worked out from, over every task: counted from the tasks
    in memory (`export_facts`), or by the database's aggregates without loading them
    (`selectors.export_facts`). The dataset's head (description, settings, criteria for
    every task) comes with the spec itself."""

    # Tasks with evidence, which a spreadsheet cannot hold.
    with_evidence: int
    # The workbook's cells whose characters XML changes (`xlsx_format.cells_xml_changes`).
    xlsx_cells: tuple[int, int]
    evalset: evalset_format.ExportTally
    # (task id, file name) of the first STORED_FILES_NAMED stored files (not links) the tasks
    # attach, in their order, and how many there are.
    stored_files: list[tuple[str, str]]
    stored_count: int


def export_facts(spec: DatasetSpec) -> ExportFacts:
    """`ExportFacts` of the tasks in `spec`, read in memory."""
    stored = [
        (task.id, attached.name)
        for task in spec.tasks
        for attached in (*task.input_files, *task.expected_files)
        if attached.url is None
    ]
    return ExportFacts(
        with_evidence=sum(1 for task in spec.tasks if task.evidence),
        xlsx_cells=xlsx_format.cells_xml_changes(spec),
        evalset=evalset_format.export_tally(spec.tasks),
        stored_files=stored[:STORED_FILES_NAMED],
        stored_count=len(stored),
    )


def notes_for(spec: DatasetSpec, fmt: ExportFormat, facts: ExportFacts) -> ExportNotes:
    """What `fmt` cannot carry of the dataset (`spec`'s head, `facts` of its tasks), worked
    out without building the export (a million criteria must not cost a CSV and a workbook
    to list three warnings)."""
    warnings: list[str] = []
    if fmt.slug == "csv":
        warnings = spreadsheet_warnings(spec, with_evidence=facts.with_evidence)
    elif fmt.slug == "xlsx":
        warnings = xlsx_format.export_warnings(
            spec, with_evidence=facts.with_evidence, cells=facts.xlsx_cells
        )
    elif fmt.slug == "evalset":
        warnings = evalset_format.export_warnings(spec, facts.evalset)
    stored = fmt.slug in FLAT_FORMATS and facts.stored_count > 0
    if stored:
        names = ", ".join(f"{name} (task {task})" for task, name in facts.stored_files)
        if facts.stored_count > len(facts.stored_files):
            names += f" and {facts.stored_count - len(facts.stored_files):,} more"
        warnings.append(
            STORED_FILES_LEFT_OUT.format(
                files=counted(facts.stored_count, "file"),
                extension=f".{fmt.extension}",
                them="it" if facts.stored_count == 1 else "them",
                names=names,
            )
        )
    empty = fmt.slug == "evalset" and facts.evalset.tasks > 0 and not facts.evalset.has_items
    if empty:
        warnings.insert(0, NOTHING_TO_WRITE)
    return ExportNotes(format=fmt, warnings=warnings, offer_zip=stored, empty=empty)


def export_notes(spec: DatasetSpec, facts: ExportFacts | None = None) -> list[ExportNotes]:
    """Each format with what it cannot carry, for the export and version pages: from
    `facts` when the database counted them (`selectors.export_facts`), else from `spec`'s
    tasks in memory."""
    if facts is None:
        facts = export_facts(spec)
    return [notes_for(spec, fmt, facts) for fmt in EXPORT_FORMATS]


def export_response(spec: DatasetSpec, slug: str, stem: str) -> FileResponse:
    """The export as a download named `<stem>.<extension>`; 404 for a format we don't have."""
    fmt = export_format(slug)
    if fmt is None:
        raise Http404
    stream = export(spec, fmt)
    return FileResponse(
        stream,
        as_attachment=True,
        filename=download_name(stem, fmt),
        content_type=fmt.content_type,
    )


def stored_export_response(name: str, fmt: ExportFormat) -> FileResponse:
    """An export a worker built into the storage (`ExportJob`), as its download."""
    return FileResponse(
        default_storage.open(name, "rb"),
        as_attachment=True,
        filename=posixpath.basename(name),
        content_type=fmt.content_type,
    )


# --- A run's results ----------------------------------------------------------------------

RUN_RESULT_COLUMNS = [
    "task",
    "task_score",
    "task_coverage",
    "criterion",
    "weight",
    "verifier",
    "status",
    "score",
    "code",
    "reasoning",
    # What the agent's run of the task cost, as its outputs line said (repeated on each of
    # the task's rows, as its score is).
    *COST_KEYS,
]
RUN_RESULT_FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def run_results_file(document: dict[str, Any], slug: str) -> bytes:
    """A run's verdicts (`selectors.run_results_document`) as a .csv (a row per task and
    criterion, every cell formula-guarded as the dataset exports are) or a .jsonl (a line
    per task, as the command-line grader's --json writes each)."""
    tasks = document["tasks"]
    if slug == "jsonl":
        return "".join(json.dumps(task, ensure_ascii=False) + "\n" for task in tasks).encode()
    rows = [
        [
            _cell(task["task"]),
            _cell(task["score"]),
            _cell(task["coverage"]),
            _cell(criterion["id"]),
            _cell(criterion["weight"]),
            _cell(criterion["verifier"]),
            _cell(criterion["status"]),
            _cell(criterion["score"]),
            _cell(criterion["code"]),
            _cell(criterion["reasoning"]),
            *(_cell((task.get("agent") or {}).get(key)) for key in COST_KEYS),
        ]
        for task in tasks
        for criterion in task["criteria"]
    ]
    return csv_format.encode_rows(RUN_RESULT_COLUMNS, rows)


def run_results_response(document: dict[str, Any], slug: str, stem: str) -> HttpResponse:
    content_type = RUN_RESULT_FORMATS.get(slug)
    if content_type is None:
        raise Http404
    response = HttpResponse(run_results_file(document, slug), content_type=content_type)
    name = f"{get_valid_filename(stem) or 'run'}.{slug}"
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=name)
    return response
