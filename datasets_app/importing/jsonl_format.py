"""The .jsonl format: one task object per line, with no settings and no criteria for every task.

The page: "If any line is wrong, the whole file is refused and every bad line is named."
Each line is parsed on its own so that every bad line is reported; blank lines are skipped.
A task's problems are on the line that holds it, so their `field` leaves out the
`tasks[n].` that the line already says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from datasets_app.importing import shapes
from datasets_app.importing.json_text import (
    decode,
    loads,
    nul_problems,
    record_field,
)
from datasets_app.importing.shapes.base import Record
from datasets_app.importing.spec import (
    CheckOptions,
    DocPath,
    Locate,
    Problem,
    Read,
    Rule,
    counted,
)

LINE_NOT_A_TASK = Rule(
    "line_not_a_task",
    "Line {line_number} is not a task: each line of a .jsonl must be one JSON object, "
    '{{"prompt": ...}}.',
)
DATASET_KEYS_IN_JSONL = Rule(
    "dataset_keys_in_jsonl",
    "Line {line_number} holds {keys}, which a .jsonl cannot have: it is one task per line. "
    "Use a .json file for settings and criteria for every task.",
)
EMPTY_JSONL = Rule("empty_jsonl", "The file has no tasks: every line is blank.")
JSON_ARRAY_IN_JSONL = Rule(
    "json_array_in_jsonl",
    "The file is one JSON array of {count}, not JSON Lines (one object a line). Save it as a "
    ".json file, or write each item on a line of its own, and choose it again.",
)

# Keys of the whole .json document that mean someone put a dataset (not a task) on a line.
_DATASET_KEYS = ("format", "version", "settings", "tasks")


class _LineLocator:
    def __init__(self, lines: list[int | None]) -> None:
        self.lines: list[int | None] = lines

    def __call__(self, path: DocPath) -> tuple[int | None, int | None]:
        index = path[1] if len(path) >= 2 and path[0] == "tasks" else None
        if isinstance(index, int) and 0 <= index < len(self.lines):
            return (None, self.lines[index])
        return (None, None)


def read(data: bytes, file_name: str, options: CheckOptions | None = None) -> Read:
    """Read a .jsonl file: the page's tasks {"tasks": [...]}, or another tool's records
    (the reader of the importer's stages, `spec.Read`).

    Lines in another tool's shape (OpenAI evals, NQ-open, HealthBench, ...) are made
    tasks by the shape stage; a line of our own format is taken as it is.
    """
    text, encoding, problems = decode(data, file_name)
    array = _whole_array(text, file_name) if text is not None else None
    if text is None or array is not None:
        detected = f"JSON Lines, one task per line, {encoding}"
        problems = [array] if array is not None else problems
        return Read("jsonl", detected, file_name, problems)
    return read_text(text, file_name, encoding, options)


def _whole_array(text: str, file_name: str) -> Problem | None:
    """A whole JSON array (often pretty-printed) saved as .jsonl: one problem that says so,
    not one per line of it, starting at a line that is only "["."""
    if not text.lstrip().startswith("["):
        return None
    value, unparsed = loads(text, file_name)
    if unparsed or not isinstance(value, list):
        return None
    return JSON_ARRAY_IN_JSONL.at(file_name, line=1, count=counted(len(value), "item"))


def read_text(
    text: str,
    file_name: str,
    encoding: str,
    options: CheckOptions | None = None,
    *,
    kind: str = "JSON Lines",
) -> Read:
    """`read` for decoded text; `kind` starts the Detected line (see `json_format`, which
    hands over JSON Lines saved as .json)."""
    detected = f"{kind}, one task per line, {encoding}"
    tasks, lines, problems = _objects(text, file_name)
    locate = _LineLocator(lines)
    problems.extend(nul_problems(text, file_name))
    if not tasks:
        if not problems:
            problems.append(EMPTY_JSONL.at(file_name))
        return Read("jsonl", detected, file_name, problems)
    if (options and options.mapping) or not shapes.is_canonical(tasks):
        found = shapes.records_of(
            [(value, (), line) for value, line in zip(tasks, lines, strict=True)]
        )
        layout = _LineRecords(f"{kind}, {{}}, {encoding}")
        return Read("jsonl", detected, file_name, problems, records=found, layout=layout)
    document = {"tasks": tasks}
    return Read(
        "jsonl",
        detected,
        file_name,
        problems,
        document=document,
        locate=locate,
        field_label=record_field,
    )


def _objects(
    text: str, file_name: str
) -> tuple[list[dict[str, Any]], list[int | None], list[Problem]]:
    """Each line's object (a task, or another tool's record), the line each is on, and
    what is wrong with the other lines."""
    problems: list[Problem] = []
    tasks: list[dict[str, Any]] = []
    lines: list[int | None] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        value, line_problems = loads(line, file_name, line_offset=number - 1)
        if line_problems:
            problems.extend(line_problems)
            continue
        if not isinstance(value, dict):
            problems.append(LINE_NOT_A_TASK.at(file_name, line=number, line_number=number))
            continue
        dataset_keys = [key for key in _DATASET_KEYS if key in value]
        if dataset_keys:
            keys = ", ".join(f'"{key}"' for key in dataset_keys)
            problems.append(
                DATASET_KEYS_IN_JSONL.at(file_name, line=number, line_number=number, keys=keys)
            )
            continue
        tasks.append(value)
        lines.append(number)
    return tasks, lines, problems


class _LineRecords:
    """Where another tool's records stand in JSON Lines (`spec.RecordsLayout`): each on its
    line. `detected` holds `{}` where the records' shape goes."""

    def __init__(self, detected: str) -> None:
        self._detected = detected

    def detected(self, shape: str) -> str:
        return self._detected.format(shape)

    def lines(self, records: Sequence[Record]) -> list[int | None]:
        return [record.line for record in records]

    def locate(self, places: Sequence[Record]) -> Locate:
        return _LineLocator([record.line for record in places])

    def around(self, document: dict[str, Any]) -> dict[str, Any]:
        return document

    def field_label(self, path: DocPath) -> str:
        return record_field(path)
