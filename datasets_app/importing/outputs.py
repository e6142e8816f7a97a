"""An agent's outputs file: bytes + file name + the version's task ids in, outputs or problems out.

`.jsonl` lines `{"task": "<task id>", "output": "<text>"}` or `.csv` with a task column and
an output column; other names for either (`id`, `response`, ...) are read through the
importer's one alias list (`aliases.RUN_FIELDS`), and when two columns (or keys) could each
be the output, the reader asks (`OutputsFile.ask`) rather than guess. A line or row
may also carry what producing the output cost (`latency_ms`, `tokens`, `cost`, `model`,
`trace`, or their aliases in the same list: `total_tokens`, `cost_usd`, ...) and a
person's verdict per criterion (`labels`; in CSV, `label:<criterion id>` columns). Every
problem is found, each with its line or row; nothing is graded from a file that has any.
Pure Python, like the rest of `importing`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Any

from datasets_app.importing import aliases, csv_format, json_text
from datasets_app.importing.columns import unneutralize_formula
from datasets_app.importing.spec import MAX_FILE_BYTES, MAX_TEXT_CHARS, MAX_URL_CHARS, Problem, Rule

COST_KEYS: tuple[str, ...] = ("latency_ms", "tokens", "cost", "model", "trace")
LABEL_PREFIX = "label:"
# A run grades at most the tasks of one version; a dataset holds at most 100,000 live tasks
# (MAX_TASKS_PER_DATASET), and a file with more lines than that is not one agent's run of it.
MAX_OUTPUT_LINES = 100_000
# A file with thousands of bad lines is the wrong file: past this, its problems stop.
MAX_PROBLEMS = 1_000
MAX_MODEL_CHARS = 200

OUTPUTS_TOO_BIG = Rule("file_too_big", "The outputs file is larger than {limit} MiB.")
NOT_AN_OUTPUTS_FILE = Rule(
    "not_an_outputs_file",
    "An outputs file is .jsonl (a line per task) or .csv (a row per task), or a .zip of "
    "one with the tasks' output files, not {suffix}.",
)
NOT_A_LINE_OBJECT = Rule(
    "not_an_output_line",
    'This line is not {{"task": "<task id>", "output": "<text>"}}: {detail}.',
)
UNKNOWN_TASK = Rule("unknown_task", "The dataset has no task {task}.")
REPEATED_TASK = Rule("repeated_task", "Task {task} already has an output, on {first}.")
OUTPUT_TOO_LONG = Rule(
    "output_too_long", "This output is longer than {limit} characters; cut it or attach it."
)
BAD_COST = Rule("bad_cost", "{key} must be {kind}.")
BAD_LABEL = Rule(
    "bad_label",
    "The label of criterion {criterion} must be true, false or a score from 0 to 1.",
)
NO_TASK_COLUMN = Rule(
    "no_task_column", "The file has no task column: name one task (or id, task_id)."
)
NO_OUTPUT_COLUMN = Rule(
    "no_output_column",
    "The file has no output column: name one output (or response, answer, completion).",
)
AMBIGUOUS_COLUMN = Rule(
    "ambiguous_column",
    "The columns {columns} could each be the {role}: choose which one is.",
)
AMBIGUOUS_KEY = Rule(
    "ambiguous_column",
    "The keys {columns} could each be the {role}: choose which one is.",
)
# An outputs file's columns (or a line's keys) kept for the person to choose from.
MAX_COLUMNS = 200
TOO_MANY_LINES = Rule("too_many_outputs", "The file has more than {limit} outputs.")
NO_OUTPUTS = Rule("no_outputs", "The file holds no outputs.")
TOO_MANY_PROBLEMS = Rule(
    "too_many_problems", "More than {limit} problems; the rest are not listed."
)

_KIND = {
    "latency_ms": "a number of milliseconds, 0 or more",
    "tokens": "a whole number, 0 or more",
    "cost": "a number, 0 or more",
    "model": f"text of at most {MAX_MODEL_CHARS} characters",
    "trace": "a link starting https:// or http://",
}


@dataclass(frozen=True)
class OutputFile:
    """One file of a task's output (from a zip, `outputs_zip`): its name in the task's
    folder, its path in the zip and its size once unzipped."""

    name: str
    member: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "member": self.member, "size": self.size}


@dataclass(frozen=True)
class AgentOutput:
    """One task's output as the file gives it, with what it cost and any person's labels."""

    task: str
    output: str | None
    latency_ms: float | None = None
    tokens: int | None = None
    cost: float | None = None
    model: str = ""
    trace: str = ""
    labels: Mapping[str, bool | float] = field(default_factory=dict)
    line: int | None = None
    row: int | None = None
    files: tuple[OutputFile, ...] = ()

    @property
    def answered(self) -> bool:
        """Whether there is anything to grade: text, or files (a task with neither scores
        0 without a call)."""
        return bool((self.output or "").strip() or self.files)

    @property
    def costs(self) -> dict[str, Any] | None:
        """What producing it cost, as results documents carry it (`costs_json`)."""
        return costs_json({key: getattr(self, key) for key in COST_KEYS})


def costs_json(values: Mapping[str, Any]) -> dict[str, Any] | None:
    """The cost fields that were given (of `COST_KEYS`), as a task's `agent` in a results
    document; None when the line gave none (the document then leaves `agent` out)."""
    given = {key: values.get(key) for key in COST_KEYS if values.get(key) not in (None, "")}
    return given or None


@dataclass
class OutputsFile:
    """What was read: each task's output by id (in file order), and every problem.

    `mapping` is the column (or key) each of `task` and `output` was read from; `ask` the
    roles two or more columns could each fill, with those columns (the likeliest first);
    `columns` the file's columns (the first line's keys) to choose from.
    """

    format: str
    outputs: dict[str, AgentOutput] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)
    ask: dict[str, tuple[str, ...]] = field(default_factory=dict)
    columns: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def mapping_due(self) -> bool:
        """Whether the only problems are columns to choose (the person's answer is due)."""
        return bool(self.ask) and all(p.code == AMBIGUOUS_COLUMN.code for p in self.problems)


def _number(value: Any, *, whole: bool = False) -> float | int | None:
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if not text:
            return None
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0 or (whole and value != int(value)):
        return None
    return int(value) if whole else float(value)


def _cost(key: str, value: Any) -> Any:
    """The value of a cost field, or a `ValueError` naming what it must be."""
    if value is None or value == "":
        return None if key in ("latency_ms", "tokens", "cost") else ""
    if key in ("latency_ms", "tokens", "cost"):
        number = _number(value, whole=key == "tokens")
        if number is None:
            raise ValueError(_KIND[key])
        return number
    if not isinstance(value, str):
        raise ValueError(_KIND[key])
    if key == "model" and len(value) > MAX_MODEL_CHARS:
        raise ValueError(_KIND[key])
    if key == "trace" and (
        not value.startswith(("https://", "http://")) or len(value) > MAX_URL_CHARS
    ):
        raise ValueError(_KIND[key])
    return value


def _label(value: Any) -> bool | float | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "pass", "passed", "yes"):
            return True
        if lowered in ("false", "fail", "failed", "no"):
            return False
    number = _number(value)
    return number if number is not None and number <= 1 else None


class _Reader:
    """Collects outputs and problems across a file's lines or rows."""

    def __init__(self, name: str, task_ids: Collection[str], fmt: str) -> None:
        self.name = name
        self.known = task_ids if isinstance(task_ids, set | frozenset) else set(task_ids)
        self.result = OutputsFile(format=fmt)
        self.places: dict[str, str] = {}

    def problem(self, rule: Rule, *, line: int | None, row: int | None, **params: Any) -> None:
        problems = self.result.problems
        if len(problems) < MAX_PROBLEMS:
            task = params.pop("task_id", None)
            problem = rule.at(self.name, line=line, row=row, **params)
            problems.append(replace(problem, task=task))

    def add(
        self,
        values: dict[str, Any],
        labels: dict[str, Any],
        *,
        names: Mapping[str, str],
        line: int | None,
        row: int | None,
    ) -> None:
        """One line's (or row's) values by role, `names` the file's own name of each."""
        task_id, output = values.get("task"), values.get("output")
        where = {"line": line, "row": row}
        if output is not None and not isinstance(output, str):
            detail = '"output" must be text or null'
            self.problem(NOT_A_LINE_OBJECT, **where, detail=detail, task_id=task_id)
            return
        if isinstance(output, str) and len(output) > MAX_TEXT_CHARS:
            self.problem(OUTPUT_TOO_LONG, **where, limit=MAX_TEXT_CHARS, task_id=task_id)
            return
        costs: dict[str, Any] = {}
        for key in COST_KEYS:
            try:
                costs[key] = _cost(key, values.get(key))
            except ValueError as exc:
                name = names.get(key, key)
                self.problem(BAD_COST, **where, key=name, kind=str(exc), task_id=task_id)
                return
        checked: dict[str, bool | float] = {}
        for criterion, value in labels.items():
            if value is None or value == "":
                continue
            label = _label(value)
            if label is None:
                self.problem(BAD_LABEL, **where, criterion=criterion, task_id=task_id)
                return
            checked[criterion] = label
        assert isinstance(task_id, str)
        if task_id not in self.known:
            self.problem(UNKNOWN_TASK, **where, task=quoted(task_id), task_id=task_id)
        elif task_id in self.places:
            first = self.places[task_id]
            self.problem(REPEATED_TASK, **where, task=quoted(task_id), first=first, task_id=task_id)
        else:
            self.places[task_id] = f"line {line:,}" if line is not None else f"row {row:,}"
            self.result.outputs[task_id] = AgentOutput(
                task=task_id, output=output, labels=checked, line=line, row=row, **costs
            )

    def full(self, *, line: int | None, row: int | None) -> bool:
        """Past MAX_OUTPUT_LINES: said once, and the rest is not read."""
        if len(self.places) < MAX_OUTPUT_LINES:
            return False
        self.problem(TOO_MANY_LINES, line=line, row=row, limit=MAX_OUTPUT_LINES)
        return True

    def finish(self) -> OutputsFile:
        if len(self.result.problems) >= MAX_PROBLEMS:
            self.result.problems.append(TOO_MANY_PROBLEMS.at(self.name, limit=MAX_PROBLEMS))
        if not self.result.problems and not self.result.outputs:
            self.result.problems.append(NO_OUTPUTS.at(self.name))
        return self.result


def quoted(task_id: str) -> str:
    """A task id as problems quote it."""
    return json.dumps(task_id, ensure_ascii=False)


@dataclass(frozen=True)
class _Roles:
    """Which column (or key) holds each of task, output and the cost fields."""

    at: dict[str, int]
    ask: dict[str, tuple[int, ...]]
    missing: tuple[str, ...]


_RANK = {
    (field.key, aliases.normalize(spelling)): rank
    for field in aliases.RUN_FIELDS
    for rank, spelling in enumerate(field.spellings)
}


def _cost_columns(header: list[str], found: Mapping[str, list[int]]) -> dict[str, int]:
    """The column of each cost field: what a run cost is shown, never graded, so two names
    for one are not asked about; its own name wins, else the first alias."""
    at = {}
    for role, columns in found.items():
        own = [i for i in columns if aliases.normalize(header[i]) == aliases.normalize(role)]
        at[role] = (own or columns)[0]
    return at


def _column_roles(header: list[str], mapping: Mapping[str, str] | None) -> _Roles:
    """The roles of `header`'s names: the person's choice first, then the format's own name
    (`task`, `output`), then the one alias present; two aliases and no choice are asked."""
    candidates: dict[str, list[int]] = {"task": [], "output": []}
    costs: dict[str, list[int]] = {}
    for index, name in enumerate(header):
        role = aliases.run_field_for(name)
        if role is not None:
            (candidates if role in candidates else costs).setdefault(role, []).append(index)
    at = _cost_columns(header, costs)
    ask: dict[str, tuple[int, ...]] = {}
    missing = []
    for role, found in candidates.items():
        chosen = (mapping or {}).get(role)
        own = [i for i in found if aliases.normalize(header[i]) == role]
        if chosen is not None and chosen in header:
            at[role] = header.index(chosen)
        elif len(own) == 1 or len(found) == 1:
            at[role] = (own or found)[0]
        elif not found:
            missing.append(role)
        else:
            ranked = sorted(found, key=lambda i: _RANK[(role, aliases.normalize(header[i]))])
            ask[role] = tuple(ranked)
    return _Roles(at=at, ask=ask, missing=tuple(missing))


def _asked(reader: _Reader, header: list[str], roles: _Roles, rule: Rule, **where: Any) -> None:
    """Each role two names could fill, as a problem and as the question for the person."""
    result = reader.result
    for role, found in roles.ask.items():
        names = ", ".join(f"'{header[i]}'" for i in sorted(found))
        reader.problem(rule, **where, columns=names, role=role)
        result.ask[role] = tuple(header[i] for i in found)
    _used(reader, header, roles)


def _used(reader: _Reader, header: list[str], roles: _Roles) -> None:
    """What the first line (or the header) was read with, to show and to choose again."""
    result = reader.result
    if result.mapping:
        return
    for role in ("task", "output"):
        if role in roles.at:
            result.mapping[role] = header[roles.at[role]]
    if not result.columns:
        result.columns = tuple(header[:MAX_COLUMNS])


_NOT_AN_ID = '"task" must be the task\'s id, as text'


def _read_jsonl(data: bytes, reader: _Reader, mapping: Mapping[str, str] | None) -> None:
    text, _encoding, problems = json_text.decode(data, reader.name)
    if text is None:
        reader.result.problems.extend(problems)
        return
    # Lines of one file share their keys: each set of keys is read for its roles once.
    known: dict[tuple[str, ...], _Roles | None] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        if reader.full(line=number, row=None):
            return
        try:
            item = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # nesting past the parser's stack
            reader.problem(NOT_A_LINE_OBJECT, line=number, row=None, detail=f"not JSON ({exc})")
            continue
        if not isinstance(item, dict):
            reader.problem(NOT_A_LINE_OBJECT, line=number, row=None, detail=_NOT_AN_ID)
            continue
        keys = tuple(item)
        if keys not in known:
            found = _column_roles(list(keys), mapping)
            if found.ask:
                _asked(reader, list(keys), found, AMBIGUOUS_KEY, line=number, row=None)
            known[keys] = None if found.ask else found
        roles = known[keys]
        if roles is not None:  # else asked once, on the first line with these keys
            _read_line(reader, item, keys, roles, number)


def _read_line(
    reader: _Reader, item: dict[str, Any], keys: tuple[str, ...], roles: _Roles, number: int
) -> None:
    task = item[keys[roles.at["task"]]] if "task" in roles.at else None
    if isinstance(task, bool) or not isinstance(task, str | int):
        reader.problem(NOT_A_LINE_OBJECT, line=number, row=None, detail=_NOT_AN_ID)
        return
    labels = item.get("labels") or {}
    if not isinstance(labels, dict):
        detail = '"labels" must be an object of criterion ids and verdicts'
        reader.problem(NOT_A_LINE_OBJECT, line=number, row=None, detail=detail)
        return
    _used(reader, list(keys), roles)
    values = {role: item[keys[index]] for role, index in roles.at.items()}
    values["task"] = str(task)
    names = {role: keys[index] for role, index in roles.at.items()}
    reader.add(values, labels, names=names, line=number, row=None)


def _read_csv(data: bytes, reader: _Reader, mapping: Mapping[str, str] | None) -> None:
    decoded = csv_format.decode(data, reader.name)
    if decoded.table is None or decoded.problems:
        reader.result.problems.extend(decoded.problems)
        return
    table = decoded.table
    roles = _column_roles(table.header, mapping)
    where = {"line": None, "row": table.header_row}
    for role in roles.missing:
        reader.problem(NO_TASK_COLUMN if role == "task" else NO_OUTPUT_COLUMN, **where)
    _asked(reader, table.header, roles, AMBIGUOUS_COLUMN, **where)
    if roles.missing or roles.ask:
        return
    _used(reader, table.header, roles)
    labels = {
        index: name.strip()[len(LABEL_PREFIX) :].strip()
        for index, name in enumerate(table.header)
        if name.strip().lower().startswith(LABEL_PREFIX)
    }
    names = {role: table.header[index] for role, index in roles.at.items()}
    for number, cells in table.rows:
        if reader.full(line=None, row=number):
            return

        def cell(index: int, cells: Any = cells) -> str:
            return unneutralize_formula(cells[index]) if index < len(cells) else ""

        task_id = cell(roles.at["task"]).strip()
        if not task_id:
            continue
        values: dict[str, Any] = {key: cell(index) for key, index in roles.at.items()}
        values["task"] = task_id
        row_labels = {name: cell(index) for index, name in labels.items()}
        reader.add(values, row_labels, names=names, line=None, row=number)


def read_outputs(
    data: bytes,
    name: str,
    task_ids: Collection[str],
    *,
    mapping: Mapping[str, str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> OutputsFile:
    """The outputs in a `.jsonl` or `.csv` by task id, and every problem, each on its line
    or row (`outputs_zip.read_outputs_file` reads any outputs file, a `.zip` too).

    `task_ids` are the tasks being graded (an id not among them is a problem); `mapping`
    names the `task` and `output` columns (or keys) when the names leave it open.
    """
    suffix = PurePath(name).suffix.lower()
    fmt = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}.get(suffix)
    if fmt is None:
        return OutputsFile(
            format="", problems=[NOT_AN_OUTPUTS_FILE.at(name, suffix=suffix or "a file")]
        )
    if len(data) > max_bytes:
        return OutputsFile(format=fmt, problems=[OUTPUTS_TOO_BIG.at(name, limit=max_bytes >> 20)])
    reader = _Reader(name, task_ids, fmt)
    if fmt == "csv":
        _read_csv(data, reader, mapping)
    else:
        _read_jsonl(data, reader, mapping)
    return reader.finish()
