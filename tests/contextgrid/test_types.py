"""The eval-set types: defaults, reprs, equality and hashing, lookups."""

from __future__ import annotations

import dataclasses

import pytest

import contextgrid as cg


def test_span_and_gold_span_reprs_match_the_page():
    gold = cg.GoldSpan(span=cg.Span("handbook.txt", 120, 167))
    assert repr(gold.span) == "Span('handbook.txt', 120, 167)"
    assert repr(gold) == "GoldSpan(span=Span('handbook.txt', 120, 167), grade=2)"
    assert len(gold.span) == 47


@pytest.mark.parametrize(("start", "end"), [(-1, 4), (9, 4)])
def test_span_refuses_impossible_offsets(start, end):
    with pytest.raises(ValueError, match="0 <= start <= end"):
        cg.Span("d.txt", start, end)


def test_defaults():
    item = cg.EvalItem(id="q1", question="Q?")
    assert (item.gold, item.anchors, item.qtype, item.answer, item.meta) == (
        (),
        (),
        cg.QuestionType.FACTOID,
        None,
        {},
    )
    assert cg.GoldAnchor("d", "x") == cg.GoldAnchor("d", "x", 2, None, 0)
    evalset = cg.EvalSet(id="s")
    assert (evalset.version, evalset.source, evalset.meta, evalset.items) == (1, "manual", {}, ())


def test_lists_are_stored_as_tuples_so_sets_compare_and_hash():
    anchor = cg.GoldAnchor("d", "x")
    item = cg.EvalItem(id="q1", question="Q?", anchors=[anchor], meta={"k": [1]})
    assert item.anchors == (anchor,)
    evalset = cg.EvalSet(id="s", items=[item], meta={"a": {}})
    assert evalset == cg.EvalSet(id="s", items=(item,), meta={"a": {}})
    assert evalset != cg.EvalSet(id="s", items=(item,), meta={"a": 1})
    # meta is compared but not hashed, so values holding dicts still hash.
    assert hash(evalset) == hash(cg.EvalSet(id="s", items=(item,)))


def test_values_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        cg.EvalItem(id="q1", question="Q?").question = "other"  # type: ignore[misc]


def test_is_answerable_needs_anchors_or_gold():
    assert not cg.EvalItem("q1", "Q?").is_answerable
    assert cg.EvalItem("q1", "Q?", anchors=(cg.GoldAnchor("d", "x"),)).is_answerable
    assert cg.EvalItem("q1", "Q?", gold=(cg.GoldSpan(cg.Span("d", 0, 1)),)).is_answerable


def test_evalset_len_iteration_and_get():
    a, b = cg.EvalItem("a", "A?"), cg.EvalItem("b", "B?")
    evalset = cg.EvalSet(id="s", items=(a, b))
    assert len(evalset) == 2
    assert list(evalset) == [a, b]
    assert evalset.get("b") is b
    assert evalset.get("c") is None


def test_question_type_values_are_what_files_store():
    assert [t.value for t in cg.QuestionType] == [
        "factoid",
        "multi_hop",
        "comparison",
        "list",
        "summary",
        "unanswerable",
        "other",
    ]
    assert cg.QuestionType.FACTOID == "factoid"
    assert issubclass(cg.EvalSetError, Exception)


def test_the_library_never_imports_django():
    import subprocess
    import sys

    code = (
        "import sys, contextgrid, contextgrid.evalset.io, contextgrid.evalset.assess\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_read_evalset_picks_csv_by_extension_in_any_case(tmp_path):
    (tmp_path / "quiz.CSV").write_text("question\nA?\n")
    (tmp_path / "quiz.txt").write_text('{"id": "q1", "question": "A?"}\n')
    assert cg.read_evalset(tmp_path / "quiz.CSV").source == "csv"
    assert cg.read_evalset(str(tmp_path / "quiz.txt")).source == "import"


def test_describe_skipped_ignores_meta_it_does_not_understand():
    evalset = cg.EvalSet(
        id="s",
        meta={"tests_skipped": "two", "snippets_skipped": {"had no `span`": "x"}, "other": 1},
    )
    assert cg.describe_skipped(evalset) == "Nothing was skipped."
