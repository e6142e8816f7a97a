"""assess(): the summary a person reads before trusting an eval set."""

from __future__ import annotations

import contextgrid as cg
from tests.contextgrid.realdata import realdata

ANCHOR = cg.GoldAnchor("d.pdf", "x")


def test_counts_answerable_reviewed_and_question_types():
    evalset = cg.EvalSet(
        id="quiz",
        items=(
            cg.EvalItem("q1", "A?", anchors=(ANCHOR,), meta={"reviewed": True}),
            cg.EvalItem("q2", "B?", anchors=(ANCHOR,), qtype=cg.QuestionType.COMPARISON),
            cg.EvalItem("q3", "C?", meta={"reviewed": "yes"}),
            cg.EvalItem("q4", "D?", anchors=(ANCHOR,), meta={"reviewed": True}),
        ),
    )
    summary = cg.assess(evalset)
    assert (summary.items, summary.answerable, summary.reviewed) == (4, 3, 2)
    assert summary.percent_reviewed == 50.0
    assert summary.qtypes == (("factoid", 3), ("comparison", 1))
    assert summary.granularity == "quote"
    assert str(summary) == (
        "quiz: 4 items, 3 answerable (75%), 50% reviewed\n"
        "question types: factoid 3, comparison 1\n"
        "granularity: quote"
    )


def test_empty_set():
    summary = cg.assess(cg.EvalSet(id="empty"))
    assert str(summary) == (
        "empty: 0 items, 0 answerable (0%), 0% reviewed\nquestion types: none\ngranularity: none"
    )


def test_granularity_is_inferred_when_mixed():
    evalset = cg.EvalSet(
        id="s",
        items=(
            cg.EvalItem("q1", "A?", anchors=(ANCHOR,)),
            cg.EvalItem("q2", "B?", gold=(cg.GoldSpan(cg.Span("d", 0, 1)),)),
        ),
    )
    assert cg.assess(evalset).granularity == "mixed (quote, span)"


def test_beir_gold_documents_count_as_evidence_and_skips_are_reported():
    es = cg.read_beir(
        realdata("beir/agentset_dbpedia/queries.jsonl"),
        realdata("beir/agentset_dbpedia/qrels/test.tsv"),
    )
    assert str(cg.assess(es)) == (
        "beir: 40 items, 40 answerable (100%), 0% reviewed\n"
        "question types: factoid 40\n"
        "granularity: document\n"
        "skipped: 10 queries dropped: 10 had no positive judgement."
    )
