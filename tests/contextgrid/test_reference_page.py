# The page's code and output are copied verbatim, long lines and all.
# ruff: noqa: E501
"""Every example on the "Loading Eval Sets" reference page runs and prints what the page shows.

The code and the printed output below are copied verbatim from the page
(shared/seeds/000_dc08ff1219790400.txt). The examples build on each other (the CSV example
writes the eval set the first one built; describe_skipped reads the LegalBench set), so each
test runs the examples it depends on first, in one namespace, and checks only its own output.
"""

from __future__ import annotations

import contextlib
import io

import pytest

JSONL_WRITE = r"""
import contextgrid as cg

anchor = cg.GoldAnchor(source_id="handbook.pdf", quote="Employees accrue 1.5 days of leave per month.")
item = cg.EvalItem(
    id="q1",
    question="How much leave do employees accrue per month?",
    anchors=(anchor,),
    qtype=cg.QuestionType.FACTOID,
)
evalset = cg.EvalSet(id="handbook-quiz", items=(item,))
path = cg.write_jsonl(evalset, "quiz.jsonl")
print(open(path).read())
"""
# print() adds a newline after the file's own final newline, hence the blank last line.
JSONL_WRITE_PRINTS = r"""{"_evalset": {"id": "handbook-quiz", "version": 1, "source": "manual", "meta": {}}}
{"id": "q1", "question": "How much leave do employees accrue per month?", "gold": [], "anchors": [{"source_id": "handbook.pdf", "quote": "Employees accrue 1.5 days of leave per month.", "grade": 2, "page_hint": null, "occurrence": 0}], "qtype": "factoid", "answer": null, "meta": {}}

"""

JSONL_READ = r"""
es = cg.read_jsonl("quiz.jsonl")
print(len(es), es.id, es.version, es.source)
"""
JSONL_READ_PRINTS = "1 handbook-quiz 1 manual\n"

JSONL_MINIMAL = r"""
from pathlib import Path

Path("minimal.jsonl").write_text(
    '{"id": "q1", "question": "What is the notice period for resignation?", '
    '"anchors": [{"source_id": "handbook.pdf", "quote": "Employees must give 30 days written notice."}]}\n'
)

es = cg.read_jsonl("minimal.jsonl")
print(len(es), es.id, es.version, es.source, es.meta)
"""
JSONL_MINIMAL_PRINTS = "1 minimal 1 import {}\n"
# The hand-written line the page shows before the code that writes it.
JSONL_MINIMAL_LINE = (
    '{"id": "q1", "question": "What is the notice period for resignation?", "anchors": '
    '[{"source_id": "handbook.pdf", "quote": "Employees must give 30 days written notice."}]}'
)

CSV_WRITE = r"""
path = cg.write_csv(evalset, "quiz.csv")
print(open(path).read())
"""
CSV_WRITE_PRINTS = r"""id,question,source_id,quote,grade,page,occurrence,qtype,answer,meta
q1,How much leave do employees accrue per month?,handbook.pdf,Employees accrue 1.5 days of leave per month.,2,,0,factoid,,

"""

CSV_MINIMAL = r"""
from pathlib import Path

Path("minimal2.csv").write_text(
    "question,source_id,quote\n"
    "What is the notice period for resignation?,handbook.pdf,Employees must give 30 days written notice.\n"
    "How many sick days per year?,handbook.pdf,Employees receive 10 paid sick days per year.\n"
)

es = cg.read_csv("minimal2.csv")
for it in es:
    print(it.id, it.question)
"""
CSV_MINIMAL_PRINTS = r"""q1 What is the notice period for resignation?
q2 How many sick days per year?
"""
CSV_MINIMAL_FILE = r"""question,source_id,quote
What is the notice period for resignation?,handbook.pdf,Employees must give 30 days written notice.
How many sick days per year?,handbook.pdf,Employees receive 10 paid sick days per year.
"""

CSV_NO_SOURCE = r"""
# no_source.csv has a `quote` column but no `source_id` column
Path("no_source.csv").write_text(
    "id,question,quote\n"
    "q1,What is the notice period for resignation?,Employees must give 30 days written notice.\n"
)

es = cg.read_csv("no_source.csv")
item = es.get("q1")
print(item.anchors, item.is_answerable)
"""
CSV_NO_SOURCE_PRINTS = "() False\n"

CSV_BAD = r"""
Path("bad.csv").write_text("foo,bar\n1,2\n")

try:
    cg.read_csv("bad.csv")  # columns: foo, bar
except cg.EvalSetError as e:
    print("EvalSetError:", e)
"""
CSV_BAD_PRINTS = (
    "EvalSetError: bad.csv has no question column. Expected one of: question, query, q. "
    "Found: foo, bar\n"
)

BEIR = r"""
from pathlib import Path

Path("beir_queries.jsonl").write_text(
    '{"_id": "1", "text": "What is the notice period for resignation?"}\n'
)
Path("beir_qrels.tsv").write_text("query-id\tcorpus-id\tscore\n1\thandbook.pdf\t1\n")

es = cg.read_beir("beir_queries.jsonl", "beir_qrels.tsv")
print(len(es), es.id, es.source, es.meta)
for it in es:
    print(it.id, it.question, it.meta)
"""
BEIR_PRINTS = r"""1 beir beir {'granularity': 'document', 'note': 'BEIR gold is document-level. It compares retrievers fairly and cannot compare chunkers fairly, because every chunk of a gold document counts as relevant regardless of whether it holds the evidence.'}
1 What is the notice period for resignation? {'gold_documents': [('handbook.pdf', 1)]}
"""

LEGALBENCH = r"""
import json
payload = {
    "tests": [{
        "query": "What is the notice period for resignation?",
        "answer": "30 days",
        "snippets": [
            {"file_path": "handbook.txt", "span": [120, 167]},
            {"file_path": "handbook.txt"},  # missing span - dropped, not an error
        ],
    }]
}
json.dump(payload, open("lbrag.json", "w"))

es = cg.read_legalbench_rag("lbrag.json")
print(len(es), es.id, es.source, es.meta)
for it in es:
    print(it.id, it.question, it.answer, it.gold)
"""
LEGALBENCH_PRINTS = r"""1 legalbench-rag legalbench-rag {'granularity': 'span', 'source_file': 'lbrag.json', 'tests_in_file': 1, 'tests_skipped': 0, 'snippets_skipped': {'had no `span`': 1}}
lb0 What is the notice period for resignation? 30 days (GoldSpan(span=Span('handbook.txt', 120, 167), grade=2),)
"""

DESCRIBE_SKIPPED = r"""
from contextgrid.evalset.io import describe_skipped
print(describe_skipped(es))
"""
DESCRIBE_SKIPPED_PRINTS = "1 snippet skipped: 1 had no `span`.\n"

READ_EVALSET = r"""
from contextgrid.evalset.io import read_evalset

es = read_evalset("quiz.jsonl")  # -> read_jsonl
es = read_evalset("quiz.csv")    # -> read_csv
"""


@pytest.fixture
def run_page(tmp_path, monkeypatch):
    """Run page examples in order in one namespace; return (stdout of the last, namespace)."""
    monkeypatch.chdir(tmp_path)

    def run(*examples: str) -> tuple[str, dict]:
        namespace: dict = {}
        out = ""
        for example in examples:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(example, namespace)
            out = buffer.getvalue()
        return out, namespace

    return run


def test_write_jsonl_prints_the_header_and_item_lines(run_page):
    out, _ = run_page(JSONL_WRITE)
    assert out == JSONL_WRITE_PRINTS


def test_read_jsonl_reads_the_written_file_back(run_page):
    out, _ = run_page(JSONL_WRITE, JSONL_READ)
    assert out == JSONL_READ_PRINTS


def test_read_jsonl_without_header_uses_the_file_stem_and_import_source(run_page, tmp_path):
    out, _ = run_page(JSONL_WRITE, JSONL_MINIMAL)
    assert out == JSONL_MINIMAL_PRINTS
    assert (tmp_path / "minimal.jsonl").read_text() == JSONL_MINIMAL_LINE + "\n"


def test_write_jsonl_creates_missing_parent_folders(run_page, tmp_path):
    _, namespace = run_page(JSONL_WRITE)
    path = namespace["cg"].write_jsonl(namespace["evalset"], "a/b/quiz.jsonl")
    assert (tmp_path / "a" / "b" / "quiz.jsonl").read_text() == JSONL_WRITE_PRINTS[:-1]
    assert str(path) == "a/b/quiz.jsonl"


def test_write_csv_prints_the_documented_columns(run_page):
    out, _ = run_page(JSONL_WRITE, CSV_WRITE)
    assert out == CSV_WRITE_PRINTS


def test_read_csv_assigns_ids_in_row_order(run_page, tmp_path):
    out, _ = run_page(JSONL_WRITE, CSV_MINIMAL)
    assert out == CSV_MINIMAL_PRINTS
    assert (tmp_path / "minimal2.csv").read_text() == CSV_MINIMAL_FILE


def test_read_csv_quote_without_source_gives_no_anchor(run_page):
    out, _ = run_page(JSONL_WRITE, CSV_MINIMAL, CSV_NO_SOURCE)
    assert out == CSV_NO_SOURCE_PRINTS


def test_read_csv_without_question_column_raises_the_page_message(run_page):
    out, _ = run_page(JSONL_WRITE, CSV_MINIMAL, CSV_BAD)
    assert out == CSV_BAD_PRINTS


def test_read_beir_prints_document_level_meta_and_gold(run_page):
    out, _ = run_page(JSONL_WRITE, BEIR)
    assert out == BEIR_PRINTS


def test_read_legalbench_rag_prints_spans_and_skip_counts(run_page):
    out, _ = run_page(JSONL_WRITE, LEGALBENCH)
    assert out == LEGALBENCH_PRINTS


def test_describe_skipped_prints_one_line(run_page):
    out, _ = run_page(JSONL_WRITE, LEGALBENCH, DESCRIBE_SKIPPED)
    assert out == DESCRIBE_SKIPPED_PRINTS


def test_read_evalset_dispatches_on_extension(run_page):
    out, namespace = run_page(JSONL_WRITE, CSV_WRITE, READ_EVALSET)
    assert out == ""
    cg = namespace["cg"]
    assert namespace["es"].source == "csv"
    assert namespace["es"].items == cg.read_jsonl("quiz.jsonl").items
    assert cg.read_evalset("quiz.jsonl") == cg.read_jsonl("quiz.jsonl")


def test_all_examples_run_in_page_order(run_page):
    """The page read top to bottom as one script still works (nothing depends on test order)."""
    examples = [
        JSONL_WRITE,
        JSONL_READ,
        JSONL_MINIMAL,
        CSV_WRITE,
        CSV_MINIMAL,
        CSV_NO_SOURCE,
        CSV_BAD,
        BEIR,
        LEGALBENCH,
        DESCRIBE_SKIPPED,
        READ_EVALSET,
    ]
    out, _ = run_page("\n".join(examples))
    assert out == "".join(
        [
            JSONL_WRITE_PRINTS,
            JSONL_READ_PRINTS,
            JSONL_MINIMAL_PRINTS,
            CSV_WRITE_PRINTS,
            CSV_MINIMAL_PRINTS,
            CSV_NO_SOURCE_PRINTS,
            CSV_BAD_PRINTS,
            BEIR_PRINTS,
            LEGALBENCH_PRINTS,
            DESCRIBE_SKIPPED_PRINTS,
        ]
    )
