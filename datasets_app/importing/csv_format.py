"""The .csv dataset format: bytes as spreadsheets really write them → the canonical document.

`read` decodes and picks the delimiter as every reader does (`contextgrid.textfile`: a byte
order mark, else UTF-8, else Windows-1252; the delimiter from the header), splits records
and hands the rows to `columns.document_from_table`; `write` turns a DatasetSpec back into
a CSV Excel opens correctly. The columns and their spellings are in
`columns.py` and on the help page docs/csv-columns.md.

Rows are numbered as a spreadsheet shows them: the header is row 1 and each record is one
row, even when a quoted cell spans several lines.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import IO

from contextgrid import textfile
from datasets_app.importing import encodings
from datasets_app.importing.columns import (
    NumberedRows,
    Row,
    Table,
    find_header,
    neutralize_row,
    preamble_rows,
    spreadsheet_table,
    spreadsheet_warnings,
)
from datasets_app.importing.spec import (
    MAX_TEXT_CHARS,
    CheckOptions,
    DatasetSpec,
    Problem,
    Read,
    Rule,
)

# A cell holds up to what a text field may (MAX_TEXT_CHARS), as in every other format:
# Python's csv module stops at 131,072 characters by default, so a dataset whose prompts the
# .json form imports would not come back from its own .csv export. The limit is the csv
# module's, for the whole process; every reader here wants the same one.
csv.field_size_limit(MAX_TEXT_CHARS)

# What a person reads, each with its stable code for programs.
NOT_TEXT = Rule(
    "csv_not_text",
    "This file is not UTF-8 text, and byte {byte} on line {line_number} is not Windows-1252 "
    "either. Save it as “CSV UTF-8”.",
)
NOT_IN_ENCODING = Rule(
    "csv_not_in_encoding",
    "This file is not {encoding} text: byte {byte} on line {line_number} is not. Choose "
    "another encoding under Read options, or save the file as “CSV UTF-8”.",
)
ENCODING_DETECTED = Rule(
    "csv_encoding_detected",
    "This file is not UTF-8, so it was read as {encoding}, the encoding its text fits best: "
    "“{sample}”. If that text looks wrong, choose the file's encoding under Read options.",
)
ENCODING_UNSURE = Rule(
    "csv_encoding_unsure",
    "This file is not UTF-8, and its text reads equally well in {count} encodings: {readings}. "
    "Choose the one whose text reads right under Read options, or save the file as "
    "“CSV UTF-8”.",
)
NUL_BYTE = Rule(
    "csv_nul_byte",
    "This file contains a NUL byte (line {line_number}): it is binary, or text saved in an "
    "encoding without a byte-order mark (such as UTF-16). Save it as “CSV UTF-8”.",
)
LOOKS_LIKE_XLSX = Rule(
    "csv_looks_like_xlsx",
    "This file is an Excel workbook, not CSV text. Rename it to .xlsx, or save it as “CSV UTF-8”.",
)
FIELD_TOO_LARGE = Rule(
    "csv_field_too_large",
    "A cell in this row is longer than {limit:,} characters, the most a CSV cell can hold here "
    "(Excel's own limit is 32,767).",
)
UNREADABLE = Rule("csv_unreadable", "This row cannot be read as CSV: {error}.")
EMPTY_FILE = Rule("csv_empty", "This file is empty: it needs a header row and a row per task.")

_ZIP_MAGIC = b"PK\x03\x04"


@dataclass
class DecodedCsv:
    """A CSV file as text and records, with what was detected about it."""

    table: Table | None
    detected: str
    problems: list[Problem]
    # Every record, blank ones too, so that index + 1 is the row a spreadsheet shows.
    records: list[tuple[str, ...]]
    # What the person should know about how it was read (the code page it was read in).
    warnings: list[Problem] = field(default_factory=list)


def read(data: bytes, file_name: str, options: CheckOptions | None = None) -> Read:
    """Read a .csv dataset file's table (the reader of the importer's stages, `spec.Read`;
    see `columns.py` for what its columns mean)."""
    decoded = decode(
        data,
        file_name,
        encoding=options.encoding if options else None,
        header_row=options.header_row if options else None,
    )
    table = decoded.table if not decoded.problems else None
    return Read(
        "csv",
        decoded.detected,
        file_name,
        list(decoded.problems),
        list(decoded.warnings),
        table=table,
    )


def looks_like_utf16(data: bytes) -> bool:
    """Whether NUL bytes are UTF-16 text without its byte-order mark (one byte in two),
    rather than a few NULs in a column of binary data."""
    head = data[:8192]
    return head.count(b"\x00") * 4 >= len(head)


def decode(
    data: bytes, file_name: str, *, encoding: str | None = None, header_row: int | None = None
) -> DecodedCsv:
    """Bytes → records and the header table; problems instead of exceptions. `encoding`:
    the person's choice (a codec of `encodings.CHOICES`), else the file's byte order mark,
    UTF-8, or the legacy code page its text fits best (`encodings.read_legacy`).
    `header_row`: the row of column names as the person said it, else the first row (below
    any lines that are not the table, `_preamble_rows`)."""

    def failed(problem: Problem, detected: str = "CSV") -> DecodedCsv:
        return DecodedCsv(None, detected, [problem], [])

    if data.startswith(_ZIP_MAGIC):
        return failed(LOOKS_LIKE_XLSX.at(file_name))
    text, label, warnings, problem = decode_text(data, file_name, encoding)
    if text is None:
        assert problem is not None
        return failed(problem)
    nul = text.find("\x00")
    if nul != -1 and looks_like_utf16(data):
        # UTF-16 saved without its byte-order mark: every other byte is NUL.
        line = text.count("\n", 0, nul) + 1
        return failed(NUL_BYTE.at(file_name, line=line, line_number=line), f"CSV, {label}")

    delimiter = textfile.pick_delimiter(text)
    detected = ", ".join(
        part
        for part in (
            "CSV",
            label,
            "tab-delimited" if delimiter == "\t" else f"'{delimiter}'-delimited",
            _line_ending(text),
        )
        if part
    )
    # Each record a tuple: a tuple of strings is one object the garbage collector stops
    # following after its first look, where a list would be followed for the whole check.
    records: list[tuple[str, ...]] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        # extend keeps the records read before an error, which numbers the bad row.
        records.extend(map(tuple, reader))
    except csv.Error as exc:
        row = len(records) + 1
        if "field larger than field limit" in str(exc):
            problem = FIELD_TOO_LARGE.at(file_name, row=row, limit=csv.field_size_limit())
        else:
            problem = UNREADABLE.at(file_name, row=row, error=exc)
        return DecodedCsv(None, detected, [problem], records)

    # Wholly blank records are skipped but keep their number. (Cells keep their formula
    # `'`: `columns` takes it off the cells it reads.) Most files start with their header
    # and have no blank record: their rows are numbered as they are read.
    if header_row is None and _plain(records):
        found: tuple[int, Sequence[str], Sequence[Row]] | Problem | None
        found = 1, records[0], NumberedRows(records[1:], 2)
    else:
        found = find_header(
            NumberedRows(records, 1), file_name, header_row=header_row, warnings=warnings
        )
    if found is None:
        return DecodedCsv(None, detected, [EMPTY_FILE.at(file_name)], records)
    if isinstance(found, Problem):
        return DecodedCsv(None, detected, [found], records)
    number, header, rows = found
    table = Table(header=list(header), header_row=number, rows=rows, has_nul=nul != -1)
    return DecodedCsv(table, detected, [], records, warnings)


def _plain(records: list[tuple[str, ...]]) -> bool:
    """Whether the file is its header and rows, nothing else: every record starts with a
    value (as a task_id column makes it), so none is blank, and none is above the table."""
    return (
        bool(records)
        and all(records)
        and all(map(str.strip, map(itemgetter(0), records)))
        and not preamble_rows(records)
    )


def decode_text(
    data: bytes, file_name: str, chosen: str | None
) -> tuple[str | None, str, list[Problem], Problem | None]:
    """A text table's text, the encoding it was read in and the warnings that go with it;
    or the problem that it cannot be read. `chosen`: as `decode`'s `encoding`."""
    decoded = textfile.decode(data)
    # A byte order mark says what the file is, whatever was chosen.
    if decoded.bom or (chosen is None and decoded.text is not None):
        if decoded.text is None:
            assert decoded.bad_offset is not None
            return None, "", [], _bad_byte(NOT_TEXT, data, decoded.bad_offset, file_name)
        return decoded.text, decoded.label, [], None
    # Not UTF-8 (or read as the person says): most likely Excel's "CSV" on Windows, which
    # writes the machine's code page.
    reading = encodings.read_chosen(data, chosen) if chosen else encodings.read_legacy(data)
    if not reading.sure:
        readings = "; ".join(
            f"as {candidate.label}, “{candidate.sample}”" for candidate in reading.candidates
        )
        count = len(reading.candidates)
        return None, "", [], ENCODING_UNSURE.at(file_name, count=count, readings=readings)
    if reading.text is None:
        assert reading.bad_offset is not None
        rule = NOT_IN_ENCODING if chosen else NOT_TEXT
        return None, "", [], _bad_byte(rule, data, reading.bad_offset, file_name, reading.label)
    warnings = []
    if not chosen:
        shown = reading.sample
        warnings.append(ENCODING_DETECTED.at(file_name, encoding=reading.label, sample=shown))
    return reading.text, reading.name, warnings, None


def _bad_byte(rule: Rule, data: bytes, offset: int, file_name: str, encoding: str = "") -> Problem:
    line = data.count(b"\n", 0, offset) + 1
    byte = f"0x{data[offset]:02X}"
    return rule.at(file_name, line=line, line_number=line, byte=byte, encoding=encoding)


def write(spec: DatasetSpec) -> tuple[bytes, list[str]]:
    """The dataset as a .csv: (bytes, warnings about what CSV cannot carry).

    UTF-8 with a BOM, because Excel reads BOM-less CSV as the machine's ANSI code page and
    mangles every non-ASCII character; CRLF record ends, as RFC 4180 says. A cell a
    spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a leading
    `'`, which `read` takes back off.
    """
    out = io.BytesIO()
    write_to(spec, out)
    return out.getvalue(), spreadsheet_warnings(spec)


def write_to(spec: DatasetSpec, out: IO[bytes]) -> None:
    """`write`'s bytes into `out`, a row at a time, from one pass over the tasks
    (`columns.spreadsheet_table`: `spec.tasks` may be read from the database as it is
    written, and is never held whole)."""
    encode_rows_to(*spreadsheet_table(spec), out)


def encode_rows(header: list[str], rows: Iterable[list[str]]) -> bytes:
    """Rows as UTF-8-with-BOM, CRLF CSV, every cell formula-neutralised."""
    out = io.BytesIO()
    encode_rows_to(header, rows, out)
    return out.getvalue()


# Rows are written to the output this many at a time.
_ROWS_PER_WRITE = 1_000


def encode_rows_to(header: list[str], rows: Iterable[list[str]], out: IO[bytes]) -> None:
    """`encode_rows` into `out`, a few rows at a time."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(neutralize_row(header))
    out.write(codecs.BOM_UTF8)
    for number, row in enumerate(rows, start=1):
        writer.writerow(neutralize_row(row))
        if number % _ROWS_PER_WRITE == 0:
            out.write(buffer.getvalue().encode("utf-8"))
            buffer.seek(0)
            buffer.truncate()
    out.write(buffer.getvalue().encode("utf-8"))


def _line_ending(text: str) -> str:
    """How the header line ends, when not with a bare LF: "CRLF" or "CR"."""
    end = textfile.header_span(text)[1]
    if text.startswith("\r\n", end):
        return "CRLF"
    return "CR" if text.startswith("\r", end) else ""
