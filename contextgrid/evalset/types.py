"""The values an eval set is made of: questions, their evidence, and the set that holds them.

Every type is a frozen dataclass whose collections are tuples, so an eval set can be shared
between threads and compared with ``==`` (which is what the JSONL round trip promises).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "EvalItem",
    "EvalSet",
    "EvalSetError",
    "GoldAnchor",
    "GoldSpan",
    "QuestionType",
    "Span",
]


class EvalSetError(Exception):
    """An eval set file (or value) that cannot be read or written as asked.

    The message always names the file, and the line, row or test when there is one, so it can
    be shown to the person who supplied the file as it is. The same parts are attributes for
    programs, which need not read them back out of the message: `file`, `line`, `row`, `test`
    (a LegalBench-RAG test's position) and `item` (its id), each None when it does not apply,
    and `detail`, what is wrong there.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        row: int | None = None,
        test: int | None = None,
        item: str | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.row = row
        self.test = test
        self.item = item
        self.detail = message if detail is None else detail

    @classmethod
    def at(
        cls,
        file: str,
        detail: str,
        *,
        line: int | None = None,
        row: int | None = None,
        test: int | None = None,
        item: str | None = None,
    ) -> EvalSetError:
        """The error at a place in a file: `quiz.csv, row 4: the score 'x' is not a number`."""
        if line is not None:
            place = f", line {line}"
        elif row is not None:
            place = f", row {row}"
        elif test is not None:
            place = f", test {test}" + (f" ({item})" if item is not None else "")
        else:
            place = ""
        return cls(
            f"{file}{place}: {detail}",
            file=file,
            line=line,
            row=row,
            test=test,
            item=item,
            detail=detail,
        )


class QuestionType(StrEnum):
    """What kind of question an item asks; the value is what the files store.

    - ``factoid``: one fact, answered by one passage (the default).
    - ``multi_hop``: needs evidence from two or more passages combined.
    - ``comparison``: compares two or more things, each with its own evidence.
    - ``list``: asks for an enumeration whose parts may be spread over the document.
    - ``summary``: asks for a summary of a section or a whole document.
    - ``unanswerable``: the corpus does not answer it; a good system says so.
    - ``other``: none of the above.
    """

    FACTOID = "factoid"
    MULTI_HOP = "multi_hop"
    COMPARISON = "comparison"
    LIST = "list"
    SUMMARY = "summary"
    UNANSWERABLE = "unanswerable"
    OTHER = "other"


def _tuple(owner: object, name: str) -> None:
    """Store a list given for a tuple field as a tuple, so equality and hashing work."""
    value = getattr(owner, name)
    if isinstance(value, list):
        object.__setattr__(owner, name, tuple(value))


@dataclass(frozen=True, slots=True)
class Span:
    """Characters ``start`` (inclusive) to ``end`` (exclusive) of the document ``source_id``."""

    source_id: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"a span needs 0 <= start <= end, got {self.start}, {self.end}")

    def __repr__(self) -> str:
        return f"Span({self.source_id!r}, {self.start!r}, {self.end!r})"

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class GoldSpan:
    """Resolved evidence: a span of a document with its relevance grade (2 = fully relevant)."""

    span: Span
    grade: int = 2


@dataclass(frozen=True, slots=True)
class GoldAnchor:
    """Evidence given as a quote to look for in a document, resolved to a span later.

    ``occurrence`` picks which match of ``quote`` is meant (0 = the first) when the quote
    appears more than once; ``page_hint`` narrows the search in paged documents.
    """

    source_id: str
    quote: str
    grade: int = 2
    page_hint: int | None = None
    occurrence: int = 0


@dataclass(frozen=True)
class EvalItem:
    """One question with its evidence (``anchors`` and/or resolved ``gold`` spans)."""

    id: str
    question: str
    gold: tuple[GoldSpan, ...] = ()
    anchors: tuple[GoldAnchor, ...] = ()
    qtype: QuestionType = QuestionType.FACTOID
    answer: str | None = None
    # Not hashed: a dict cannot be; equality still compares it.
    meta: dict[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # One check for the usual case, both tuples: readers build an item per row.
        if type(self.gold) is not tuple or type(self.anchors) is not tuple:
            _tuple(self, "gold")
            _tuple(self, "anchors")

    @property
    def is_answerable(self) -> bool:
        """True when the item carries evidence: at least one anchor or gold span."""
        return bool(self.anchors or self.gold)


@dataclass(frozen=True)
class EvalSet:
    """A named, versioned collection of questions; iterate it, ``len()`` it, ``get(id)``."""

    id: str
    version: int = 1
    source: str = "manual"
    meta: dict[str, Any] = field(default_factory=dict, hash=False)
    items: tuple[EvalItem, ...] = ()

    def __post_init__(self) -> None:
        _tuple(self, "items")

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[EvalItem]:
        return iter(self.items)

    def get(self, item_id: str) -> EvalItem | None:
        """The item whose id is ``item_id``, or None when there is none."""
        for item in self.items:
            if item.id == item_id:
                return item
        return None
