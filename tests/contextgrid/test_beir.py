"""read_beir / parse_beir: real BEIR files as published, and the ways qrels go wrong."""

from __future__ import annotations

import json
import re

import pytest

import contextgrid as cg
from contextgrid.evalset.io import (
    BEIR_NOTE,
    DROP_NO_POSITIVE_JUDGEMENT,
    SKIP_QUERY_NOT_IN_QUERIES,
    SKIP_REPEATED_JUDGEMENT,
    describe_skipped,
    parse_beir,
)
from tests.contextgrid.realdata import realdata

QUERIES = '{"_id": "1", "text": "First?"}\n{"_id": "2", "text": "Second?"}\n'


def beir(qrels: str, queries: str = QUERIES) -> cg.EvalSet:
    return parse_beir(queries, qrels, queries_name="queries.jsonl", qrels_name="test.tsv")


def gold(evalset: cg.EvalSet) -> dict[str, list[tuple[str, int | float]]]:
    return {item.id: item.meta["gold_documents"] for item in evalset}


# --- real files ------------------------------------------------------------------------------


def test_pristine_scifact_with_crlf_reads_every_judgement():
    es = cg.read_beir(
        realdata("beir/scifact_pristine/queries.jsonl"),
        realdata("beir/scifact_pristine/qrels/test.tsv"),
    )
    assert len(es) == 300
    assert es.get("1").meta["gold_documents"] == [("31715818", 1)]
    assert all(doc_id.isdigit() for item in es for doc_id, _ in item.meta["gold_documents"])
    # queries.jsonl holds all splits; the other 809 queries have no test judgement.
    assert es.meta["queries_dropped"] == {DROP_NO_POSITIVE_JUDGEMENT: 809}
    assert "qrels_skipped" not in es.meta


def test_pristine_scifact_keeps_query_metadata():
    es = cg.read_beir(
        realdata("beir/scifact_pristine/queries.jsonl"),
        realdata("beir/scifact_pristine/qrels/train.tsv"),
    )
    assert es.get("2").meta["query_metadata"] == {
        "13734012": [{"sentences": [4], "label": "CONTRADICT"}]
    }
    assert "query_metadata" not in es.get("0").meta  # its metadata is {}


def test_dbpedia_keeps_only_positive_grades_and_exotic_ids():
    es = cg.read_beir(
        realdata("beir/agentset_dbpedia/queries.jsonl"),
        realdata("beir/agentset_dbpedia/qrels/test.tsv"),
    )
    assert len(es) == 40
    grades = {grade for item in es for _, grade in item.meta["gold_documents"]}
    assert grades == {1, 2}
    doc_ids = [doc for item in es for doc, _ in item.meta["gold_documents"]]
    assert any("," in doc for doc in doc_ids)  # never split on commas
    assert all(doc.startswith("<dbpedia:") and doc.endswith(">") for doc in doc_ids)
    assert describe_skipped(es) == "10 queries dropped: 10 had no positive judgement."


def test_msmarco_without_header_keeps_graded_scores():
    es = cg.read_beir(
        realdata("beir/agentset_msmarco/queries.jsonl"),
        realdata("beir/agentset_msmarco/qrels/test.tsv"),
    )
    assert len(es) == 43
    assert es.get("19335").meta["gold_documents"][:3] == [
        ("1720389", 1),
        ("1720395", 1),
        ("1729", 2),
    ]


@pytest.mark.parametrize("dataset", ["agentset_fiqa", "agentset_scifact"])
def test_four_column_qrels_take_the_corpus_id_from_the_third_column(dataset):
    es = cg.read_beir(
        realdata(f"beir/{dataset}/queries.jsonl"), realdata(f"beir/{dataset}/qrels/test.tsv")
    )
    assert len(es) == 50
    first_row = realdata(f"beir/{dataset}/qrels/test.tsv").read_text().split("\n")[0]
    query_id, _, corpus_id, _ = first_row.split("\t")
    assert (corpus_id, 1) in es.get(query_id).meta["gold_documents"]


def test_header_only_qrels_drop_every_query():
    es = cg.read_beir(
        realdata("beir/agentset_pg/queries.jsonl"), realdata("beir/agentset_pg/qrels/test.tsv")
    )
    assert len(es) == 0
    assert describe_skipped(es) == "50 queries dropped: 50 had no positive judgement."


def test_scidocs_id_title_keys_and_qrels_for_unknown_queries():
    es = cg.read_beir(
        realdata("beir/josh1108_scidocs/queries.whole.jsonl"),
        realdata("beir/josh1108_scidocs/qrels/test.tsv"),
    )
    first = es.get("78495383450e02c5fe817e408726134b3084905d")
    assert first.question == (
        "A Direct Search Method to solve Economic Dispatch Problem with Valve-Point Effect"
    )
    assert {grade for _, grade in first.meta["gold_documents"]} == {1}
    skipped = es.meta["qrels_skipped"][SKIP_QUERY_NOT_IN_QUERIES]
    assert skipped > 0
    assert describe_skipped(es).startswith(
        f"{skipped} judgements skipped: {skipped} named a query id that is not in the queries file."
    )


def test_climate_fever_queries_without_newlines_are_all_read():
    es = cg.read_beir(
        realdata("beir/memekhant_climate_fever/queries.jsonl"),
        realdata("beir/memekhant_climate_fever/qrels/test.tsv"),
    )
    # The qrels name queries 0, 1 and 2, none of which is among the 253 queries.
    assert len(es) == 0
    assert es.meta["qrels_skipped"] == {SKIP_QUERY_NOT_IN_QUERIES: 3}
    assert es.meta["queries_dropped"] == {DROP_NO_POSITIVE_JUDGEMENT: 253}
    assert describe_skipped(es) == (
        "3 judgements skipped: 3 named a query id that is not in the queries file. "
        "253 queries dropped: 253 had no positive judgement."
    )


def test_concatenated_queries_parse_like_jsonl():
    queries = realdata("beir/memekhant_climate_fever/queries.jsonl").read_text()
    es = beir("6\tdoc-a\t1\n10\tdoc-b\t2\n", queries)
    assert [(item.id, item.question) for item in es] == [
        ("6", "The polar bear population has been growing."),
        (
            "10",
            "Human additions of CO2 are in the margin of error of current measurements and the "
            "gradual increase in CO2 is mainly from oceans degassing as the planet slowly "
            "emerges from the last ice age.",
        ),
    ]


def test_fiqa_pristine_crlf_qrels_match_their_queries():
    qrels = realdata("beir/fiqa_pristine_qrels/qrels/test.tsv").read_bytes()
    # This repository's queries.jsonl is a Git-LFS pointer; build one for the judged ids.
    ids = dict.fromkeys(re.findall(rb"^(\d+)\t", qrels, flags=re.MULTILINE))
    queries = "".join(
        json.dumps({"_id": i.decode(), "text": f"q {i.decode()}"}) + "\n" for i in ids
    )
    es = parse_beir(queries, qrels)
    assert len(es) == len(ids)
    assert es.get("8").meta["gold_documents"] == [("566392", 1), ("65404", 1)]
    assert sum(len(item.meta["gold_documents"]) for item in es) == 1706


def test_hand_edited_qrels_with_mixed_layouts_are_refused():
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.read_beir(
            realdata("beir/scifact_pristine/queries.jsonl"),
            realdata("beir/kirloxious_scifact_modified/qrels/test.tsv"),
        )
    assert str(excinfo.value) == (
        "test.tsv, line 1: the corpus id ' 0 31715818' has spaces around it; the file seems "
        "to mix tab- and space-separated columns"
    )


def test_hand_edited_train_qrels_with_header_read_fine():
    es = cg.read_beir(
        realdata("beir/scifact_pristine/queries.jsonl"),
        realdata("beir/kirloxious_scifact_modified/qrels/train.tsv"),
    )
    assert len(es) == 809


# --- layouts and rules -----------------------------------------------------------------------


def test_page_meta_has_only_granularity_and_note_when_nothing_is_skipped():
    es = beir("query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t1\n")
    assert es.meta == {"granularity": "document", "note": BEIR_NOTE}
    assert describe_skipped(es) == "Nothing was skipped."


def test_space_separated_trec_qrels_are_read_when_there_is_no_tab():
    es = beir("1 0 d1 1\n1 0 d2 0\n2   0   d3   3\n")
    assert gold(es) == {"1": [("d1", 1)], "2": [("d3", 3)]}


def test_float_scores_read_as_grades():
    es = beir("1\td1\t1.0\n1\td2\t0.5\n2\td3\t0.0\n")
    assert gold(es) == {"1": [("d1", 1), ("d2", 0.5)]}
    assert type(es.get("1").meta["gold_documents"][0][1]) is int


def test_negative_and_zero_scores_are_not_gold():
    es = beir("1\td1\t-1\n1\td2\t0\n2\td3\t1\n")
    assert gold(es) == {"2": [("d3", 1)]}
    assert es.meta["queries_dropped"] == {DROP_NO_POSITIVE_JUDGEMENT: 1}


def test_repeated_judgements_keep_the_first_and_are_counted():
    es = beir("1\td1\t2\n1\td1\t1\n2\td2\t1\n")
    assert gold(es)["1"] == [("d1", 2)]
    assert describe_skipped(es) == (
        "1 judgement skipped: 1 repeated an earlier judgement of the same query and document."
    )
    assert es.meta["qrels_skipped"] == {SKIP_REPEATED_JUDGEMENT: 1}


def test_corpus_ids_with_spaces_inside_are_kept_whole():
    es = beir("1\tCubic Corporation.pdf\t1\n2\td2\t1\n")
    assert gold(es)["1"] == [("Cubic Corporation.pdf", 1)]


def test_integer_query_ids_match_qrels():
    es = beir("7\td1\t1\n", '{"_id": 7, "text": "Seven?"}')
    assert [item.id for item in es] == ["7"]


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ("1\td1\n", "test.tsv, line 1: expected 3 columns"),
        ("query-id\tcorpus-id\n1\td1\n", "test.tsv, line 1: expected 3 columns"),
        ("1\td1\t1\n1\t0\td2\t1\n", "test.tsv, line 2: 4 columns, but earlier lines have 3"),
        ("1\td1\t1\n2\td2\thigh\n", "test.tsv, line 2: the score 'high' is not a number"),
        ("1\td1\tnan\n", "test.tsv, line 1: the score 'nan' is not a finite number"),
        ("1\t\t1\n", "test.tsv, line 1: the corpus id is empty"),
        ("1012 0 \td1\t1\n", "test.tsv, line 1: the query id '1012 0 ' has spaces around it"),
    ],
)
def test_malformed_qrels_name_file_and_line(qrels, message):
    with pytest.raises(cg.EvalSetError) as excinfo:
        beir(qrels)
    assert str(excinfo.value).startswith(message)


@pytest.mark.parametrize(
    ("queries", "message"),
    [
        (
            '{"_id": "1", "text": "a"}\n{"_id": "2", "text": }\n',
            "queries.jsonl, line 2: invalid JSON",
        ),
        ('["1", "a"]\n', "queries.jsonl, line 1: expected a JSON object, got list"),
        ('{"text": "a"}\n', 'queries.jsonl, line 1: expected a string query id in "_id"'),
        ('{"_id": "1"}\n', "queries.jsonl, line 1: query '1' has no text"),
        ('{"_id": "1", "text": 5}\n', "queries.jsonl, line 1: query '1' has no text"),
        (
            '{"_id": "1", "text": "a"}\n{"_id": "1", "text": "b"}\n',
            "queries.jsonl, line 2: query id '1' is already used on line 1",
        ),
    ],
)
def test_malformed_queries_name_file_and_line(queries, message):
    with pytest.raises(cg.EvalSetError) as excinfo:
        beir("1\td1\t1\n", queries)
    assert str(excinfo.value).startswith(message)


def test_queries_that_are_not_utf8_are_refused(tmp_path):
    (tmp_path / "queries.jsonl").write_bytes(b'{"_id": "1", "text": "caf\xe9"}\n')
    (tmp_path / "test.tsv").write_text("1\td1\t1\n")
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.read_beir(tmp_path / "queries.jsonl", tmp_path / "test.tsv")
    assert str(excinfo.value) == "queries.jsonl is not UTF-8 text (byte 0xe9 at offset 25)"


def test_missing_file_is_an_evalset_error(tmp_path):
    (tmp_path / "queries.jsonl").write_text(QUERIES)
    with pytest.raises(cg.EvalSetError) as excinfo:
        cg.read_beir(tmp_path / "queries.jsonl", tmp_path / "nope.tsv")
    assert str(excinfo.value).startswith("nope.tsv: cannot read the file")


def test_unicode_digit_scores_are_not_numbers():
    with pytest.raises(cg.EvalSetError) as excinfo:
        beir("1\td1\t1\n2\td2\t²\n")
    assert str(excinfo.value) == "test.tsv, line 2: the score '²' is not a number"
