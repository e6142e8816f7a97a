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

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.reader.excel import ExcelReader
from openpyxl.worksheet._reader import WorkSheetParser

from datasets_app.importing import archive, shapes
from datasets_app.importing.columns import (
    Table,
    column_letter,
    format_number,
    neutralize_formula,
    rows_from_spec,
)
from datasets_app.importing.spec import (
    MAX_FILE_BYTES,
    CheckOptions,
    DatasetSpec,
    Parsed,
    Problem,
    counted,
    nowhere,
)

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
MSG_PART_TOO_LARGE = (
    "This workbook's {part} unpacks to more than {limit} MiB, more text than a dataset file "
    "holds; save just the tasks sheet, or as CSV."
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
# A zip can expand 1,000-fold, so what openpyxl inflates is bounded twice. Before opening:
# the members' declared sizes (zipfile never inflates a member past its declared size) must
# add up to at most MAX_UNPACKED_BYTES, which bounds the time spent parsing however many
# parts a workbook has. While reading: each part openpyxl opens is counted as it inflates
# and refused past MAX_PART_BYTES, so that the shared-string table (which openpyxl keeps
# whole in memory, one string per cell text) or a sheet of millions of cells never gets
# built. A dataset file holds at most MAX_FILE_BYTES of text as .csv or .json; the same text
# as a sheet's shared strings takes about as many bytes of XML again in markup for short
# cells, so a part of twice that carries any dataset a .csv can, and no more.
MAX_UNPACKED_BYTES = 160 * 1024 * 1024
MAX_PART_BYTES = 2 * MAX_FILE_BYTES

# XML 1.0 cannot hold these control characters, so a sheet cannot either; and an XML
# parser turns every CR (alone or before LF) into LF, so a cell's line ends come back as LF.
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CR = re.compile("\r\n?")
MSG_WRITE_CONTROL_CHARACTERS = (
    "Control characters an .xlsx cannot store, in {cells}, were written as U+FFFD (�). "
    "Export as .csv to keep them."
)
MSG_WRITE_CARRIAGE_RETURNS = (
    "CR line ends, in {cells}, are stored as LF in an .xlsx. Export as .csv to keep them."
)


def read(data: bytes, file_name: str, options: CheckOptions | None = None) -> Parsed:
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
    built, shaped = shapes.read_table(
        table, file_name=file_name, dataset_name=PurePath(file_name).stem, options=options
    )
    if shaped.shape:
        parsed.detected = f"{parsed.detected}, {shaped.shape}"
    parsed.mapping = shaped.mapping
    parsed.problems.extend(shaped.problems)
    parsed.warnings.extend(shaped.warnings)
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
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            unpacked = sum(member.file_size for member in zf.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return failed(NOT_A_WORKBOOK, MSG_NOT_A_WORKBOOK, "not a workbook")
    if unpacked > MAX_UNPACKED_BYTES:
        limit = MAX_UNPACKED_BYTES // (1024 * 1024)
        return failed(TOO_LARGE_UNPACKED, MSG_TOO_LARGE_UNPACKED.format(limit=limit))

    try:
        workbook = _open_workbook(data)
    except archive.MemberTooLarge as exc:
        return failed(TOO_LARGE_UNPACKED, _part_too_large(exc))
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
            rows, problem = _rows(workbook, sheet, file_name, keep_blank_rows=keep_blank_rows)
        except archive.MemberTooLarge as exc:
            problem = Problem(TOO_LARGE_UNPACKED, _part_too_large(exc), file_name)
            return None, detected, [problem], warnings
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


class _CountedArchive(zipfile.ZipFile):
    """A workbook's zip that hands openpyxl every part through a stream counting the bytes
    it inflates, which raises `archive.MemberTooLarge` past MAX_PART_BYTES: the refusal
    comes while reading, in bounded memory, whatever the part's declared size says."""

    def open(self, name, mode="r", pwd=None, **kwargs):  # type: ignore[override]
        member = super().open(name, mode, pwd, **kwargs)
        if mode != "r":
            return member
        label = name.filename if isinstance(name, zipfile.ZipInfo) else name
        counted = archive.VerifiedMember(member, label, max_bytes=MAX_PART_BYTES)
        return io.BufferedReader(counted, archive.CHUNK_BYTES)


def _open_workbook(data: bytes) -> Any:
    """The workbook, read-only with cached values (never formulas), its parts counted.

    `load_workbook` in two steps, so that its reader reads from a `_CountedArchive`.
    """
    reader = ExcelReader(io.BytesIO(data), read_only=True, data_only=True)
    reader.archive.close()
    reader.archive = _CountedArchive(io.BytesIO(data))
    reader.read()
    return reader.wb


def _part_too_large(exc: archive.MemberTooLarge) -> str:
    """What a person reads when a part of the workbook inflates past MAX_PART_BYTES."""
    name = str(exc).split(" ", 1)[0]
    if "sharedstrings" in name.lower():
        part = "text (its shared strings)"
    elif "worksheets/" in name:
        part = "sheet"
    else:
        part = f"part {name}"
    return MSG_PART_TOO_LARGE.format(part=part, limit=MAX_PART_BYTES >> 20)


def _rows(
    workbook: Any, sheet: Any, file_name: str, *, keep_blank_rows: bool
) -> tuple[list[tuple[int, list[str]]], Problem | None]:
    """The sheet's rows as (row number, cells) up to MAX_ROWS, or the problem that stops it.

    Rows are taken by the number the sheet gives them, from openpyxl's sheet parser rather
    than `iter_rows`: `iter_rows` makes up every row missing between two rows of the XML, so
    one empty cell numbered 1,000,000,000 would have it yield a billion empty rows. Here the
    work is one step per row the file really holds, and the file's XML is bounded by
    MAX_PART_BYTES. A row past MAX_ROWS (or a value past MAX_COLUMNS) is a problem only when
    it holds something: spreadsheets often keep formatted, empty cells far below the data.
    The sheet's declared dimension is not used to stop: writers get it wrong both ways, and
    the row numbers already bound the work.
    """
    title = f"“{sheet.title}”"
    rows: list[tuple[int, list[str]]] = []
    with workbook._archive.open(sheet._worksheet_path) as source:
        parser = WorkSheetParser(
            source,
            sheet._shared_strings,
            data_only=True,
            epoch=workbook.epoch,
            date_formats=workbook._date_formats,
            timedelta_formats=workbook._timedelta_formats,
        )
        for number, parsed in parser.parse():
            cells = [""] * MAX_COLUMNS
            width = 0
            for cell in parsed:
                text = _cell_text(cell["value"])
                if not text:
                    continue
                column = cell["column"]
                if column > MAX_COLUMNS:
                    message = MSG_TOO_MANY_COLUMNS.format(
                        sheet=title, column=column_letter(MAX_COLUMNS), limit=MAX_COLUMNS
                    )
                    return rows, Problem(TOO_MANY_COLUMNS, message, file_name, row=number)
                cells[column - 1] = text
                width = max(width, column)
            if width and number > MAX_ROWS:
                message = MSG_TOO_MANY_ROWS.format(sheet=title, limit=MAX_ROWS)
                return rows, Problem(TOO_MANY_ROWS, message, file_name, row=number)
            if (width or keep_blank_rows) and number <= MAX_ROWS:
                rows.append((number, cells[:width]))
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
        warnings.append(MSG_WRITE_CONTROL_CHARACTERS.format(cells=counted(replaced, "cell")))
    if carriage_returns:
        warnings.append(MSG_WRITE_CARRIAGE_RETURNS.format(cells=counted(carriage_returns, "cell")))
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue(), warnings
