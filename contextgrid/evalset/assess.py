"""A quick look at an eval set before using it: size, evidence, review progress, kinds."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from contextgrid.evalset.io import NOTHING_SKIPPED, describe_skipped
from contextgrid.evalset.types import EvalItem, EvalSet

__all__ = ["Assessment", "assess"]


@dataclass(frozen=True)
class Assessment:
    """What :func:`assess` found; ``str()`` gives a few readable lines."""

    evalset_id: str
    items: int
    answerable: int
    reviewed: int
    qtypes: tuple[tuple[str, int], ...]
    granularity: str
    skipped: str

    @property
    def percent_reviewed(self) -> float:
        """Share of items whose ``meta["reviewed"]`` is true, in percent (0 for an empty set)."""
        return 100 * self.reviewed / self.items if self.items else 0.0

    @property
    def percent_answerable(self) -> float:
        """Share of items that carry evidence, in percent (0 for an empty set)."""
        return 100 * self.answerable / self.items if self.items else 0.0

    def __str__(self) -> str:
        noun = "item" if self.items == 1 else "items"
        lines = [
            f"{self.evalset_id}: {self.items} {noun}, {self.answerable} answerable "
            f"({self.percent_answerable:.0f}%), {self.percent_reviewed:.0f}% reviewed",
            "question types: "
            + (", ".join(f"{name} {count}" for name, count in self.qtypes) or "none"),
            f"granularity: {self.granularity}",
        ]
        if self.skipped != NOTHING_SKIPPED:
            lines.append(f"skipped: {self.skipped}")
        return "\n".join(lines)


def _has_evidence(item: EvalItem) -> bool:
    # BEIR keeps its document-level gold in meta, not in item.gold.
    return item.is_answerable or bool(item.meta.get("gold_documents"))


def _granularity(evalset: EvalSet) -> str:
    declared = evalset.meta.get("granularity")
    if isinstance(declared, str) and declared:
        return declared
    kinds = set()
    for item in evalset:
        if item.gold:
            kinds.add("span")
        if item.anchors:
            kinds.add("quote")
        if item.meta.get("gold_documents"):
            kinds.add("document")
    if not kinds:
        return "none"
    return kinds.pop() if len(kinds) == 1 else "mixed (" + ", ".join(sorted(kinds)) + ")"


def assess(evalset: EvalSet) -> Assessment:
    """Summarise ``evalset``: item count, answerable count, % reviewed, question types, granularity.

    An item is answerable when it has anchors, gold spans or (BEIR) gold documents; it is
    reviewed when ``item.meta["reviewed"] is True``. Granularity is ``evalset.meta
    ["granularity"]`` when the importer set it, else inferred: ``quote`` (anchors), ``span``
    (gold spans), ``document``, ``mixed (…)`` or ``none``.
    """
    counts = Counter(str(item.qtype) for item in evalset)
    return Assessment(
        evalset_id=evalset.id,
        items=len(evalset),
        answerable=sum(_has_evidence(item) for item in evalset),
        reviewed=sum(item.meta.get("reviewed") is True for item in evalset),
        qtypes=tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        granularity=_granularity(evalset),
        skipped=describe_skipped(evalset),
    )
