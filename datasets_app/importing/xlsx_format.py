"""The .xlsx dataset format: the first sheet of a workbook, with the same columns as .csv.

`read` streams the sheet with openpyxl (`read_only=True`, `data_only=True`: cached values,
never formulas) and hands its rows to `columns.document_from_table`; `write` builds a
one-sheet workbook from a DatasetSpec. Rows are numbered as Excel shows them.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import PurePath
from typing import Any

from openpyxl import Workbook, load_workbook
from openpyxl.cell import WriteOnlyCell

from datasets_app.importing.columns import (
    Table,
    column_letter,
    document_from_table,
    format_number,
    neutralize_formula,
    rows_from_spec,
)
from datasets_app.importing.spec import DatasetSpec, Parsed, Problem, nowhere

NOT_A_WORKBOOK = "xlsx_not_a_workbook"
TOO_LARGE_UNPACKED = "xlsx_too_large_unpacked"
NO_SHEET = "xlsx_no_sheet"
EMPTY_SHEET = "xlsx_empty_sheet"
TOO_MANY_ROWS = "xlsx_too_many_rows"
TOO_MANY_COLUMNS = "xlsx_too_many_columns"
OTHER_SHEETS = "xlsx_other_sheets"

MSG_NOT_A_WORKBOOK = (
    "This file cannot be opened as an Excel workbook (.xlsx). Save it from your spreadsheet "
    "as “Excel Workbook (.xlsx)” or as “CSV UTF-8”."
)
MSG_TOO_LARGE_UNPACKED = (
    "This workbook unpacks to more than {limit} MiB, more than a dataset file needs; save "
    "just the tasks sheet, or as CSV."
)
MSG_NO_SHEET = "This workbook has no worksheet."
MSG_EMPTY_SHEET = "The sheet {sheet} is empty: it needs a header row and a row per task."
MSG_TOO_MANY_ROWS = (
    "The sheet {sheet} has more than {limit:,} rows; a dataset file holds up to 1,000 tasks."
)
MSG_TOO_MANY_COLUMNS = (
    "The sheet {sheet} has a value in column {column}, past the {limit} columns a dataset "
    "sheet can have."
)
MSG_OTHER_SHEETS = "Only the first sheet, {sheet}, was read; the workbook has {count} sheets."

# Bounds on what we read, because a small .xlsx can describe a huge sheet. 1,000 tasks (the
# most a file holds) with up to 20 criteria rows each is 20,000 rows; the format has 17
# columns, and 100 leaves room for columns of notes that are not imported. Together they
# cap the table we build at 2 million cells, whatever the file claims.
MAX_ROWS = 20_000
MAX_COLUMNS = 100
# openpyxl keeps the whole shared-strings table in memory, and a zip can expand 1,000-fold:
# refuse before opening when the members' declared sizes add up past this. 200 MiB is ten
# times a 1,000-task sheet with long answers.
MAX_UNPACKED_BYTES = 200 * 1024 * 1024

# XML 1.0 cannot hold these control characters, so a sheet cannot either; and an XML
# parser turns every CR (alone or before LF) into LF, so a cell's line ends come back as LF.
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CR = re.compile("\r\n?")
MSG_WRITE_CONTROL_CHARACTERS = (
    "{count} cell(s) held control characters an .xlsx cannot store; each was written as "
    "U+FFFD (�). Export as .csv to keep them."
)
MSG_WRITE_CARRIAGE_RETURNS = (
    "{count} cell(s) had CR line ends, which an .xlsx stores as LF. Export as .csv to keep them."
)


def read(data: bytes, file_name: str) -> Parsed:
    """Read a .xlsx dataset file's first sheet into the canonical document."""
    table, detected, problems, warnings = read_table(data, file_name)
    parsed = Parsed(
        format="xlsx",
        detected=detected,
        file_name=file_name,
        document=None,
        locate=nowhere,
        problems=problems,
        warnings=warnings,
    )
    if table is None or problems:
        return parsed
    built = document_from_table(table, file_name=file_name, dataset_name=PurePath(file_name).stem)
    parsed.document = built.document
    parsed.locate = built.locate
    parsed.field_label = built.label
    parsed.problems.extend(built.problems)
    parsed.warnings.extend(built.warnings)
    return parsed


def read_table(
    data: bytes, file_name: str, *, keep_blank_rows: bool = False
) -> tuple[Table | None, str, list[Problem], list[Problem]]:
    """The first sheet as a Table of strings: (table, detected, problems, warnings).

    With `keep_blank_rows` the table keeps empty rows too (the problems download writes the
    sheet back row for row).
    """

    def failed(code: str, message: str, detected: str = "Excel workbook") -> tuple:
        return None, detected, [Problem(code, message, file_name)], []

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return failed(NOT_A_WORKBOOK, MSG_NOT_A_WORKBOOK, "not a workbook")
    if unpacked > MAX_UNPACKED_BYTES:
        limit = MAX_UNPACKED_BYTES // (1024 * 1024)
        return failed(TOO_LARGE_UNPACKED, MSG_TOO_LARGE_UNPACKED.format(limit=limit))

    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception:
        # openpyxl parses untrusted XML and raises whatever its parsers raise on a damaged
        # file (KeyError, ValueError, ParseError, InvalidFileException, …); every one of
        # them means the same thing to the person uploading it.
        return failed(NOT_A_WORKBOOK, MSG_NOT_A_WORKBOOK, "not a workbook")
    try:
        if not workbook.worksheets:
            return failed(NO_SHEET, MSG_NO_SHEET)
        sheet = workbook.worksheets[0]
        detected = f"Excel workbook, sheet “{sheet.title}”"
        warnings = []
        if len(workbook.sheetnames) > 1:
            message = MSG_OTHER_SHEETS.format(
                sheet=f"“{sheet.title}”", count=len(workbook.sheetnames)
            )
            warnings.append(Problem(OTHER_SHEETS, message, file_name))
        try:
            rows, problem = _rows(sheet, file_name, keep_blank_rows=keep_blank_rows)
        except Exception:
            # The sheet XML is parsed lazily, so damage inside it surfaces here.
            return failed(NOT_A_WORKBOOK, MSG_NOT_A_WORKBOOK, "not a workbook")
    finally:
        workbook.close()
    if problem is not None:
        return None, detected, [problem], warnings
    content = [(number, cells) for number, cells in rows if any(c.strip() for c in cells)]
    if not content:
        message = MSG_EMPTY_SHEET.format(sheet=f"“{sheet.title}”")
        return None, detected, [Problem(EMPTY_SHEET, message, file_name)], warnings
    header_row, header = content[0]
    body = [(n, c) for n, c in rows if n > header_row] if keep_blank_rows else content[1:]
    return Table(header=header, header_row=header_row, rows=body), detected, [], warnings


def _rows(
    sheet: Any, file_name: str, *, keep_blank_rows: bool
) -> tuple[list[tuple[int, list[str]]], Problem | None]:
    title = f"“{sheet.title}”"
    # The sheet's stated dimension can be absent or wrong; without it openpyxl pads each
    # row only to its own last cell. One column past the limit is read, to notice it.
    sheet.reset_dimensions()
    rows: list[tuple[int, list[str]]] = []
    for number, values in enumerate(sheet.iter_rows(max_col=MAX_COLUMNS + 1, values_only=True), 1):
        cells = [_cell_text(value) for value in values]
        filled = any(cells)
        if filled and number > MAX_ROWS:
            message = MSG_TOO_MANY_ROWS.format(sheet=title, limit=MAX_ROWS)
            return rows, Problem(TOO_MANY_ROWS, message, file_name, row=number)
        if len(cells) > MAX_COLUMNS and cells[MAX_COLUMNS]:
            message = MSG_TOO_MANY_COLUMNS.format(
                sheet=title, column=column_letter(MAX_COLUMNS), limit=MAX_COLUMNS
            )
            return rows, Problem(TOO_MANY_COLUMNS, message, file_name, row=number)
        if (filled or keep_blank_rows) and number <= MAX_ROWS:
            rows.append((number, cells[:MAX_COLUMNS]))
    return rows, None


def _cell_text(value: Any) -> str:
    """A cell as the text a person typed: an id `1` (or `1.0`) is "1", a blank is ""."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return format_number(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


def write(spec: DatasetSpec) -> tuple[bytes, list[str]]:
    """The dataset as a one-sheet .xlsx: (bytes, warnings about what the sheet cannot carry).

    Every cell is written as text, never a formula, and with the same `'` before a formula
    character as the CSV writer (see `columns.neutralize_formula`), which `read` takes off.
    """
    header, rows, warnings = rows_from_spec(spec)
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("Tasks")
    replaced = carriage_returns = 0
    for values in [header, *rows]:
        cells = []
        for value in values:
            clean, count = _NOT_IN_XML.subn("\ufffd", value)
            replaced += bool(count)
            clean, count = _CR.subn("\n", clean)
            carriage_returns += bool(count)
            cell = WriteOnlyCell(sheet, value=neutralize_formula(clean))
            # openpyxl treats a string starting with "=" as a formula; say it is text.
            cell.data_type = "s"
            cells.append(cell)
        sheet.append(cells)
    if replaced:
        warnings.append(MSG_WRITE_CONTROL_CHARACTERS.format(count=replaced))
    if carriage_returns:
        warnings.append(MSG_WRITE_CARRIAGE_RETURNS.format(count=carriage_returns))
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue(), warnings
