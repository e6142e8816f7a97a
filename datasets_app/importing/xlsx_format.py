"""The .xlsx dataset format: the first sheet of a workbook, with the same columns as .csv.

`read` streams the sheet with openpyxl (`read_only=True`, `data_only=True`: cached values,
never formulas) and hands its rows to `columns.document_from_table`; `write` builds a
one-sheet workbook from a DatasetSpec. Rows are numbered as Excel shows them.
"""

from __future__ import annotations

import datetime as dt
import io
import itertools
import re
import warnings
import zipfile
from collections.abc import Iterator
from typing import IO, Any, Literal

from openpyxl import Workbook
from openpyxl.reader.excel import ExcelReader
from openpyxl.worksheet._reader import WorkSheetParser
from openpyxl.xml.constants import SHARED_STRINGS, SHEET_MAIN_NS
from openpyxl.xml.functions import iterparse

from datasets_app.importing import archive
from datasets_app.importing.columns import (
    Table,
    column_letter,
    find_header,
    format_number,
    neutralize_row,
    spreadsheet_records,
    spreadsheet_table,
    spreadsheet_warnings,
)
from datasets_app.importing.spec import (
    MAX_CRITERIA_PER_FILE,
    MAX_TASKS,
    MAX_TEXT_CHARS,
    MAX_TEXT_CHARS_PER_FILE,
    CheckOptions,
    DatasetSpec,
    Problem,
    Read,
    Rule,
    counted,
)

# What a person reads, each with its stable code for programs.
NOT_A_WORKBOOK = Rule(
    "xlsx_not_a_workbook",
    "This file cannot be opened as an Excel workbook (.xlsx). Save it from your spreadsheet "
    "as “Excel Workbook (.xlsx)” or as “CSV UTF-8”.",
)
TOO_LARGE_UNPACKED = Rule(
    "xlsx_too_large_unpacked",
    "This workbook unpacks to more than {limit} MiB, more than a dataset file needs; save "
    "just the tasks sheet, or as CSV.",
)
PART_TOO_LARGE = Rule(
    "xlsx_too_large_unpacked",
    "This workbook's {part} unpacks to more than {limit} MiB, more text than a dataset file "
    "holds; save just the tasks sheet, or as CSV.",
)
TOO_MANY_ELEMENTS = Rule(
    "xlsx_too_large_unpacked",
    "The sheet {sheet} has more than {limit:,} cells and other elements, more than a dataset "
    "sheet needs; save just the tasks, or as CSV.",
)
NO_SHEET = Rule("xlsx_no_sheet", "This workbook has no worksheet.")
EMPTY_SHEET = Rule(
    "xlsx_empty_sheet", "The sheet {sheet} is empty: it needs a header row and a row per task."
)
TOO_MANY_ROWS = Rule(
    "xlsx_too_many_rows",
    "The sheet {sheet} has more than {limit:,} rows; a dataset file holds up to 1,000 tasks.",
)
TOO_MANY_COLUMNS = Rule(
    "xlsx_too_many_columns",
    "The sheet {sheet} has a value in column {column}, past the {limit} columns a dataset "
    "sheet can have.",
)
CELL_TOO_LONG = Rule(
    "xlsx_cell_too_long",
    "A cell in this row holds {count:,} characters; the most a cell can hold is {limit:,} "
    "(Excel itself stops at 32,767).",
)
TOO_MUCH_TEXT = Rule(
    "xlsx_too_much_text",
    "The sheet {sheet} holds more than {limit:,} characters of text, the most one file can "
    "import. Split it into several files.",
)
OTHER_SHEETS = Rule(
    "xlsx_other_sheets",
    "Only the first sheet, {sheet}, was read; the workbook has {count} sheets.",
)

# Bounds on what we read, because a small .xlsx can describe a huge sheet. A file imports at
# most MAX_CRITERIA_PER_FILE criteria, one a row, and MAX_TASKS tasks (a task without
# criteria takes a row of its own), below a header row: as our export writes them, that is
# every sheet a file can import. The format has 17 columns, and 100 leaves room for columns
# of notes that are not imported.
MAX_ROWS = MAX_CRITERIA_PER_FILE + MAX_TASKS + 1
MAX_COLUMNS = 100
# A zip can expand 1,000-fold, so what openpyxl inflates is bounded twice. Before opening:
# the members' declared sizes (zipfile never inflates a member past its declared size) must
# add up to at most MAX_UNPACKED_BYTES, which bounds the time spent parsing however many
# parts a workbook has. While reading: each part openpyxl opens is counted as it inflates
# and refused past its cap, so that the shared-string table (which openpyxl keeps whole in
# memory) or a sheet of millions of cells never gets built. A file imports at most
# MAX_TEXT_CHARS_PER_FILE (50 MiB) of text; as shared or inline strings that is 50 MiB plus
# some 20 bytes of markup per cell (21,000 rows × 17 columns: 7 MiB), so 64 MiB carries any
# sheet that can be imported; the time a sheet takes is bounded by its elements (below).
MAX_UNPACKED_BYTES = 160 * 1024 * 1024
MAX_PART_BYTES = 64 * 1024 * 1024
# The parts that describe the workbook (content types, relationships, its list of sheets,
# styles, theme, properties) are KiBs in real files, a few hundred KiB for a heavily styled
# one; openpyxl builds an object per element of them, so they get far less.
MAX_OTHER_PART_BYTES = 8 * 1024 * 1024
# What reading a sheet costs is one step per XML element (a cell is two or three: <c>, its
# <v> or inline text). The largest sheet a file can import, 21,001 rows of 17 filled cells
# with inline text, has about 1.1 million; 1.5 million leaves room for formatted empty
# cells and notes, and parses within the 30 s a check may take even on a busy 2-core
# machine (`bench/bench_hostile_files.py`).
MAX_SHEET_ELEMENTS = 1_500_000

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


def read(data: bytes, file_name: str, options: CheckOptions | None = None) -> Read:
    """Read a .xlsx dataset file's first sheet's table (the reader of the importer's
    stages, `spec.Read`)."""
    header_row = options.header_row if options else None
    table, detected, problems, warnings = read_table(data, file_name, header_row=header_row)
    return Read("xlsx", detected, file_name, problems, warnings, table=None if problems else table)


# A workbook refused: no table, what it was taken for, the one problem, no warnings.
_Refused = tuple[None, str, list[Problem], list[Problem]]


def _failed(problem: Problem, detected: str = "Excel workbook") -> _Refused:
    return None, detected, [problem], []


def _unpacked_refusal(data: bytes, file_name: str) -> _Refused | None:
    """The workbook refused before openpyxl opens it: not a zip, or more unpacked than the cap."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            unpacked = sum(member.file_size for member in zf.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return _failed(NOT_A_WORKBOOK.at(file_name), "not a workbook")
    if unpacked > MAX_UNPACKED_BYTES:
        limit = MAX_UNPACKED_BYTES // (1024 * 1024)
        return _failed(TOO_LARGE_UNPACKED.at(file_name, limit=limit))
    return None


def read_table(
    data: bytes, file_name: str, *, keep_blank_rows: bool = False, header_row: int | None = None
) -> tuple[Table | None, str, list[Problem], list[Problem]]:
    """The first sheet as a Table of strings: (table, detected, problems, warnings).

    Its header is the row the person chose (`header_row`), else the first below any lines
    that are not the table, as a CSV's (`columns.find_header`). With `keep_blank_rows` the
    table keeps empty rows too (the problems download writes the sheet back row for row).
    """
    refused = _unpacked_refusal(data, file_name)
    if refused is not None:
        return refused
    try:
        workbook = _Workbook(data)
    except archive.MemberTooLarge as exc:
        return _failed(_part_too_large(exc, file_name))
    except Exception:
        # openpyxl parses untrusted XML and raises whatever its parsers raise on a damaged
        # file (KeyError, ValueError, ParseError, InvalidFileException, …); every one of
        # them means the same thing to the person uploading it.
        return _failed(NOT_A_WORKBOOK.at(file_name), "not a workbook")
    with workbook:
        if not workbook.sheets:
            return _failed(NO_SHEET.at(file_name))
        title, sheet_path = workbook.sheets[0]
        detected = f"Excel workbook, sheet “{title}”"
        warnings = []
        if len(workbook.sheets) > 1:
            warnings.append(
                OTHER_SHEETS.at(file_name, sheet=f"“{title}”", count=len(workbook.sheets))
            )
        try:
            rows, problem = _rows(
                workbook, title, sheet_path, file_name, keep_blank_rows=keep_blank_rows
            )
        except archive.MemberTooLarge as exc:
            problem = _part_too_large(exc, file_name)
            return None, detected, [problem], warnings
        except Exception:
            # The sheet XML is parsed as it is read, so damage inside it surfaces here.
            return _failed(NOT_A_WORKBOOK.at(file_name), "not a workbook")
    if problem is not None:
        return None, detected, [problem], warnings
    table = _table(
        rows,
        file_name,
        title,
        header_row=header_row,
        keep_blank_rows=keep_blank_rows,
        warnings=warnings,
    )
    if isinstance(table, Problem):
        return None, detected, [table], warnings
    return table, detected, [], warnings


def _table(
    rows: list[tuple[int, list[str]]],
    file_name: str,
    title: str,
    *,
    header_row: int | None,
    keep_blank_rows: bool,
    warnings: list[Problem],
) -> Table | Problem:
    """The sheet's rows under their header (`columns.find_header`), or the problem."""
    found = find_header(rows, file_name, header_row=header_row, warnings=warnings)
    if found is None:
        return EMPTY_SHEET.at(file_name, sheet=f"“{title}”")
    if isinstance(found, Problem):
        return found
    number, header, body = found
    if keep_blank_rows:
        body = [(n, cells) for n, cells in rows if n > number]
    return Table(header=list(header), header_row=number, rows=body)


class _CountedArchive(zipfile.ZipFile):
    """A workbook's zip that hands openpyxl every part through a stream counting the bytes
    it inflates, which raises `archive.MemberTooLarge` past the part's cap: the refusal
    comes while reading, in bounded memory, whatever the part's declared size says.

    The parts that carry cells (the sheet we read, the shared strings) may have
    MAX_PART_BYTES; every other part openpyxl reads (content types, workbook, styles, ...)
    MAX_OTHER_PART_BYTES, since openpyxl builds an object per element of those.
    """

    data_parts: frozenset[str] = frozenset()

    def open(
        self,
        name: str | zipfile.ZipInfo,
        mode: Literal["r", "w"] = "r",
        pwd: bytes | None = None,
        **kwargs: Any,
    ) -> IO[bytes]:
        member = super().open(name, mode, pwd, **kwargs)
        if mode != "r":
            return member
        label = name.filename if isinstance(name, zipfile.ZipInfo) else name
        cap = MAX_PART_BYTES if label in self.data_parts else MAX_OTHER_PART_BYTES
        counted = archive.VerifiedMember(member, label, max_bytes=cap)
        return io.BufferedReader(counted, archive.CHUNK_BYTES)


class _Reader(ExcelReader):
    """openpyxl's reader, read-only with cached values (never formulas), that lists the
    sheets without opening them: openpyxl's read-only sheet parses its sheet up to the
    `<dimension>` element on creation, which is the whole sheet when it has none."""

    sheets: list[tuple[str, str]]

    def read_strings(self) -> None:
        found = self.package.find(SHARED_STRINGS)  # type: ignore[no-untyped-call]
        if found is not None and isinstance(self.archive, _CountedArchive):
            self.archive.data_parts = frozenset({found.PartName[1:]})
        super().read_strings()

    def read_worksheets(self) -> None:
        self.sheets = [
            (sheet.name, rel.target)
            for sheet, rel in self.parser.find_sheets()
            if rel.target in self.valid_files and "chartsheet" not in rel.Type
        ]


class _Workbook:
    """The parts of a workbook `read_table` needs: its sheets (title, part) in order, the
    shared strings and what turns numbers into dates. Use with `with` (closes the zip)."""

    def __init__(self, data: bytes) -> None:
        reader = _Reader(io.BytesIO(data), read_only=True, data_only=True)
        reader.archive.close()
        self.archive = reader.archive = _CountedArchive(io.BytesIO(data))
        try:
            with warnings.catch_warnings():
                # Names defined on sheets it was not asked to read.
                warnings.simplefilter("ignore")
                reader.read()
        except BaseException:
            self.archive.close()
            raise
        self.sheets = reader.sheets
        self.shared_strings = reader.shared_strings
        self.book = reader.wb

    def open_sheet(self, path: str) -> IO[bytes]:
        self.archive.data_parts = self.archive.data_parts | {path}
        return self.archive.open(path)

    def __enter__(self) -> _Workbook:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.archive.close()


def _part_too_large(exc: archive.MemberTooLarge, file_name: str) -> Problem:
    """The problem when a part of the workbook inflates past its cap."""
    name = str(exc).split(" ", 1)[0]
    if "sharedstrings" in name.lower():
        part, limit = "text (its shared strings)", MAX_PART_BYTES
    elif "worksheets/" in name:
        part, limit = "sheet", MAX_PART_BYTES
    else:
        part, limit = f"part {name}", MAX_OTHER_PART_BYTES
    return PART_TOO_LARGE.at(file_name, part=part, limit=limit >> 20)


def _rows(
    workbook: _Workbook, title: str, sheet_path: str, file_name: str, *, keep_blank_rows: bool
) -> tuple[list[tuple[int, list[str]]], Problem | None]:
    """The sheet's rows as (row number, cells) up to MAX_ROWS, or the problem that stops it.

    Rows are taken by the number the sheet gives them, from openpyxl's sheet parser rather
    than `iter_rows`: `iter_rows` makes up every row missing between two rows of the XML, so
    one empty cell numbered 1,000,000,000 would have it yield a billion empty rows. Here the
    work is one step per element the file really holds, at most MAX_SHEET_ELEMENTS in
    MAX_PART_BYTES. A row past MAX_ROWS (or a value past MAX_COLUMNS) is a problem only when
    it holds something: spreadsheets often keep formatted, empty cells far below the data.
    The sheet's declared dimension is not used to stop: writers get it wrong both ways, and
    the row numbers already bound the work.
    """
    shown = f"“{title}”"
    rows: list[tuple[int, list[str]]] = []
    book = workbook.book
    with workbook.open_sheet(sheet_path) as source:
        parser = WorkSheetParser(
            source,
            workbook.shared_strings,
            data_only=True,
            epoch=book.epoch,
            # openpyxl's own reader passes these private sets, which its stubs leave out.
            date_formats=book._date_formats,  # type: ignore[attr-defined]
            timedelta_formats=book._timedelta_formats,  # type: ignore[attr-defined]
        )
        # A shared string is one object however many cells use it, but everything after
        # the reader copies it per cell: a cell past the cap on text, or a sheet past the
        # cap on a file's text, stops here, before a million references become copies.
        text_in_all = 0
        for number, parsed in _parsed_rows(source, parser):
            if number is None:
                return rows, TOO_MANY_ELEMENTS.at(file_name, sheet=shown, limit=MAX_SHEET_ELEMENTS)
            cells = [""] * MAX_COLUMNS
            width = 0
            for cell in parsed:
                text = _cell_text(cell["value"])
                if not text:
                    continue
                if len(text) > MAX_TEXT_CHARS:
                    return rows, CELL_TOO_LONG.at(
                        file_name, row=number, count=len(text), limit=MAX_TEXT_CHARS
                    )
                text_in_all += len(text)
                if text_in_all > MAX_TEXT_CHARS_PER_FILE:
                    return rows, TOO_MUCH_TEXT.at(
                        file_name, row=number, sheet=shown, limit=MAX_TEXT_CHARS_PER_FILE
                    )
                column = cell["column"]
                if column > MAX_COLUMNS:
                    return rows, TOO_MANY_COLUMNS.at(
                        file_name,
                        row=number,
                        sheet=shown,
                        column=column_letter(MAX_COLUMNS),
                        limit=MAX_COLUMNS,
                    )
                cells[column - 1] = text
                width = max(width, column)
            if width and number > MAX_ROWS:
                return rows, TOO_MANY_ROWS.at(file_name, row=number, sheet=shown, limit=MAX_ROWS)
            if (width or keep_blank_rows) and number <= MAX_ROWS:
                rows.append((number, cells[:width]))
    return rows, None


_ROW_TAG = f"{{{SHEET_MAIN_NS}}}row"
_DATA_TAG = f"{{{SHEET_MAIN_NS}}}sheetData"


def _parsed_rows(
    source: IO[bytes], parser: WorkSheetParser
) -> Iterator[tuple[int | None, list[Any]]]:
    """(row number, openpyxl's cells) for each row of the sheet's XML, in order; a last
    (None, []) once the XML has held MAX_SHEET_ELEMENTS elements.

    openpyxl reads each row (`parse_row`: shared strings, dates, inline text), but the loop
    is ours: it stops at the end of the sheet's data (openpyxl goes on through whatever
    follows, building an object for each), frees each row and everything outside the data
    as soon as it ends, and counts the elements, which is what the time goes by.
    """
    depth = 0
    elements = 0
    root = data = None
    for event, element in iterparse(source, events=("start", "end")):
        if event == "start":
            depth += 1
            elements += 1
            if elements > MAX_SHEET_ELEMENTS:
                yield None, []
                return
            if root is None:
                root = element
            elif depth == 2 and element.tag == _DATA_TAG:
                data = element
            continue
        depth -= 1
        if depth == 2 and element.tag == _ROW_TAG and data is not None:
            yield parser.parse_row(element)
            data.clear()
        elif element is data:
            return
        elif depth == 1 and root is not None:
            root.clear()  # a part of the sheet before its data: views, columns, ...


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


def cells_xml_changes(spec: DatasetSpec) -> tuple[int, int]:
    """How many of the workbook's cells hold characters XML cannot store (written as
    U+FFFD), and how many hold carriage returns (written as line feeds)."""
    replaced = carriage_returns = 0
    for record in spreadsheet_records(spec):
        for value in record.values():
            replaced += _NOT_IN_XML.search(value) is not None
            carriage_returns += "\r" in value
    return replaced, carriage_returns


def export_warnings(
    spec: DatasetSpec, *, with_evidence: int | None = None, cells: tuple[int, int] | None = None
) -> list[str]:
    """What an .xlsx cannot carry of the dataset, worked out without writing the workbook:
    what a spreadsheet cannot hold, and the cells whose characters XML changes
    (`cells_xml_changes`, unless the caller counted them)."""
    warnings = spreadsheet_warnings(spec, with_evidence=with_evidence)
    replaced, carriage_returns = cells_xml_changes(spec) if cells is None else cells
    if replaced:
        warnings.append(MSG_WRITE_CONTROL_CHARACTERS.format(cells=counted(replaced, "cell")))
    if carriage_returns:
        warnings.append(MSG_WRITE_CARRIAGE_RETURNS.format(cells=counted(carriage_returns, "cell")))
    return warnings


def write(spec: DatasetSpec) -> tuple[bytes, list[str]]:
    """The dataset as a one-sheet .xlsx: (bytes, warnings about what the sheet cannot carry).

    Every cell is written as text, never a formula, and with the same `'` before a formula
    character as the CSV writer (see `columns.neutralize_formula`), which `read` takes off.
    """
    buffer = io.BytesIO()
    write_to(spec, buffer)
    return buffer.getvalue(), export_warnings(spec)


def write_to(spec: DatasetSpec, out: IO[bytes]) -> None:
    """`write`'s workbook into `out`, through openpyxl's write-only mode, which keeps the
    sheet's rows in a temporary file as they are appended, from one pass over the tasks
    (`columns.spreadsheet_table`), which never holds them whole."""
    header, rows = spreadsheet_table(spec)
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("Tasks")
    for values in itertools.chain([header], rows):
        # openpyxl writes a string as text unless it starts with "=" (a formula), which no
        # cell does once neutralized: "=1+1" is "'=1+1" by then.
        sheet.append(neutralize_row([_CR.sub("\n", _NOT_IN_XML.sub("\ufffd", v)) for v in values]))
    workbook.save(out)
