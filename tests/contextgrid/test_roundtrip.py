"""Round trips: what write_jsonl writes, read_jsonl reads back equal; CSV keeps one anchor."""

from __future__ import annotations

import math
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contextgrid as cg
from contextgrid.evalset.io import evalset_to_jsonl_text, parse_csv_text, parse_jsonl_text

names = st.text(min_size=1, max_size=20).filter(lambda s: s.strip())
texts = st.text(max_size=40)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)
metas = st.dictionaries(texts, json_values, max_size=4)
grades = st.integers(min_value=-3, max_value=3)


@st.composite
def spans(draw) -> cg.Span:
    start = draw(st.integers(min_value=0, max_value=10**7))
    return cg.Span(draw(names), start, start + draw(st.integers(min_value=0, max_value=10**5)))


anchors = st.builds(
    cg.GoldAnchor,
    source_id=names,
    quote=names,
    grade=grades,
    page_hint=st.none() | st.integers(min_value=0, max_value=5000),
    occurrence=st.integers(min_value=0, max_value=50),
)
items = st.builds(
    cg.EvalItem,
    id=names,
    question=names,
    gold=st.lists(st.builds(cg.GoldSpan, span=spans(), grade=grades), max_size=3).map(tuple),
    anchors=st.lists(anchors, max_size=3).map(tuple),
    qtype=st.sampled_from(cg.QuestionType),
    answer=st.none() | texts,
    meta=metas,
)
evalsets = st.builds(
    cg.EvalSet,
    id=names,
    version=st.integers(min_value=0, max_value=10**6),
    source=texts,
    meta=metas,
    items=st.lists(items, max_size=5, unique_by=lambda item: item.id).map(tuple),
)


@given(evalsets)
def test_jsonl_text_round_trips(evalset):
    assert parse_jsonl_text(evalset_to_jsonl_text(evalset), name="x.jsonl") == evalset


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30)
@given(evalset=evalsets)
def test_jsonl_file_round_trips(tmp_path, evalset):
    assert cg.read_jsonl(cg.write_jsonl(evalset, tmp_path / "sub" / "set.jsonl")) == evalset


def test_floats_and_nested_meta_survive_exactly():
    meta = {"score": 0.1 + 0.2, "big": 2**62, "nested": {"list": [1, "two", None, True]}}
    evalset = cg.EvalSet(id="s", meta=meta, items=(cg.EvalItem("q1", "Q?", meta=meta),))
    back = parse_jsonl_text(evalset_to_jsonl_text(evalset), name="x.jsonl")
    assert back == evalset
    assert math.isclose(back.meta["score"], 0.30000000000000004, rel_tol=0, abs_tol=0)


# In CSV, ids and source ids lose surrounding spaces, "" and None answers read the same, and
# only one anchor and no gold fit, so the generated items stay inside what the format holds.
# ... and NUL, which read_csv refuses as the mark of a binary file, is never written.
csv_characters = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
csv_texts = st.text(alphabet=csv_characters, min_size=1, max_size=20)
csv_free_text = csv_texts.filter(lambda s: s.strip())
csv_names = csv_texts.map(str.strip).filter(bool)
csv_items = st.builds(
    cg.EvalItem,
    id=csv_names,
    question=csv_free_text,
    anchors=st.lists(
        st.builds(
            cg.GoldAnchor,
            source_id=csv_names,
            quote=csv_free_text,
            grade=grades,
            page_hint=st.none() | st.integers(min_value=0, max_value=5000),
            occurrence=st.integers(min_value=0, max_value=50),
        ),
        max_size=1,
    ).map(tuple),
    qtype=st.sampled_from(cg.QuestionType),
    answer=st.none() | csv_free_text,
    meta=st.dictionaries(texts, json_values, max_size=3),
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(items=st.lists(csv_items, min_size=1, max_size=4, unique_by=lambda item: item.id))
def test_csv_round_trips_items_with_at_most_one_anchor(tmp_path, items):
    evalset = cg.EvalSet(id="s", items=tuple(items))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is lost, so nothing to warn about
        path = cg.write_csv(evalset, tmp_path / "s.csv")
    back = parse_csv_text(path.read_bytes(), name="s.csv")
    assert back.items == evalset.items
