"""The .json dataset format: read bytes into the canonical document, write a plan back out.

Reading decodes the text (UTF-8, with or without a byte order mark; UTF-16 or UTF-32 only
with one), parses it with the standard library, and leaves the checking to
`document.validate_document`. Where a problem stands in the text is found only for the
paths that have problems, by walking down just those paths (`JsonLocator`), so a valid file
costs little more than `json.loads`.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from itertools import zip_longest
from typing import IO, Any

from pydantic_core import from_json

from contextgrid import textfile
from datasets_app.importing import shapes
from datasets_app.importing.document import (
    FORMAT_NAME,
    FORMAT_VERSION,
    check_parsed,
    in_file_order,
    validate_json_text,
)
from datasets_app.importing.spec import (
    CheckOptions,
    CheckResult,
    CriterionSpec,
    DatasetSpec,
    DocPath,
    FileSpec,
    Parsed,
    Problem,
    Rule,
    TaskSpec,
    Verifier,
    field_path,
)

NOT_UTF8 = Rule(
    "not_utf8",
    "The file is not UTF-8 text: byte {byte} (line {line_number}) cannot be decoded. Save the "
    "file as UTF-8.",
)
NUL_BYTE = Rule(
    "nul_byte",
    "The file has a NUL byte at byte {byte} (line {line_number}): it is not a text file, or it "
    "is UTF-16 without a byte order mark. Save the file as UTF-8.",
)
NUL_CHARACTER = Rule(
    "nul_character",
    "The text holds a NUL character (\\u0000), which cannot be stored. Remove it.",
)
NOT_JSON = Rule(
    "not_json", "This is not valid JSON: {detail} at line {line_number}, column {column}."
)
TOO_DEEP = Rule(
    "too_deep", "The JSON is nested too deeply to read. A dataset file is only a few levels deep."
)
# An escaped NUL (\u0000) that is not itself an escaped backslash followed by "u0000".
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
# The json module's string scanner (not in typeshed): a JSON string's value and its end.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The end of a key: a closing quote, JSON white space, a colon. (A string value cannot be
# followed by a colon, so only keys, and the odd `\":` inside a string, match.)
_KEY_END = re.compile(r'"[ \t\n\r]*:')
# 1,000 tasks with ten criteria each, files and verifiers have about 100,000 keys; 2 MiB
# of text holds fewer than 200,000 distinct keys (tens of MB of errors at worst).
_MAX_KEYS_FOR_ONE_PASS = 250_000
_COUNT_KEYS_ABOVE = 2 * 1024 * 1024


def decode(data: bytes, file_name: str) -> tuple[str | None, str, list[Problem]]:
    """The file's text, the encoding's name for people, and why it cannot be read, if so.

    As every reader decodes (`contextgrid.textfile`), without the Windows-1252 guess: JSON
    is UTF-8 (or UTF-16 or UTF-32 with a byte order mark). NUL bytes without a mark are
    UTF-16 or binary, said as such rather than as what UTF-8 makes of them.
    """
    nul = data.find(b"\x00")
    if nul != -1 and not textfile.has_bom(data):
        return None, "UTF-8", [_bad_byte(NUL_BYTE, data, nul, file_name)]
    decoded = textfile.decode(data)
    if decoded.text is None:
        assert decoded.bad_offset is not None
        problem = _bad_byte(NOT_UTF8, data, decoded.bad_offset, file_name)
        return None, decoded.encoding, [problem]
    return decoded.text, decoded.encoding, []


def _bad_byte(rule: Rule, data: bytes, offset: int, file_name: str) -> Problem:
    line = data.count(b"\n", 0, offset) + 1
    # Bytes are counted from 1, like lines, so a person can find them in a hex viewer + 1.
    return rule.at(file_name, line=line, byte=offset + 1, line_number=line)


def escaped_nul_lines(text: str) -> list[int]:
    """Lines holding an escaped NUL (\\u0000): valid JSON, but no database stores it."""
    # A backslash is found far faster than a longer string, and most files have none.
    if "\\" not in text or "\\u0000" not in text:
        return []
    return sorted({line_of(text, match.start()) for match in _ESCAPED_NUL.finditer(text)})


def line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


# What JSON parsers say, in plain words: pydantic-core's (jiter) and the json module's
# (contextgrid reads eval sets with it). Longest first, so "expected value" is not taken
# for part of something longer.
_PLAIN_WORDS: tuple[tuple[str, str], ...] = (
    ("EOF while parsing an object", "the text ends before an object is closed (a } is missing)"),
    ("EOF while parsing a list", "the text ends before a list is closed (a ] is missing)"),
    ("EOF while parsing a string", 'the text ends inside a quoted value (a " is missing)'),
    ("EOF while parsing a value", "the text ends in the middle of a value"),
    (
        "control character (\\u0000-\\u001F) found while parsing a string",
        "a quoted value holds a tab or line break; write it as \\t or \\n",
    ),
    ("lone leading surrogate in hex escape", "a \\u escape is half of a character pair"),
    ("unexpected end of hex escape", "a \\u escape is cut short"),
    ("invalid unicode code point", "a \\u escape is not a character"),
    ("key must be a string", "a key is not in double quotes"),
    ("expected `,` or `}`", "a , or } is missing"),
    ("expected `,` or `]`", "a , or ] is missing"),
    ("expected `:`", "a : is missing after a key"),
    ("expected ident", "a word is not true, false or null"),
    ("expected value", "a value is missing, or is not JSON (text needs double quotes)"),
    ("invalid escape", "a backslash starts an escape JSON does not have (write \\\\ for one)"),
    ("invalid number", "a number is written wrongly"),
    ("number out of range", "a number is too large"),
    ("trailing comma", "a comma has nothing after it"),
    ("trailing characters", "more text follows the end of the JSON value"),
    ("Expecting property name enclosed in double quotes", "a key is not in double quotes"),
    ("Expecting ',' delimiter", "a , is missing"),
    ("Expecting ':' delimiter", "a : is missing after a key"),
    ("Expecting value", "a value is missing, or is not JSON (text needs double quotes)"),
    ("Unterminated string starting at", 'a quoted value is not closed (a " is missing), from'),
    ("Invalid control character at", "a quoted value holds a tab or line break, at"),
    ("Invalid \\escape", "a backslash starts an escape JSON does not have"),
    ("Extra data", "more text follows the end of the JSON value"),
)


def plain_words(detail: str) -> str:
    """A JSON parser's message with its phrases in plain words ("EOF while parsing a
    value" -> "the text ends in the middle of a value")."""
    for phrase, words in _PLAIN_WORDS:
        if phrase in detail:
            return detail.replace(phrase, words)
    return detail


# pydantic-core's parser (faster than the json module, and stricter: no NaN or Infinity,
# no lone surrogates) reports where it stopped at the end of its message.
_WHERE = re.compile(r"^(?P<detail>.*) at line (?P<line>\d+) column (?P<column>\d+)$", re.DOTALL)


def loads(text: str, file_name: str, *, line_offset: int = 0) -> tuple[Any, list[Problem]]:
    """Parse JSON text: (value, problems). Never raises.

    Nesting deeper than the parser's limit (about 200 levels) is refused: a dataset file
    is only a few levels deep, and the limit keeps hostile nesting from using the stack.
    """
    try:
        return from_json(text, allow_inf_nan=False), []
    except ValueError as exc:
        found = _WHERE.match(str(exc))
        detail = found["detail"] if found else str(exc)
        line = int(found["line"]) + line_offset if found else None
        column = int(found["column"]) if found else None
        if detail.startswith("recursion limit exceeded"):
            return None, [TOO_DEEP.at(file_name, line=line)]
        problem = NOT_JSON.at(
            file_name, line=line, detail=plain_words(detail), line_number=line, column=column
        )
        return None, [problem]


def read(data: bytes, file_name: str, options: CheckOptions | None = None) -> Parsed:
    """Read a .json dataset file into the canonical document (not yet validated)."""
    text, encoding, problems = decode(data, file_name)
    detected = f"JSON dataset, {encoding}"
    if text is None:
        return Parsed("json", detected, file_name, None, _no_place, problems=problems)
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


def _parse(text: str, file_name: str, encoding: str, options: CheckOptions | None = None) -> Parsed:
    detected = f"JSON dataset, {encoding}"
    document, problems = loads(text, file_name)
    if problems:
        if _is_json_lines(text):
            # Imported here: the JSON Lines reader parses its lines with this module.
            from datasets_app.importing import jsonl_format

            return jsonl_format.read_text(text, file_name, encoding, options, kind=LINES_IN_JSON)
        return Parsed("json", detected, file_name, None, _no_place, problems=problems)
    mapped = bool(options and options.mapping)
    problems = [NUL_CHARACTER.at(file_name, line=line) for line in escaped_nul_lines(text)]
    if not mapped and _is_list_of_our_tasks(document):
        # The page's tasks in a bare list are held to the page's rules, as in "tasks".
        located = _ListLocator(JsonLocator(text))
        document = {"tasks": document}
        return Parsed("json", detected, file_name, document, located, problems=problems)
    if mapped or not (isinstance(document, dict) and _is_our_document(document)):
        return _shaped(document, text, file_name, encoding, options)
    return Parsed("json", detected, file_name, document, JsonLocator(text), problems=problems)


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


def _is_json_lines(text: str) -> bool:
    """Whether text that is not one JSON value is JSON Lines: its first line is a whole JSON
    object and more text follows, which no JSON document can be."""
    first, newline, rest = text.lstrip().partition("\n")
    if not newline or not rest.strip():
        return False
    try:
        return isinstance(from_json(first, allow_inf_nan=False), dict)
    except ValueError:
        return False


class _RecordLocator:
    """Puts a task built from another tool's record on the record's line in the text."""

    def __init__(self, text: str, paths: list[DocPath]) -> None:
        self.json = JsonLocator(text)
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


def _shaped(
    document: Any, text: str, file_name: str, encoding: str, options: CheckOptions | None
) -> Parsed:
    """Another tool's records (a list, an object holding one, ...) as the canonical document."""
    if shapes.results_document(document) and not (options and options.mapping):
        problem = shapes.NOT_A_DATASET.at(
            file_name,
            line=1,
            what="the results of an eval run (" + ", ".join(sorted(document)[:6]) + ")",
            advice="It holds what models answered and how they scored. Import the tests "
            "the run used instead.",
        )
        return Parsed("json", f"JSON, {encoding}", file_name, None, _no_place, problems=[problem])
    found = shapes.find_records(document)
    if isinstance(found, str):
        problem = shapes.NO_RECORDS.at(file_name, line=1, what=found)
        return Parsed("json", f"JSON, {encoding}", file_name, None, _no_place, problems=[problem])
    shaped = shapes.read_records(
        found,
        file_name=file_name,
        options=options,
    )
    # Problems the records' reader found are on a record: give them its line.
    on_records = [record for record in shaped.problem_records if record is not None]
    lines = JsonLocator(text).many([record.path for record in on_records]) if on_records else {}
    problems = [
        replace(problem, line=lines[record.path][1]) if record is not None else problem
        for problem, record in zip_longest(shaped.problems, shaped.problem_records)
    ]
    problems += [NUL_CHARACTER.at(file_name, line=line) for line in escaped_nul_lines(text)]
    if shaped.document is not None and isinstance(document, dict) and found.container == "tasks":
        # Our own document whose tasks are another tool's records: keep its other keys.
        shaped.document = {**document, "tasks": shaped.document["tasks"]}
    return Parsed(
        "json",
        f"JSON, {shaped.detected}, {encoding}",
        file_name,
        shaped.document,
        _RecordLocator(text, [record.path for record in shaped.places]),
        problems=problems,
        warnings=shaped.warnings,
        field_label=_record_field,
        mapping=shaped.mapping,
    )


def _record_field(path: DocPath) -> str:
    # ("tasks", 3, "criteria", 0, "weight") -> "criteria[0].weight": the line says which record.
    if len(path) > 2 and path[0] == "tasks":
        return field_path(path[2:])
    return field_path(path)


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
        return check_parsed(_parse(text, file_name, encoding, options), options=options)
    # A backslash is found far faster than a longer string, and most files have none.
    errors = None
    if _few_keys(text) and ("\\" not in text or "\\u0000" not in text):
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
    parsed = _parse(text, file_name, encoding, options)
    if parsed.problems or parsed.mapping is not None:
        # The stricter parser found what the one pass let through (NaN, lone surrogates),
        # or an escaped NUL, or the file is another tool's records made into a document:
        # the one pass's errors may not match this document's.
        errors = None
    return check_parsed(parsed, options=options, zip_members=zip_members, type_errors=errors)


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


def _no_place(path: DocPath) -> tuple[int | None, int | None]:
    return (None, None)


class _Found(Exception):
    """Raised inside the walk once every wanted path has been found."""


class JsonLocator:
    """Finds the line of document paths in JSON text, without mapping the whole text.

    `many(paths)` walks the text once, entering only the objects and lists on the way to a
    wanted path and skipping every other value with the C scanner, and stops when all are
    found. A path the text does not hold (a missing field) gets its nearest ancestor's line.
    """

    def __init__(self, text: str, *, first_line: int = 1) -> None:
        self.text = text
        self.first_line = first_line
        # The json module's C scanner (not in typeshed): a value's end, skipping it whole.
        self._scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

    def __call__(self, path: DocPath) -> tuple[int | None, int | None]:
        return self.many([path])[path]

    def many(self, paths: Iterable[DocPath]) -> dict[DocPath, tuple[int | None, int | None]]:
        wanted = list(dict.fromkeys(paths))
        trie: dict[Any, Any] = {}
        nodes = 1
        for path in wanted:
            node = trie
            for part in path:
                if part not in node:
                    node[part] = {}
                    nodes += 1
                node = node[part]
        positions: dict[DocPath, int] = {}
        try:
            self._value(0, trie, (), positions, nodes)
        except _Found:
            pass
        except (ValueError, IndexError, StopIteration, RecursionError):
            # The text parsed before the walk, so this cannot happen; if it does, the
            # problems keep whatever lines were found rather than failing the check.
            pass
        lines = self._lines(positions)
        result: dict[DocPath, tuple[int | None, int | None]] = {}
        for path in wanted:
            for end in range(len(path), -1, -1):
                if path[:end] in lines:
                    result[path] = (None, lines[path[:end]])
                    break
            else:
                result[path] = (None, None)
        return result

    def _lines(self, positions: dict[DocPath, int]) -> dict[DocPath, int]:
        # Count newlines between sorted positions, so many problems cost one pass.
        lines: dict[DocPath, int] = {}
        line, last = self.first_line, 0
        for path, position in sorted(positions.items(), key=lambda item: item[1]):
            line += self.text.count("\n", last, position)
            last = position
            lines[path] = line
        return lines

    def _value(
        self,
        index: int,
        wanted: dict[Any, Any],
        path: DocPath,
        positions: dict[DocPath, int],
        nodes: int,
    ) -> int:
        """Record where the value at `index` starts; return the index just after it."""
        text = self.text
        index = _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]
        positions[path] = index
        if len(positions) >= nodes:
            raise _Found
        opener = text[index] if wanted else ""
        if opener == "{":
            index = _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]
            if text[index] == "}":
                return index + 1
            while True:
                key, index = _scanstring(text, index + 1)
                index = _WHITESPACE.match(text, index).end() + 1  # type: ignore[union-attr]
                index = self._member(index, wanted.get(key), (*path, key), positions, nodes)
                index = _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]
                if text[index] == "}":
                    return index + 1
                index = _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]
        if opener == "[":
            index = _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]
            if text[index] == "]":
                return index + 1
            position = 0
            while True:
                index = self._member(
                    index, wanted.get(position), (*path, position), positions, nodes
                )
                index = _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]
                if text[index] == "]":
                    return index + 1
                index = _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]
                position += 1
        return self._scan(text, index)[1]

    def _member(
        self,
        index: int,
        wanted: dict[Any, Any] | None,
        path: DocPath,
        positions: dict[DocPath, int],
        nodes: int,
    ) -> int:
        if wanted is None:
            index = _WHITESPACE.match(self.text, index).end()  # type: ignore[union-attr]
            return self._scan(self.text, index)[1]
        return self._value(index, wanted, path, positions, nodes)


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
            )
        )
    return DatasetSpec(
        name=document.get("name", ""),
        description=document.get("description", ""),
        settings=dict(document.get("settings") or {}),
        criteria=tuple(_criterion_from(c) for c in document.get("criteria", [])),
        tasks=tuple(tasks),
    )
