"""The "download the problems" file: a checked file's problems as a CSV to fix them in.

For a .csv or .xlsx upload it is the person's own sheet, row for row (so row 7 is still row
7), with `problem_code` and `problem` columns added; problems that belong to no data row (a
missing column, a header problem, a whole-file limit) go on one extra row at the end, after
every row of the file, where they shift nothing. For .json, .jsonl and .zip uploads, or
when the upload itself is gone, it is one row per problem: file, row, line, field, code,
problem.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from datasets_app.importing import csv_format, xlsx_format
from datasets_app.importing.columns import unneutralize_formula
from datasets_app.importing.spec import CheckOptions, CheckResult, Problem

PROBLEM_COLUMN = "problem"
# Each problem's stable code, for a program or a person searching the help pages.
CODE_COLUMN = "problem_code"
LIST_HEADER = ["file", "row", "line", "field", "code", "problem"]
# Prefixed to problems on the extra last row, which have no row of their own.
WHOLE_FILE = "Whole file: "
HEADER_ROW = "Header row {row}: "


def problems_csv(
    result: CheckResult, data: bytes | None, options: CheckOptions | None = None
) -> bytes:
    """The problems of `result` as UTF-8-with-BOM CSV (formulas neutralised) to download;
    `options`: how the person said to read the file (a CSV's encoding, the header row)."""
    rows = None
    if data is not None and result.format in ("csv", "xlsx"):
        rows = _sheet_rows(result.format, data, result.file_name, options or CheckOptions())
    if rows is None:
        return problem_list(result.problems)
    return _annotated_sheet(rows, result.problems)


def _sheet_rows(
    file_format: str, data: bytes, file_name: str, options: CheckOptions
) -> list[list[str]] | None:
    """Every row of the upload as decoded, index + 1 being its row number; None if unreadable."""
    if file_format == "csv":
        decoded = csv_format.decode(data, file_name, encoding=options.encoding)
        if decoded.table is None:
            return None
        return [[unneutralize_formula(cell) for cell in record] for record in decoded.records]
    table, _detected, _problems, _warnings = xlsx_format.read_table(
        data, file_name, keep_blank_rows=True, header_row=options.header_row
    )
    if table is None:
        return None
    rows: list[Sequence[str]] = [[] for _ in range(table.header_row - 1)]
    rows.append(table.header)
    for number, cells in table.rows:
        rows.extend([] for _ in range(number - len(rows) - 1))
        rows.append(cells)
    # Cells as typed: the CSV writer below adds the formula `'` back where it belongs.
    return [[unneutralize_formula(cell) for cell in cells] for cells in rows]


def _annotated_sheet(rows: list[list[str]], problems: tuple[Problem, ...]) -> bytes:
    """The sheet row for row, each row's problems in two added columns, and those on no
    data row on one extra row at the end."""
    header_number = _header_number(rows)
    columns = {cell.strip() for cell in rows[header_number - 1] if cell.strip()}
    by_row, elsewhere = _by_row(problems, header_number, len(rows))
    width = max(len(cells) for cells in rows)
    out: list[list[str]] = []
    for number, cells in enumerate(rows, 1):
        padded = cells + [""] * (width - len(cells))
        if number == header_number:
            out.append([*padded, CODE_COLUMN, PROBLEM_COLUMN])
        else:
            found = by_row.get(number, [])
            out.append(
                [*padded, *_annotation(found, [_message(problem, columns) for problem in found])]
            )
    if elsewhere:
        messages = [_elsewhere_message(problem, header_number, columns) for problem in elsewhere]
        out.append([""] * width + _annotation(elsewhere, messages))
    return csv_format.encode_rows(out[0], out[1:])


def _header_number(rows: list[list[str]]) -> int:
    """The number of the sheet's header row: its first row that is not blank (1 if none)."""
    return next(
        (number for number, cells in enumerate(rows, 1) if any(c.strip() for c in cells)), 1
    )


def _by_row(
    problems: tuple[Problem, ...], header_number: int, row_count: int
) -> tuple[dict[int, list[Problem]], list[Problem]]:
    """The problems on each data row, and those on no data row (in the order given)."""
    by_row: dict[int, list[Problem]] = defaultdict(list)
    elsewhere: list[Problem] = []
    for problem in problems:
        if problem.row is not None and header_number < problem.row <= row_count:
            by_row[problem.row].append(problem)
        else:
            elsewhere.append(problem)
    return by_row, elsewhere


def _annotation(problems: list[Problem], messages: list[str]) -> list[str]:
    """The two cells added to a row: its problems' codes, and their messages."""
    return ["; ".join(problem.code for problem in problems), "; ".join(messages)]


def _elsewhere_message(problem: Problem, header_number: int, columns: set[str]) -> str:
    """A problem on the extra last row, saying where it was (the header row, or a place)."""
    if problem.row == header_number:
        return HEADER_ROW.format(row=problem.row) + _message(problem, columns)
    return WHOLE_FILE + _where(problem) + _message(problem, columns)


def problem_list(problems: Iterable[Problem]) -> bytes:
    """The problems as a CSV of one row each (file, row, line, field, code, problem)."""
    rows = [
        [
            problem.file,
            "" if problem.row is None else str(problem.row),
            "" if problem.line is None else str(problem.line),
            problem.field or "",
            problem.code,
            problem.message,
        ]
        for problem in problems
    ]
    return csv_format.encode_rows(LIST_HEADER, rows)


def _message(problem: Problem, columns: set[str]) -> str:
    # Name the column when the problem is about one cell of the row.
    if problem.field in columns:
        return f"{problem.message} ({problem.field})"
    return problem.message


def _where(problem: Problem) -> str:
    # A problem past the last row (or with a line but no row) still says where it was.
    if problem.row is not None:
        return f"row {problem.row}: "
    if problem.line is not None:
        return f"line {problem.line}: "
    return ""
