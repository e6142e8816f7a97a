"""read_csv / write_csv beyond the page: column spellings, spreadsheet exports, lost evidence."""

from __future__ import annotations

import csv
import io
import warnings
from pathlib import Path

import pytest

import contextgrid as cg
from contextgrid.evalset.io import (
    CSV_COLUMN_ALIASES,
    NO_QUESTION_COLUMN,
    SKIP_QUOTE_NO_SOURCE,
    SKIP_ROW_NO_QUESTION,
    describe_skipped,
    parse_csv_text,
)

FILES = Path(__file__).resolve().parents[1] / "files" / "contextgrid"


def parse(text: str) -> cg.EvalSet:
    return parse_csv_text(text, name="quiz.csv")


def error_of(text: str) -> str:
    with pytest.raises(cg.EvalSetError) as excinfo:
        parse(text)
    return str(excinfo.value)


@pytest.mark.parametrize(
    ("field", "alias"),
    [(field, alias) for field, aliases in CSV_COLUMN_ALIASES.items() for alias in aliases],
)
def test_every_documented_column_spelling_is_recognised_in_any_case(field, alias):
    values = {
        "id": "x7",
        "question": "Q?",
        "source_id": "d.pdf",
        "quote": "the quote",
        "answer": "A",
        "qtype": "summary",
        "page": "4",
        "grade": "1",
        "occurrence": "3",
        "meta": '{"k": 1}',
    }
    columns = {f: f for f in values} | {field: alias.upper()}
    # The question column must exist even when another field is being tested.
    buffer = io.StringIO()
    csv.writer(buffer).writerows([[columns[f] for f in values], list(values.values())])
    item = parse(buffer.getvalue()).items[0]
    seen = {
        "id": item.id,
        "question": item.question,
        "source_id": item.anchors[0].source_id,
        "quote": item.anchors[0].quote,
        "answer": item.answer,
        "qtype": item.qtype.value,
        "page": str(item.anchors[0].page_hint),
        "grade": str(item.anchors[0].grade),
        "occurrence": str(item.anchors[0].occurrence),
        "meta": '{"k": 1}' if item.meta == {"k": 1} else item.meta,
    }
    assert seen == values


def test_semicolon_export_with_bom_and_crlf():
    es = cg.read_csv(FILES / "semicolon_bom.csv")
    first, second = es.items
    assert first == cg.EvalItem(
        id="q1",
        question="How many days of leave, per month?",
        anchors=(
            cg.GoldAnchor("handbook.pdf", "Employees accrue 1,5 days of leave per month.", 2, 4),
        ),
        answer="1,5 days",
        meta={"reviewed": True},
    )
    assert second.anchors == (cg.GoldAnchor("plans.pdf", "Plan A; Plan B", grade=1),)
    assert second.qtype is cg.QuestionType.COMPARISON
    assert second.meta == {}
    assert es.meta == {"meta_cells_ignored": ["q2"]}
    assert describe_skipped(es) == "1 meta cell was not a JSON object and read as {}: q2."


def test_tab_separated_file_is_read():
    es = parse("question\tsource_id\tquote\nQ, really?\td.pdf\tx, y\n")
    assert es.items[0].anchors == (cg.GoldAnchor("d.pdf", "x, y"),)


def test_meta_cell_that_is_json_but_not_an_object_reads_as_empty():
    es = parse('question,meta\nA?,"[1, 2]"\nB?,5\nC?,"{""ok"": true}"\n')
    assert [item.meta for item in es] == [{}, {}, {"ok": True}]
    assert es.meta["meta_cells_ignored"] == ["q1", "q2"]


def test_blank_rows_are_ignored_and_rows_without_question_counted():
    es = parse("id,question\na,A?\n,\n\nb,\nc,C?\n")
    assert [item.id for item in es] == ["a", "c"]
    assert es.meta["rows_skipped"] == {SKIP_ROW_NO_QUESTION: 1}
    assert describe_skipped(es) == "1 row skipped: 1 had no question."


def test_quotes_without_a_source_are_counted():
    es = parse("question,source_id,quote\nA?,,orphan quote\nB?,d.pdf,kept\n")
    assert es.items[0].anchors == ()
    assert es.meta["quotes_skipped"] == {SKIP_QUOTE_NO_SOURCE: 1}
    assert describe_skipped(es) == "1 quote skipped: 1 had no source document."


def test_short_rows_leave_optional_fields_empty():
    es = parse("question,answer,qtype\nA?\n")
    assert (es.items[0].answer, es.items[0].qtype) == (None, cg.QuestionType.FACTOID)


def test_trailing_empty_cells_are_harmless():
    es = parse("question,answer,\nA?,yes,,,\n")
    assert es.items[0].answer == "yes"


def test_multiline_quoted_cells_keep_their_newlines():
    es = parse('question,answer\n"Line one\nline two?","A\r\nB"\n')
    assert es.items[0].question == "Line one\nline two?"
    assert es.items[0].answer == "A\r\nB"


def test_evalset_id_and_source():
    es = cg.read_csv(FILES / "semicolon_bom.csv", evalset_id="handbook")
    assert (es.id, es.source) == ("handbook", "csv")
    assert cg.read_csv(FILES / "semicolon_bom.csv").id == "semicolon_bom"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "quiz.csv is empty"),
        (
            "Frage;Antwort\nA;B\n",
            NO_QUESTION_COLUMN.format(
                name="quiz.csv", expected="question, query, q", found="Frage, Antwort"
            ),
        ),
        (
            "question,answer\nWhat, exactly?,yes,no\n",
            "quiz.csv, row 2: 4 cells but the header has 2 columns (is a comma inside a cell "
            "missing its quotes?)",
        ),
        ("id,question\na,A?\na,B?\n", "quiz.csv, row 3: id 'a' is already used on row 2"),
        (
            "question,source_id,quote,grade\nA?,d,x,high\n",
            "quiz.csv, row 2: grade must be a whole number, got 'high'",
        ),
        (
            "question,source_id,quote,page\nA?,d,x,4.5\n",
            "quiz.csv, row 2: page must be a whole number, got '4.5'",
        ),
        (
            "question,source_id,quote,occurrence\nA?,d,x,-1\n",
            "quiz.csv, row 2: occurrence must be 0 or more, got '-1'",
        ),
        (
            "question,type\nA?,trivia\n",
            "quiz.csv, row 2: qtype: unknown question type 'trivia'; expected one of: factoid, "
            "multi_hop, comparison, list, summary, unanswerable, other",
        ),
    ],
)
def test_hostile_csv_raises_naming_file_and_row(text, message):
    assert error_of(text) == message


def test_not_utf8_is_refused(tmp_path):
    (tmp_path / "cp1252.csv").write_bytes("question\nCombien de congés ?\n".encode("cp1252"))
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.read_csv(tmp_path / "cp1252.csv")
    assert str(excinfo.value) == "cp1252.csv is not UTF-8 text (byte 0xe9 at offset 24)"


def test_csv_round_trip_keeps_first_anchor_occurrence_and_meta(tmp_path):
    item = cg.EvalItem(
        id="q1",
        question='Quote "this", please?',
        anchors=(cg.GoldAnchor("a, b.pdf", "x\ny", grade=1, page_hint=3, occurrence=2),),
        qtype=cg.QuestionType.LIST,
        answer="A",
        meta={"reviewed": True, "pair": ("a", 1)},
    )
    path = cg.write_csv(cg.EvalSet(id="s", items=(item,)), tmp_path / "deep" / "s.csv")
    back = cg.read_csv(path).items[0]
    # JSON has no tuples: the pair comes back as a list.
    assert back == cg.EvalItem(
        id="q1",
        question='Quote "this", please?',
        anchors=item.anchors,
        qtype=cg.QuestionType.LIST,
        answer="A",
        meta={"reviewed": True, "pair": ["a", 1]},
    )


def test_write_csv_warns_naming_questions_that_lose_evidence(tmp_path):
    anchor = cg.GoldAnchor("d.pdf", "x")
    evalset = cg.EvalSet(
        id="s",
        items=(
            cg.EvalItem("one", "A?", anchors=(anchor,)),
            cg.EvalItem("two", "B?", anchors=(anchor, anchor)),
            cg.EvalItem("gold", "C?", gold=(cg.GoldSpan(cg.Span("d.pdf", 0, 4)),)),
            cg.EvalItem("both", "D?", anchors=(anchor,), gold=(cg.GoldSpan(cg.Span("d", 0, 1)),)),
        ),
    )
    with pytest.warns(UserWarning) as record:
        cg.write_csv(evalset, tmp_path / "s.csv")
    assert [str(w.message) for w in record] == [
        "s.csv: only the first anchor is written for two; gold spans have no CSV column, so "
        "these lose all their evidence: gold. Use write_jsonl to keep them intact."
    ]


def test_write_csv_is_silent_when_nothing_is_lost(tmp_path):
    evalset = cg.EvalSet(id="s", items=(cg.EvalItem("q1", "A?"),))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cg.write_csv(evalset, tmp_path / "s.csv")


def test_nul_characters_are_refused_as_binary():
    assert error_of("question\nA?\x00\n") == (
        "quiz.csv contains a NUL character (at character 11); it looks like a binary file, not text"
    )


def test_cell_beyond_the_csv_field_limit_is_an_evalset_error():
    # The limit is the csv module's, for the whole process (the app raises it to its cap on
    # a text field), so the cell is one past whatever it is now.
    too_long = "x" * (csv.field_size_limit() + 1)
    assert error_of('question\n"' + too_long + '"\n').startswith(
        "quiz.csv, row 2: unreadable CSV (field larger than field limit"
    )


def test_write_csv_refuses_a_nul_character(tmp_path):
    evalset = cg.EvalSet(id="s", items=(cg.EvalItem("q1", "A\x00?"),))
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.write_csv(evalset, tmp_path / "s.csv")
    assert str(excinfo.value) == "item 'q1': a NUL character cannot be written to CSV"
