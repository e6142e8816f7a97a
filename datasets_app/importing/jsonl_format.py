"""The .jsonl format: one task object per line, with no settings and no criteria for every task.

The page: "If any line is wrong, the whole file is refused and every bad line is named."
Each line is parsed on its own so that every bad line is reported; blank lines are skipped.
A task's problems are on the line that holds it, so their `field` leaves out the
`tasks[n].` that the line already says.
"""

from __future__ import annotations

from typing import Any

from datasets_app.importing import shapes
from datasets_app.importing.json_text import (
    NUL_CHARACTER,
    decode,
    escaped_nul_lines,
    loads,
)
from datasets_app.importing.spec import (
    CheckOptions,
    DocPath,
    Parsed,
    Problem,
    Rule,
    counted,
    field_path,
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


def _field_label(path: DocPath) -> str:
    # ("tasks", 3, "criteria", 0, "weight") -> "criteria[0].weight": the line says which task.
    if len(path) > 2 and path[0] == "tasks":
        return field_path(path[2:])
    return field_path(path)


class _LineLocator:
    def __init__(self, lines: list[int | None]) -> None:
        self.lines: list[int | None] = lines

    def __call__(self, path: DocPath) -> tuple[int | None, int | None]:
        index = path[1] if len(path) >= 2 and path[0] == "tasks" else None
        if isinstance(index, int) and 0 <= index < len(self.lines):
            return (None, self.lines[index])
        return (None, None)


def read(data: bytes, file_name: str, options: CheckOptions | None = None) -> Parsed:
    """Read a .jsonl file into the canonical document {"tasks": [...]} (not yet validated).

    Lines in another tool's shape (OpenAI evals, NQ-open, HealthBench, ...) are turned
    into tasks by `shapes`; a line of our own format is taken as it is.
    """
    text, encoding, problems = decode(data, file_name)
    array = _whole_array(text, file_name) if text is not None else None
    if text is None or array is not None:
        detected = f"JSON Lines, one task per line, {encoding}"
        problems = [array] if array is not None else problems
        return Parsed("jsonl", detected, file_name, None, _LineLocator([]), problems=problems)
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
) -> Parsed:
    """`read` for decoded text; `kind` starts the Detected line (see `json_format`, which
    hands over JSON Lines saved as .json)."""
    detected = f"{kind}, one task per line, {encoding}"
    locate = _LineLocator([])
    problems: list[Problem] = []
    tasks: list[dict[str, Any]] = []
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
        locate.lines.append(number)

    problems.extend(NUL_CHARACTER.at(file_name, line=line) for line in escaped_nul_lines(text))
    if not tasks:
        if not problems:
            problems.append(EMPTY_JSONL.at(file_name))
        return Parsed("jsonl", detected, file_name, None, locate, problems=problems)
    if (options and options.mapping) or not shapes.is_canonical(tasks):
        return _shaped(
            tasks, locate.lines, problems, file_name, f"{kind}, {{}}, {encoding}", options
        )
    document = {"tasks": tasks}
    return Parsed(
        "jsonl",
        detected,
        file_name,
        document,
        locate,
        problems=problems,
        field_label=_field_label,
    )


def _shaped(
    values: list[dict[str, Any]],
    lines: list[int | None],
    problems: list[Problem],
    file_name: str,
    detected: str,
    options: CheckOptions | None,
) -> Parsed:
    """Lines of another tool's records as the canonical document (see `shapes`);
    `detected` is the Detected line with `{}` where the records' shape goes."""
    found = shapes.records_of(
        [(value, (), line) for value, line in zip(values, lines, strict=True)]
    )
    shaped = shapes.read_records(
        found,
        file_name=file_name,
        options=options,
    )
    locate = _LineLocator([record.line for record in shaped.places])
    return Parsed(
        "jsonl",
        detected.format(shaped.detected),
        file_name,
        shaped.document,
        locate,
        problems=[*problems, *shaped.problems],
        warnings=shaped.warnings,
        field_label=_field_label,
        mapping=shaped.mapping,
    )
