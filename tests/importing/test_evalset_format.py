"""contextgrid eval sets through the checker: each shape on the reference page, real BEIR and
LegalBench-RAG files, hostile input as problems, routing of look-alike CSVs, and export."""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from pathlib import Path

import pytest

from contextgrid import evalset_to_jsonl_text, parse_beir, parse_jsonl_text
from contextgrid.evalset.io import BEIR_NOTE
from datasets_app.importing import evalset_format as ef
from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import (
    NAME_CHARS,
    CheckResult,
    CriterionSpec,
    DatasetSpec,
    TaskSpec,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
REALDATA = SHARED / "realdata"
needs_realdata = pytest.mark.skipif(
    not REALDATA.is_dir(), reason="the shared real third-party files are not beside the repo"
)

# The reference page's files, byte for byte as its examples write them.
QUIZ_JSONL = (
    b'{"_evalset": {"id": "handbook-quiz", "version": 1, "source": "manual", "meta": {}}}\n'
    b'{"id": "q1", "question": "How much leave do employees accrue per month?", "gold": [], '
    b'"anchors": [{"source_id": "handbook.pdf", "quote": "Employees accrue 1.5 days of leave '
    b'per month.", "grade": 2, "page_hint": null, "occurrence": 0}], "qtype": "factoid", '
    b'"answer": null, "meta": {}}\n'
)
MINIMAL_JSONL = (
    b'{"id": "q1", "question": "What is the notice period for resignation?", '
    b'"anchors": [{"source_id": "handbook.pdf", "quote": "Employees must give 30 days written '
    b'notice."}]}\n'
)
MINIMAL2_CSV = (
    b"question,source_id,quote\n"
    b"What is the notice period for resignation?,handbook.pdf,Employees must give 30 days "
    b"written notice.\n"
    b"How many sick days per year?,handbook.pdf,Employees receive 10 paid sick days per year.\n"
)
NO_SOURCE_CSV = (
    b"id,question,quote\n"
    b"q1,What is the notice period for resignation?,Employees must give 30 days written notice.\n"
)
LBRAG = {
    "tests": [
        {
            "query": "What is the notice period for resignation?",
            "answer": "30 days",
            "snippets": [
                {"file_path": "handbook.txt", "span": [120, 167]},
                {"file_path": "handbook.txt"},
            ],
        }
    ]
}
LBRAG_JSON = json.dumps(LBRAG).encode()
RETRIEVAL = CriterionSpec(id="retrieves-gold-evidence", criterion="Retrieves the gold evidence")


def ok(result: CheckResult) -> DatasetSpec:
    assert result.problems == (), result.problems
    assert result.plan is not None
    return result.plan


def beir_zip(folder: Path) -> bytes:
    """The BEIR folder zipped as a person would zip it: everything under one folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# --- The page's shapes ---------------------------------------------------------------------


def test_the_native_jsonl_with_a_header_becomes_a_task_graded_by_retrieval():
    result = check_file(QUIZ_JSONL, "quiz.jsonl")
    plan = ok(result)
    assert result.format == "jsonl"
    assert result.detected.startswith("contextgrid eval set (JSONL, eval set 'handbook-quiz')")
    assert "1 question" in result.detected and "quoted evidence" in result.detected
    (task,) = plan.tasks
    assert task.id == "q1"
    assert task.prompt == task.name == "How much leave do employees accrue per month?"
    assert task.expected_text is None
    assert task.criteria == (RETRIEVAL,)
    assert task.evidence == {
        "anchors": [
            {
                "source_id": "handbook.pdf",
                "quote": "Employees accrue 1.5 days of leave per month.",
                "grade": 2,
                "page_hint": None,
                "occurrence": 0,
            }
        ]
    }
    assert plan.name == "handbook-quiz"
    assert ef.NOTE_RETRIEVAL_CRITERION.format(count=1, total=1) in result.notes


def test_a_jsonl_without_a_header_reads_by_its_question_lines():
    result = check_file(MINIMAL_JSONL, "minimal.jsonl")
    (task,) = ok(result).tasks
    assert result.detected.startswith("contextgrid eval set (JSONL)")
    assert task.evidence["anchors"][0]["quote"] == "Employees must give 30 days written notice."
    assert ok(result).name == "minimal"


def test_the_minimal_csv_gets_ids_in_row_order():
    result = check_file(MINIMAL2_CSV, "minimal2.csv")
    plan = ok(result)
    assert result.format == "csv" and result.detected.startswith("contextgrid eval set (CSV)")
    assert [task.id for task in plan.tasks] == ["q1", "q2"]
    assert plan.tasks[1].evidence["anchors"][0]["source_id"] == "handbook.pdf"


def test_a_quote_without_a_source_leaves_nothing_to_grade_and_says_why():
    result = check_file(NO_SOURCE_CSV, "no_source.csv")
    assert result.plan is None
    (problem,) = result.problems
    assert problem.code == ef.NOTHING_TO_GRADE.code
    assert problem.message == ef.NOTHING_TO_GRADE.format(item="'q1'")
    assert (problem.file, problem.row) == ("no_source.csv", 2)
    assert "1 quote skipped: 1 had no source document." in result.notes


def test_legalbench_rag_keeps_gold_spans_and_says_what_it_skipped():
    result = check_file(LBRAG_JSON, "lbrag.json")
    (task,) = ok(result).tasks
    assert result.format == "json"
    assert result.detected == (
        "contextgrid eval set (LegalBench-RAG), 1 question, character-span gold"
    )
    assert (task.id, task.expected_text, task.criteria) == ("lb0", "30 days", ())
    assert task.evidence == {
        "gold": [{"source_id": "handbook.txt", "start": 120, "end": 167, "grade": 2}]
    }
    assert "1 snippet skipped: 1 had no `span`." in result.notes


def test_legalbench_rag_as_a_bare_list():
    result = check_file(json.dumps(LBRAG["tests"]).encode(), "lbrag.json")
    assert [task.id for task in ok(result).tasks] == ["lb0"]


def test_a_multi_line_question_is_named_by_its_first_line_cut_short():
    question = "  " + "Why " * 40 + "\nsecond line"
    line = json.dumps({"id": "long", "question": question, "answer": "because"})
    (task,) = ok(check_file(line.encode(), "long.jsonl")).tasks
    assert task.prompt == question
    assert len(task.name) == NAME_CHARS and task.name.endswith("…")
    assert task.name.startswith("Why Why")


def test_qtype_and_item_meta_are_kept_as_evidence():
    line = {
        "id": "m1",
        "question": "Compare the two policies.",
        "qtype": "comparison",
        "answer": "A is longer",
        "meta": {"reviewed": True},
    }
    (task,) = ok(check_file(json.dumps(line).encode(), "m.jsonl")).tasks
    assert task.evidence == {"qtype": "comparison", "meta": {"reviewed": True}}
    assert task.expected_text == "A is longer" and task.criteria == ()


# --- Real files ----------------------------------------------------------------------------


@needs_realdata
def test_the_real_legalbench_rag_excerpt_imports_every_test():
    data = (
        REALDATA / "legalbench_rag" / "meridian_privacy_qa.excerpt_fiverr_keep.json"
    ).read_bytes()
    result = check_file(data, "privacy_qa.json")
    plan = ok(result)
    assert len(plan.tasks) == 56
    assert plan.tasks[0].id == "privacy_qa-0000"
    assert plan.tasks[0].evidence["gold"][0]["source_id"] == "privacy_qa/Fiverr.txt"
    assert sum(len(task.evidence["gold"]) for task in plan.tasks) == 100
    assert all(task.criteria == (RETRIEVAL,) for task in plan.tasks)


@needs_realdata
@pytest.mark.parametrize(
    ("folder", "questions"),
    [("agentset_dbpedia", 40), ("scifact_pristine", 300), ("josh1108_scidocs", 71)],
)
def test_a_real_beir_folder_zipped_imports_with_document_level_gold(folder, questions):
    root = REALDATA / "beir" / folder
    result = check_file(beir_zip(root), f"{folder}.zip")
    plan = ok(result)
    assert result.format == "zip"
    assert f"{questions} questions, document-level gold" in result.detected
    assert len(plan.tasks) == questions
    assert BEIR_NOTE in result.notes
    # The same gold as the library reads from the files themselves.
    queries = next(root.glob("queries*.jsonl"))
    evalset = parse_beir(queries.read_bytes(), (root / "qrels" / "test.tsv").read_bytes())
    first = evalset.items[0]
    assert plan.tasks[0].id == first.id
    assert plan.tasks[0].evidence["gold_documents"] == [
        list(pair) for pair in first.meta["gold_documents"]
    ]


@needs_realdata
def test_the_train_qrels_beside_test_are_named_as_not_read():
    result = check_file(beir_zip(REALDATA / "beir" / "scifact_pristine"), "scifact.zip")
    assert ef.NOTE_NOT_READ.format(names="scifact_pristine/qrels/train.tsv") in result.notes


@needs_realdata
def test_a_beir_set_whose_queries_have_no_positive_judgement_has_no_questions():
    result = check_file(beir_zip(REALDATA / "beir" / "agentset_pg"), "pg.zip")
    (problem,) = result.problems
    assert problem.code == ef.NO_QUESTIONS.code
    assert "50 queries dropped: 50 had no positive judgement." in problem.message


@needs_realdata
def test_qrels_that_mix_layouts_are_one_problem_on_the_qrels_file():
    queries = (REALDATA / "beir" / "agentset_scifact" / "queries.jsonl").read_bytes()
    qrels = (REALDATA / "beir" / "kirloxious_scifact_modified" / "qrels" / "test.tsv").read_bytes()
    result = check_file(zip_of({"queries.jsonl": queries, "qrels/test.tsv": qrels}), "x.zip")
    (problem,) = result.problems
    assert problem.code == ef.EVALSET_ERROR.code
    assert problem.file == "qrels/test.tsv" and problem.line == 1
    assert "spaces around it" in problem.message


@needs_realdata
def test_real_question_answer_csvs_still_import_as_datasets():
    paths = sorted((REALDATA / "csv").rglob("*.csv")) + sorted(
        (REALDATA / "promptfoo").rglob("*.csv")
    )
    assert paths
    for path in paths:
        result = check_file(path.read_bytes(), path.name)
        assert "contextgrid" not in result.detected, path


@needs_realdata
def test_an_inspect_ai_question_answer_jsonl_is_a_dataset_file_not_an_eval_set():
    # Its lines carry id/question/answer and no evidence: the dataset path names it.
    result = check_file((REALDATA / "inspect_ai" / "biology_qa.jsonl").read_bytes(), "bio.jsonl")
    plan = ok(result)
    assert result.detected == (
        "JSON Lines, records with question → prompt, answer → expected answer, UTF-8"
    )
    assert all(task.expected_text and not task.criteria for task in plan.tasks)


# --- Routing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "is_evalset"),
    [
        ("question,expected_answer", False),
        ("question,ground_truth", False),
        ("question,contexts,ground_truth,evolution_type,metadata,episode_done", False),
        ("question,answer,context,category", False),
        ("prompt,source_id,quote", False),
        ("input,quote", False),
        ("question,source_id,answer", True),
        ("Query;Document;Relevance", True),
        ("q\tpassage", True),
        ("id,question,quote", True),
    ],
)
def test_a_csv_is_an_eval_set_only_with_a_question_no_prompt_and_an_eval_set_column(
    header, is_evalset
):
    assert ef.is_evalset_csv_header(ef._csv_header(header + "\n")[1]) is is_evalset


def test_an_ordinary_jsonl_and_json_are_not_taken_for_eval_sets():
    assert ef.detect(b'{"prompt": "p", "expected": "x"}\n', "jsonl") is None
    assert ef.detect(b'{"_id": "1", "text": "BEIR query alone"}\n', "jsonl") is None
    assert ef.detect(b'{"tasks": [{"prompt": "p", "expected": "x"}]}', "json") is None
    assert ef.detect(b'\xef\xbb\xbf{"_evalset": {"id": "x"}}\n', "jsonl") == "jsonl"


def test_a_zip_with_a_dataset_file_is_not_taken_for_beir():
    members = {"dataset.json": b"{}", "queries.jsonl": b"", "qrels/test.tsv": b""}
    assert ef.find_beir_members(members) is None
    assert ef.find_beir_members({"queries.jsonl": b"", "corpus.jsonl": b"", "qrels/test.tsv": b""})


def test_several_qrels_without_test_tsv_are_a_problem_naming_them():
    members = {"queries.jsonl": b'{"_id": "1", "text": "q"}\n', "a.tsv": b"", "b.tsv": b""}
    (problem,) = check_file(zip_of(members), "beir.zip").problems
    assert problem.message == ef.SEVERAL_QRELS.format(count=2, found="a.tsv, b.tsv")


# --- Hostile input: the library's errors become one problem each ---------------------------


@pytest.mark.parametrize(
    ("name", "data", "line", "row", "words"),
    [
        (
            "bad.json",
            b'{"tests": [\n {"query": "q", "snippets": []},\n'
            b' {"query": "r", "snippets": [{"file_path": "a", "span": "117,202"}]}\n]}',
            3,
            None,
            '"span" must be an array',
        ),
        ("bad.json", b'{"tests": {"query": "q"}}', None, None, '"tests" must be an array'),
        (
            "dup.jsonl",
            b'{"id": "q1", "question": "Q", "answer": "a", "anchors": []}\n'
            b'{"id": "q1", "question": "R"}\n',
            2,
            None,
            "already used on line 1",
        ),
        (
            "broken.jsonl",
            b'{"_evalset": {"id": "x"}}\n{"id": "q1", "question": }\n{"id": "q2"}\n',
            2,
            None,
            "invalid JSON",
        ),
        (
            "anchor.jsonl",
            b'{"id": "q1", "question": "Q", "anchors": [], "anchor": []}\n',
            1,
            None,
            "unknown field",
        ),
        (
            "grade.csv",
            b"question,source_id,quote,grade\nQ,a.pdf,text,high\n",
            None,
            2,
            "whole number",
        ),
        ("nul.csv", b"question,source_id,quote\nQ\x00,a.pdf,t\n", None, None, "NUL"),
    ],
)
def test_an_evalset_error_is_one_problem_with_its_file_and_place(name, data, line, row, words):
    result = check_file(data, name)
    assert result.plan is None
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert problem.file == name
    assert (problem.line, problem.row) == (line, row)
    assert words.lower() in problem.message.lower()
    assert not problem.message.startswith(name)


# --- Export ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("quiz.jsonl", QUIZ_JSONL),
        ("minimal2.csv", MINIMAL2_CSV),
        ("lbrag.json", LBRAG_JSON),
        (
            "mixed.jsonl",
            b'{"_evalset": {"id": "mixed"}}\n'
            b'{"id": "a", "question": "Q1\\nmore", "qtype": "multi_hop", "answer": "yes", '
            b'"anchors": [{"source_id": "d.pdf", "quote": " q ", "grade": 1, "page_hint": 3, '
            b'"occurrence": 2}, {"source_id": "e.pdf", "quote": "r"}], '
            b'"gold": [{"span": {"source_id": "d.pdf", "start": 0, "end": 5}, "grade": 1}], '
            b'"meta": {"reviewed": true, "gold_documents": [["d.pdf", 2]]}}\n',
        ),
    ],
)
def test_an_export_imports_back_as_the_same_tasks_and_the_same_eval_set(name, data):
    plan = ok(check_file(data, name))
    exported = ef.write(plan)
    again = ok(check_file(exported, "export.jsonl"))
    assert again.tasks == plan.tasks
    assert again.name == plan.name
    if name.endswith(".jsonl"):
        # Everything of the original eval set survives (JSON has no tuples: compare as JSON).
        original = parse_jsonl_text(data, name=name)
        assert (
            ef.spec_to_evalset(plan).items
            == parse_jsonl_text(evalset_to_jsonl_text(original), name=name).items
        )


@needs_realdata
def test_a_beir_export_keeps_the_document_level_caution():
    plan = ok(check_file(beir_zip(REALDATA / "beir" / "agentset_dbpedia"), "dbpedia.zip"))
    exported = ef.write(plan)
    header = json.loads(exported.split(b"\n", 1)[0])["_evalset"]
    assert header["meta"] == {"granularity": "document", "note": BEIR_NOTE}
    again = check_file(exported, "dbpedia.jsonl")
    assert ok(again).tasks == plan.tasks
    assert BEIR_NOTE in again.notes


def test_what_an_eval_set_cannot_hold_is_said_before_export():
    task = TaskSpec(
        id="t1",
        name="t1",
        prompt="p",
        criteria=(CriterionSpec(id="c1", criterion="Is polite"),),
        evidence={"gold": "not a list"},
    )
    spec = DatasetSpec(name="d", tasks=(task,), criteria=(RETRIEVAL,))
    warnings = ef.export_warnings(spec)
    assert ef.MSG_EXPORT_CRITERIA.format(tasks="1 task", ids="t1") in warnings
    assert ef.MSG_EXPORT_SHARED in warnings
    assert any(
        w.startswith("The evidence of task t1 is not in the eval-set shape") for w in warnings
    )
    # ...and the task is left out, as said: with no answer and no evidence, nothing in an
    # eval set could grade it (it was written with "answer": null, which no reader takes).
    assert parse_jsonl_text(ef.write(spec), name="d.jsonl").items == ()


def test_an_eval_set_export_imports_back_the_same():
    answered = TaskSpec(
        id="a1",
        name="a1",
        prompt="What is 2+2?",
        expected_text="4",
        criteria=(CriterionSpec(id="shows-work", criterion="Shows the working"),),
    )
    rubric = TaskSpec(
        id="r1", name="r1", prompt="Be kind.", criteria=(CriterionSpec(id="c", criterion="Kind"),)
    )
    spec = DatasetSpec(name="Mixed", tasks=(answered, rubric))
    warnings = ef.export_warnings(spec)
    assert ef.MSG_EXPORT_CRITERIA.format(tasks="1 task", ids="r1") in warnings
    assert ef.MSG_EXPORT_ANSWER_ONLY.format(tasks="1 task") in warnings

    exported = ef.write(spec)
    again = ok(check_file(exported, "mixed.jsonl"))
    assert [(t.id, t.expected_text, t.criteria) for t in again.tasks] == [("a1", "4", ())]
    assert ef.write(again) == exported


def test_an_ordinary_dataset_exports_its_answers():
    task = TaskSpec(id="t1", name="t1", prompt="What is 2+2?", expected_text="4")
    spec = DatasetSpec(name="Arithmetic", tasks=(task, dataclasses.replace(task, id="t2")))
    evalset = parse_jsonl_text(ef.write(spec), name="a.jsonl")
    assert evalset.id == "Arithmetic"
    assert [(i.id, i.question, i.answer) for i in evalset] == [
        ("t1", "What is 2+2?", "4"),
        ("t2", "What is 2+2?", "4"),
    ]
    assert ef.export_warnings(spec) == []


DEEP = "[" * 10_000 + "]" * 10_000


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # The first line decides that the file is an eval set; it is the one too deep.
        ('{"question": "Q", "meta": ' + DEEP + "}\n", 1),
        (
            '{"id": "q1", "question": "Q", "meta": {}}\n{"id": "q2", "question": "Q", "meta": '
            + DEEP
            + "}\n",
            2,
        ),
    ],
)
def test_an_eval_set_nested_ten_thousand_deep_is_a_problem_on_its_line(text, line):
    result = check_file(text.encode(), "deep.jsonl")

    assert not result.ok
    assert [(p.line, "nested too deeply" in p.message) for p in result.problems] == [(line, True)]


def test_the_same_deep_eval_set_in_a_zip_is_a_problem_too():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("deep.jsonl", '{"question": "Q", "meta": ' + DEEP + "}\n")

    result = check_file(buffer.getvalue(), "deep.zip")

    assert not result.ok
    assert ["nested too deeply" in p.message for p in result.problems] == [True]


def test_an_eval_set_export_keeps_the_tasks_metadata_in_its_items_meta():
    kept = {"category": "billing", "difficulty": 3, "tags": ["easy"], "source": None}
    task = TaskSpec(
        id="a1",
        name="What is 2+2?",  # an item has no name: its question's first line names it
        prompt="What is 2+2?",
        expected_text="4",
        evidence={"qtype": "multi_hop", "meta": {"reviewed": True}},
        metadata=kept,
    )
    spec = DatasetSpec(name="With metadata", tasks=(task,))
    assert ef.export_warnings(spec) == []
    exported = ef.write(spec)
    item = parse_jsonl_text(exported, name="e.jsonl").items[0]
    assert item.meta == {"reviewed": True, "metadata": kept}
    again = ok(check_file(exported, "e.jsonl"))
    assert again.tasks == spec.tasks
    assert ef.write(again) == exported


def test_an_item_s_metadata_object_is_the_task_s_and_is_checked_as_any_file_s():
    line = b'{"id": "q1", "question": "Q?", "answer": "A", "meta": {"metadata": {"split": "dev"}}}'
    (task,) = ok(check_file(line + b"\n", "set.jsonl")).tasks
    assert task.metadata == {"split": "dev"} and task.evidence == {}
    bad = b'{"id": "q1", "question": "Q?", "answer": "A", "meta": {"metadata": {" x": 1}}}\n'
    (problem,) = check_file(bad, "set.jsonl").problems
    assert problem.code == "bad_metadata_key" and problem.line == 1


def test_evidence_whose_meta_says_metadata_is_named_before_export():
    task = TaskSpec(
        id="t1",
        name="t1",
        prompt="p",
        expected_text="a",
        evidence={"meta": {"metadata": "a note"}},
        metadata={"split": "test"},
    )
    warnings = ef.export_warnings(DatasetSpec(name="d", tasks=(task,)))
    assert warnings == [ef.MSG_EXPORT_METADATA_CLASH.format(task="t1")]
