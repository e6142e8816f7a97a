"""read_jsonl / parse_jsonl_text / write_jsonl beyond the page: hostile and unusual files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import contextgrid as cg
from contextgrid.evalset.io import evalset_to_jsonl_text, parse_jsonl_text

FILES = Path(__file__).resolve().parents[1] / "files" / "contextgrid"


def parse(text: str) -> cg.EvalSet:
    return parse_jsonl_text(text, name="quiz.jsonl")


def error_of(text: str) -> str:
    with pytest.raises(cg.EvalSetError) as excinfo:
        parse(text)
    return str(excinfo.value)


def test_invalid_json_on_line_7_names_file_and_line():
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.read_jsonl(FILES / "invalid_line7.jsonl")
    assert str(excinfo.value) == (
        "invalid_line7.jsonl, line 7: invalid JSON (Expecting value at column 54)"
    )


def test_full_item_reads_every_field():
    es = parse(
        json.dumps({"_evalset": {"id": "s", "version": 3, "source": "csv", "meta": {"a": 1}}})
        + "\n"
        + json.dumps(
            {
                "id": "q1",
                "question": "Q?",
                "gold": [{"span": {"source_id": "d.txt", "start": 1, "end": 9}, "grade": 1}],
                "anchors": [{"source_id": "d.txt", "quote": "x", "page_hint": 4, "occurrence": 2}],
                "qtype": "multi_hop",
                "answer": "A",
                "meta": {"reviewed": True},
            }
        )
    )
    assert (es.id, es.version, es.source, es.meta) == ("s", 3, "csv", {"a": 1})
    assert es.items == (
        cg.EvalItem(
            id="q1",
            question="Q?",
            gold=(cg.GoldSpan(cg.Span("d.txt", 1, 9), grade=1),),
            anchors=(cg.GoldAnchor("d.txt", "x", page_hint=4, occurrence=2),),
            qtype=cg.QuestionType.MULTI_HOP,
            answer="A",
            meta={"reviewed": True},
        ),
    )


def test_crlf_bom_blank_lines_and_integer_ids_are_accepted():
    es = parse_jsonl_text(
        '\ufeff{"id": 1, "question": "A?"}\r\n\r\n{"id": "2", "question": "B?"}\r\n',
        name="hand.jsonl",
    )
    assert [item.id for item in es] == ["1", "2"]
    assert es.id == "hand"


def test_bytes_are_decoded_as_utf8():
    es = parse_jsonl_text('{"id": "q1", "question": "Où ?"}\n'.encode(), name="u.jsonl")
    assert es.items[0].question == "Où ?"


def test_empty_file_is_an_empty_set():
    es = parse("")
    assert (len(es), es.id, es.source) == (0, "quiz", "import")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]\n", "quiz.jsonl, line 1: expected a JSON object, got list"),
        ('{"question": "Q?"}', "quiz.jsonl, line 1: the item has no 'id'"),
        ('{"id": "q1"}', "quiz.jsonl, line 1: item 'q1' has no 'question'"),
        ('{"id": "q1", "question": "  "}', "quiz.jsonl, line 1: item 'q1': 'question' is empty"),
        (
            '{"id": "q1", "question": 5}',
            "quiz.jsonl, line 1: item 'q1': 'question' must be a string, got int",
        ),
        (
            '{"id": "q1", "question": "Q?", "anchor": []}',
            "quiz.jsonl, line 1: unknown field 'anchor' in the item; expected: id, question, "
            "gold, anchors, qtype, answer, meta",
        ),
        (
            '{"id": "q1", "question": "Q?", "anchors": {"source_id": "d"}}',
            "quiz.jsonl, line 1: item 'q1': 'anchors' must be a list, got dict",
        ),
        (
            '{"id": "q1", "question": "Q?", "anchors": ["d.txt"]}',
            "quiz.jsonl, line 1: item 'q1', anchor 0 must be an object, got str",
        ),
        (
            '{"id": "q1", "question": "Q?", "anchors": [{"source_id": "d"}]}',
            "quiz.jsonl, line 1: item 'q1', anchor 0 has no 'quote'",
        ),
        (
            '{"id": "q1", "question": "Q?", "anchors": [{"source_id": "d", "quote": "x", '
            '"grade": "high"}]}',
            "quiz.jsonl, line 1: item 'q1', anchor 0: 'grade' must be an integer, got 'high'",
        ),
        (
            '{"id": "q1", "question": "Q?", "anchors": [{"source_id": "d", "quote": "x", '
            '"occurrence": -1}]}',
            "quiz.jsonl, line 1: item 'q1', anchor 0: 'occurrence' must be 0 or more, got -1",
        ),
        (
            '{"id": "q1", "question": "Q?", "gold": [{"span": [0, 4]}]}',
            "quiz.jsonl, line 1: item 'q1', gold 0: 'span' must be an object with source_id, "
            "start and end",
        ),
        (
            '{"id": "q1", "question": "Q?", "gold": [{"span": {"source_id": "d", "start": 9, '
            '"end": 4}}]}',
            "quiz.jsonl, line 1: item 'q1', gold 0: the span needs 0 <= start <= end, got 9, 4",
        ),
        (
            '{"id": "q1", "question": "Q?", "qtype": "trivia"}',
            "quiz.jsonl, line 1: item 'q1': unknown question type 'trivia'; expected one of: "
            "factoid, multi_hop, comparison, list, summary, unanswerable, other",
        ),
        (
            '{"id": "q1", "question": "Q?", "meta": "reviewed"}',
            "quiz.jsonl, line 1: item 'q1': 'meta' must be an object, got str",
        ),
        (
            '{"id": "q1", "question": "A?"}\n{"id": "q1", "question": "B?"}',
            "quiz.jsonl, line 2: item id 'q1' is already used on line 1",
        ),
        (
            '{"id": "q1", "question": "A?"}\n{"_evalset": {"id": "late"}}',
            "quiz.jsonl, line 2: the `_evalset` header can only be the first line",
        ),
        (
            '{"_evalset": {"id": "s", "owner": "me"}}',
            "quiz.jsonl, line 1: unknown field 'owner' in the header; expected: id, version, "
            "source, meta",
        ),
        (
            '{"_evalset": {"id": "s", "version": "2"}}',
            "quiz.jsonl, line 1: the header: 'version' must be an integer, got '2'",
        ),
        (
            '{"_evalset": "s"}',
            'quiz.jsonl, line 1: the header must look like {"_evalset": {"id": …}}',
        ),
    ],
)
def test_hostile_lines_raise_naming_file_and_line(text, message):
    assert error_of(text) == message


def test_qtype_spellings_from_people_are_accepted():
    es = parse('{"id": "q1", "question": "Q?", "qtype": "Multi-hop"}')
    assert es.items[0].qtype is cg.QuestionType.MULTI_HOP


def test_not_utf8_is_refused(tmp_path):
    (tmp_path / "latin1.jsonl").write_bytes(b'{"id": "q1", "question": "\xe9"}\n')
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.read_jsonl(tmp_path / "latin1.jsonl")
    assert str(excinfo.value) == "latin1.jsonl is not UTF-8 text (byte 0xe9 at offset 26)"


def test_missing_file_is_an_evalset_error(tmp_path):
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.read_jsonl(tmp_path / "nope.jsonl")
    assert str(excinfo.value) == "nope.jsonl: cannot read the file (No such file or directory)"


def test_meta_that_json_cannot_hold_is_refused_on_write():
    evalset = cg.EvalSet(id="s", items=(cg.EvalItem("q1", "Q?", meta={"tags": {"a"}}),))
    with pytest.raises(cg.EvalSetError) as excinfo:
        evalset_to_jsonl_text(evalset)
    assert str(excinfo.value).startswith("item 'q1' cannot be written as JSON")


def test_nan_in_meta_is_refused_on_write():
    evalset = cg.EvalSet(id="s", meta={"score": float("nan")})
    with pytest.raises(cg.EvalSetError) as excinfo:
        evalset_to_jsonl_text(evalset)
    assert str(excinfo.value).startswith("eval set 's' cannot be written as JSON")


def test_non_ascii_text_is_written_readably(tmp_path):
    evalset = cg.EvalSet(id="s", items=(cg.EvalItem("q1", "Combien de congés ?"),))
    path = cg.write_jsonl(evalset, tmp_path / "fr.jsonl")
    assert "congés" in path.read_text(encoding="utf-8")
    assert cg.read_jsonl(path) == evalset


def test_lone_surrogate_is_refused_on_write(tmp_path):
    evalset = cg.EvalSet(id="s", items=(cg.EvalItem("q1", "bad \ud800 text"),))
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.write_jsonl(evalset, tmp_path / "s.jsonl")
    assert str(excinfo.value) == (
        "s.jsonl: cannot write '\\ud800', a lone surrogate that UTF-8 cannot hold"
    )


def test_a_line_nested_ten_thousand_deep_is_an_error_naming_its_line():
    deep = '{"id": "q2", "question": "Q", "meta": ' + "[" * 10_000 + "]" * 10_000 + "}"
    text = '{"id": "q1", "question": "Q"}\n' + deep + "\n"

    assert error_of(text) == (
        "quiz.jsonl, line 2: the JSON is nested too deeply to read (an eval set is only a few "
        "levels deep)"
    )


def test_a_legalbench_file_nested_ten_thousand_deep_is_an_error():
    text = '{"tests": ' + "[" * 10_000 + "]" * 10_000 + "}"

    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.parse_legalbench_rag_text(text, name="bench.json")
    assert "nested too deeply" in str(excinfo.value)


def test_a_last_record_cut_off_is_named_on_the_line_it_starts():
    # The defect: a record cut off at the end of line 2 was reported on line 3, a line the
    # person cannot see in their editor.
    text = '{"id": "q1", "question": "What?"}\n{"id": "q2", "question": "Why?"\n'
    assert error_of(text) == (
        "quiz.jsonl, line 2: this record is cut off: the file ends before the record does"
    )
    with pytest.raises(cg.EvalSetError) as excinfo:
        parse(text)
    assert excinfo.value.line == 2


def test_a_record_cut_off_mid_file_is_named_on_the_line_it_starts():
    text = '{"id": "q1", "question": "What?"\n{"id": "q2", "question": "Why?"}\n'
    assert error_of(text) == (
        "quiz.jsonl, line 1: invalid JSON in the record that starts on this line "
        "(Expecting ',' delimiter on line 2, column 1)"
    )
