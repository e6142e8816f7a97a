"""Reading and writing eval sets: context-grid's JSONL and CSV, BEIR and LegalBench-RAG.

Every reader takes a path; each has a ``parse_*`` twin that takes the file's text (or its raw
bytes) and a display name instead, so a web upload can be read without a temporary file.
Anything wrong with a file raises :class:`EvalSetError` naming the file and the line, row or
test; the few things the formats tolerate are skipped and counted in ``EvalSet.meta``, which
:func:`describe_skipped` turns into one sentence.
"""

from __future__ import annotations

import csv
import io
import json
import math
import operator
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, overload

from contextgrid import textfile
from contextgrid.evalset.types import (
    EvalItem,
    EvalSet,
    EvalSetError,
    GoldAnchor,
    GoldSpan,
    QuestionType,
    Span,
)

__all__ = [
    "BEIR_NOTE",
    "CSV_COLUMNS",
    "CSV_COLUMN_ALIASES",
    "describe_skipped",
    "evalset_to_jsonl_text",
    "jsonl_header_line",
    "jsonl_item_line",
    "parse_beir",
    "parse_csv_text",
    "parse_jsonl_text",
    "parse_legalbench_rag_text",
    "read_beir",
    "read_csv",
    "read_evalset",
    "read_jsonl",
    "read_legalbench_rag",
    "write_csv",
    "write_jsonl",
]

Text = str | bytes

# --- messages a person reads (tests import these rather than copying the wording) -----------

NO_QUESTION_COLUMN = "{name} has no question column. Expected one of: {expected}. Found: {found}"
BEIR_NOTE = (
    "BEIR gold is document-level. It compares retrievers fairly and cannot compare chunkers "
    "fairly, because every chunk of a gold document counts as relevant regardless of whether "
    "it holds the evidence."
)
NOTHING_SKIPPED = "Nothing was skipped."
# Python's JSON decoder recurses once per level and stops at the interpreter's limit (about
# 1,000); an eval set is a few levels deep, so a file past that is hostile or broken.
TOO_DEEP = "the JSON is nested too deeply to read (an eval set is only a few levels deep)"

# Skip reasons are verb phrases so that "<n> <reason>" reads as a sentence in describe_skipped.
SKIP_NO_SPAN = "had no `span`"
SKIP_NO_FILE_PATH = "had no `file_path`"
SKIP_SHORT_SPAN = "had a `span` with fewer than two numbers"
SKIP_EMPTY_SPAN = "had an empty `span` (start equals end)"
SKIP_SPAN_PAST_END = "ran past the end of its document"
SKIP_DOCUMENT_MISSING = "named a document that is not in the corpus folder"
SKIP_QUERY_NOT_IN_QUERIES = "named a query id that is not in the queries file"
SKIP_REPEATED_JUDGEMENT = "repeated an earlier judgement of the same query and document"
DROP_NO_POSITIVE_JUDGEMENT = "had no positive judgement"
SKIP_ROW_NO_QUESTION = "had no question"
SKIP_QUOTE_NO_SOURCE = "had no source document"

# --- small shared helpers -------------------------------------------------------------------


def _is_int(value: object) -> bool:
    # bool is an int subclass, and `true` as a character offset is always a mistake.
    return isinstance(value, int) and not isinstance(value, bool)


def _decode(data: Text, name: str) -> str:
    """Text of a file, without a leading byte-order mark: bytes are decoded by their byte
    order mark, else as UTF-8 (`textfile.decode`)."""
    if isinstance(data, bytes):
        decoded = textfile.decode(data)
        if decoded.text is None:
            assert decoded.bad_offset is not None
            bad = decoded.bad_offset
            raise EvalSetError(
                f"{name} is not {decoded.encoding} text (byte 0x{data[bad]:02x} at offset {bad})",
                file=name,
            )
        data = decoded.text
    text = data.removeprefix("\ufeff")
    # None of these formats allows a raw NUL; one means a binary file (a spreadsheet saved as
    # .xlsx, say) and the csv module would otherwise read it as text without complaint.
    if (nul := text.find("\x00")) != -1:
        raise EvalSetError(
            f"{name} contains a NUL character (at character {nul}); it looks like a binary "
            "file, not text",
            file=name,
        )
    return text


def _encode(text: str, name: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EvalSetError.at(
            name,
            f"cannot write {exc.object[exc.start : exc.end]!r}, a lone surrogate that UTF-8 "
            "cannot hold",
        ) from exc


def _read_bytes(path: str | Path) -> tuple[bytes, str]:
    path = Path(path)
    try:
        return path.read_bytes(), path.name
    except OSError as exc:
        raise EvalSetError.at(path.name, f"cannot read the file ({exc.strerror or exc})") from exc


# The json module's C scanner (not in typeshed): the JSON value at an index and where it
# ends; StopIteration when there is none there.
_scan_json: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

_WHITESPACE = re.compile(r"\s*")


def _after_whitespace(text: str, pos: int) -> int:
    """Where the white space starting at `pos` ends."""
    match = _WHITESPACE.match(text, pos)
    assert match is not None  # `\s*` matches everywhere, if only the empty string
    return match.end()


def _iter_json_values(text: str, name: str) -> Iterator[tuple[int, Any]]:
    """Each JSON value in ``text`` with the line it starts on.

    Values are read back to back with ``raw_decode`` rather than line by line: JSONL is the
    usual layout, but real BEIR files also come as objects glued together with no newline at
    all, and one reader handles both without guessing.
    """
    decoder = json.JSONDecoder()
    pos = _after_whitespace(text, 0)
    # Count newlines incrementally; counting from the start for every value is quadratic.
    line, counted_to = 1, 0
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            # Named on the line where the bad record starts: a record cut off at the end of
            # the file would otherwise be reported on a line past its last one.
            line += text.count("\n", counted_to, pos)
            raise EvalSetError.at(name, _json_error(exc, text, line), line=line) from exc
        except RecursionError as exc:
            line += text.count("\n", counted_to, pos)
            raise EvalSetError.at(name, TOO_DEEP, line=line) from exc
        line += text.count("\n", counted_to, pos)
        counted_to = pos
        yield line, value
        pos = _after_whitespace(text, end)


def _json_error(exc: json.JSONDecodeError, text: str, line: int) -> str:
    """What is wrong with the record that starts on `line`, where `exc` was raised."""
    if not text[exc.pos :].strip():
        return "this record is cut off: the file ends before the record does"
    if exc.lineno == line:
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    return (
        f"invalid JSON in the record that starts on this line ({exc.msg} on line "
        f"{exc.lineno}, column {exc.colno})"
    )


def _dumps(value: Any, what: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise EvalSetError(f"{what} cannot be written as JSON ({exc})") from exc


def _qtype_value(qtype: str, what: str) -> str:
    try:
        return QuestionType(qtype).value
    except ValueError as exc:
        raise EvalSetError(
            f"{what}: unknown question type {qtype!r}; expected one of: "
            + ", ".join(t.value for t in QuestionType)
        ) from exc


class _Where:
    """Where in a file a problem is, so every error names it the same way."""

    def __init__(
        self,
        name: str,
        *,
        line: int | None = None,
        row: int | None = None,
        test: int | None = None,
        item: str | None = None,
    ) -> None:
        self.name = name
        self.line = line
        self.row = row
        self.test = test
        self.item = item

    def error(self, problem: str) -> EvalSetError:
        return EvalSetError.at(
            self.name, problem, line=self.line, row=self.row, test=self.test, item=self.item
        )


# --- the native JSONL format ----------------------------------------------------------------

_HEADER_KEY = "_evalset"
_HEADER_FIELDS = ("id", "version", "source", "meta")
_ITEM_FIELDS = ("id", "question", "gold", "anchors", "qtype", "answer", "meta")
_ANCHOR_FIELDS = ("source_id", "quote", "grade", "page_hint", "occurrence")
_GOLD_FIELDS = ("span", "grade")
_SPAN_FIELDS = ("source_id", "start", "end")


def _anchor_to_json(anchor: GoldAnchor) -> dict[str, Any]:
    return {
        "source_id": anchor.source_id,
        "quote": anchor.quote,
        "grade": anchor.grade,
        "page_hint": anchor.page_hint,
        "occurrence": anchor.occurrence,
    }


def _gold_to_json(gold: GoldSpan) -> dict[str, Any]:
    span = gold.span
    return {
        "span": {"source_id": span.source_id, "start": span.start, "end": span.end},
        "grade": gold.grade,
    }


def _item_to_json(item: EvalItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "question": item.question,
        "gold": [_gold_to_json(g) for g in item.gold],
        "anchors": [_anchor_to_json(a) for a in item.anchors],
        "qtype": _qtype_value(item.qtype, f"item {item.id!r}"),
        "answer": item.answer,
        "meta": item.meta,
    }


def evalset_to_jsonl_text(evalset: EvalSet) -> str:
    """The JSONL text :func:`write_jsonl` writes: a header line, then one line per item.

    Raises :class:`EvalSetError` when a ``meta`` holds something JSON cannot (a set, NaN, …).
    """
    lines = [jsonl_header_line(evalset)] + [jsonl_item_line(item) for item in evalset]
    return "\n".join(lines) + "\n"


def jsonl_header_line(evalset: EvalSet) -> str:
    """The first line of :func:`evalset_to_jsonl_text` (without its line end): the eval set's
    id, version, source and meta, whatever its items. With :func:`jsonl_item_line`, for a
    writer that makes the items one at a time and never holds them all."""
    header = {
        _HEADER_KEY: {
            "id": evalset.id,
            "version": evalset.version,
            "source": evalset.source,
            "meta": evalset.meta,
        }
    }
    return _dumps(header, f"eval set {evalset.id!r}")


def jsonl_item_line(item: EvalItem) -> str:
    """An item's line of :func:`evalset_to_jsonl_text` (without its line end)."""
    return _dumps(_item_to_json(item), f"item {item.id!r}")


def write_jsonl(evalset: EvalSet, path: str | Path) -> Path:
    """Write ``evalset`` as context-grid's JSONL, creating missing parent folders.

    This is the format that keeps everything: every anchor, gold span and meta entry.
    """
    path = Path(path)
    text = evalset_to_jsonl_text(evalset)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_encode(text, path.name))
    return path


def _check_fields(obj: dict[str, Any], allowed: tuple[str, ...], what: str, where: _Where) -> None:
    # An unknown key is most often a misspelt known one ("anchor"); ignoring it would lose the
    # evidence without a word, so it is refused.
    for key in obj:
        if key not in allowed:
            raise where.error(f"unknown field {key!r} in {what}; expected: {', '.join(allowed)}")


@overload
def _get_str(
    obj: dict[str, Any], key: str, what: str, where: _Where, *, required: Literal[True]
) -> str: ...


@overload
def _get_str(
    obj: dict[str, Any], key: str, what: str, where: _Where, *, required: bool
) -> str | None: ...


def _get_str(
    obj: dict[str, Any], key: str, what: str, where: _Where, *, required: bool
) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise where.error(f"{what} has no {key!r}")
        return None
    if not isinstance(value, str):
        raise where.error(f"{what}: {key!r} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise where.error(f"{what}: {key!r} is empty")
    return value


@overload
def _get_int(obj: dict[str, Any], key: str, default: int, what: str, where: _Where) -> int: ...


@overload
def _get_int(
    obj: dict[str, Any], key: str, default: None, what: str, where: _Where
) -> int | None: ...


def _get_int(
    obj: dict[str, Any], key: str, default: int | None, what: str, where: _Where
) -> int | None:
    value = obj.get(key, default)
    if value is None:
        return default
    if not _is_int(value):
        raise where.error(f"{what}: {key!r} must be an integer, got {value!r}")
    return int(value)


def _get_dict(obj: dict[str, Any], key: str, what: str, where: _Where) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.error(f"{what}: {key!r} must be an object, got {type(value).__name__}")
    return value


def _get_list(obj: dict[str, Any], key: str, what: str, where: _Where) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(f"{what}: {key!r} must be a list, got {type(value).__name__}")
    return value


def _parse_anchor(obj: Any, what: str, where: _Where) -> GoldAnchor:
    if not isinstance(obj, dict):
        raise where.error(f"{what} must be an object, got {type(obj).__name__}")
    _check_fields(obj, _ANCHOR_FIELDS, what, where)
    occurrence = _get_int(obj, "occurrence", 0, what, where)
    if occurrence < 0:
        raise where.error(f"{what}: 'occurrence' must be 0 or more, got {occurrence}")
    return GoldAnchor(
        source_id=_get_str(obj, "source_id", what, where, required=True),
        quote=_get_str(obj, "quote", what, where, required=True),
        grade=_get_int(obj, "grade", 2, what, where),
        page_hint=_get_int(obj, "page_hint", None, what, where),
        occurrence=occurrence,
    )


def _parse_gold(obj: Any, what: str, where: _Where) -> GoldSpan:
    if not isinstance(obj, dict):
        raise where.error(f"{what} must be an object, got {type(obj).__name__}")
    _check_fields(obj, _GOLD_FIELDS, what, where)
    span = obj.get("span")
    if not isinstance(span, dict):
        raise where.error(f"{what}: 'span' must be an object with source_id, start and end")
    _check_fields(span, _SPAN_FIELDS, f"{what}'s span", where)
    start = _get_int(span, "start", None, what, where)
    end = _get_int(span, "end", None, what, where)
    if start is None or end is None:
        raise where.error(f"{what}: the span needs both 'start' and 'end'")
    if not 0 <= start <= end:
        raise where.error(f"{what}: the span needs 0 <= start <= end, got {start}, {end}")
    return GoldSpan(
        span=Span(_get_str(span, "source_id", what, where, required=True), start, end),
        grade=_get_int(obj, "grade", 2, what, where),
    )


def _parse_item(obj: dict[str, Any], where: _Where) -> EvalItem:
    _check_fields(obj, _ITEM_FIELDS, "the item", where)
    raw_id = obj.get("id")
    # Hand-written files often say "id": 1; a number is as good an id as its digits.
    item_id = (
        str(raw_id) if _is_int(raw_id) else _get_str(obj, "id", "the item", where, required=True)
    )
    what = f"item {item_id!r}"
    qtype = obj.get("qtype")
    return EvalItem(
        id=item_id,
        question=_get_str(obj, "question", what, where, required=True),
        gold=tuple(
            _parse_gold(g, f"{what}, gold {i}", where)
            for i, g in enumerate(_get_list(obj, "gold", what, where))
        ),
        anchors=tuple(
            _parse_anchor(a, f"{what}, anchor {i}", where)
            for i, a in enumerate(_get_list(obj, "anchors", what, where))
        ),
        qtype=QuestionType.FACTOID if qtype is None else _parse_qtype(qtype, what, where),
        answer=_get_str(obj, "answer", what, where, required=False),
        meta=_get_dict(obj, "meta", what, where),
    )


# Spreadsheet users write "Multi-hop" as often as "multi_hop".
_QTYPE_SEPARATORS = re.compile(r"[\s-]+")
_QTYPES = {qtype.value: qtype for qtype in QuestionType}


def _parse_qtype(value: Any, what: str, where: _Where) -> QuestionType:
    if isinstance(value, str):
        qtype = _QTYPES.get(_QTYPE_SEPARATORS.sub("_", value.strip().lower()))
        if qtype is not None:
            return qtype
    raise where.error(
        f"{what}: unknown question type {value!r}; expected one of: "
        + ", ".join(t.value for t in QuestionType)
    )


def parse_jsonl_text(text: Text, *, name: str, evalset_id: str | None = None) -> EvalSet:
    """Parse context-grid JSONL given as text (or UTF-8 bytes); ``name`` is used in errors.

    Without a header line the set's id is ``evalset_id`` or the stem of ``name``, and its
    source is ``"import"``.
    """
    text = _decode(text, name)
    header: dict[str, Any] | None = None
    items: list[EvalItem] = []
    first_line: dict[str, int] = {}
    for number, (line, value) in enumerate(_iter_json_values(text, name)):
        where = _Where(name, line=line)
        if not isinstance(value, dict):
            raise where.error(f"expected a JSON object, got {type(value).__name__}")
        if _HEADER_KEY in value:
            if number != 0:
                raise where.error("the `_evalset` header can only be the first line")
            if len(value) != 1 or not isinstance(value[_HEADER_KEY], dict):
                raise where.error('the header must look like {"_evalset": {"id": …}}')
            header = value[_HEADER_KEY]
            _check_fields(header, _HEADER_FIELDS, "the header", where)
            continue
        item = _parse_item(value, where)
        if item.id in first_line:
            raise where.error(f"item id {item.id!r} is already used on line {first_line[item.id]}")
        first_line[item.id] = line
        items.append(item)
    if header is None:
        return EvalSet(
            id=evalset_id or Path(name).stem, source="import", meta={}, items=tuple(items)
        )
    where = _Where(name, line=1)
    header_id = _get_str(header, "id", "the header", where, required=True)
    source = _get_str(header, "source", "the header", where, required=False)
    return EvalSet(
        id=evalset_id or header_id,
        version=_get_int(header, "version", 1, "the header", where),
        source="manual" if source is None else source,
        meta=_get_dict(header, "meta", "the header", where),
        items=tuple(items),
    )


def read_jsonl(path: str | Path) -> EvalSet:
    """Read context-grid JSONL; the ``_evalset`` header line is optional.

    Only ``id`` and ``question`` are required on an item. Raises :class:`EvalSetError` naming
    the file and line for invalid JSON, wrong types, unknown fields or repeated ids.
    """
    data, name = _read_bytes(path)
    return parse_jsonl_text(data, name=name)


# --- CSV ------------------------------------------------------------------------------------

CSV_COLUMNS = (
    "id",
    "question",
    "source_id",
    "quote",
    "grade",
    "page",
    "occurrence",
    "qtype",
    "answer",
    "meta",
)

# Field -> accepted column names (matched case-insensitively), in order of preference.
CSV_COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "qid"),
    "question": ("question", "query", "q"),
    "source_id": ("source_id", "document", "doc", "doc_id", "file", "filename"),
    "quote": ("quote", "evidence", "answer_span", "context", "passage"),
    "answer": ("answer", "expected_answer", "gold_answer"),
    "qtype": ("qtype", "type", "question_type", "category"),
    "page": ("page", "page_hint", "page_number"),
    "grade": ("grade", "relevance", "rel"),
    "occurrence": ("occurrence", "occurrence_index", "nth"),
    "meta": ("meta", "metadata"),
}

# Delimiters a spreadsheet may export with: a comma, or a semicolon where the comma is the
# decimal separator, or a tab.
_QUESTION_COLUMNS = frozenset(CSV_COLUMN_ALIASES["question"])


def write_csv(evalset: EvalSet, path: str | Path) -> Path:
    """Write ``evalset`` as CSV for editing in a spreadsheet, creating missing folders.

    Only the first anchor of each item fits, and gold spans have no column: a ``UserWarning``
    names the questions that lose evidence. Use :func:`write_jsonl` to keep everything.
    """
    buffer = io.StringIO()
    # RFC 4180's CRLF: the csv module quotes a cell holding any line-terminator character,
    # so with "\n" alone a cell ending in a bare "\r" would be written unquoted and lose it.
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for item in evalset:
        writer.writerow(_csv_row(item))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_encode(buffer.getvalue(), path.name))
    lost = _lost_in_csv(evalset)
    if lost:
        warnings.warn(
            f"{path.name}: {lost}. Use write_jsonl to keep them intact.",
            UserWarning,
            stacklevel=2,
        )
    return path


def _csv_row(item: EvalItem) -> list[Any]:
    """An item's cells in `CSV_COLUMNS` order, with its first anchor only."""
    anchor = item.anchors[0] if item.anchors else None
    texts: tuple[str, ...] = (item.id, item.question, item.answer or "")
    if anchor is not None:
        texts += (anchor.source_id, anchor.quote)
    if any("\x00" in text for text in texts):
        # read_csv refuses NUL as the mark of a binary file, so it must not be written.
        raise EvalSetError(f"item {item.id!r}: a NUL character cannot be written to CSV")
    return [
        item.id,
        item.question,
        *_anchor_cells(anchor),
        _qtype_value(item.qtype, f"item {item.id!r}"),
        "" if item.answer is None else item.answer,
        _dumps(item.meta, f"item {item.id!r}") if item.meta else "",
    ]


def _anchor_cells(anchor: GoldAnchor | None) -> list[Any]:
    """An anchor's source_id, quote, grade, page and occurrence cells (blank for none)."""
    if anchor is None:
        return ["", "", "", "", ""]
    page = "" if anchor.page_hint is None else anchor.page_hint
    return [anchor.source_id, anchor.quote, anchor.grade, page, anchor.occurrence]


def _lost_in_csv(evalset: EvalSet) -> str:
    """What writing ``evalset`` as CSV leaves out, said for its warning ("" for nothing)."""
    extra_anchors = [item.id for item in evalset if len(item.anchors) > 1]
    gold_only = [item.id for item in evalset if item.gold and not item.anchors]
    problems = []
    if extra_anchors:
        problems.append("only the first anchor is written for " + ", ".join(extra_anchors))
    if gold_only:
        problems.append(
            "gold spans have no CSV column, so these lose all their evidence: "
            + ", ".join(gold_only)
        )
    return "; ".join(problems)


def _csv_int(value: str, column: str, where: _Where) -> int:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number != int(number):
        raise where.error(f"{column} must be a whole number, got {value!r}")
    return int(number)


def parse_csv_text(text: Text, *, name: str, evalset_id: str | None = None) -> EvalSet:
    """Parse CSV given as text (or UTF-8 bytes); ``name`` is used in errors.

    See :func:`read_csv` for the columns and the rules.
    """
    text = _decode(text, name)
    if not text.strip():
        raise EvalSetError(f"{name} is empty", file=name)
    rows = None
    try:
        delimiter = textfile.pick_delimiter(text, wanted=_QUESTION_COLUMNS)
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        items, evalset_meta = _csv_items(rows, name)
    except csv.Error as exc:
        row = rows.line_num if rows is not None else 1
        raise EvalSetError.at(name, f"unreadable CSV ({exc})", row=row) from exc
    return EvalSet(
        id=evalset_id or Path(name).stem, source="csv", meta=evalset_meta, items=tuple(items)
    )


def _csv_items(rows: Any, name: str) -> tuple[list[EvalItem], dict[str, Any]]:
    """The items of a CSV's rows (`rows`, a csv.reader), and what was skipped, as meta.

    A row becomes its item with no Python call per cell: one C call (`pick`) takes every
    field's cell at once, and a helper is called only for a cell that holds something to
    convert (an anchor, a question type, a meta cell).
    """
    width, pick = _csv_fields(next(rows), name)
    where = _Where(name, row=1)  # moved along, rather than one made per row
    # Every row is padded to `width` + 1 cells: a field whose column the header lacks reads
    # the last, empty, one, as does a field a short row stops before.
    padding = [""] * (width + 1)
    items: list[EvalItem] = []
    first_row: dict[str, int] = {}
    rows_without_question = quotes_without_source = 0
    unreadable_meta: list[str] = []
    for cells in rows:
        row = where.row = rows.line_num  # physical line where the record ends; 1 is the header
        if len(cells) > width:
            _csv_check_extra_cells(cells, width, where)
            del cells[width:]
        cells += padding[len(cells) :]
        # Free text (question, quote, answer) keeps its spaces and newlines: a quote is
        # matched against the document as written. Names and numbers are stripped.
        item_id, question, source, quote, grade, page, occurrence, qtype, answer, meta = pick(cells)
        if not question.strip():
            if "".join(cells).strip():  # a row of blank cells is no row at all
                rows_without_question += 1
            continue
        item_id = item_id.strip() or f"q{len(items) + 1}"
        if item_id in first_row:
            raise where.error(f"id {item_id!r} is already used on row {first_row[item_id]}")
        first_row[item_id] = row
        anchors: tuple[GoldAnchor, ...] = ()
        if quote.strip():
            if source := source.strip():
                anchors = (_csv_anchor(source, quote, grade, page, occurrence, where),)
            else:
                quotes_without_source += 1
        qtype, meta = qtype.strip(), meta.strip()
        # Positional, in the order of EvalItem's fields (id, question, gold, anchors, qtype,
        # answer, meta): a call with keywords costs a third more, and this is one per row.
        items.append(
            EvalItem(
                item_id,
                question,
                (),
                anchors,
                _parse_qtype(qtype, "qtype", where) if qtype else QuestionType.FACTOID,
                answer if answer.strip() else None,
                _csv_meta(meta, item_id, unreadable_meta) if meta else {},
            )
        )
    evalset_meta: dict[str, Any] = {}
    if rows_without_question:
        evalset_meta["rows_skipped"] = {SKIP_ROW_NO_QUESTION: rows_without_question}
    if quotes_without_source:
        evalset_meta["quotes_skipped"] = {SKIP_QUOTE_NO_SOURCE: quotes_without_source}
    if unreadable_meta:
        evalset_meta["meta_cells_ignored"] = unreadable_meta
    return items, evalset_meta


def _csv_fields(header: list[str], name: str) -> tuple[int, Callable[[list[str]], Any]]:
    """The header's width, and what picks a padded row's cells in `CSV_COLUMNS` order.

    A field whose column is absent picks index `width`, the empty cell every row is padded
    with.
    """
    columns = [cell.strip() for cell in header]
    by_name: dict[str, int] = {}
    for index, column in enumerate(columns):
        by_name.setdefault(column.lower(), index)
    index_of = {
        field: next((by_name[a] for a in aliases if a in by_name), None)
        for field, aliases in CSV_COLUMN_ALIASES.items()
    }
    if index_of["question"] is None:
        raise EvalSetError(
            NO_QUESTION_COLUMN.format(
                name=name,
                expected=", ".join(CSV_COLUMN_ALIASES["question"]),
                found=", ".join(c for c in columns if c) or "(no column names)",
            ),
            file=name,
        )
    width = len(columns)
    picks = [width if index_of[field] is None else index_of[field] for field in CSV_COLUMNS]
    return width, operator.itemgetter(*picks)


def _csv_check_extra_cells(cells: list[str], width: int, where: _Where) -> None:
    """Refuse a row whose cells past the header's `width` hold anything but white space."""
    if "".join(cells[width:]).strip():
        # More cells than column names usually means an unquoted comma shifted the row.
        raise where.error(
            f"{len(cells)} cells but the header has {width} columns"
            " (is a comma inside a cell missing its quotes?)"
        )


def _csv_anchor(
    source_id: str, quote: str, grade: str, page: str, occurrence: str, where: _Where
) -> GoldAnchor:
    """A row's anchor, from its source and quote and the cells that place the quote."""
    grade, page, occurrence = grade.strip(), page.strip(), occurrence.strip()
    occurrence_number = _csv_int(occurrence, "occurrence", where) if occurrence else 0
    if occurrence_number < 0:
        raise where.error(f"occurrence must be 0 or more, got {occurrence!r}")
    return GoldAnchor(  # positional, as EvalItem is in _csv_items: one per row
        source_id,
        quote,
        _csv_int(grade, "grade", where) if grade else 2,
        _csv_int(page, "page", where) if page else None,
        occurrence_number,
    )


def _csv_meta(text: str, item_id: str, unreadable: list[str]) -> dict[str, Any]:
    """A meta cell as its JSON object; {} when it is not one, and the item's id noted.

    A note typed into the meta cell must not take down a file of good questions.
    """
    try:
        parsed, end = _scan_json(text, 0)
    except (StopIteration, ValueError, RecursionError):
        parsed, end = None, 0
    # The cell is stripped, so a JSON object that ends where the cell does is all there is:
    # what json.loads would accept, without its three Python-level calls around the scanner.
    if isinstance(parsed, dict) and end == len(text):
        return parsed
    unreadable.append(item_id)
    return {}


def read_csv(path: str | Path, *, evalset_id: str | None = None) -> EvalSet:
    """Read a CSV of questions; column names are matched case-insensitively (see aliases).

    Only a question column is required. With no id column, ids are q1, q2, … in row order. An
    anchor is built only when a row has both a source and a quote. A meta cell that is not a
    JSON object reads as ``{}`` (its item id is listed in ``meta["meta_cells_ignored"]``). A
    UTF-8 byte-order mark and ``;`` or tab delimiters are accepted.
    """
    data, name = _read_bytes(path)
    return parse_csv_text(data, name=name, evalset_id=evalset_id)


# --- BEIR -----------------------------------------------------------------------------------

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _parse_score(raw: str, where: _Where) -> int | float:
    if raw.isascii() and raw.isdigit():  # the common case, kept fast: "0", "1", "2"
        return int(raw)
    try:
        score = float(raw)
    except ValueError:
        raise where.error(f"the score {raw.strip()!r} is not a number") from None
    if not math.isfinite(score):
        raise where.error(f"the score {raw.strip()!r} is not a finite number")
    # "1.0" is the same grade as "1"; keep ints ints so they print and compare as such.
    return int(score) if score.is_integer() else score


def _looks_numeric(raw: str) -> bool:
    try:
        float(raw)
    except ValueError:
        return False
    return True


def _parse_qrels(text: str, name: str) -> Iterator[tuple[str, str, int | float]]:
    """(query id, corpus id, score) for each judgement in a qrels file.

    Layouts: ``query-id corpus-id score`` or ``query-id x corpus-id score`` (TREC's
    ``qid 0 docid rel``, or a corpus id written twice), tab-separated, or separated by runs of
    spaces when the file has no tab at all. The header line is optional.
    """
    by_tabs = "\t" in text
    where = _Where(name, line=1)  # moved along, rather than one made per line
    width = 0  # columns, set by the first judgement; until then every line is looked at
    corpus_column = 1
    first = True
    # A score is parsed once per file: a qrels file repeats a handful of grades.
    scores: dict[str, int | float] = {}
    for line_number, line in enumerate(_LINE_BREAK.split(text), start=1):
        if not line.strip():
            continue
        where.line = line_number
        fields = line.split("\t") if by_tabs else line.split()
        if len(fields) != width:
            if width:
                raise where.error(f"{len(fields)} columns, but earlier lines have {width}")
            if len(fields) not in (3, 4):
                raise where.error(
                    "expected 3 columns (query-id, corpus-id, score) or 4 (query-id, "
                    f"iteration, corpus-id, score), found {len(fields)}"
                )
            if first:
                first = False
                if not _looks_numeric(fields[-1]):
                    continue  # a header such as "query-id	corpus-id	score"
            width = len(fields)
            corpus_column = 2 if width == 4 else 1
        query_id, corpus_id = fields[0], fields[corpus_column]
        if (
            not (query_id and corpus_id)
            or query_id != query_id.strip()
            or corpus_id != corpus_id.strip()
        ):
            _refuse_qrels_ids(query_id, corpus_id, where)
        score = scores.get(fields[-1])
        if score is None:
            score = scores[fields[-1]] = _parse_score(fields[-1], where)
        yield query_id, corpus_id, score


def _refuse_qrels_ids(query_id: str, corpus_id: str, where: _Where) -> None:
    """Raise for the first of the two ids that is empty or has spaces around it."""
    for label, value in (("query id", query_id), ("corpus id", corpus_id)):
        if not value:
            raise where.error(f"the {label} is empty")
        if value != value.strip():
            # Seen in a hand-edited file: "1\t 0 31715818\t1" and "1012 0 \t9745001\t1",
            # TREC's space-separated columns glued into a tab-separated one. Stripping
            # would make "0 31715818" a corpus id, which matches no document.
            raise where.error(
                f"the {label} {value!r} has spaces around it; the file seems to mix "
                "tab- and space-separated columns"
            )


def parse_beir(
    queries_text: Text,
    qrels_text: Text,
    *,
    evalset_id: str = "beir",
    queries_name: str = "queries.jsonl",
    qrels_name: str = "qrels.tsv",
) -> EvalSet:
    """Parse a BEIR queries file and qrels file given as text (or UTF-8 bytes).

    See :func:`read_beir` for the rules; the names are used in errors.
    """
    queries = _parse_queries(_decode(queries_text, queries_name), queries_name)
    gold, skipped = _gold_documents(_decode(qrels_text, qrels_name), qrels_name, queries)

    items = []
    for query_id, (question, metadata) in queries.items():
        if query_id not in gold:
            continue
        meta: dict[str, Any] = {"gold_documents": gold[query_id]}
        if metadata:
            meta["query_metadata"] = metadata
        items.append(EvalItem(id=query_id, question=question, meta=meta))

    evalset_meta: dict[str, Any] = {"granularity": "document", "note": BEIR_NOTE}
    if skipped:
        evalset_meta["qrels_skipped"] = skipped
    if dropped := len(queries) - len(items):
        evalset_meta["queries_dropped"] = {DROP_NO_POSITIVE_JUDGEMENT: dropped}
    return EvalSet(id=evalset_id, source="beir", meta=evalset_meta, items=tuple(items))


def _parse_queries(text: str, name: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each query of a BEIR queries file: its text and metadata, by query id."""
    queries: dict[str, tuple[str, dict[str, Any]]] = {}
    first_line: dict[str, int] = {}
    for line, record in _iter_json_values(text, name):
        where = _Where(name, line=line)
        if not isinstance(record, dict):
            raise where.error(f"expected a JSON object, got {type(record).__name__}")
        # BEIR writes {"_id", "text"}; some exports use {"id", "title"}.
        id_key = "_id" if "_id" in record else "id"
        query_id = record.get(id_key)
        if _is_int(query_id):
            query_id = str(query_id)
        if not isinstance(query_id, str) or not query_id:
            raise where.error('expected a string query id in "_id" (or "id")')
        text_key = "text" if "text" in record else "title"
        question = record.get(text_key)
        if not isinstance(question, str) or not question.strip():
            raise where.error(f'query {query_id!r} has no text in "text" (or "title")')
        if query_id in first_line:
            raise where.error(
                f"query id {query_id!r} is already used on line {first_line[query_id]}"
            )
        first_line[query_id] = line
        metadata = record.get("metadata")
        queries[query_id] = (question, metadata if isinstance(metadata, dict) else {})
    return queries


def _gold_documents(
    text: str, name: str, queries: Mapping[str, object]
) -> tuple[dict[str, list[tuple[str, int | float]]], dict[str, int]]:
    """The relevant documents of each query from a qrels file, and the judgements skipped."""
    # Each query's judgements by corpus id, in file order: a repeated judgement is a key
    # already there, with no (query, corpus) pair built and hashed for every line.
    judged: dict[str, dict[str, int | float]] = {}
    skipped: dict[str, int] = {}
    for query_id, corpus_id, score in _parse_qrels(text, name):
        judgements = judged.get(query_id)
        if judgements is None:
            if query_id not in queries:
                skipped[SKIP_QUERY_NOT_IN_QUERIES] = skipped.get(SKIP_QUERY_NOT_IN_QUERIES, 0) + 1
                continue
            judgements = judged[query_id] = {}
        if corpus_id in judgements:
            skipped[SKIP_REPEATED_JUDGEMENT] = skipped.get(SKIP_REPEATED_JUDGEMENT, 0) + 1
            continue
        judgements[corpus_id] = score
    gold: dict[str, list[tuple[str, int | float]]] = {}
    for query_id, judgements in judged.items():
        if documents := [(doc, score) for doc, score in judgements.items() if score > 0]:
            gold[query_id] = documents
    return gold, skipped


def read_beir(
    queries_path: str | Path, qrels_path: str | Path, *, evalset_id: str = "beir"
) -> EvalSet:
    """Read a BEIR ``queries.jsonl`` and a qrels TSV into a document-level eval set.

    Only judgements with score > 0 are kept, as ``item.meta["gold_documents"]`` (a list of
    ``(doc_id, grade)`` tuples); a query with none is dropped and counted in
    ``meta["queries_dropped"]``. Judgements naming a query that is not in the queries file
    are counted in ``meta["qrels_skipped"]``. The qrels header is optional; CRLF, 4-column
    (``qid 0 docid rel``) and space-separated files are read; a file mixing layouts is refused.
    """
    queries_data, queries_name = _read_bytes(queries_path)
    qrels_data, qrels_name = _read_bytes(qrels_path)
    return parse_beir(
        queries_data,
        qrels_data,
        evalset_id=evalset_id,
        queries_name=queries_name,
        qrels_name=qrels_name,
    )


# --- LegalBench-RAG -------------------------------------------------------------------------


class _Corpus:
    """Lengths of corpus documents, read the way LegalBench-RAG computed its offsets.

    The benchmark's spans index ``open(path).read()``: universal newlines (CRLF counts as one
    character) with a byte-order mark kept as U+FEFF. Reading bytes would shift every offset.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.lengths: dict[str, int | None] = {}

    def length(self, file_path: str, where: _Where) -> int | None:
        if file_path not in self.lengths:
            # file_path is used literally: "%20" and "||" are part of real file names.
            path = (self.root / file_path).resolve()
            if not path.is_relative_to(self.root):
                raise where.error(f"file_path {file_path!r} points outside the corpus folder")
            try:
                with open(path, encoding="utf-8") as document:
                    self.lengths[file_path] = len(document.read())
            except FileNotFoundError:
                self.lengths[file_path] = None
            except (OSError, UnicodeDecodeError) as exc:
                raise where.error(f"cannot read the document {file_path!r} ({exc})") from exc
        return self.lengths[file_path]


def parse_legalbench_rag_text(
    text: Text,
    *,
    name: str,
    evalset_id: str = "legalbench-rag",
    corpus_dir: str | Path | None = None,
) -> EvalSet:
    """Parse a LegalBench-RAG benchmark given as text (or UTF-8 bytes).

    See :func:`read_legalbench_rag` for the rules; ``name`` is used in errors and meta.
    """
    tests = _legalbench_tests(_decode(text, name), name)
    corpus = _Corpus(Path(corpus_dir)) if corpus_dir is not None else None

    items: list[EvalItem] = []
    used_ids: set[str] = set()
    tests_skipped = 0
    snippets_skipped: dict[str, int] = {}
    for index, test in enumerate(tests):
        query = _legalbench_query(test, _Where(name, test=index))
        if query is None:
            tests_skipped += 1
            continue
        item_id = _legalbench_id(test, index)
        where = _Where(name, test=index, item=item_id)
        if item_id in used_ids:
            raise where.error(f"the id {item_id!r} is used by an earlier test")
        used_ids.add(item_id)
        answer = _optional_str(test, "answer", where)
        gold = _legalbench_gold(test, where, corpus, snippets_skipped)
        tags = test.get("tags")
        meta: dict[str, Any] = {"tags": tags} if isinstance(tags, list) and tags else {}
        items.append(EvalItem(id=item_id, question=query, gold=gold, answer=answer, meta=meta))

    return EvalSet(
        id=evalset_id,
        source="legalbench-rag",
        meta={
            "granularity": "span",
            "source_file": name,
            "tests_in_file": len(tests),
            "tests_skipped": tests_skipped,
            "snippets_skipped": snippets_skipped,
        },
        items=tuple(items),
    )


def _optional_str(obj: dict[str, Any], key: str, where: _Where, prefix: str = "") -> str | None:
    """``obj[key]`` if it is a string, None if absent or null; any other type raises."""
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise where.error(f'{prefix}"{key}" must be a string, got {type(value).__name__}')
    return value


def _legalbench_query(test: object, where: _Where) -> str | None:
    """A test's query, or None for a test to skip (no query, or a blank one)."""
    if not isinstance(test, dict):
        raise where.error(f"expected an object, got {type(test).__name__}")
    query = _optional_str(test, "query", where)
    if not query or not query.strip():
        return None
    return query


def _legalbench_id(test: dict[str, Any], index: int) -> str:
    """A test's item id: its "query_id", else ``lb<position>``."""
    # Files re-serialised by others carry a "query_id"; it is a better id than a position.
    query_id = test.get("query_id")
    return query_id if isinstance(query_id, str) and query_id else f"lb{index}"


def _legalbench_gold(
    test: dict[str, Any], where: _Where, corpus: _Corpus | None, skipped: dict[str, int]
) -> tuple[GoldSpan, ...]:
    """A test's snippets as gold spans; each snippet skipped is counted in `skipped` by why."""
    snippets = test.get("snippets")
    if snippets is None:
        snippets = []
    if not isinstance(snippets, list):
        raise where.error(f'"snippets" must be an array, got {type(snippets).__name__}')
    gold = []
    for number, snippet in enumerate(snippets):
        span = _legalbench_span(snippet, number, where, corpus)
        if isinstance(span, Span):
            gold.append(GoldSpan(span))
        else:
            skipped[span] = skipped.get(span, 0) + 1
    return tuple(gold)


def _legalbench_tests(text: str, name: str) -> list[Any]:
    """The tests of a LegalBench-RAG file: `{"tests": [...]}` or a bare array."""
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvalSetError.at(
            name, f"invalid JSON ({exc.msg} at column {exc.colno})", line=exc.lineno
        ) from exc
    except RecursionError as exc:
        raise EvalSetError.at(name, TOO_DEEP) from exc
    if isinstance(payload, list):
        return payload
    if not isinstance(payload, dict):
        raise EvalSetError.at(
            name, f'expected {{"tests": [...]}} or a [...] array, got {type(payload).__name__}'
        )
    if "tests" not in payload:
        raise EvalSetError.at(name, 'expected {"tests": [...]} or a [...] array of tests')
    tests = payload["tests"]
    if not isinstance(tests, list):
        raise EvalSetError.at(name, f'"tests" must be an array, got {type(tests).__name__}')
    return tests


def _legalbench_span(
    snippet: object, number: int, where: _Where, corpus: _Corpus | None
) -> Span | str:
    """A snippet's gold span, or why it is skipped; wrong types raise."""
    file_path, span = _snippet_fields(snippet, number, where)
    if not file_path:
        return SKIP_NO_FILE_PATH
    if span is None:
        return SKIP_NO_SPAN
    if len(span) < 2:
        return SKIP_SHORT_SPAN
    start, end = _span_bounds(span, number, where)
    if start == end:
        return SKIP_EMPTY_SPAN
    if corpus is not None:
        length = corpus.length(file_path, where)
        if length is None:
            return SKIP_DOCUMENT_MISSING
        if end > length:
            return SKIP_SPAN_PAST_END
    return Span(file_path, start, end)


def _snippet_fields(
    snippet: object, number: int, where: _Where
) -> tuple[str | None, list[Any] | None]:
    """A snippet's "file_path" and "span", each None when absent; wrong types raise."""
    if not isinstance(snippet, dict):
        raise where.error(f"snippet {number} must be an object, got {type(snippet).__name__}")
    file_path = _optional_str(snippet, "file_path", where, f"snippet {number}: ")
    span = snippet.get("span")
    if span is not None and not isinstance(span, list):
        # "117,202" must not become characters "1" to "1".
        raise where.error(f'snippet {number}: "span" must be an array [start, end], got {span!r}')
    return file_path, span


def _span_bounds(span: list[Any], number: int, where: _Where) -> tuple[int, int]:
    """The start and end of a span of two or more items; anything but [start, end] with
    0 <= start <= end raises."""
    if len(span) > 2 or not all(_is_int(n) for n in span):
        raise where.error(
            f'snippet {number}: "span" must be two whole numbers [start, end], got {span!r}'
        )
    start, end = span
    if start < 0 or end < start:
        raise where.error(
            f"snippet {number}: the span {span!r} ends before it starts or starts below 0"
        )
    return start, end


def read_legalbench_rag(
    path: str | Path,
    *,
    evalset_id: str = "legalbench-rag",
    corpus_dir: str | Path | None = None,
) -> EvalSet:
    """Read a LegalBench-RAG benchmark (``{"tests": [...]}`` or a bare array) as gold spans.

    A snippet missing ``file_path`` or ``span``, or with a span shorter than two numbers or
    empty, is skipped and counted in ``meta["snippets_skipped"]``; a test with no query is
    counted in ``meta["tests_skipped"]``. Wrong types (a span given as a string, ``tests`` as
    an object, a snippet that is not an object, a span that ends before it starts) raise
    :class:`EvalSetError` naming the file and the test.

    With ``corpus_dir``, each span is checked against its document (``corpus_dir/file_path``,
    the path used literally): a snippet whose document is missing or whose span runs past the
    document's end is skipped and counted rather than refused, like the other bad snippets.
    A ``query_id`` in the test becomes the item id; otherwise ids are ``lb<position>``.
    """
    data, name = _read_bytes(path)
    return parse_legalbench_rag_text(data, name=name, evalset_id=evalset_id, corpus_dir=corpus_dir)


# --- describing what was skipped --------------------------------------------------------------

# meta key -> (singular noun, plural noun, verb), in the order the sentence lists them.
_SKIP_KEYS = (
    ("tests_skipped", "test", "tests", "skipped"),
    ("snippets_skipped", "snippet", "snippets", "skipped"),
    ("qrels_skipped", "judgement", "judgements", "skipped"),
    ("queries_dropped", "query", "queries", "dropped"),
    ("rows_skipped", "row", "rows", "skipped"),
    ("quotes_skipped", "quote", "quotes", "skipped"),
)
_TEST_SKIP_REASON = "had no `query`"


def _counts(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if _is_int(v) and v > 0}


def describe_skipped(evalset: EvalSet) -> str:
    """One readable line saying what the import skipped, read straight from ``evalset.meta``.

    For example ``"1 snippet skipped: 1 had no `span`."``; ``"Nothing was skipped."`` when the
    meta records no skips.
    """
    sentences = []
    for key, singular, plural, verb in _SKIP_KEYS:
        value = evalset.meta.get(key)
        # tests_skipped is a bare count: the only reason a test is skipped is a missing query.
        reasons = {_TEST_SKIP_REASON: value} if _is_int(value) else value
        counts = _counts(reasons)
        if not counts:
            continue
        total = sum(counts.values())
        details = "; ".join(f"{count} {reason}" for reason, count in counts.items())
        sentences.append(f"{total} {singular if total == 1 else plural} {verb}: {details}.")
    ignored = evalset.meta.get("meta_cells_ignored")
    if isinstance(ignored, list) and ignored:
        cells = "meta cell was" if len(ignored) == 1 else "meta cells were"
        sentences.append(
            f"{len(ignored)} {cells} not a JSON object and read as {{}}: "
            + ", ".join(map(str, ignored))
            + "."
        )
    return " ".join(sentences) or NOTHING_SKIPPED


# --- choosing a reader ----------------------------------------------------------------------


def read_evalset(path: str | Path) -> EvalSet:
    """Read ``path`` with :func:`read_csv` if it ends in ``.csv``, else :func:`read_jsonl`.

    The choice is made on the extension alone, never on the content.
    """
    if Path(path).suffix.lower() == ".csv":
        return read_csv(path)
    return read_jsonl(path)
