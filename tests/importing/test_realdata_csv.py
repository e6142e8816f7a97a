"""Real third-party QA and promptfoo CSVs (/work/shared/realdata, see its INDEX.md).

Each file is decided on its own: those with a prompt column and an expected-answer column
import as expected-answer tasks; the others get one problem naming the columns found.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from datasets_app.importing import columns, csv_format, document, shapes
from tests.importing.csv_helpers import check_csv

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"

pytestmark = pytest.mark.skipif(
    not REALDATA.is_dir(), reason=f"the shared real-data files are not at {REALDATA}"
)


def read(relative: str):
    path = REALDATA / relative
    return check_csv(path.read_bytes(), path.name)


@pytest.mark.parametrize(
    ("relative", "tasks", "prompt_column", "answer_column"),
    [
        ("csv/datasaur_doc_qa/qa_doc.csv", 236, "input", "expected_output"),
        ("csv/datasaur_legalbench_rag_qa/contractnli.csv", 50, "prompt", "expected completion"),
        ("csv/datasaur_legalbench_rag_qa/cuad.csv", 50, "prompt", "expected completion"),
        ("csv/datasaur_legalbench_rag_qa/maud.csv", 50, "prompt", "expected completion"),
        ("csv/datasaur_legalbench_rag_qa/privacy_qa.csv", 50, "prompt", "expected completion"),
        ("csv/ragas/ragas-wikiqa.csv", 232, "question", "correct_answer"),
        ("csv/ragas_v01_testset_anand_kamble/testset.csv", 5, "question", "ground_truth"),
        ("csv/rmcv_rag_evaluation/ragas_pdf_qa_testset.csv", 12, "user_input", "reference"),
        (
            "csv/rmcv_rag_evaluation/ragas_context_metrics_evaluation.csv",
            150,
            "user_input",
            "reference",
        ),
        ("csv/rmcv_rag_evaluation/deepeval_pdf_testset.csv", 4, "input", "expected_output"),
    ],
)
def test_question_answer_files_import_byte_exact(relative, tasks, prompt_column, answer_column):
    plan, problems, _ = read(relative)

    assert problems == []
    assert len(plan.tasks) == tasks
    # Every prompt and answer is the cell exactly as Python's csv module reads it.
    text = (REALDATA / relative).read_bytes().decode("utf-8")
    records = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [(t.prompt, t.expected_text) for t in plan.tasks] == [
        (r[prompt_column], r[answer_column]) for r in records
    ]


def test_datasaur_answers_keep_newlines_nbsp_and_curly_quotes():
    plan, _, _ = read("csv/datasaur_legalbench_rag_qa/privacy_qa.csv")

    answers = [task.expected_text for task in plan.tasks]
    assert sum("\n" in answer for answer in answers) >= 45
    assert any("\u00a0" in answer for answer in answers)
    assert any("\u2019" in answer for answer in answers)
    assert plan.tasks[0].prompt.startswith('Consider "Fiverr"\'s privacy policy;')


def test_ragas_leading_space_in_a_question_is_kept():
    plan, _, _ = read("csv/ragas_v01_testset_anand_kamble/testset.csv")

    assert plan.tasks[0].prompt.startswith(" What are density-based clusters")


def test_hf_doc_qa_eval_names_the_broken_record_and_the_empty_answer_before_it():
    plan, problems, _ = read("csv/ragas/hf_doc_qa_eval.csv")

    assert plan is None
    found = sorted((p.row, p.code) for p in problems)
    assert found == [
        (51, document.NOTHING_TO_GRADE.code),
        (52, columns.NAMELESS_COLUMN_VALUE.code),
    ]
    data = (REALDATA / "csv/ragas/hf_doc_qa_eval.csv").read_bytes()
    parsed = shapes.shape(csv_format.read(data, "f.csv"), options=None)
    assert parsed.detected == "CSV, UTF-8, ','-delimited, CRLF"
    # The questions' bare LF inside CRLF records stays in the text.
    assert parsed.document["tasks"][0]["prompt"].endswith("?\n")


@pytest.mark.parametrize(
    ("relative", "found", "guess"),
    [
        (
            "csv/rag_law_routing/tests.csv",
            "input, expected_source",
            "expected answer = expected_source",
        ),
        (
            "csv/ragas/rag_eval_test_dataset.csv",
            "question, grading_notes",
            "expected answer = grading_notes",
        ),
        (
            "promptfoo/third_party_henadzi_bedrock_homework/tests.csv",
            "user_message, expected_category, expected_priority",
            "expected answer = expected_category",
        ),
        # promptfoo's vars fill a prompt template kept elsewhere: which var is the prompt
        # is the person's to say.
        ("promptfoo/simple-test/tests.csv", "body", "prompt = body"),
        ("promptfoo/simple-csv/tests.csv", "language, body, style_config", "prompt = style_config"),
        (
            "promptfoo/csv-metadata/tests.csv",
            "topic, __metadata:category, __metadata:tags[]",
            "prompt = topic",
        ),
    ],
)
def test_files_that_do_not_say_which_column_is_which_ask_for_a_mapping(relative, found, guess):
    plan, problems, _ = read(relative)

    assert plan is None
    assert [p.code for p in problems] == [shapes.NEEDS_MAPPING.code]
    assert f"Found: {found}. Best guess: {guess}." in problems[0].message
