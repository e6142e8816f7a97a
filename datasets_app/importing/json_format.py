"""The .json dataset format: read bytes into the canonical document, write a plan back out.

Reading decodes and parses the text through the JSON text layer (`json_text`: UTF-8, with or
without a byte order mark; UTF-16 or UTF-32 only with one) and leaves the checking to
`document.validate_document`. JSON Lines saved under a .json name are handed to
`jsonl_format`, which reads through the same layer and imports nothing from here.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import IO, Any

from datasets_app.importing import jsonl_format, shapes
from datasets_app.importing.document import (
    FORMAT_NAME,
    FORMAT_VERSION,
    TOO_MANY_TASKS,
    check_parsed,
    in_file_order,
    validate_json_text,
)
from datasets_app.importing.json_text import (
    JsonLocator,
    decode,
    is_json_lines,
    loads,
    long_list_head,
    may_hold_escaped_nul,
    nul_problems,
    record_field,
)
from datasets_app.importing.shapes.base import Record
from datasets_app.importing.spec import (
    MAX_TASKS,
    CheckOptions,
    CheckResult,
    CriterionSpec,
    DatasetSpec,
    DocPath,
    FileSpec,
    Locate,
    Parsed,
    Problem,
    Read,
    TaskSpec,
    Verifier,
)

# The end of a key: a closing quote, JSON white space, a colon. (A string value cannot be
# followed by a colon, so only keys, and the odd `\":` inside a string, match.)
_KEY_END = re.compile(r'"[ \t\n\r]*:')
# 1,000 tasks with ten criteria each, files and verifiers have about 100,000 keys; 2 MiB
# of text holds fewer than 200,000 distinct keys (tens of MB of errors at worst).
_MAX_KEYS_FOR_ONE_PASS = 250_000
_COUNT_KEYS_ABOVE = 2 * 1024 * 1024


def read(data: bytes, file_name: str, options: CheckOptions | None = None) -> Read:
    """Read a .json dataset file: the page's document, or another tool's records in it
    (the reader of the importer's stages, `spec.Read`)."""
    text, encoding, problems = decode(data, file_name)
    detected = f"JSON dataset, {encoding}"
    if text is None:
        return Read("json", detected, file_name, problems=problems)
    return _parse(text, file_name, encoding, options)


# Keys of our own document: an object that says its "format", or holds our tasks, or only
# these keys, is read as it is; anything else is another tool's records (see `shapes`).
_DOCUMENT_KEYS = frozenset(
    {"format", "version", "name", "description", "settings", "criteria", "tasks"}
)


def _is_our_document(document: dict[str, Any]) -> bool:
    if "format" in document:
        return True
    tasks = document.get("tasks")
    if not isinstance(tasks, list):
        return document.keys() <= _DOCUMENT_KEYS
    return shapes.is_canonical(task for task in tasks if isinstance(task, dict))


def _parse(text: str, file_name: str, encoding: str, options: CheckOptions | None = None) -> Read:
    detected = f"JSON dataset, {encoding}"
    max_tasks = options.max_tasks if options else MAX_TASKS
    counted = long_list_head(text, max_tasks + 1)
    if counted is not None:
        return _too_long_list(*counted, text, file_name, encoding, options)
    document, problems = loads(text, file_name)
    if problems:
        if is_json_lines(text):
            return jsonl_format.read_text(text, file_name, encoding, options, kind=LINES_IN_JSON)
        return Read("json", detected, file_name, problems=problems)
    mapped = bool(options and options.mapping)
    problems = nul_problems(text, file_name)
    if not mapped and _is_list_of_our_tasks(document):
        # The page's tasks in a bare list are held to the page's rules, as in "tasks".
        located = _ListLocator(JsonLocator(text))
        document = {"tasks": document}
        return Read("json", detected, file_name, problems, document=document, locate=located)
    if mapped or not (isinstance(document, dict) and _is_our_document(document)):
        return _records(document, text, file_name, encoding, options, problems)
    return Read("json", detected, file_name, problems, document=document, locate=JsonLocator(text))


def _too_long_list(
    head: list[Any],
    total: int,
    text: str,
    file_name: str,
    encoding: str,
    options: CheckOptions | None,
) -> Read:
    """A list of more records than a file may hold, read no further than its first ones:
    the page's tasks are refused as the validator refuses them, another tool's records
    go through their shape with the list's length (its refusal or mapping comes first)."""
    max_tasks = options.max_tasks if options else MAX_TASKS
    problems = nul_problems(text, file_name)
    if not (options and options.mapping) and _is_list_of_our_tasks(head):
        problems.append(TOO_MANY_TASKS.at(file_name, line=1, count=total, limit=max_tasks))
        return Read("json", f"JSON dataset, {encoding}", file_name, problems)
    return _records(head, text, file_name, encoding, options, problems, total=total)


def _is_list_of_our_tasks(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(task, dict) for task in document)
        and shapes.is_canonical(document)
    )


class _ListLocator:
    """Finds `("tasks", n, ...)` in a file whose top level is the list of tasks itself."""

    def __init__(self, json: JsonLocator) -> None:
        self.json = json

    def __call__(self, path: DocPath) -> tuple[int | None, int | None]:
        return self.many([path])[path]

    def many(self, paths: Iterable[DocPath]) -> dict[DocPath, tuple[int | None, int | None]]:
        wanted = list(paths)
        inner = {path: path[1:] if path[:1] == ("tasks",) else () for path in wanted}
        found = self.json.many(inner.values())
        return {path: found[inner[path]] for path in wanted}


# Many tools (and Hugging Face downloads) save JSON Lines under a .json name.
LINES_IN_JSON = "JSON Lines in a .json file"


class _RecordLocator:
    """Puts a task built from another tool's record on the record's line in the text."""

    def __init__(self, json: JsonLocator, paths: list[DocPath]) -> None:
        self.json = json
        self.paths = paths

    def __call__(self, path: DocPath) -> tuple[int | None, int | None]:
        return self.many([path])[path]

    def many(self, paths: Iterable[DocPath]) -> dict[DocPath, tuple[int | None, int | None]]:
        wanted = list(paths)
        inside = {path: self._record(path) for path in wanted}
        found = self.json.many([p for p in inside.values() if p is not None])
        return {
            path: (None, None) if (record := inside[path]) is None else found[record]
            for path in wanted
        }

    def _record(self, path: DocPath) -> DocPath | None:
        index = path[1] if len(path) >= 2 and path[0] == "tasks" else None
        if isinstance(index, int) and 0 <= index < len(self.paths):
            return self.paths[index]
        return None


class _JsonRecords:
    """Where another tool's records stand in JSON text (`spec.RecordsLayout`): by their
    paths in the document that held them."""

    def __init__(self, text: str, encoding: str, held_by: Any, container: str) -> None:
        self.json = JsonLocator(text)
        self.encoding = encoding
        self.held_by = held_by
        self.container = container

    def detected(self, shape: str) -> str:
        return f"JSON, {shape}, {self.encoding}"

    def lines(self, records: Sequence[Record]) -> list[int | None]:
        found = self.json.many([record.path for record in records])
        return [found[record.path][1] for record in records]

    def locate(self, places: Sequence[Record]) -> Locate:
        return _RecordLocator(self.json, [record.path for record in places])

    def around(self, document: dict[str, Any]) -> dict[str, Any]:
        if isinstance(self.held_by, dict) and self.container == "tasks":
            # Our own document whose tasks are another tool's records: keep its other keys.
            return {**self.held_by, "tasks": document["tasks"]}
        return document

    def field_label(self, path: DocPath) -> str:
        return record_field(path)


def _records(
    document: Any,
    text: str,
    file_name: str,
    encoding: str,
    options: CheckOptions | None,
    problems: list[Problem],
    *,
    total: int = 0,
) -> Read:
    """Another tool's records (a list, an object holding one, ...), found in the document
    for the shape stage; a document that is no dataset is refused here."""
    refused = None if options and options.mapping else shapes.document_refusal(document, file_name)
    if refused is not None:
        return Read("json", f"JSON, {encoding}", file_name, [refused])
    found = shapes.find_records(document)
    if isinstance(found, str):
        problem = shapes.NO_RECORDS.at(file_name, line=1, what=found)
        return Read("json", f"JSON, {encoding}", file_name, [problem])
    found.total = max(found.total, total)
    layout = _JsonRecords(text, encoding, document, found.container)
    return Read("json", f"JSON, {encoding}", file_name, problems, records=found, layout=layout)


def check(
    data: bytes,
    file_name: str,
    *,
    options: CheckOptions,
    zip_members: Mapping[str, int] | None = None,
) -> CheckResult:
    """Check a .json dataset file: `read` then `validate_document`, but faster when valid.

    A well-formed file is parsed and validated in one pass (`validate_json_text`); only a
    file with a syntax error, a wrong type or an unknown key is read into a document first,
    so that every problem gets its line.
    """
    text, encoding, problems = decode(data, file_name)
    detected = f"JSON dataset, {encoding}"
    if text is None:
        return CheckResult(file_name, "json", detected, problems=tuple(problems))
    if options.mapping:
        return check_parsed(_shaped(text, file_name, encoding, options), options=options)
    errors = None
    if _few_keys(text) and not may_hold_escaped_nul(text):
        fast = validate_json_text(
            text,
            file_name=file_name,
            locate=JsonLocator(text),
            options=options,
            zip_members=zip_members,
        )
        if isinstance(fast, tuple):
            plan, problems, warnings = fast
            return CheckResult(
                file_name,
                "json",
                detected,
                problems=in_file_order(problems),
                warnings=in_file_order(warnings),
                plan=plan,
            )
        errors = fast
    parsed = _shaped(text, file_name, encoding, options)
    if parsed.problems or parsed.mapping is not None:
        # The stricter parser found what the one pass let through (NaN, lone surrogates),
        # or an escaped NUL, or the file is another tool's records made into a document:
        # the one pass's errors may not match this document's.
        errors = None
    return check_parsed(parsed, options=options, zip_members=zip_members, type_errors=errors)


def _shaped(text: str, file_name: str, encoding: str, options: CheckOptions) -> Parsed:
    """The text read and shaped, for the validator (the stages `check` runs in one pass
    when it can)."""
    return shapes.shape(_parse(text, file_name, encoding, options), options=options)


def _few_keys(text: str) -> bool:
    """Whether the text holds few enough keys for the one-pass check.

    That check reports unknown keys as pydantic errors, all held at once; a large file
    with more keys than any real dataset has takes the path whose warnings stop at the
    cap. Counting costs a pass over the text, so a file too small to hold harmfully many
    keys is not counted. Each count below bounds the keys from above, so the first that is
    small enough settles it: the quotes first (one fast pass, enough for a file whose prose
    is full of times and log lines), then the colons, then the colons that end a string,
    as a key's does.
    """
    if len(text) <= _COUNT_KEYS_ABOVE:
        return True
    # Every key is a string, and every string two quotes (an escaped one only adds to the
    # count): half the quotes bound the keys.
    if text.count('"') // 2 <= _MAX_KEYS_FOR_ONE_PASS:
        return True
    if text.count(":") <= _MAX_KEYS_FOR_ONE_PASS:
        return True
    return len(_KEY_END.findall(text)) <= _MAX_KEYS_FOR_ONE_PASS


# --- Writing.


def _number(value: float) -> int | float:
    """20.0 -> 20, so that weights read as people write them."""
    return int(value) if float(value).is_integer() else value


def _criterion(criterion: CriterionSpec) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": criterion.id,
        "criterion": criterion.criterion,
        "weight": _number(criterion.weight),
    }
    if criterion.verifier is not None:
        data["verifier"] = criterion.verifier.to_json()
    return data


def _file(attached: FileSpec) -> dict[str, Any]:
    if attached.url is not None:
        return {"url": attached.url, "name": attached.name}
    return {"path": attached.path, "name": attached.name}


def _task(task: TaskSpec) -> dict[str, Any]:
    data: dict[str, Any] = {"id": task.id, "name": task.name, "prompt": task.prompt}
    if task.expected_text is not None:
        expected: dict[str, Any] = {"text": task.expected_text}
        if task.expected_verifier is not None:
            expected["verifier"] = task.expected_verifier.to_json()
        data["expected"] = expected
    if task.criteria:
        data["criteria"] = [_criterion(criterion) for criterion in task.criteria]
    if task.input_files:
        data["inputFiles"] = [_file(attached) for attached in task.input_files]
    if task.expected_files:
        data["expectedFiles"] = [_file(attached) for attached in task.expected_files]
    if task.evidence:
        data["evidence"] = task.evidence
    if task.metadata:
        data["metadata"] = task.metadata
    return data


def to_document(spec: DatasetSpec) -> dict[str, Any]:
    """The canonical document for a plan: what `write` serialises."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "name": spec.name,
        "description": spec.description,
        "settings": dict(spec.settings),
        "criteria": [_criterion(criterion) for criterion in spec.criteria],
        "tasks": [_task(task) for task in spec.tasks],
    }


def write(spec: DatasetSpec) -> bytes:
    """The plan as a .json dataset file (indented, UTF-8) that reads back as the same plan."""
    out = io.BytesIO()
    write_to(spec, out)
    return out.getvalue()


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)


def write_to(spec: DatasetSpec, out: IO[bytes]) -> None:
    """`write`, a task at a time into `out`: the bytes `json.dumps` of the whole document
    would give, without ever holding more than one task's text (`spec.tasks` may be read
    from the database as it is written)."""
    head = _dumps({**to_document(replace(spec, tasks=())), "tasks": None})
    # The head ends `"tasks": null\n}`: the tasks go where the null is.
    opening, closing = head.rsplit("null", 1)
    out.write(opening.encode("utf-8"))
    first = True
    for task in spec.tasks:
        # An item of the top-level "tasks" list sits two levels deep: 4 spaces. JSON text
        # holds no raw line break inside a string, so every "\n" is a line of the item.
        text = _dumps(_task(task)).replace("\n", "\n    ")
        out.write((("[\n    " if first else ",\n    ") + text).encode("utf-8"))
        first = False
    out.write(("[]" if first else "\n  ]").encode("utf-8") + (closing + "\n").encode("utf-8"))


def _file_from(data: dict[str, Any]) -> FileSpec:
    return FileSpec(name=data["name"], path=data.get("path"), url=data.get("url"))


def _criterion_from(data: dict[str, Any]) -> CriterionSpec:
    return CriterionSpec(
        id=data["id"],
        criterion=data["criterion"],
        weight=float(data.get("weight", 1)),
        verifier=Verifier.from_json(data.get("verifier")),
    )


def from_document(document: dict[str, Any]) -> DatasetSpec:
    """The plan `to_document` wrote, back: for our own records (a version's snapshot), which
    were checked when they were written, so nothing is checked again."""
    tasks = []
    for task in document.get("tasks", []):
        expected = task.get("expected") or {}
        tasks.append(
            TaskSpec(
                id=task["id"],
                name=task.get("name", ""),
                prompt=task["prompt"],
                expected_text=expected.get("text"),
                expected_verifier=Verifier.from_json(expected.get("verifier")),
                criteria=tuple(_criterion_from(c) for c in task.get("criteria", [])),
                input_files=tuple(_file_from(f) for f in task.get("inputFiles", [])),
                expected_files=tuple(_file_from(f) for f in task.get("expectedFiles", [])),
                evidence=task.get("evidence") or {},
                metadata=task.get("metadata") or {},
            )
        )
    return DatasetSpec(
        name=document.get("name", ""),
        description=document.get("description", ""),
        settings=dict(document.get("settings") or {}),
        criteria=tuple(_criterion_from(c) for c in document.get("criteria", [])),
        tasks=tuple(tasks),
    )
