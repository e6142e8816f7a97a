"""What the CSV and XLSX tests share: read a file, shape it and run the shared validator
on it, as the checker does."""

from __future__ import annotations

from pathlib import Path

from datasets_app.importing import csv_format, shapes, xlsx_format
from datasets_app.importing.document import validate_document
from datasets_app.importing.spec import CheckOptions, DatasetSpec, Parsed, Problem, Read, field_path

FILES = Path(__file__).resolve().parent.parent / "files" / "csv"


def checked(
    read: Read, options: CheckOptions | None = None
) -> tuple[DatasetSpec | None, list[Problem], list[Problem]]:
    """The reader's findings plus the shape stage's and the validator's, as the checker
    would combine them."""
    parsed: Parsed = shapes.shape(read, options=options)
    problems, warnings = list(parsed.problems), list(parsed.warnings)
    plan = None
    if parsed.document is not None:
        plan, more_problems, more_warnings = validate_document(
            parsed.document,
            file_name=parsed.file_name,
            locate=parsed.locate,
            options=CheckOptions(python_checks_enabled=True),
            field_label=parsed.field_label or field_path,
        )
        problems += more_problems
        warnings += more_warnings
    return (None if problems else plan), problems, warnings


def check_csv(data: bytes, file_name: str = "tasks.csv", options: CheckOptions | None = None):
    return checked(csv_format.read(data, file_name, options), options)


def check_xlsx(data: bytes, file_name: str = "tasks.xlsx"):
    return checked(xlsx_format.read(data, file_name))
