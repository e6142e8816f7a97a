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

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, pairwise, repeat, zip_longest
from operator import and_, eq, gt, itemgetter, not_, or_
from typing import Any

from datasets_app.importing.document import CriteriaColumns, ReaderDocument
from datasets_app.importing.spec import (
    CriterionSpec,
    DatasetSpec,
    DocPath,
    FileSpec,
    Locate,
    Problem,
    Verifier,
    field_path,
)

# Stable problem codes (programs match on these) and the messages people read.
NO_PROMPT_COLUMN = "csv_no_prompt_column"
NO_ANSWER_COLUMN = "csv_no_answer_column"
DUPLICATE_COLUMN = "csv_duplicate_column"
EXTRA_CELLS = "csv_extra_cells"
NAMELESS_COLUMN_VALUE = "csv_nameless_column_value"
NO_ROWS = "csv_no_rows"
ROW_WITHOUT_TASK = "csv_row_without_task"
CONFLICTING_TASK_FIELD = "csv_conflicting_task_field"
REPEATED_TASK_ROW = "csv_repeated_task_row"
PROMPTFOO_ASSERTION = "csv_promptfoo_assertion"
IGNORED_COLUMNS = "csv_ignored_columns"

MSG_NO_PROMPT_COLUMN = (
    "This file has no prompt column. Found: {found}. Expected one of: {expected}."
)
MSG_NO_ANSWER_COLUMN = (
    "This file has no expected-answer column. Found: {found}. Expected one of: {expected} "
    "(or a criterion column: {criterion})."
)
MSG_DUPLICATE_COLUMN = "Columns {columns} all mean {field}; keep one of them."
MSG_EXTRA_CELLS = (
    "This row has {cells} cells but the header has {header}: a quote or a delimiter is "
    "probably out of place."
)
MSG_NAMELESS_COLUMN_VALUE = (
    "This row has a value ({value}) in column {column}, which has no header: a quote or a "
    "delimiter is probably out of place."
)
MSG_NO_ROWS = "This file has a header row but no tasks below it."
MSG_ROW_WITHOUT_TASK = (
    "This row belongs to no task: give it a prompt (or a task_id), or, for a criterion for "
    "every task, leave only the criterion columns filled."
)
MSG_CONFLICTING_TASK_FIELD = (
    "This row gives task {task} a different {column} from row {first_row}; give it once, on "
    "the task's first row."
)
MSG_REPEATED_TASK_ROW = (
    "This row repeats task {task} from row {first_row} without adding a criterion; task ids "
    "must be unique."
)
MSG_PROMPTFOO_ASSERTION = (
    "{column} holds a promptfoo assertion ({value}), not an expected answer; Context Evals "
    "grades by an expected answer or criteria. Found: {found}."
)
MSG_IGNORED_COLUMNS = "These columns are not imported: {columns}."


@dataclass(frozen=True)
class Column:
    """One field a spreadsheet column can fill, and the header spellings that mean it."""

    key: str
    spellings: tuple[str, ...]
    # Text fields keep the cell exactly (multi-line answers, leading spaces, NBSP); the rest
    # (ids, kinds, numbers, file lists) are stripped.
    text: bool = False


# The first spelling of each is the one the writer uses and the help page leads with.
COLUMNS: tuple[Column, ...] = (
    Column("task_id", ("task_id", "id", "task")),
    Column("name", ("name", "task_name", "title"), text=True),
    Column(
        "prompt",
        ("prompt", "input", "question", "query", "user_input", "user_message"),
        text=True,
    ),
    Column(
        "expected",
        (
            "expected_answer",
            "expected",
            "expected_output",
            "goldenOutput",
            "answer",
            "target",
            "reference",
            "ground_truth",
            "expected completion",
            "correct_answer",
        ),
        text=True,
    ),
    Column("expected_verifier", ("expected_verifier",)),
    Column("expected_verifier_output_type", ("expected_verifier_output_type",)),
    Column("expected_verifier_instructions", ("expected_verifier_instructions",), text=True),
    Column("expected_verifier_code", ("expected_verifier_code",), text=True),
    Column("input_files", ("input_files",)),
    Column("expected_files", ("expected_files",)),
    Column("criterion_id", ("criterion_id",)),
    Column("criterion", ("criterion", "rubric"), text=True),
    Column("weight", ("weight",)),
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


def field_for_header(name: str) -> str | None:
    """The field a header cell names, or None for a column this format does not read."""
    return _FIELD_BY_SPELLING.get(normalize_header(name))


def _runs_as_formula(value: str) -> bool:
    """Whether a spreadsheet could take the cell (its `'`s aside) for a formula."""
    text = value.lstrip("'")
    return text.startswith(FORMULA_STARTS) or text.lstrip().startswith(_FORMULA_SIGNS)


def neutralize_formula(value: str) -> str:
    """The cell as the CSV writer stores it: `=1+1` → `'=1+1`, so Excel shows text."""
    if _runs_as_formula(value):
        return "'" + value
    return value


def unneutralize_formula(value: str) -> str:
    """Undo `neutralize_formula`: drop one leading `'` only where the writer would add one."""
    if value.startswith("'") and _runs_as_formula(value):
        return value[1:]
    return value


@dataclass
class Table:
    """A spreadsheet as read: the header, and each data row with the number a person sees."""

    header: list[str]
    header_row: int
    rows: list[tuple[int, list[str]]]
    # True when the reader knows that no cell holds a `'` at all (the CSV reader looks at
    # the whole text at once): then no cell needs its formula `'` taken off.
    no_apostrophe: bool = False


@dataclass
class _Task:
    row: int
    explicit_id: str | None
    values: dict[str, str]
    rows_of: dict[str, int]
    criteria: list[tuple[int, dict[str, str]]] = field(default_factory=list)


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


def document_from_table(table: Table, *, file_name: str, dataset_name: str) -> Built:
    """Build the canonical dataset document from a table's rows.

    Rule checks (required values, weights, verifier kinds, limits) are the shared
    validator's; this only reports what is wrong with the sheet's shape.
    """
    builder = _Builder(table, file_name=file_name, dataset_name=dataset_name)
    document = builder.build()
    return Built(document, builder.locate, builder.label, builder.problems, builder.warnings)


class _Builder:
    def __init__(self, table: Table, *, file_name: str, dataset_name: str) -> None:
        self.table = table
        self.file_name = file_name
        self.dataset_name = dataset_name
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.places: dict[tuple[str | int, ...], int] = {}
        # Where each value stands is worked out only when a problem asks (`locate`): a
        # valid file of thousands of rows never needs it.
        self._rows: tuple[list[tuple[int, dict[str, str]]], list[_Task]] | None = None
        # Set when the document was built column by column: the columns to replay the
        # row-by-row build with, for `locate`, when a problem first asks where it is.
        self._replay: dict[str, int] | None = None

    def problem(
        self, code: str, message: str, *, row: int | None, field: str | None = None
    ) -> None:
        self.problems.append(Problem(code, message, self.file_name, row=row, field=field))

    def locate(self, path: tuple[str | int, ...]) -> tuple[int | None, int | None]:
        # The most specific place known: a criterion's weight lives on the criterion's row,
        # a task's missing expected answer on the task's first row.
        if self._replay is not None:
            replay = _Builder(self.table, file_name=self.file_name, dataset_name=self.dataset_name)
            replay.build_rows(self._replay)
            self._rows, self._replay = replay._rows, None
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
        header = self.table.header
        found = [name.strip() for name in header if name.strip()]
        positions: dict[str, list[int]] = {}
        ignored: list[str] = []
        for index, name in enumerate(header):
            if not name.strip():
                continue
            key = field_for_header(name)
            if key is None:
                ignored.append(name.strip())
            else:
                positions.setdefault(key, []).append(index)
        for key, indexes in positions.items():
            if len(indexes) > 1:
                self.problem(
                    DUPLICATE_COLUMN,
                    MSG_DUPLICATE_COLUMN.format(
                        columns=", ".join(header[i].strip() for i in indexes), field=key
                    ),
                    row=self.table.header_row,
                )
        if self.problems:
            return None
        found_text = ", ".join(found) or "(no column names)"
        if "prompt" not in positions:
            self.problem(
                NO_PROMPT_COLUMN,
                MSG_NO_PROMPT_COLUMN.format(
                    found=found_text, expected=", ".join(COLUMNS_BY_KEY["prompt"].spellings)
                ),
                row=None,
            )
            return None
        if "expected" not in positions and not positions.keys() & set(CRITERION_KEYS):
            self.problem(
                NO_ANSWER_COLUMN,
                MSG_NO_ANSWER_COLUMN.format(
                    found=found_text,
                    expected=", ".join(COLUMNS_BY_KEY["expected"].spellings),
                    criterion=", ".join(COLUMNS_BY_KEY["criterion"].spellings),
                ),
                row=None,
            )
            return None
        if ignored:
            self.warnings.append(
                Problem(
                    IGNORED_COLUMNS,
                    MSG_IGNORED_COLUMNS.format(columns=", ".join(ignored)),
                    self.file_name,
                    row=self.table.header_row,
                )
            )
        return {key: indexes[0] for key, indexes in positions.items()}

    # -- rows ------------------------------------------------------------------------------

    def label(self, path: DocPath) -> str:
        """The column a document path's value sits in, as the file's header spells it."""
        key = _column_for_path(path)
        if key is None:
            return field_path(path)
        return self._header_for(key)

    def build(self) -> dict[str, Any] | None:
        columns = self.map_columns()
        if columns is None:
            return None
        document = _document_by_columns(self.table, columns, self.dataset_name)
        if document is not None:
            # Same document as the row-by-row look, which `locate` replays if ever asked.
            self._replay = columns
            return document
        return self.build_rows(columns)

    def build_rows(self, columns: dict[str, int]) -> dict[str, Any] | None:
        """The document (or problems), looking at the table row by row: the reference.

        Every problem about the sheet's shape comes from here; `_document_by_columns` only
        builds the documents this would build without finding anything.
        """
        header = self.table.header
        nameless = [i for i, name in enumerate(header) if not name.strip()]
        expected_column = header[columns["expected"]].strip() if "expected" in columns else ""
        promptfoo = expected_column.startswith("__")
        found_text = ", ".join(name.strip() for name in header if name.strip())

        global_criteria: list[tuple[int, dict[str, str]]] = []
        tasks: list[_Task] = []
        has_task_ids = "task_id" in columns
        # Header → column index once; each row then reads only its task's and its
        # criterion's cells (in header order, which `_merge` reports conflicts in).
        plan = [(key, index, COLUMNS_BY_KEY[key].text) for key, index in columns.items()]
        task_plan = [entry for entry in plan if entry[0] in TASK_KEYS]
        criterion_plan = [entry for entry in plan if entry[0] in CRITERION_KEYS]
        id_plan = [entry for entry in plan if entry[0] == "task_id"]
        for row_number, cells in self.table.rows:
            if len(cells) > len(header) and any(c.strip() for c in cells[len(header) :]):
                self.problem(
                    EXTRA_CELLS,
                    MSG_EXTRA_CELLS.format(cells=len(cells), header=len(header)),
                    row=row_number,
                )
                continue
            stray = None
            if nameless:
                stray = next((i for i in nameless if i < len(cells) and cells[i].strip()), None)
            if stray is not None:
                self.problem(
                    NAMELESS_COLUMN_VALUE,
                    MSG_NAMELESS_COLUMN_VALUE.format(
                        value=_shorten(cells[stray]), column=column_letter(stray)
                    ),
                    row=row_number,
                )
                continue
            values = _row_values(cells, task_plan)
            if promptfoo and _is_promptfoo_assertion(values.get("expected", "")):
                self.problem(
                    PROMPTFOO_ASSERTION,
                    MSG_PROMPTFOO_ASSERTION.format(
                        column=expected_column,
                        value=_shorten(values["expected"]),
                        found=found_text,
                    ),
                    row=row_number,
                    field=expected_column,
                )
                continue
            task_id = _row_values(cells, id_plan).get("task_id") if id_plan else None
            criterion = _row_values(cells, criterion_plan)
            if task_id is None and not values and not criterion:
                continue  # only columns this format does not read (the warning names them)
            current = tasks[-1] if tasks else None
            prompt = values.get("prompt")
            if task_id is not None:
                starts_task = current is None or current.explicit_id != task_id
            elif prompt is not None:
                starts_task = not (
                    current is not None
                    and not has_task_ids
                    and criterion
                    and current.criteria
                    and current.values.get("prompt") == prompt
                )
            else:
                starts_task = False
            if starts_task:
                task = _Task(row_number, task_id, {}, {})
                tasks.append(task)
                self._merge(task, values, row_number)
                if criterion:
                    task.criteria.append((row_number, criterion))
                continue
            if current is None:
                if values or not criterion:
                    self.problem(ROW_WITHOUT_TASK, MSG_ROW_WITHOUT_TASK, row=row_number)
                else:
                    global_criteria.append((row_number, criterion))
                continue
            if not self._merge(current, values, row_number) and not criterion:
                self.problem(
                    REPEATED_TASK_ROW,
                    MSG_REPEATED_TASK_ROW.format(
                        task=current.explicit_id or f"on row {current.row}",
                        first_row=current.row,
                    ),
                    row=row_number,
                )
            if criterion:
                current.criteria.append((row_number, criterion))

        if not tasks and not global_criteria and not self.problems:
            self.problem(NO_ROWS, MSG_NO_ROWS, row=None)
        if self.problems and not tasks:
            return None
        return self._document(global_criteria, tasks)

    def _merge(self, task: _Task, values: dict[str, str], row_number: int) -> bool:
        """Copy a row's task fields onto its task; False when the row added nothing."""
        added = False
        for key, value in values.items():
            if key not in task.values:
                task.values[key] = value
                task.rows_of[key] = row_number
                added = True
            elif task.values[key] != value:
                self.problem(
                    CONFLICTING_TASK_FIELD,
                    MSG_CONFLICTING_TASK_FIELD.format(
                        task=task.explicit_id or f"on row {task.row}",
                        column=self._header_for(key),
                        first_row=task.rows_of[key],
                    ),
                    row=row_number,
                    field=self._header_for(key),
                )
                added = True
        return added

    def _header_for(self, key: str) -> str:
        for name in self.table.header:
            if field_for_header(name) == key:
                return name.strip()
        return COLUMNS_BY_KEY[key].spellings[0]

    # -- the document ----------------------------------------------------------------------

    def _document(
        self, global_criteria: list[tuple[int, dict[str, str]]], tasks: list[_Task]
    ) -> dict[str, Any]:
        criteria_ids = _IdMaker(
            "c", [c["criterion_id"] for _, c in global_criteria if "criterion_id" in c]
        )
        document_criteria = [_criterion(values, criteria_ids) for _, values in global_criteria]
        task_ids = _IdMaker("task-", [t.explicit_id for t in tasks if t.explicit_id])
        document_tasks = [self._task(task, task_ids, criteria_ids) for task in tasks]
        self._rows = (global_criteria, tasks)
        return ReaderDocument(
            name=self.dataset_name,
            description="",
            settings={},
            criteria=document_criteria,
            tasks=document_tasks,
        )

    def _map_places(
        self, global_criteria: list[tuple[int, dict[str, str]]], tasks: list[_Task]
    ) -> None:
        for index, (row, _) in enumerate(global_criteria):
            self.places[("criteria", index)] = row
        for index, task in enumerate(tasks):
            self.places[("tasks", index)] = task.row
            for key, row in task.rows_of.items():
                for path in _TASK_PATHS[key]:
                    self.places[("tasks", index, *path)] = row
            for number, (row, _) in enumerate(task.criteria):
                self.places[("tasks", index, "criteria", number)] = row

    def _task(self, task: _Task, task_ids: _IdMaker, global_ids: _IdMaker) -> dict[str, Any]:
        own_ids = _IdMaker(
            "c",
            [c["criterion_id"] for _, c in task.criteria if "criterion_id" in c],
            taken=global_ids.used,
        )
        criteria = [_criterion(criterion, own_ids) for _, criterion in task.criteria]
        return _task_document(task.explicit_id or task_ids.next(), task.values, criteria)


def _task_document(
    task_id: str, values: dict[str, str], criteria: list[dict[str, Any]]
) -> dict[str, Any]:
    """A task of the canonical document from its merged cells and its criteria."""
    document: dict[str, Any] = {"id": task_id}
    name = values.get("name") or _name_from_prompt(values.get("prompt", ""))
    if name:
        document["name"] = name
    if "prompt" in values:
        document["prompt"] = values["prompt"]
    expected: dict[str, Any] = {}
    if "expected" in values:
        expected["text"] = values["expected"]
    verifier = _verifier(values, "expected_verifier")
    if verifier is not None:
        expected["verifier"] = verifier
    if expected:
        document["expected"] = expected
    if criteria:
        document["criteria"] = criteria
    if "input_files" in values:
        document["inputFiles"] = _file_list(values["input_files"])
    if "expected_files" in values:
        document["expectedFiles"] = _file_list(values["expected_files"])
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


def _column_for_path(path: DocPath) -> str | None:
    """("tasks", 3, "criteria", 0, "weight") → "weight": the column a value came from."""
    if len(path) >= 3 and path[0] == "criteria":
        criterion = path[2:]
    elif len(path) >= 5 and path[0] == "tasks" and path[2] == "criteria":
        criterion = path[4:]
    elif len(path) >= 3 and path[0] == "tasks":
        rest = path[2:]
        if rest[0] == "id":
            return "task_id"
        if rest[0] in ("name", "prompt"):
            return str(rest[0])
        if rest[0] == "inputFiles":
            return "input_files"
        if rest[0] == "expectedFiles":
            return "expected_files"
        if rest[0] == "expected":
            if len(rest) >= 3 and rest[1] == "verifier" and rest[2] in _VERIFIER_SUFFIXES:
                return "expected_verifier" + _VERIFIER_SUFFIXES[str(rest[2])]
            if len(rest) == 2 and rest[1] == "verifier":
                return "expected_verifier"
            return "expected"
        return None
    else:
        return None
    if criterion[0] in _CRITERION_COLUMNS:
        return _CRITERION_COLUMNS[str(criterion[0])]
    if criterion[0] == "verifier":
        if len(criterion) >= 2 and criterion[1] in _VERIFIER_SUFFIXES:
            return "verifier" + _VERIFIER_SUFFIXES[str(criterion[1])]
        return "verifier"
    return None


class _IdMaker:
    """Hands out `c1`, `c2`, … (or `task-1`, …), skipping ids the file itself uses."""

    def __init__(self, prefix: str, explicit: Sequence[str], taken: set[str] | None = None):
        self.prefix = prefix
        self.used = set(explicit) | (taken or set())
        self.counter = 0

    def next(self) -> str:
        while True:
            self.counter += 1
            candidate = f"{self.prefix}{self.counter}"
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate


def _criterion(values: dict[str, str], ids: _IdMaker) -> dict[str, Any]:
    criterion: dict[str, Any] = {"id": values.get("criterion_id") or ids.next()}
    if "criterion" in values:
        criterion["criterion"] = values["criterion"]
    if "weight" in values:
        criterion["weight"] = _number(values["weight"])
    verifier = _verifier(values, "verifier")
    if verifier is not None:
        criterion["verifier"] = verifier
    return criterion


_VERIFIER_COLUMNS = {
    prefix: tuple((prefix + suffix, key) for key, suffix in _VERIFIER_SUFFIXES.items())
    for prefix in ("verifier", "expected_verifier")
}


_VERIFIER_KEYS = {
    prefix: frozenset(column for column, _ in columns)
    for prefix, columns in _VERIFIER_COLUMNS.items()
}


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


def _name_from_prompt(prompt: str) -> str:
    first = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return first if len(first) <= 80 else first[:79].rstrip() + "…"


def _row_values(cells: list[str], plan: list[tuple[str, int, bool]]) -> dict[str, str]:
    """The row's non-blank cells by field: text fields exact, the others stripped.

    `plan` is (field, column index, is text) per mapped column. This runs once per row of
    files up to 20,000 rows, so it stays a plain loop.
    """
    values: dict[str, str] = {}
    width = len(cells)
    for key, index, text in plan:
        if index >= width:
            continue
        cell = cells[index]
        if not cell or cell.isspace():
            continue
        if cell[0] == "'":
            cell = unneutralize_formula(cell)
        values[key] = cell if text else cell.strip()
    return values


def _document_by_columns(
    table: Table, columns: dict[str, int], dataset_name: str
) -> ReaderDocument | None:
    """The document `_Builder.build_rows` would build for a sheet it finds nothing wrong with,
    worked out a column at a time; None when the sheet is anything but the usual shape.

    The usual shape is a rubric export's: a `task_id` on every row (after any criteria for
    every task), a task's later rows either blank in its task columns or repeating the row
    above, each adding a criterion. Whole columns are checked at once (in C, through `map`,
    `compress` and `any`), so that a 5,000-row file costs a Python step per task rather
    than several per row. Anything else (a `'`-neutralised cell that would strip to
    nothing, stray cells, rows without a task, conflicting values, repeated rows, a
    promptfoo column) returns None, and the row-by-row build reports it as it always has.
    The test comparing both builds on generated sheets holds this to the same document.
    """
    rows = table.rows
    header = table.header
    if not rows or "task_id" not in columns:
        return None
    if "expected" in columns and header[columns["expected"]].strip().startswith("__"):
        return None  # a promptfoo sheet: its assertions are looked at row by row
    records = list(map(itemgetter(1), rows))
    count = len(records)
    lengths = set(map(len, records))
    if max(lengths) > len(header):
        return None  # cells past the header: maybe stray, the row-by-row look decides
    transposed = list(
        zip(*records, strict=True) if len(lengths) == 1 else zip_longest(*records, fillvalue="")
    )
    blank_column = ("",) * count

    def cells(index: int) -> tuple[str, ...]:
        return transposed[index] if index < len(transposed) else blank_column

    for index, name in enumerate(header):
        if not name.strip() and any(map(str.strip, cells(index))):
            return None  # a value under no header

    # Each mapped column as the row-by-row look reads its cells, "" for a blank one.
    values: dict[str, Sequence[str]] = {}
    for key, index in columns.items():
        column = _column_values(cells(index), COLUMNS_BY_KEY[key].text, table.no_apostrophe)
        if column is None:
            return None
        values[key] = column

    ids = values.pop("task_id")
    lead = next((number for number, task_id in enumerate(ids) if task_id), count)
    if lead == count or "" in ids[lead:]:
        return None  # a row after the first task without a task_id: row by row
    task_keys = [key for key in values if key in TASK_KEYS]
    criterion_keys = [key for key in values if key in CRITERION_KEYS]
    has_criterion = _any_value([values[key] for key in criterion_keys], count)

    # Rows before the first task_id are criteria for every task, and nothing else.
    if lead and (
        any(any(values[key][:lead]) for key in task_keys) or not all(has_criterion[:lead])
    ):
        return None
    # A row continues the task above when it repeats its task_id. It adds nothing to the
    # task when each of its task cells is blank or the same as the row above (which the
    # task already holds); then it must add a criterion, else it is a repeated task row.
    # Other continuing rows are merged one by one, below.
    continues = [False] * (lead + 1) + list(map(eq, ids[lead + 1 :], ids[lead:-1]))
    unchanged = continues
    for key in task_keys:
        column = values[key]
        if not any(compress(column, continues)):
            continue  # blank on every continuing row
        same = map(or_, map(not_, column), map(eq, column, [None, *column[:-1]]))
        unchanged = list(map(and_, unchanged, same))
    if any(map(gt, unchanged, has_criterion)):
        return None
    merging = iter(compress(range(count), map(gt, continues, unchanged)))
    is_start = [False] * lead + list(map(not_, continues[lead:]))
    starts = list(compress(range(count), is_start))
    # Each task's cells from its first row, then the blank ones taken out again.
    start_values = {key: list(compress(values[key], is_start)) for key in task_keys}
    merged_values: list[dict[str, str]] = list(
        map(dict, map(zip, repeat(task_keys), zip(*start_values.values(), strict=True)))
    ) or [{} for _ in starts]
    for key, column in start_values.items():
        for merged in compress(merged_values, map(not_, column)):
            del merged[key]

    criterion_values = {key: list(compress(values[key], has_criterion)) for key in criterion_keys}
    criteria, handed = _criteria_by_columns(criterion_values, sum(has_criterion))
    first_of = list(accumulate(has_criterion, initial=0))
    # Rows without a criterion_id get `c1`, `c2`, … as `_criterion` numbers them.
    generate = "" in criterion_values.get("criterion_id", ("",))

    global_criteria = criteria[: first_of[lead]]
    global_ids = _IdMaker("c", [c["id"] for c in global_criteria if c["id"]])
    if generate:
        for criterion in global_criteria:
            if not criterion["id"]:
                criterion["id"] = global_ids.next()

    next_merge = next(merging, count)
    if next_merge < count:
        # Rows that add to their task's cells, merged as `_merge` would merge them.
        for merged, end in zip(merged_values, [*starts[1:], count], strict=True):
            while next_merge < end:
                added = False
                for key in task_keys:
                    value = values[key][next_merge]
                    if value:
                        if key not in merged:
                            merged[key] = value
                            added = True
                        elif merged[key] != value:
                            return None  # a conflicting task field
                if not added and not has_criterion[next_merge]:
                    return None  # a repeated task row
                next_merge = next(merging, count)
    bounds = list(map(first_of.__getitem__, [*starts, count]))
    own_criteria = [criteria[first:end] for first, end in pairwise(bounds)]
    if generate:
        for own in own_criteria:
            if not all(criterion["id"] for criterion in own):
                own_ids = _IdMaker("c", [c["id"] for c in own if c["id"]], taken=global_ids.used)
                for criterion in own:
                    if not criterion["id"]:
                        criterion["id"] = own_ids.next()
    tasks = list(map(_task_document, compress(ids, is_start), merged_values, own_criteria))
    document = ReaderDocument(
        name=dataset_name, description="", settings={}, criteria=global_criteria, tasks=tasks
    )
    # The criteria as columns too, for the validator (`CriteriaColumns`): the document's
    # criteria lists in its order (`_task_document` keeps a task's list only when it has
    # criteria), and the ids as the dicts now hold them, generated ones included.
    document.criteria_columns = CriteriaColumns(
        lists=[global_criteria, *filter(None, own_criteria)],
        ids=list(map(itemgetter("id"), criteria)) if generate else handed.ids,
        texts=handed.texts,
        weights=handed.weights,
        verifiers=handed.verifiers,
    )
    return document


def _any_value(columns: list[Sequence[str]], count: int) -> list[bool]:
    """Per row, whether any of `columns` has a value there (no tuple per row built)."""
    if not columns:
        return [False] * count
    # Most often one column (a criterion's text, its id) is filled on every row that has
    # anything: then that column alone answers.
    columns = sorted(columns, key=lambda column: column.count(""))
    found = list(map(bool, columns[0]))
    for column in columns[1:]:
        if all(found):
            break
        found = list(map(or_, found, map(bool, column)))
    return found


def _column_values(
    column: Sequence[str], text: bool, no_apostrophe: bool = False
) -> Sequence[str] | None:
    """A column's cells as `_row_values` reads them, "" where blank; None if that can't say."""
    # One search of the joined column finds every cell that starts with `'` (and perhaps a
    # line inside a cell that does, which the exact look below then passes over).
    if not no_apostrophe and column and (column[0].startswith("'") or "\n'" in "\n".join(column)):
        read = [_cell_value(cell, text) for cell in column]
        # A `'` cell that reads as "" would be a value "" here and a blank there.
        return None if None in read else read  # type: ignore[return-value]
    if not text:
        return list(map(str.strip, column))
    if any(map(str.isspace, column)):
        return ["" if cell.isspace() else cell for cell in column]
    return column


def _cell_value(cell: str, text: bool) -> str | None:
    """One cell as `_row_values` reads it ("" when blank), or None when it reads as ""."""
    if not cell or cell.isspace():
        return ""
    if cell[0] == "'":
        cell = unneutralize_formula(cell)
    value = cell if text else cell.strip()
    return value or None


def _criteria_by_columns(
    columns: dict[str, list[str]], count: int
) -> tuple[list[dict[str, Any]], CriteriaColumns]:
    """Each criterion row's `_criterion` at once; a blank "id" is left for the caller to fill.

    Also the same criteria a field at a time, as the dicts hold them (`CriteriaColumns`,
    with no lists yet: the caller splits the criteria into the document's lists).
    """
    blank = [""] * count
    ids = columns.get("criterion_id", blank)
    texts = columns.get("criterion", blank)
    weight_cells = columns.get("weight", blank)
    # A file has few distinct weights: read each once.
    numbers = {text: _number(text) for text in set(weight_cells)}
    weights = list(map(numbers.__getitem__, weight_cells))
    criteria: list[dict[str, Any]] = [
        {"id": criterion_id, "criterion": text, "weight": weight}
        for criterion_id, text, weight in zip(ids, texts, weights, strict=True)
    ]
    # A blank cell puts no key in the dict: `dict.get` then gives None for the text, and
    # the validator's default 1.0 for the weight; the columns say so too.
    if "" in texts:
        for criterion in compress(criteria, map(not_, texts)):
            del criterion["criterion"]
        texts = [text or None for text in texts]
    if "" in numbers:
        for criterion in compress(criteria, map(not_, weight_cells)):
            del criterion["weight"]
        weights = list(map({**numbers, "": 1.0}.__getitem__, weight_cells))
    verifier_keys: list[tuple[Any, ...] | None] = [None] * count
    verifier_columns = [
        (column, key) for column, key in _VERIFIER_COLUMNS["verifier"] if column in columns
    ]
    if verifier_columns:
        given = _any_value([columns[column] for column, _ in verifier_columns], count)
        verifier_rows = list(
            zip(*(compress(columns[column], given) for column, _ in verifier_columns), strict=True)
        )
        # Few distinct verifiers in a file: build each once, and a copy per criterion.
        verifiers = {
            cells: {
                key: value for (_, key), value in zip(verifier_columns, cells, strict=True) if value
            }
            for cells in set(verifier_rows)
        }
        keys = {
            cells: tuple(map(verifier.get, ("kind", "outputType", "instructions", "code")))
            for cells, verifier in verifiers.items()
        }
        for criterion, cells in zip(compress(criteria, given), verifier_rows, strict=True):
            criterion["verifier"] = verifiers[cells].copy()
        for index, cells in zip(compress(range(count), given), verifier_rows, strict=True):
            verifier_keys[index] = keys[cells]
    handed = CriteriaColumns(
        lists=[], ids=list(ids), texts=list(texts), weights=weights, verifiers=verifier_keys
    )
    return criteria, handed


# promptfoo's `__expected` cells are assertions, `type:value` (`icontains:bonjour`,
# `llm-rubric: …`, `fn:…`) or a bare type (`is-json`); a plain value is an equality check,
# which is what an expected answer is.
_PROMPTFOO_ASSERTION = re.compile(
    r"^\s*(not-)?(contains|icontains|contains-any|contains-all|icontains-any|icontains-all|"
    r"equals|starts-with|regex|is-json|contains-json|is-xml|is-sql|is-valid-openai-tools-call|"
    r"javascript|python|fn|eval|grader|llm-rubric|model-graded-closedqa|model-graded-factuality|"
    r"factuality|similar|levenshtein|rouge-n|bleu|answer-relevance|context-faithfulness|"
    r"context-recall|context-relevance|classifier|moderation|latency|cost|perplexity|"
    r"perplexity-score|webhook|select-best|human|g-eval)(\s*:|\s*$)",
    re.IGNORECASE,
)


def _is_promptfoo_assertion(value: str) -> bool:
    return bool(_PROMPTFOO_ASSERTION.match(value))


def _shorten(value: str, limit: int = 40) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


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
    "The retrieval evidence of {count} task(s) has no column in a spreadsheet; it is left out."
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


def rows_from_spec(spec: DatasetSpec) -> tuple[list[str], list[list[str]], list[str]]:
    """The spreadsheet for a dataset: (header, rows, warnings about what it cannot carry).

    One row per criterion (a task with no criteria: one row); criteria for every task come
    first, with `task_id` and `prompt` blank. Later rows of a task repeat only its `task_id`.
    The dataset's name is the file's name, so it is not a column.
    """
    records: list[dict[str, str]] = []
    for criterion in spec.criteria:
        records.append(_criterion_cells(criterion))
    for task in spec.tasks:
        first: dict[str, str] = {"task_id": task.id, "name": task.name, "prompt": task.prompt}
        if task.expected_text is not None:
            first["expected"] = task.expected_text
        first.update(_verifier_cells(task.expected_verifier, "expected_verifier"))
        if task.input_files:
            first["input_files"] = "\n".join(_file_cell(f) for f in task.input_files)
        if task.expected_files:
            first["expected_files"] = "\n".join(_file_cell(f) for f in task.expected_files)
        if not task.criteria:
            records.append(first)
        for number, criterion in enumerate(task.criteria):
            row = first if number == 0 else {"task_id": task.id}
            records.append({**row, **_criterion_cells(criterion)})
    used = {key for record in records for key, value in record.items() if value != ""}
    keys = [key for key in _WRITE_ORDER if key in used or key in _ALWAYS_WRITTEN]
    header = [COLUMNS_BY_KEY[key].spellings[0] for key in keys]
    rows = [[record.get(key, "") for key in keys] for record in records]

    warnings = []
    if spec.description:
        warnings.append(MSG_WRITE_DESCRIPTION)
    if spec.settings:
        warnings.append(MSG_WRITE_SETTINGS.format(keys=", ".join(sorted(spec.settings))))
    with_evidence = sum(1 for task in spec.tasks if task.evidence)
    if with_evidence:
        warnings.append(MSG_WRITE_EVIDENCE.format(count=with_evidence))
    return header, rows, warnings


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


def format_number(value: float) -> str:
    """`1.0` → `1`, `0.25` → `0.25`: what a person would type in the cell."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)
