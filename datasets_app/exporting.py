"""A dataset (or one of its versions) as a file to download, in each format it exports to.

Writers live in `importing/` next to the readers they round-trip with; this module picks
one, opens stored files for the .zip, and says what a format cannot carry.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from django.core.files.storage import default_storage
from django.http import FileResponse, Http404
from django.utils.text import get_valid_filename

from datasets_app.importing import csv_format, evalset_format, json_format, xlsx_format, zip_format
from datasets_app.importing.spec import DatasetSpec, FileSpec

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


def _open_stored(spec: FileSpec) -> BinaryIO | None:
    if not spec.path or not default_storage.exists(spec.path):
        return None
    return default_storage.open(spec.path, "rb")


def export(spec: DatasetSpec, fmt: ExportFormat) -> tuple[BinaryIO, list[str]]:
    """The export as a readable binary stream at position 0, and its warnings."""
    writers: dict[str, Callable[[DatasetSpec], tuple[bytes, list[str]]]] = {
        "json": lambda s: (json_format.write(s), []),
        "csv": csv_format.write,
        "xlsx": xlsx_format.write,
        "evalset": lambda s: (evalset_format.write(s), evalset_format.export_warnings(s)),
    }
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - returned open
    if fmt.slug == "zip":
        warnings = zip_format.write(spec, out, open_file=_open_stored)
    else:
        data, warnings = writers[fmt.slug](spec)
        out.write(data)
    out.seek(0)
    return out, warnings


def export_warnings(spec: DatasetSpec) -> dict[str, list[str]]:
    """What each flat format would leave out, so the export page can say it before download."""
    return {
        "csv": csv_format.write(spec)[1],
        "xlsx": xlsx_format.write(spec)[1],
        "evalset": evalset_format.export_warnings(spec),
    }


def export_response(spec: DatasetSpec, slug: str, stem: str) -> FileResponse:
    """The export as a download named `<stem>.<extension>`; 404 for a format we don't have."""
    fmt = export_format(slug)
    if fmt is None:
        raise Http404
    stream, _warnings = export(spec, fmt)
    return FileResponse(
        stream,
        as_attachment=True,
        filename=f"{get_valid_filename(stem) or 'dataset'}.{fmt.extension}",
        content_type=fmt.content_type,
    )
