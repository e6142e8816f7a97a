"""The JSON text layer under the .json and .jsonl readers (and contextgrid's eval sets):
decoding, parsing with every problem in plain words and its line, and finding lines.

Below `json_format` and `jsonl_format`, which both read through it and import nothing from
each other but the one hand-over of JSON Lines saved as .json (json_format → jsonl_format).
Where a problem stands in the text is found only for the paths that have problems, by
walking down just those paths (`JsonLocator`), so a valid file costs little more than
`json.loads`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from pydantic_core import from_json

from contextgrid import textfile
from datasets_app.importing.spec import DocPath, Problem, Rule, field_path

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
# The same six characters, escaped or not: the quick test for any.
_NUL_ESCAPE = re.compile(r"\\u0000")
# The json module's string scanner (not in typeshed): a JSON string's value and its end.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WHITESPACE = re.compile(r"[ \t\n\r]*")


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


def may_hold_escaped_nul(text: str) -> bool:
    """Whether the text may hold an escaped NUL (\\u0000); False is certain."""
    # A backslash is found far faster than a longer string, and most files have none. The
    # regex engine finds "\\u0000" in text full of backslashes and zeros (escaped newlines,
    # timestamps) in half the time `in` takes, which tries each of them.
    return "\\" in text and _NUL_ESCAPE.search(text) is not None


def nul_problems(text: str, file_name: str) -> list[Problem]:
    """A problem on each line holding an escaped NUL (\\u0000): valid JSON, but no database
    stores it."""
    if not may_hold_escaped_nul(text):
        return []
    lines = sorted({line_of(text, match.start()) for match in _ESCAPED_NUL.finditer(text)})
    return [NUL_CHARACTER.at(file_name, line=line) for line in lines]


def record_field(path: DocPath) -> str:
    """How a problem names a field of a task whose line it gives (a JSON Lines line, the
    record another tool's JSON made the task of): ("tasks", 3, "criteria", 0, "weight") ->
    "criteria[0].weight", the line saying which task."""
    if len(path) > 2 and path[0] == "tasks":
        return field_path(path[2:])
    return field_path(path)


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


# Below this size a list is parsed whole: counting its items first would save little.
_COUNTED_FROM_CHARS = 1024 * 1024
# How many items tell the size of the rest, for the guess whether there are too many.
_SAMPLE_ITEMS = 64


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are no JSON (`loads` refuses them too)


# The json module's item scanner (not in typeshed): a JSON value and its end.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(  # type: ignore[attr-defined]
    parse_constant=_no_constant
).scan_once


def _skip(text: str, at: int) -> int:
    """Where the JSON white space from `at` ends."""
    found = _WHITESPACE.match(text, at)
    return found.end() if found else at


def long_list_head(text: str, keep: int) -> tuple[list[Any], int] | None:
    """The first `keep` items of a top-level JSON list and how many it holds, when it holds
    more: each later item is parsed and dropped, so a list of millions costs one item's
    memory past the first ones, not millions of objects. None for any other text (not a
    list, not that many items, or not valid JSON: `loads` then says what it is)."""
    if len(text) < _COUNTED_FROM_CHARS:
        return None
    at = _skip(text, 0)
    if text[at : at + 1] != "[":
        return None
    head: list[Any] = []
    total = 0
    at = _skip(text, at + 1)
    try:
        while text[at : at + 1] not in ("]", ""):
            value, at = _SCAN(text, at)
            total += 1
            if total <= keep:
                head.append(value)
            if total == _SAMPLE_ITEMS and len(text) * total < keep * at:
                return None  # items this long: not more than `keep` of them
            at = _skip(text, at)
            if text[at : at + 1] == ",":
                at = _skip(text, at + 1)
                if text[at : at + 1] == "]":
                    return None  # a comma before the end: no JSON
            elif text[at : at + 1] != "]":
                return None
    except (ValueError, StopIteration, RecursionError):
        return None
    ended = text[at : at + 1] == "]" and _skip(text, at + 1) == len(text)
    return (head, total) if ended and total > keep else None


def is_json_lines(text: str) -> bool:
    """Whether text that is not one JSON value is JSON Lines: its first line is a whole JSON
    object and more text follows, which no JSON document can be."""
    first, newline, rest = text.lstrip().partition("\n")
    if not newline or not rest.strip():
        return False
    try:
        return isinstance(from_json(first, allow_inf_nan=False), dict)
    except ValueError:
        return False


def no_place(path: DocPath) -> tuple[int | None, int | None]:
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
