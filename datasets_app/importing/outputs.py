"""An agent's outputs file: bytes + file name + the version's task ids in, outputs or problems out.

`.jsonl` lines `{"task": "<task id>", "output": "<text>"}` or `.csv` with a task column and
an output column (the importer's spellings of an id, and `OUTPUT_SPELLINGS`). A line or row
may also carry what producing the output cost (`latency_ms`, `tokens`, `cost`, `model`,
`trace`) and a person's verdict per criterion (`labels`; in CSV, `label:<criterion id>`
columns). Every problem is found, each with its line or row; nothing is graded from a file
that has any. Pure Python, like the rest of `importing`.
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

# The names people give the column that holds the agent's answer. `answer` and
# `completion` also mean the *expected* answer in a dataset file (aliases.FIELDS); in an
# outputs file there is no expected answer, so here they mean the agent's.
OUTPUT_SPELLINGS: tuple[str, ...] = (
    "output",
    "response",
    "answer",
    "completion",
    "actual_output",
    "model_output",
    "prediction",
    "generation",
)
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
    "An outputs file is .jsonl (a line per task) or .csv (a row per task), not {suffix}.",
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
    "The columns {columns} could each be the {role}: say which (the {role} column).",
)
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


@dataclass
class OutputsFile:
    """What was read: each task's output by id (in file order), and every problem."""

    format: str
    outputs: dict[str, AgentOutput] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


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
        self, values: dict[str, Any], labels: dict[str, Any], *, line: int | None, row: int | None
    ) -> None:
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
                self.problem(BAD_COST, **where, key=key, kind=str(exc), task_id=task_id)
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
            self.problem(UNKNOWN_TASK, **where, task=_quoted(task_id), task_id=task_id)
        elif task_id in self.places:
            first = self.places[task_id]
            self.problem(
                REPEATED_TASK, **where, task=_quoted(task_id), first=first, task_id=task_id
            )
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


def _quoted(task_id: str) -> str:
    return json.dumps(task_id, ensure_ascii=False)


def _read_jsonl(data: bytes, reader: _Reader) -> None:
    text, _encoding, problems = json_text.decode(data, reader.name)
    if text is None:
        reader.result.problems.extend(problems)
        return
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
        if not isinstance(item, dict) or not isinstance(item.get("task"), str | int):
            detail = '"task" must be the task\'s id, as text'
            reader.problem(NOT_A_LINE_OBJECT, line=number, row=None, detail=detail)
            continue
        if isinstance(item["task"], bool):
            detail = '"task" must be the task\'s id, as text'
            reader.problem(NOT_A_LINE_OBJECT, line=number, row=None, detail=detail)
            continue
        labels = item.get("labels") or {}
        if not isinstance(labels, dict):
            detail = '"labels" must be an object of criterion ids and verdicts'
            reader.problem(NOT_A_LINE_OBJECT, line=number, row=None, detail=detail)
            continue
        values = {**item, "task": str(item["task"])}
        reader.add(values, labels, line=number, row=None)


def _column_roles(
    header: list[str], mapping: Mapping[str, str] | None
) -> tuple[dict[str, int], list[tuple[Rule, dict[str, Any]]]]:
    """Which column holds each of task, output and the cost fields; ambiguities as problems."""
    normal = [aliases.normalize(name) for name in header]
    outputs = {aliases.normalize(name) for name in OUTPUT_SPELLINGS}
    costs = {aliases.normalize(key): key for key in COST_KEYS}
    candidates: dict[str, list[int]] = {"task": [], "output": []}
    roles: dict[str, int] = {}
    for index, name in enumerate(header):
        if aliases.field_for(name) == "id":
            candidates["task"].append(index)
        elif normal[index] in outputs:
            candidates["output"].append(index)
        elif normal[index] in costs:
            roles.setdefault(costs[normal[index]], index)
    problems: list[tuple[Rule, dict[str, Any]]] = []
    for role, found in candidates.items():
        chosen = (mapping or {}).get(role)
        if chosen is not None and chosen in header:
            roles[role] = header.index(chosen)
        elif len(found) == 1:
            roles[role] = found[0]
        elif not found:
            problems.append((NO_TASK_COLUMN if role == "task" else NO_OUTPUT_COLUMN, {}))
        else:
            names = ", ".join(f"'{header[i]}'" for i in found)
            problems.append((AMBIGUOUS_COLUMN, {"columns": names, "role": role}))
    return roles, problems


def _read_csv(data: bytes, reader: _Reader, mapping: Mapping[str, str] | None) -> None:
    decoded = csv_format.decode(data, reader.name)
    if decoded.table is None or decoded.problems:
        reader.result.problems.extend(decoded.problems)
        return
    table = decoded.table
    roles, problems = _column_roles(table.header, mapping)
    for rule, params in problems:
        reader.problem(rule, line=None, row=table.header_row, **params)
    if problems:
        return
    labels = {
        index: name.strip()[len(LABEL_PREFIX) :].strip()
        for index, name in enumerate(table.header)
        if name.strip().lower().startswith(LABEL_PREFIX)
    }
    for number, cells in table.rows:
        if reader.full(line=None, row=number):
            return

        def cell(index: int, cells: Any = cells) -> str:
            return unneutralize_formula(cells[index]) if index < len(cells) else ""

        task_id = cell(roles["task"]).strip()
        if not task_id:
            continue
        values: dict[str, Any] = {key: cell(index) for key, index in roles.items()}
        values["task"] = task_id
        reader.add(
            values, {name: cell(index) for index, name in labels.items()}, line=None, row=number
        )


def read_outputs(
    data: bytes,
    name: str,
    task_ids: Collection[str],
    *,
    mapping: Mapping[str, str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> OutputsFile:
    """The outputs in `data` by task id, and every problem, each on its line or row.

    `task_ids` are the tasks being graded (an id not among them is a problem); `mapping`
    names the CSV's `task` and `output` columns when the headers leave it open.
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
        _read_jsonl(data, reader)
    return reader.finish()
