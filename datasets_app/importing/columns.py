"""The columns of a dataset spreadsheet (.csv or .xlsx): which header names mean what.

Both spreadsheet formats share this table, the header matching and the rows → canonical
document step (`document_from_rows`), so a .csv and an .xlsx with the same cells import the
same way. docs/csv-columns.md is the page people read; keep the two in step.

The layout, in short:

* One row per task (a prompt and its expected answer), or one row per criterion: rows that
  repeat a task's `task_id` one after another (or leave both `task_id` and `prompt` blank
  after a task's first row) add criteria to that task. Without a `task_id` column, rows that
  repeat the previous row's prompt and carry a criterion join that task too.
* A criterion row before the first task, with no `task_id` and no `prompt`, is a criterion
  for every task (the .json format's top-level `criteria`). Position, not a `scope` column,
  says so: a sheet reads top to bottom like the .json file, and the writer puts these rows
  first, so nothing extra has to be typed.
* A task with no `task_id` gets `task-1`, `task-2`, … (numbered in file order, skipping ids
  the file uses); a criterion with no `criterion_id` gets `c1`, `c2`, … the same way. A task
  with no name is named after the first line of its prompt.
"""

from __future__ import annotations

import json
import marshal
import math
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import count, islice
from operator import itemgetter, methodcaller
from typing import Any, overload

from datasets_app.importing import aliases
from datasets_app.importing.document import schema_verifier
from datasets_app.importing.spec import (
    CriterionSpec,
    DatasetSpec,
    DocPath,
    FileSpec,
    Locate,
    Problem,
    Rule,
    Verifier,
    counted,
    field_path,
    name_from_prompt,
    shorten,
)

# What a person reads about a sheet's shape, each with its stable code for programs.
NO_PROMPT_COLUMN = Rule(
    "csv_no_prompt_column",
    "This file has no prompt column. Found: {found}. Expected one of: {expected}.",
)
NO_ANSWER_COLUMN = Rule(
    "csv_no_answer_column",
    "This file has no expected-answer column. Found: {found}. Expected one of: {expected} "
    "(or a criterion column: {criterion}).",
)
DUPLICATE_COLUMN = Rule(
    "csv_duplicate_column",
    "Columns {columns} all mean {meaning}; keep one of them.",
)
EXTRA_CELLS = Rule(
    "csv_extra_cells",
    "This row has {cells} cells but the header has {header}: a quote or a delimiter is "
    "probably out of place.",
)
NAMELESS_COLUMN_VALUE = Rule(
    "csv_nameless_column_value",
    "This row has a value ({value}) in column {column}, which has no header: a quote or a "
    "delimiter is probably out of place.",
)
NO_ROWS = Rule("csv_no_rows", "This file has a header row but no tasks below it.")
ROW_WITHOUT_TASK = Rule(
    "csv_row_without_task",
    "This row belongs to no task: give it a prompt (or a task_id), or, for a criterion for "
    "every task, leave only the criterion columns filled.",
)
CONFLICTING_TASK_FIELD = Rule(
    "csv_conflicting_task_field",
    "This row gives task {task} a different {column} from row {first_row}; give it once, on "
    "the task's first row.",
)
REPEATED_TASK_ROW = Rule(
    "csv_repeated_task_row",
    "This row repeats task {task} from row {first_row} without adding a criterion; task ids "
    "must be unique.",
)
IGNORED_COLUMNS = Rule("csv_ignored_columns", "These columns are not imported: {columns}.")


@dataclass(frozen=True)
class Column:
    """One field a spreadsheet column can fill, and the header spellings that mean it."""

    key: str
    spellings: tuple[str, ...]
    # Text fields keep the cell exactly (multi-line answers, leading spaces, NBSP); the rest
    # (ids, kinds, numbers, file lists) are stripped.
    text: bool = False


# The first spelling of each is the one the writer uses and the help page leads with. The
# fields every format shares take their spellings from the one list, `aliases.FIELDS`.
COLUMNS: tuple[Column, ...] = (
    Column("task_id", aliases.spellings_of("id")),
    Column("name", aliases.spellings_of("name"), text=True),
    Column("prompt", aliases.spellings_of("prompt"), text=True),
    Column("expected", aliases.spellings_of("expected"), text=True),
    Column("expected_verifier", ("expected_verifier",)),
    Column("expected_verifier_output_type", ("expected_verifier_output_type",)),
    Column("expected_verifier_instructions", ("expected_verifier_instructions",), text=True),
    Column("expected_verifier_code", ("expected_verifier_code",), text=True),
    Column("input_files", ("input_files",)),
    Column("expected_files", ("expected_files",)),
    Column("criterion_id", ("criterion_id",)),
    Column("criterion", aliases.spellings_of("criterion"), text=True),
    Column("weight", aliases.spellings_of("weight")),
    Column("verifier", ("verifier", "verifier_kind")),
    Column("verifier_output_type", ("verifier_output_type",)),
    Column("verifier_instructions", ("verifier_instructions",), text=True),
    Column("verifier_code", ("verifier_code",), text=True),
)
COLUMNS_BY_KEY: dict[str, Column] = {column.key: column for column in COLUMNS}

TASK_KEYS = (
    "name",
    "prompt",
    "expected",
    "expected_verifier",
    "expected_verifier_output_type",
    "expected_verifier_instructions",
    "expected_verifier_code",
    "input_files",
    "expected_files",
)
CRITERION_KEYS = (
    "criterion_id",
    "criterion",
    "weight",
    "verifier",
    "verifier_output_type",
    "verifier_instructions",
    "verifier_code",
)

# Formula neutralisation (OWASP "CSV injection"): the writers put a `'` before a cell that a
# spreadsheet would run as a formula, and the readers take exactly one `'` back off. A cell
# already starting with `'` before such a character gets one more, so the round trip is exact.
# The .xlsx writer and reader do the same although an .xlsx text cell is never calculated:
# a CSV export opened in Excel and saved as .xlsx keeps the `'`, and must read back the same.
# Spreadsheets also run a formula after leading blanks (a space, a line break) and in its
# full-width spelling (＝＋－＠, which East Asian input methods type), so those count too.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_SIGNS = ("=", "+", "-", "@", "＝", "＋", "－", "＠")


def normalize_header(name: str) -> str:
    """`Expected Completion`, `expected_completion` and `expected-completion` all match."""
    return re.sub(r"[\s_\-]+", "", name).lower()


_FIELD_BY_SPELLING: dict[str, str] = {
    normalize_header(spelling): column.key for column in COLUMNS for spelling in column.spellings
}


# aliases' field keys as this module's column keys.
_COLUMN_KEY = {"id": "task_id"}


# A task's metadata in a sheet: a `metadata.<key>` column each, and these plain names,
# which other tools' sheets and records have and the page's format does not (read as
# metadata keys). One list for every container: a `tags` column keeps what a `tags` key does.
METADATA_PREFIX = "metadata."
METADATA_COLUMNS = ("category", "difficulty", "source", "split", "context", "tags")


def metadata_key(name: str) -> str | None:
    """The metadata key a header cell names (`metadata.level` → level, `Category` →
    category), or None."""
    stripped = name.strip()
    if stripped[: len(METADATA_PREFIX)].lower() == METADATA_PREFIX:
        return stripped[len(METADATA_PREFIX) :].strip() or None
    normalized = normalize_header(stripped)
    return normalized if normalized in METADATA_COLUMNS else None


_NOT_JSON = object()


def _json_in_cell(cell: str) -> Any:
    """The JSON value a cell spells (`3`, `true`, `["a"]`, `"3"`), or _NOT_JSON for text."""
    try:
        value = json.loads(cell, parse_constant=_refuse_constant)
    except ValueError:
        return _NOT_JSON
    if isinstance(value, float) and not math.isfinite(value):
        return _NOT_JSON  # 1e999: text, as NaN and Infinity are
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def metadata_value(cell: str) -> Any:
    """A metadata cell as its value: JSON when it spells JSON (a number, true, a list, a
    quoted string), else the text as it is. `metadata_cell` writes the one it reads back."""
    value = _json_in_cell(cell)
    return cell if value is _NOT_JSON else value


def metadata_cell(value: Any) -> str:
    """A metadata value as its cell: text as it is when it reads back as itself, anything
    else (a number, a list, text that spells JSON or is blank) as JSON."""
    if isinstance(value, str) and value.strip() and _json_in_cell(value) is _NOT_JSON:
        return value
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def field_for_header(name: str) -> str | None:
    """The field a header cell names, or None for a column this format does not read.

    A plural (`Questions`) matches its singular, as `aliases.field_for` says.
    """
    found = _FIELD_BY_SPELLING.get(normalize_header(name))
    if found is None:
        shared = aliases.field_for(name)
        found = _COLUMN_KEY.get(shared, shared) if shared else None
    return found


def _runs_as_formula(value: str) -> bool:
    """Whether a spreadsheet could take the cell (its `'`s aside) for a formula."""
    text = value.lstrip("'")
    return text.startswith(FORMULA_STARTS) or text.lstrip().startswith(_FORMULA_SIGNS)


def neutralize_formula(value: str) -> str:
    """The cell as the CSV writer stores it: `=1+1` → `'=1+1`, so Excel shows text."""
    if _runs_as_formula(value):
        return "'" + value
    return value


# A row's cells, each after a NUL, are searched once for a cell that could start a formula
# (as `_runs_as_formula` says, or more: a NUL inside a cell can only add matches); most rows
# of a dataset hold none, and only a row that may is guarded a cell at a time. The pattern
# starts with the NUL itself, not `(?:^|\x00)`: a literal first character lets `re` skip
# to each NUL instead of trying the pattern at every character (8x faster on a task's row).
_ROW_MAY_RUN = re.compile(
    r"\x00'*(?:["
    + re.escape("".join(FORMULA_STARTS))
    + r"]|\s*["
    + re.escape("".join(_FORMULA_SIGNS))
    + "])"
).search


def neutralize_row(cells: list[str]) -> list[str]:
    """`neutralize_formula` of every cell of a row."""
    if _ROW_MAY_RUN("\x00" + "\x00".join(cells)) is None:
        return cells
    return [neutralize_formula(cell) for cell in cells]


def unneutralize_formula(value: str) -> str:
    """Undo `neutralize_formula`: drop one leading `'` only where the writer would add one."""
    if value.startswith("'") and _runs_as_formula(value):
        return value[1:]
    return value


# A row of a sheet: the number a person sees beside it, and its cells.
Row = tuple[int, Sequence[str]]


class NumberedRows(Sequence[Row]):
    """Records that follow one another from row `first`, numbered as they are read: a sheet
    without blank rows holds no (number, cells) pair until one is asked for."""

    __slots__ = ("first", "records")

    def __init__(self, records: Sequence[Sequence[str]], first: int) -> None:
        self.records = records
        self.first = first

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Row]:
        return zip(count(self.first), self.records)

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        numbers = range(self.first, self.first + len(self.records))
        if isinstance(index, slice):
            return list(zip(numbers[index], self.records[index], strict=True))
        return numbers[index], self.records[index]


NO_HEADER_THERE = Rule(
    "csv_no_header_there",
    "Row {number} cannot be the header: it is blank or past the end of the file ({rows} rows). "
    "Choose the row that holds the column names under Read options.",
)
HEADER_BELOW_PREAMBLE = Rule(
    "csv_header_below_preamble",
    "The header is this row: {above} not part of the table (a title or a note, as some tools "
    "write), and left out.",
)
# Lines above a table that a tool writes before its header: at most this many are looked for.
_MOST_PREAMBLE_ROWS = 5
# The rows looked at to find them: those, the header and the first rows below it.
_PREAMBLE_WINDOW = 64


def preamble_rows(records: Sequence[Sequence[str]]) -> int:
    """How many of a sheet's first rows are not the table: leading rows of one cell of text
    at most (blank ones too) above a row of two or more named columns, itself followed by
    a row with two or more values. 0 when the sheet starts with its header, as most do."""
    records = records[:_PREAMBLE_WINDOW]
    for index, record in enumerate(records[: _MOST_PREAMBLE_ROWS + 1]):
        filled = sum(1 for cell in record if cell.strip())
        if filled >= 2:
            later = next((r for r in records[index + 1 :] if "".join(r).strip()), ())
            looks_like_header = all(cell.strip() for cell in record)
            has_text_above = any("".join(r).strip() for r in records[:index])
            if looks_like_header and has_text_above and sum(map(bool, map(str.strip, later))) >= 2:
                return index
            return 0
        if filled == 1 and record[0].strip() == "":
            return 0
    return 0


def _chosen_header(
    rows: Sequence[Row], file_name: str, header_row: int
) -> tuple[int, Sequence[str], Sequence[Row]] | Problem:
    """The header at the row the person chose and the rows below it that are not blank; the
    problem that the row is blank or past the end."""
    chosen = next((cells for number, cells in rows if number == header_row), None)
    if chosen is None or not "".join(chosen).strip():
        last = rows[-1][0] if rows else 0
        return NO_HEADER_THERE.at(file_name, number=header_row, rows=last)
    below = [(n, cells) for n, cells in rows if n > header_row and "".join(cells).strip()]
    return header_row, chosen, below


def find_header(
    rows: Sequence[Row], file_name: str, *, header_row: int | None, warnings: list[Problem]
) -> tuple[int, Sequence[str], Sequence[Row]] | Problem | None:
    """A sheet's header and the rows below it, from its rows numbered as a spreadsheet shows
    them (a CSV's and a workbook's alike): (the header's row number, the header, the rows
    below it that are not blank).

    The row the person chose (`header_row`), else the first that is not blank below any
    lines that are not the table (`preamble_rows`), which `warnings` then says. A Problem
    when the chosen row cannot be the header; None when every row is blank.
    """
    if header_row is not None:
        return _chosen_header(rows, file_name, header_row)
    preamble = preamble_rows([cells for _, cells in rows[:_PREAMBLE_WINDOW]])
    numbered = [(n, cells) for n, cells in islice(rows, preamble, None) if "".join(cells).strip()]
    if not numbered:
        return None
    (number, header), below = numbered[0], numbered[1:]
    if preamble:
        # Lines above the table (an export's title, a warning): the header is below them.
        above = "row 1 above it is" if number == 2 else f"rows 1 to {number - 1} above it are"
        warnings.append(HEADER_BELOW_PREAMBLE.at(file_name, row=number, above=above))
    return number, header, below


@dataclass
class Table:
    """A spreadsheet as read: the header, and each data row with the number a person sees."""

    header: list[str]
    header_row: int
    rows: Sequence[Row]
    # Whether some cell holds a NUL byte (only a column that is not imported may).
    has_nul: bool = False
    # Columns whose names say a field but that are not it, as another tool's shape says
    # (TruthfulQA's `Correct Answers` beside its `Best Answer`): not imported, and named so.
    not_read: frozenset[str] = frozenset()

    def reads(self, name: str) -> str | None:
        """The field the column `name` holds (`field_for_header`), or None."""
        return None if name.strip() in self.not_read else field_for_header(name)


class _Task:
    """A task as its rows are read: its cells, the row each came from, its criteria."""

    __slots__ = ("added_rows", "criteria", "criterion_rows", "explicit_id", "row", "values")

    def __init__(self, row: int, explicit_id: str | None, values: dict[str, str]) -> None:
        self.row = row
        self.explicit_id = explicit_id
        self.values = values
        # The row of each cell a later row added (None until one does); the rest are on `row`.
        self.added_rows: dict[str, int] | None = None
        # The task's criteria, and the row each came from (two lists: no tuple per row).
        self.criteria: list[dict[str, Any]] = []
        self.criterion_rows: list[int] = []

    def add(self, row: int, criterion: dict[str, Any]) -> None:
        self.criteria.append(criterion)
        self.criterion_rows.append(row)

    def row_of(self, key: str) -> int:
        """The row the task's `key` cell came from."""
        return self.added_rows.get(key, self.row) if self.added_rows else self.row


@dataclass
class Built:
    """What `document_from_table` makes of a table.

    `document` is None when the columns say this is not a dataset file (no prompt column,
    no answer or criterion column). `locate` puts a document path on its row; `label` names
    the column that holds it (`weight`, or `Expected Answer` as the file spells it).
    """

    document: dict[str, Any] | None
    locate: Locate
    label: Callable[[DocPath], str]
    problems: list[Problem]
    warnings: list[Problem]


def document_from_table(
    table: Table, *, file_name: str, dataset_name: str, first_task_number: int = 1
) -> Built:
    """Build the canonical dataset document from a table's rows.

    Rule checks (required values, weights, verifier kinds, limits) are the shared
    validator's; this only reports what is wrong with the sheet's shape. A task without an
    id gets `task-N`, N counting from `first_task_number` (`CheckOptions`).
    """
    builder = _Builder(table, file_name=file_name, dataset_name=dataset_name)
    builder.first_task_number = first_task_number
    # The builder keeps the row numbers `locate` needs, not the rows: a sheet's cells are
    # let go of as soon as the document holds them.
    document = builder.build(table.rows)
    return Built(document, builder.locate, builder.label, builder.problems, builder.warnings)


class _Builder:
    def __init__(self, table: Table, *, file_name: str, dataset_name: str) -> None:
        self.header = table.header
        self.header_row = table.header_row
        self.reads = table.reads
        self.not_read = table.not_read
        self.file_name = file_name
        self.dataset_name = dataset_name
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.places: dict[tuple[str | int, ...], int] = {}
        # Where each value stands is worked out only when a problem asks (`locate`): a
        # valid file of thousands of rows never needs it.
        self._rows: tuple[list[tuple[int, dict[str, str]]], list[_Task]] | None = None
        self.has_task_ids = False
        self.first_task_number = 1

    def problem(
        self, rule: Rule, *, row: int | None, field: str | None = None, **params: Any
    ) -> None:
        self.problems.append(rule.at(self.file_name, row=row, field=field, **params))

    def locate(self, path: tuple[str | int, ...]) -> tuple[int | None, int | None]:
        # The most specific place known: a criterion's weight lives on the criterion's row,
        # a task's missing expected answer on the task's first row.
        if self._rows is not None:
            self._map_places(*self._rows)
            self._rows = None
        for end in range(len(path), 0, -1):
            row = self.places.get(tuple(path[:end]))
            if row is not None:
                return row, None
        return None, None

    # -- columns ---------------------------------------------------------------------------

    def map_columns(self) -> dict[str, int] | None:
        """{key: index} of the columns read; None (and problems) when the sheet has a
        column twice or lacks the prompt or an answer or criterion column."""
        positions, ignored = self._column_positions()
        self._check_duplicate_columns(positions)
        if self.problems or self._lacks_a_column(positions):
            return None
        if ignored:
            self.warnings.append(
                IGNORED_COLUMNS.at(self.file_name, row=self.header_row, columns=", ".join(ignored))
            )
        return {key: indexes[0] for key, indexes in positions.items()}

    def _column_positions(self) -> tuple[dict[str, list[int]], list[str]]:
        """The indexes of each key's columns, and the names of the columns not read."""
        positions: dict[str, list[int]] = {}
        ignored: list[str] = []
        for index, name in enumerate(self.header):
            if not name.strip():
                continue
            key = self._column_key(name)
            if key is None:
                ignored.append(name.strip())
            else:
                positions.setdefault(key, []).append(index)
        return positions, ignored

    def _check_duplicate_columns(self, positions: dict[str, list[int]]) -> None:
        for key, indexes in positions.items():
            if len(indexes) > 1:
                self.problem(
                    DUPLICATE_COLUMN,
                    row=self.header_row,
                    columns=", ".join(self.header[i].strip() for i in indexes),
                    meaning=key,
                )

    def _lacks_a_column(self, positions: dict[str, list[int]]) -> bool:
        """Whether the sheet has no prompt column, or no answer or criterion column (a
        problem says which, and what the columns found are)."""
        found = [name.strip() for name in self.header if name.strip()]
        found_text = ", ".join(found) or "(no column names)"
        if "prompt" not in positions:
            self.problem(
                NO_PROMPT_COLUMN,
                row=None,
                found=found_text,
                expected=", ".join(COLUMNS_BY_KEY["prompt"].spellings),
            )
            return True
        if "expected" not in positions and not positions.keys() & set(CRITERION_KEYS):
            self.problem(
                NO_ANSWER_COLUMN,
                row=None,
                found=found_text,
                expected=", ".join(COLUMNS_BY_KEY["expected"].spellings),
                criterion=", ".join(COLUMNS_BY_KEY["criterion"].spellings),
            )
            return True
        return False

    def _column_key(self, name: str) -> str | None:
        """The key of the column a header cell names: a field's, `metadata.<key>`, or None."""
        key = self.reads(name)
        if key is not None or name.strip() in self.not_read:
            return key
        meta = metadata_key(name)
        return METADATA_PREFIX + meta if meta else None

    # -- rows ------------------------------------------------------------------------------

    def label(self, path: DocPath) -> str:
        """The column a document path's value sits in, as the file's header spells it."""
        key = _column_for_path(path)
        if key is None:
            return field_path(path)
        return self._header_for(key)

    def build(self, rows: Iterable[Row]) -> dict[str, Any] | None:
        columns = self.map_columns()
        if columns is None:
            return None
        return self.build_rows(rows, columns)

    def build_rows(self, rows: Iterable[Row], columns: dict[str, int]) -> dict[str, Any] | None:
        """The document (or the problems with the sheet's shape), row by row.

        The usual row of a rubric (its task's id again, task cells empty, one criterion)
        is read with two `itemgetter` calls and one dict copy, and lands on its task; any
        other row is placed by `_place`.
        """
        width = len(self.header)
        nameless = self._nameless_columns()
        global_criteria: list[tuple[int, dict[str, str]]] = []
        tasks: list[_Task] = []
        has_task_ids = self.has_task_ids = "task_id" in columns
        task_reader = _task_cell_reader(columns)
        read_task = task_reader.read
        criterion_reader = _CriterionReader(columns)
        read_criterion = criterion_reader.read
        task_cells_of = task_reader.cells_of
        id_at = columns.get("task_id", 0)
        # A task's rows repeat its id cell: each run of them is read once.
        id_cell, id_value = "", None
        current: _Task | None = None
        # The task a row without task cells adds to (`_continued`).
        continued: _Task | None = None
        no_task_cells = ("",) * len(task_reader.fields)
        for row_number, cells in rows:
            if len(cells) != width or nameless:
                shaped = self._shaped(cells, row_number, width, nameless)
                if shaped is None:
                    continue
                cells = shaped
            if has_task_ids and cells[id_at] != id_cell:
                id_cell = cells[id_at]
                id_value = _cell_value(id_cell, text=False)
                continued = _continued(current, id_value)
            criterion = read_criterion(cells)
            task_cells = task_cells_of(cells)
            if task_cells == no_task_cells:
                if continued is not None and criterion:
                    # The usual later row of a task: one more criterion (appended here,
                    # not through `add`, as this runs once per row).
                    continued.criteria.append(criterion)
                    continued.criterion_rows.append(row_number)
                    continue
                values = _NO_VALUES
            else:
                values = read_task(task_cells)
            if id_value is not None or values or criterion:
                self._place(row_number, id_value, values, criterion, tasks, global_criteria)
                current = tasks[-1] if tasks else None
                continued = _continued(current, id_value)
        return self._finished(global_criteria, tasks, criterion_reader.ids_left_out)

    def _nameless_columns(self) -> list[int]:
        """The indexes of the header's blank cells (a cell below one is a stray)."""
        return [i for i, name in enumerate(self.header) if not name.strip()]

    def _finished(
        self,
        global_criteria: list[tuple[int, dict[str, str]]],
        tasks: list[_Task],
        ids_left_out: bool,
    ) -> dict[str, Any] | None:
        """The document of the rows read; None when nothing but problems came of them."""
        if not tasks and not global_criteria and not self.problems:
            self.problem(NO_ROWS, row=None)
        if self.problems and not tasks:
            return None
        return self._document(global_criteria, tasks, ids_left_out)

    def _shaped(
        self, cells: Sequence[str], row_number: int, width: int, nameless: list[int]
    ) -> Sequence[str] | None:
        """The row's cells padded to the header's width; None (and a problem) when a cell
        stands where no column is: a quote or a delimiter out of place."""
        if len(cells) > width and any(map(str.strip, cells[width:])):
            self.problem(EXTRA_CELLS, row=row_number, cells=len(cells), header=width)
            return None
        cells = [*cells, *[""] * (width - len(cells))][:width]
        stray = next((i for i in nameless if cells[i].strip()), None)
        if stray is not None:
            self.problem(
                NAMELESS_COLUMN_VALUE,
                row=row_number,
                value=shorten(cells[stray]),
                column=column_letter(stray),
            )
            return None
        return cells

    def _place(
        self,
        row_number: int,
        task_id: str | None,
        values: dict[str, str],
        criterion: dict[str, Any],
        tasks: list[_Task],
        global_criteria: list[tuple[int, dict[str, Any]]],
    ) -> None:
        """Put a row where it belongs: a new task, more of the task above (a criterion,
        cells it had left blank), or a criterion for every task before the first task."""
        current = tasks[-1] if tasks else None
        if self._starts_task(current, task_id, values, criterion):
            # A task's first row: its cells are the task's (a copy only of the shared empty).
            task = _Task(row_number, task_id, values if values else {})
            tasks.append(task)
            if criterion:
                task.add(row_number, criterion)
        elif current is None:
            self._place_before_tasks(row_number, values, criterion, global_criteria)
        else:
            self._add_to_task(current, row_number, values, criterion)

    def _starts_task(
        self,
        current: _Task | None,
        task_id: str | None,
        values: dict[str, str],
        criterion: dict[str, Any],
    ) -> bool:
        """Whether a row is a task's first: its id is not the task's above, or (without
        ids) its prompt starts one."""
        if task_id is not None:
            return current is None or current.explicit_id != task_id
        if "prompt" not in values:
            return False
        # Without task ids, a row repeating the prompt above with a criterion adds to it.
        return not (
            current is not None
            and not self.has_task_ids
            and criterion
            and current.criteria
            and current.values.get("prompt") == values["prompt"]
        )

    def _place_before_tasks(
        self,
        row_number: int,
        values: dict[str, str],
        criterion: dict[str, Any],
        global_criteria: list[tuple[int, dict[str, Any]]],
    ) -> None:
        """A row above every task: a criterion for every task, or a problem."""
        if values or not criterion:
            self.problem(ROW_WITHOUT_TASK, row=row_number)
        else:
            global_criteria.append((row_number, criterion))

    def _add_to_task(
        self, current: _Task, row_number: int, values: dict[str, str], criterion: dict[str, Any]
    ) -> None:
        """More of the task above: the cells it had left blank, a criterion; a row adding
        neither is a problem."""
        if not (values and self._merge(current, values, row_number)) and not criterion:
            self.problem(
                REPEATED_TASK_ROW,
                row=row_number,
                task=current.explicit_id or f"on row {current.row}",
                first_row=current.row,
            )
        if criterion:
            current.add(row_number, criterion)

    def _merge(self, task: _Task, values: dict[str, str], row_number: int) -> bool:
        """Copy a row's task fields onto its task; False when the row added nothing."""
        added = False
        for key, value in values.items():
            if key not in task.values:
                task.values[key] = value
                if task.added_rows is None:
                    task.added_rows = {}
                task.added_rows[key] = row_number
                added = True
            elif task.values[key] != value:
                self.problem(
                    CONFLICTING_TASK_FIELD,
                    row=row_number,
                    field=self._header_for(key),
                    task=task.explicit_id or f"on row {task.row}",
                    column=self._header_for(key),
                    first_row=task.row_of(key),
                )
                added = True
        return added

    def _header_for(self, key: str) -> str:
        if key.startswith(METADATA_PREFIX):
            meta = key[len(METADATA_PREFIX) :]
            return next((n.strip() for n in self.header if metadata_key(n) == meta), key)
        for name in self.header:
            if self.reads(name) == key:
                return name.strip()
        return COLUMNS_BY_KEY[key].spellings[0]

    # -- the document ----------------------------------------------------------------------

    def _document(
        self,
        global_criteria: list[tuple[int, dict[str, str]]],
        tasks: list[_Task],
        ids_left_out: bool,
    ) -> dict[str, Any]:
        """The document; `ids_left_out` says whether some criterion has an id to be given."""
        document_criteria = [criterion for _, criterion in global_criteria]
        criteria_ids = _IdMaker("c", [c["id"] for c in document_criteria if "id" in c])
        criteria_ids.fill(document_criteria)
        task_ids = _IdMaker(
            "task-", [t.explicit_id for t in tasks if t.explicit_id], first=self.first_task_number
        )
        if ids_left_out:
            for task in tasks:
                self._fill_ids(task.criteria, criteria_ids)
        next_id = task_ids.next
        document_tasks = [
            _task_document(task.explicit_id or next_id(), task.values, task.criteria)
            for task in tasks
        ]
        self._rows = (global_criteria, tasks)
        return {
            "name": self.dataset_name,
            "description": "",
            "settings": {},
            "criteria": document_criteria,
            "tasks": document_tasks,
        }

    def _map_places(
        self, global_criteria: list[tuple[int, dict[str, str]]], tasks: list[_Task]
    ) -> None:
        for index, (row, _) in enumerate(global_criteria):
            self.places[("criteria", index)] = row
        for index, task in enumerate(tasks):
            self.places[("tasks", index)] = task.row
            for key in task.values:
                if key.startswith(METADATA_PREFIX):
                    meta = key[len(METADATA_PREFIX) :]
                    self.places[("tasks", index, "metadata", meta)] = task.row_of(key)
                    continue
                for path in _TASK_PATHS[key]:
                    self.places[("tasks", index, *path)] = task.row_of(key)
            for number, row in enumerate(task.criterion_rows):
                self.places[("tasks", index, "criteria", number)] = row

    @staticmethod
    def _fill_ids(criteria: list[dict[str, Any]], global_ids: _IdMaker) -> None:
        """Number a task's criteria that have no id, skipping its own ids and those of the
        criteria for every task."""
        if not all(map(_HAS_ID, criteria)):
            own_ids = _IdMaker("c", [c["id"] for c in criteria if "id" in c], taken=global_ids.used)
            own_ids.fill(criteria)


def _is_task_key(key: str) -> bool:
    """Whether a column's key is one of the task's (not its criterion's): a field, metadata."""
    return key in TASK_KEYS or key.startswith(METADATA_PREFIX)


def _task_cell_reader(columns: dict[str, int]) -> _CellReader:
    """The reader of a row's task cells, in header order (which `_merge` reports
    conflicts in)."""
    task_keys = [key for key in columns if _is_task_key(key)]
    return _CellReader(task_keys, [columns[key] for key in task_keys])


def _continued(current: _Task | None, id_value: str | None) -> _Task | None:
    """The task a row without task cells adds to: `current`, when the row has its id (or
    neither has one)."""
    return current if current and current.explicit_id == id_value else None


def _task_document(
    task_id: str, values: dict[str, str], criteria: list[dict[str, Any]]
) -> dict[str, Any]:
    """A task of the canonical document from its merged cells and its criteria."""
    document: dict[str, Any] = {"id": task_id}
    name = values.get("name") or name_from_prompt(values.get("prompt", ""))
    if name:
        document["name"] = name
    if "prompt" in values:
        document["prompt"] = values["prompt"]
    graded = not _EXPECTED_VERIFIER_KEYS.isdisjoint(values)
    if graded or "expected" in values:
        expected: dict[str, Any] = {}
        if "expected" in values:
            expected["text"] = values["expected"]
        verifier = _verifier(values, "expected_verifier") if graded else None
        if verifier is not None:
            expected["verifier"] = verifier
        document["expected"] = expected
    if criteria:
        document["criteria"] = criteria
    if "input_files" in values:
        document["inputFiles"] = _file_list(values["input_files"])
    if "expected_files" in values:
        document["expectedFiles"] = _file_list(values["expected_files"])
    metadata = {
        key[len(METADATA_PREFIX) :]: metadata_value(value)
        for key, value in values.items()
        if key.startswith(METADATA_PREFIX)
    }
    if metadata:
        document["metadata"] = metadata
    return document


# Where each column's value lands in a task of the canonical document, for `locate`.
_TASK_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "name": (("name",),),
    "prompt": (("prompt",),),
    "expected": (("expected",), ("expected", "text")),
    "expected_verifier": (("expected", "verifier"),),
    "expected_verifier_output_type": (("expected", "verifier", "outputType"),),
    "expected_verifier_instructions": (("expected", "verifier", "instructions"),),
    "expected_verifier_code": (("expected", "verifier", "code"),),
    "input_files": (("inputFiles",),),
    "expected_files": (("expectedFiles",),),
}


_CRITERION_COLUMNS = {
    "id": "criterion_id",
    "criterion": "criterion",
    "weight": "weight",
}
_VERIFIER_SUFFIXES = {
    "kind": "",
    "outputType": "_output_type",
    "instructions": "_instructions",
    "code": "_code",
}


# The columns of a task's own values, by the key below the task in a document path.
_TASK_COLUMNS: dict[str | int, str] = {
    "id": "task_id",
    "name": "name",
    "prompt": "prompt",
    "inputFiles": "input_files",
    "expectedFiles": "expected_files",
}


def _column_for_path(path: DocPath) -> str | None:
    """("tasks", 3, "criteria", 0, "weight") → "weight": the column a value came from."""
    criterion = _below_criterion(path)
    if criterion is not None:
        return _criterion_column(criterion)
    if len(path) >= 3 and path[0] == "tasks":
        below_task = path[2:]
        if below_task[0] == "expected":
            return _expected_column(below_task)
        return _TASK_COLUMNS.get(below_task[0])
    return None


def _below_criterion(path: DocPath) -> DocPath | None:
    """The path below a criterion (the dataset's or a task's), or None for another path."""
    if len(path) >= 3 and path[0] == "criteria":
        return path[2:]
    if len(path) >= 5 and path[0] == "tasks" and path[2] == "criteria":
        return path[4:]
    return None


def _criterion_column(criterion: DocPath) -> str | None:
    if criterion[0] in _CRITERION_COLUMNS:
        return _CRITERION_COLUMNS[str(criterion[0])]
    if criterion[0] == "verifier":
        return _verifier_column("verifier", criterion[1:]) or "verifier"
    return None


def _expected_column(expected: DocPath) -> str:
    if len(expected) >= 2 and expected[1] == "verifier":
        return _verifier_column("expected_verifier", expected[2:]) or "expected"
    return "expected"


def _verifier_column(prefix: str, below_verifier: DocPath) -> str | None:
    """The column of a verifier (`prefix`) or of one of its keys (suffixed); None for
    another key."""
    if not below_verifier:
        return prefix
    if below_verifier[0] in _VERIFIER_SUFFIXES:
        return prefix + _VERIFIER_SUFFIXES[str(below_verifier[0])]
    return None


class _IdMaker:
    """Hands out `c1`, `c2`, … (or `task-1`, …), skipping ids the file itself uses."""

    def __init__(
        self,
        prefix: str,
        explicit: Sequence[str],
        taken: set[str] | None = None,
        *,
        first: int = 1,
    ):
        self.prefix = prefix
        self.used = set(explicit) | (taken or set())
        self.counter = first - 1

    def fill(self, criteria: list[dict[str, Any]]) -> None:
        """Give each criterion without an id the next one."""
        for criterion in criteria:
            if "id" not in criterion:
                criterion["id"] = self.next()

    def next(self) -> str:
        while True:
            self.counter += 1
            candidate = f"{self.prefix}{self.counter}"
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate


_VERIFIER_COLUMNS = {
    prefix: tuple((prefix + suffix, key) for key, suffix in _VERIFIER_SUFFIXES.items())
    for prefix in ("verifier", "expected_verifier")
}


_VERIFIER_KEYS = {
    prefix: frozenset(column for column, _ in columns)
    for prefix, columns in _VERIFIER_COLUMNS.items()
}


_EXPECTED_VERIFIER_KEYS = _VERIFIER_KEYS["expected_verifier"]


def _verifier(values: dict[str, str], prefix: str) -> dict[str, Any] | None:
    if _VERIFIER_KEYS[prefix].isdisjoint(values):
        return None
    verifier = {
        key: values[column] for column, key in _VERIFIER_COLUMNS[prefix] if column in values
    }
    return verifier or None


def _number(text: str) -> float | int | str:
    """A weight as a number where the cell is one; the raw text otherwise, for the validator.

    A decimal comma (`0,5`) stays text: `1,000` could be a thousand or one, and guessing
    wrong would change the score silently; the validator's message asks for a number.
    """
    try:
        value = float(text)
    except ValueError:
        return text
    if value != value or value in (float("inf"), float("-inf")):
        return text
    return int(value) if value.is_integer() else value


def _file_list(text: str) -> list[str]:
    # One per line, not `|`-separated: real file names contain `||` (LegalBench-RAG's MAUD).
    return [line.strip() for line in text.splitlines() if line.strip()]


class _CellReader:
    """Reads a row's cells for some fields: {field: value} for the non-blank ones.

    Text fields keep the cell exactly; the others (ids, kinds, numbers, file lists) are
    stripped; a formula `'` the writer added comes off. `cells_of` picks the fields' cells
    out of a row in one call.
    """

    def __init__(self, keys: list[str], indexes: list[int]) -> None:
        # A metadata cell is kept as written, as text is (`metadata_value` reads it).
        self.fields = [
            (key, key.startswith(METADATA_PREFIX) or COLUMNS_BY_KEY[key].text) for key in keys
        ]
        self.cells_of = _tuple_getter(indexes)

    def read(self, cells: tuple[str, ...]) -> dict[str, str]:
        """{field: value} for the fields' non-blank cells (picked out by `cells_of`)."""
        values: dict[str, str] = {}
        for (key, text), cell in zip(self.fields, cells, strict=True):
            if cell and not cell.isspace():
                if cell[0] == "'":
                    cell = unneutralize_formula(cell)
                values[key] = cell if text else cell.strip()
        return values


_HAS_ID = methodcaller("__contains__", "id")

# The task cells of a row that has none (a task's later rows): never changed.
_NO_VALUES: dict[str, str] = {}


class _CriterionReader:
    """Reads a row's criterion cells straight into a criterion of the document ({} if none).

    A criterion without a `criterion_id` gets no "id" here: `_IdMaker.fill` numbers it
    once the task's own ids are all known.
    """

    def __init__(self, columns: dict[str, int]) -> None:
        self.text_at = columns.get("criterion")
        # Ids (c1, c2, ... on every task), weights and verifiers repeat from row to row:
        # each distinct run of those cells is read once, into a template that a row copies
        # and puts its own text in.
        keys = [key for key in columns if key in CRITERION_KEYS and key != "criterion"]
        self.repeated = _tuple_getter([columns[key] for key in keys])
        self.reader = _CellReader(keys, [])
        self.templates: dict[tuple[str, ...], tuple[dict[str, Any], dict[str, Any]]] = {}
        # Whether some row left its criterion's id out (so that some task has ids to fill).
        self.ids_left_out = False

    def read(self, cells: Sequence[str]) -> dict[str, Any]:
        """The row's criterion."""
        repeated = self.repeated(cells)
        templates = self.templates.get(repeated)
        if templates is None:
            templates = self.templates[repeated] = self._templates(repeated)
        text = cells[self.text_at] if self.text_at is not None else ""
        if not text or text.isspace():
            return templates[1].copy()
        criterion = templates[0].copy()
        criterion["criterion"] = unneutralize_formula(text) if text[0] == "'" else text
        return criterion

    def _templates(self, cells: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The criterion for the repeated cells, with a place for the text (its keys in the
        document's order) and without it."""
        values = self.reader.read(cells)
        with_text: dict[str, Any] = {}
        if "criterion_id" in values:
            with_text["id"] = values["criterion_id"]
        else:
            self.ids_left_out = True
        with_text["criterion"] = None
        if "weight" in values:
            with_text["weight"] = _number(values["weight"])
        verifier = _verifier(values, "verifier")
        if verifier is not None:
            with_text["verifier"] = schema_verifier(verifier)
        without_text = {key: value for key, value in with_text.items() if key != "criterion"}
        return with_text, without_text


def _tuple_getter(indexes: list[int]) -> Callable[[Sequence[str]], tuple[str, ...]]:
    """`itemgetter`, but a tuple even for one index (or none)."""
    if not indexes:
        return lambda cells: ()
    if len(indexes) == 1:
        (index,) = indexes
        return lambda cells: (cells[index],)
    return itemgetter(*indexes)


def _cell_value(cell: str, *, text: bool) -> str | None:
    """One cell as `_CellReader` reads it, None when blank."""
    if not cell or cell.isspace():
        return None
    if cell[0] == "'":
        cell = unneutralize_formula(cell)
    return cell if text else cell.strip()


def column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


# -- writing -------------------------------------------------------------------------------

MSG_WRITE_DESCRIPTION = "The dataset's description has no column in a spreadsheet; it is left out."
MSG_WRITE_SETTINGS = (
    "The dataset's settings ({keys}) have no column in a spreadsheet and are left out: "
    "tasks and criteria with no verifier of their own will be graded the default way."
)
MSG_WRITE_EVIDENCE = (
    "Left out: the retrieval evidence of {tasks}, which a spreadsheet has no column for."
)

# The writer's column order: who the task is, what it asks, how it is graded, then files.
_WRITE_ORDER = (
    "task_id",
    "name",
    "prompt",
    "expected",
    "expected_verifier",
    "expected_verifier_output_type",
    "expected_verifier_instructions",
    "expected_verifier_code",
    "criterion_id",
    "criterion",
    "weight",
    "verifier",
    "verifier_output_type",
    "verifier_instructions",
    "verifier_code",
    "input_files",
    "expected_files",
)
_ALWAYS_WRITTEN = ("task_id", "name", "prompt")


def spreadsheet_records(spec: DatasetSpec) -> Iterator[dict[str, str]]:
    """The spreadsheet's rows as {column key: cell}, one at a time (see `rows_from_spec`)."""
    for criterion in spec.criteria:
        yield _criterion_cells(criterion)
    for task in spec.tasks:
        first: dict[str, str] = {"task_id": task.id, "name": task.name, "prompt": task.prompt}
        if task.expected_text is not None:
            first["expected"] = task.expected_text
        first.update(_verifier_cells(task.expected_verifier, "expected_verifier"))
        if task.input_files:
            first["input_files"] = "\n".join(_file_cell(f) for f in task.input_files)
        if task.expected_files:
            first["expected_files"] = "\n".join(_file_cell(f) for f in task.expected_files)
        for key, value in task.metadata.items():
            first[METADATA_PREFIX + key] = metadata_cell(value)
        if not task.criteria:
            yield first
        for number, criterion in enumerate(task.criteria):
            row = first if number == 0 else {"task_id": task.id}
            yield {**row, **_criterion_cells(criterion)}


def spreadsheet_warnings(spec: DatasetSpec, *, with_evidence: int | None = None) -> list[str]:
    """What a .csv or .xlsx cannot carry of the dataset, without writing one; the tasks
    with evidence counted here unless the caller counted them."""
    warnings = []
    if spec.description:
        warnings.append(MSG_WRITE_DESCRIPTION)
    if spec.settings:
        warnings.append(MSG_WRITE_SETTINGS.format(keys=", ".join(sorted(spec.settings))))
    if with_evidence is None:
        with_evidence = sum(1 for task in spec.tasks if task.evidence)
    if with_evidence:
        warnings.append(MSG_WRITE_EVIDENCE.format(tasks=counted(with_evidence, "task")))
    return warnings


def rows_from_spec(spec: DatasetSpec) -> tuple[list[str], list[list[str]], list[str]]:
    """The spreadsheet for a dataset: (header, rows, warnings about what it cannot carry).

    One row per criterion (a task with no criteria: one row); criteria for every task come
    first, with `task_id` and `prompt` blank. Later rows of a task repeat only its `task_id`.
    The dataset's name is the file's name, so it is not a column.
    """
    header, rows = spreadsheet_table(spec)
    return header, list(rows), spreadsheet_warnings(spec)


# Records spooled by `spreadsheet_table` this many at a time (one marshal dump each).
_SPOOLED_RECORDS = 1_000
# The spool stays in memory up to this size, then spills to a temporary file on disk.
_SPOOL_BYTES = 8 * 1024 * 1024


def spreadsheet_table(spec: DatasetSpec) -> tuple[list[str], Iterator[list[str]]]:
    """The spreadsheet's header and rows (below it, one at a time), from one pass over the
    tasks: a header names only the columns some row fills, so it is known only once every
    record is, and `spec.tasks` may be read from the database as it is written. The pass
    keeps the records (plain dicts of strings) in a spool that spills to disk, never in
    memory whole, and the rows are read back from it. marshal: the fastest dump and load
    of plain values in the standard library, and the spool is ours, written just now."""
    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - rows close it
    used: set[str] = set(_ALWAYS_WRITTEN)
    # Metadata last, a column per key in the order the tasks first have them.
    metadata: dict[str, None] = {}
    records = spreadsheet_records(spec)
    while chunk := list(islice(records, _SPOOLED_RECORDS)):
        for record in chunk:
            used.update(key for key, value in record.items() if value != "")
            metadata.update((key, None) for key in record if key.startswith(METADATA_PREFIX))
        data = marshal.dumps(chunk)
        spool.write(len(data).to_bytes(8, "little") + data)
    keys = [key for key in _WRITE_ORDER if key in used] + list(metadata)
    end = spool.tell()
    spool.seek(0)

    def rows() -> Iterator[list[str]]:
        with spool:
            while spool.tell() < end:
                # Read whole: marshal.load of a file reads it a few bytes at a time.
                data = spool.read(int.from_bytes(spool.read(8), "little"))
                for record in marshal.loads(data):  # noqa: S302 - our own spool
                    yield [record.get(key, "") for key in keys]

    return spreadsheet_header(keys), rows()


def spreadsheet_header(keys: list[str]) -> list[str]:
    """The header row for `keys`: each column's first spelling (`metadata.<key>` as it is)."""
    return [
        key if key.startswith(METADATA_PREFIX) else COLUMNS_BY_KEY[key].spellings[0] for key in keys
    ]


def _criterion_cells(criterion: CriterionSpec) -> dict[str, str]:
    cells = {
        "criterion_id": criterion.id,
        "criterion": criterion.criterion,
        "weight": format_number(criterion.weight),
    }
    cells.update(_verifier_cells(criterion.verifier, "verifier"))
    return cells


def _verifier_cells(verifier: Verifier | None, prefix: str) -> dict[str, str]:
    if verifier is None:
        return {}
    cells = {prefix: verifier.kind}
    for suffix, value in (
        ("_output_type", verifier.output_type),
        ("_instructions", verifier.instructions),
        ("_code", verifier.code),
    ):
        if value is not None:
            cells[prefix + suffix] = value
    return cells


def _file_cell(file: FileSpec) -> str:
    return file.path or file.url or file.name


# Cached: an export writes the same few weights for every criterion.
@lru_cache(maxsize=1024, typed=True)
def format_number(value: float) -> str:
    """`1.0` → `1`, `0.25` → `0.25`: what a person would type in the cell."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)
