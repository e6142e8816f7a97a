"""read_legalbench_rag: the real benchmark excerpt, its corpus, and snippets that go wrong."""

from __future__ import annotations

import json
import shutil

import pytest

import contextgrid as cg
from contextgrid.evalset.io import (
    SKIP_DOCUMENT_MISSING,
    SKIP_EMPTY_SPAN,
    SKIP_NO_FILE_PATH,
    SKIP_NO_SPAN,
    SKIP_SHORT_SPAN,
    SKIP_SPAN_PAST_END,
    describe_skipped,
    parse_legalbench_rag_text,
)
from tests.contextgrid.realdata import realdata

BENCHMARK = "legalbench_rag/meridian_privacy_qa.excerpt_fiverr_keep.json"
CUBIC = (
    "maud/Cubic Corporation_Investment Group.pdf||"
    "Cubic_Corporation_Investment_Group_Amendment No.1.txt"
)
DBT = "contractnli/DBT%20Mutual%20NDA.txt"


def lb(payload: object, **kwargs) -> cg.EvalSet:
    return parse_legalbench_rag_text(json.dumps(payload), name="bench.json", **kwargs)


def snippets(*snippet: object) -> dict:
    return {"tests": [{"query": "Q?", "snippets": list(snippet)}]}


# --- the real excerpt --------------------------------------------------------------------------


def test_real_excerpt_reads_every_test_with_its_query_id():
    es = cg.read_legalbench_rag(realdata(BENCHMARK))
    assert len(es) == 56
    assert es.items[0].id == "privacy_qa-0000"
    assert es.items[0].question.startswith('Consider "Fiverr"\'s privacy policy;')
    assert es.items[0].gold == (cg.GoldSpan(cg.Span("privacy_qa/Fiverr.txt", 3873, 4312)),)
    assert sum(len(item.gold) for item in es) == 100
    assert es.meta == {
        "granularity": "span",
        "source_file": "meridian_privacy_qa.excerpt_fiverr_keep.json",
        "tests_in_file": 56,
        "tests_skipped": 0,
        "snippets_skipped": {},
    }
    assert describe_skipped(es) == "Nothing was skipped."


def test_real_spans_fit_their_documents_and_land_on_line_boundaries():
    corpus = realdata("legalbench_rag/corpus")
    es = cg.read_legalbench_rag(realdata(BENCHMARK), corpus_dir=corpus)
    assert sum(len(item.gold) for item in es) == 100
    for item in es:
        for gold in item.gold:
            text = (corpus / gold.span.source_id).read_text(encoding="utf-8")
            assert gold.span.start == 0 or text[gold.span.start - 1] == "\n"
            assert text[gold.span.end - 1] == "\n"


def test_corpus_check_reads_bom_and_crlf_documents_as_python_text_mode_does():
    corpus = realdata("legalbench_rag/corpus")
    # 402,118 bytes on disk; 400,420 characters decoded as they are; 398,141 in text mode,
    # where each of the 2,279 CRLFs is one newline and the BOM is kept as U+FEFF.
    text = (corpus / CUBIC).read_text(encoding="utf-8")
    assert len(text) == 398141
    assert text[0] == "\ufeff"
    es = lb(snippets({"file_path": CUBIC, "span": [398000, 398141]}), corpus_dir=corpus)
    assert es.items[0].gold == (cg.GoldSpan(cg.Span(CUBIC, 398000, 398141)),)
    past_end = lb(snippets({"file_path": CUBIC, "span": [398000, 400420]}), corpus_dir=corpus)
    assert past_end.meta["snippets_skipped"] == {SKIP_SPAN_PAST_END: 1}
    assert past_end.items[0].gold == ()


def test_corpus_file_paths_are_used_literally():
    corpus = realdata("legalbench_rag/corpus")
    # 7,553 bytes but 7,503 characters; "%20" is part of the file name, not a space.
    es = lb(
        snippets(
            {"file_path": DBT, "span": [0, 7503]},
            {"file_path": DBT, "span": [0, 7504]},
            {"file_path": "contractnli/DBT Mutual NDA.txt", "span": [0, 10]},
        ),
        corpus_dir=corpus,
    )
    assert es.items[0].gold == (cg.GoldSpan(cg.Span(DBT, 0, 7503)),)
    assert es.meta["snippets_skipped"] == {SKIP_SPAN_PAST_END: 1, SKIP_DOCUMENT_MISSING: 1}
    assert describe_skipped(es) == (
        "2 snippets skipped: 1 ran past the end of its document; "
        "1 named a document that is not in the corpus folder."
    )


def test_corpus_check_refuses_paths_outside_the_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (tmp_path / "secret.txt").write_text("x" * 100)
    with pytest.raises(cg.EvalSetError) as excinfo:
        lb(snippets({"file_path": "../secret.txt", "span": [0, 5]}), corpus_dir=corpus)
    assert str(excinfo.value) == (
        "bench.json, test 0 (lb0): file_path '../secret.txt' points outside the corpus folder"
    )


def test_corpus_document_that_is_not_utf8_is_refused(tmp_path):
    (tmp_path / "doc.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(cg.EvalSetError) as excinfo:
        lb(snippets({"file_path": "doc.txt", "span": [0, 2]}), corpus_dir=tmp_path)
    assert str(excinfo.value).startswith("bench.json, test 0 (lb0): cannot read the document")


def test_copied_corpus_with_odd_names_is_found(tmp_path):
    source = realdata("legalbench_rag/corpus")
    shutil.copytree(source, tmp_path / "corpus")
    es = lb(snippets({"file_path": CUBIC, "span": [0, 1]}), corpus_dir=str(tmp_path / "corpus"))
    assert len(es.items[0].gold) == 1


# --- shapes and skips -------------------------------------------------------------------------


def test_bare_array_and_optional_upstream_fields():
    es = lb(
        [
            {
                "query": "Q?",
                "tags": ["privacy"],
                "snippets": [{"file_path": "a.txt", "span": [0, 5], "answer": "hello"}],
            }
        ]
    )
    assert es.items[0].gold == (cg.GoldSpan(cg.Span("a.txt", 0, 5)),)
    assert es.items[0].meta == {"tags": ["privacy"]}


def test_each_kind_of_quiet_skip_is_counted_by_reason():
    es = lb(
        {
            "tests": [
                {"snippets": [{"file_path": "a.txt", "span": [0, 5]}]},
                {"query": "   "},
                {
                    "query": "Q?",
                    "snippets": [
                        {"span": [0, 5]},
                        {"file_path": "a.txt"},
                        {"file_path": "a.txt", "span": None},
                        {"file_path": "a.txt", "span": [3]},
                        {"file_path": "a.txt", "span": [4, 4]},
                        {"file_path": "a.txt", "span": [4, 9]},
                    ],
                },
            ]
        }
    )
    assert [item.id for item in es] == ["lb2"]
    assert es.items[0].gold == (cg.GoldSpan(cg.Span("a.txt", 4, 9)),)
    assert es.meta["tests_in_file"] == 3
    assert es.meta["tests_skipped"] == 2
    assert es.meta["snippets_skipped"] == {
        SKIP_NO_FILE_PATH: 1,
        SKIP_NO_SPAN: 2,
        SKIP_SHORT_SPAN: 1,
        SKIP_EMPTY_SPAN: 1,
    }
    assert describe_skipped(es) == (
        "2 tests skipped: 2 had no `query`. 5 snippets skipped: 1 had no `file_path`; "
        "2 had no `span`; 1 had a `span` with fewer than two numbers; "
        "1 had an empty `span` (start equals end)."
    )


def test_one_skipped_test_reads_in_the_singular():
    es = lb({"tests": [{"query": None}, {"query": "Q?", "snippets": []}]})
    assert describe_skipped(es) == "1 test skipped: 1 had no `query`."
    assert es.items[0].is_answerable is False


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"tests": {"query": "Q?"}}, 'bench.json: "tests" must be an array, got dict'),
        ({"queries": []}, 'bench.json: expected {"tests": [...]} or a [...] array of tests'),
        ("tests", 'bench.json: expected {"tests": [...]} or a [...] array, got str'),
        ({"tests": ["Q?"]}, "bench.json, test 0: expected an object, got str"),
        ({"tests": [{"query": 5}]}, 'bench.json, test 0: "query" must be a string, got int'),
        (
            {"tests": [{"query": "Q?", "answer": ["a"]}]},
            'bench.json, test 0 (lb0): "answer" must be a string, got list',
        ),
        (
            {"tests": [{"query": "Q?", "snippets": {"file_path": "a"}}]},
            'bench.json, test 0 (lb0): "snippets" must be an array, got dict',
        ),
        (
            snippets("a.txt"),
            "bench.json, test 0 (lb0): snippet 0 must be an object, got str",
        ),
        (
            snippets({"file_path": "a.txt", "span": "117,202"}),
            'bench.json, test 0 (lb0): snippet 0: "span" must be an array [start, end], '
            "got '117,202'",
        ),
        (
            snippets({"file_path": 7, "span": [1, 2]}),
            'bench.json, test 0 (lb0): snippet 0: "file_path" must be a string, got int',
        ),
        (
            snippets({"file_path": "a.txt", "span": [1.5, 2]}),
            'bench.json, test 0 (lb0): snippet 0: "span" must be two whole numbers '
            "[start, end], got [1.5, 2]",
        ),
        (
            snippets({"file_path": "a.txt", "span": [1, 2, 3]}),
            'bench.json, test 0 (lb0): snippet 0: "span" must be two whole numbers '
            "[start, end], got [1, 2, 3]",
        ),
        (
            snippets({"file_path": "a.txt", "span": [True, 2]}),
            'bench.json, test 0 (lb0): snippet 0: "span" must be two whole numbers '
            "[start, end], got [True, 2]",
        ),
        (
            snippets({"file_path": "a.txt", "span": [202, 117]}),
            "bench.json, test 0 (lb0): snippet 0: the span [202, 117] ends before it starts "
            "or starts below 0",
        ),
        (
            {"tests": [{"query_id": "x", "query": "A?"}, {"query_id": "x", "query": "B?"}]},
            "bench.json, test 1 (x): the id 'x' is used by an earlier test",
        ),
    ],
)
def test_wrong_types_raise_naming_file_and_test(payload, message):
    with pytest.raises(cg.EvalSetError) as excinfo:
        lb(payload)
    assert str(excinfo.value) == message


def test_invalid_json_names_the_line():
    with pytest.raises(cg.EvalSetError) as excinfo:
        parse_legalbench_rag_text('{\n  "tests": [\n    {"query": }\n  ]\n}', name="bench.json")
    assert str(excinfo.value).startswith("bench.json, line 3: invalid JSON")


def test_bytes_with_bom_are_accepted():
    data = "\ufeff".encode() + json.dumps(snippets({"file_path": "a", "span": [0, 1]})).encode()
    es = parse_legalbench_rag_text(data, name="bench.json")
    assert len(es.items[0].gold) == 1
