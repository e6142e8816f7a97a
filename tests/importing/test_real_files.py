"""Real files from other tools (tests/files/real, sources in its SOURCES.md).

Each one imports, named on the Detected line as the tool that wrote it, or is refused with
the one message that says what the file looks like and what to do.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from datasets_app.importing import checker, document, json_format, shapes
from datasets_app.importing.checker import check_file
from datasets_app.importing.shapes import base
from datasets_app.importing.spec import NAME_CHARS, CheckOptions

REAL = Path(__file__).resolve().parents[1] / "files" / "real"


def check(relative: str, **options):
    path = REAL / relative
    return check_file(path.read_bytes(), path.name, options=CheckOptions(**options))


IMPORTED = [
    # (file, tasks, what the Detected line names)
    # A Chinese header (领域, 问题, 答案: domain, question, answer) is read as it stands.
    ("finrag/finance_faq_zh.excerpt.csv", 10, "CSV, UTF-8"),
    ("alpaca_eval/model_outputs.excerpt.json", 8, "AlpacaEval (instruction + output)"),
    ("deepeval/chatbot_dataset.json", 3, "records with input → prompt, expected"),
    ("deepeval/goldens.csv", 15, "deepeval goldens (input + expected_output)"),
    ("deepeval/goldens.json", 15, "deepeval goldens (input + expected_output)"),
    ("nq_open/NQ-open.dev.excerpt.jsonl", 12, "NQ-open (question + answers)"),
    (
        "openai_evals_api/privacy_policy_items.jsonl",
        12,
        'OpenAI Evals API items ({"item": …}), OpenAI evals (input + ideal)',
    ),
    ("openai_evals_api/privacy_policy_items_with_comments.jsonl", 8, "OpenAI evals"),
    ("promptfoo/eval_self_grading_tests.csv", 10, "promptfoo test cases (__expected)"),
    ("realdata/csv/datasaur_legalbench_rag_qa/contractnli.csv", 50, "CSV, UTF-8"),
    ("realdata/csv/ragas_v01_testset_anand_kamble/testset.csv", 5, "ragas (question"),
    ("realdata/csv/rmcv_rag_evaluation/deepeval_pdf_testset.csv", 4, "deepeval goldens"),
    ("realdata/csv/rmcv_rag_evaluation/ragas_pdf_qa_testset.csv", 12, "ragas (user_input"),
    ("realdata/inspect_ai/biology_qa.jsonl", 20, "question → prompt, answer → expected answer"),
    ("realdata/inspect_ai/security_guide.jsonl", 16, "input → prompt, target"),
    ("realdata/inspect_ai/test_dataset/samples-mcq.csv", 1, "multiple choice (input + options)"),
    ("realdata/inspect_ai/test_dataset/samples-mcq.json", 1, "multiple choice (input + options)"),
    ("realdata/inspect_ai/test_dataset/samples-md.jsonl", 1, "input → prompt"),
    ("realdata/inspect_ai/test_dataset/samples.json", 1, "input → prompt"),
    ("realdata/inspect_ai/theory_of_mind.jsonl", 100, "input → prompt"),
    ("squad/transformers_sample.excerpt.json", 3, "SQuAD (context + question + answers)"),
    ("gsm8k/test.excerpt.jsonl", 10, "question → prompt, answer → expected answer"),
    ("langsmith/dataset_few_shot_search.excerpt.json", 5, "LangSmith examples (inputs + outputs)"),
    (
        "healthbench/consensus_context_seeking.excerpt.jsonl",
        2,
        "JSON Lines, HealthBench (chat prompt + rubrics)",
    ),
    ("healthbench/oss_eval_example_1.json", 1, "HealthBench (chat prompt + rubrics), one record"),
    (
        "openai_evals/agent_tool_routing.excerpt.jsonl",
        4,
        "JSON Lines, OpenAI evals (input + ideal)",
    ),
    ("hotpotqa/hotpot_dev_distractor_v1.excerpt.json", 5, "HotpotQA (question + answer"),
    ("hotpotqa/hf_hotpot_qa_distractor.excerpt.json", 3, "HotpotQA (question + answer"),
    ("squad/dataqa_tr_faq.dev-v1.1.json", 6, "SQuAD (context + question + answers), nested by"),
    ("squad/readit_dev-v2.0.excerpt.json", 8, "SQuAD (context + question + answers), nested by"),
    (
        "llamaindex/aragog_rag_dataset.excerpt.json",
        3,
        "JSON, LlamaIndex LabelledRagDataset (query + reference_answer) under 'examples'",
    ),
    (
        "llamaindex/ipcc_eval_qr_dataset.json",
        20,
        "JSON, LlamaIndex QueryResponseDataset (queries + responses), one object per field, "
        "keyed by id",
    ),
    ("aragog/benchmark.json", 107, "ground_truths → expected answer, one list per column"),
    ("cmmlu/dev_agronomy.csv", 5, "multiple choice (Question + options)"),
    ("openai_finetune/mandarin2cantonese.excerpt.csv", 12, "CRLF, prompt + completion"),
    (
        "openai_finetune/mandarin2cantonese_prepared.excerpt.jsonl",
        12,
        "JSON Lines, prompt + completion",
    ),
    ("qnamaker/fitcbot_qna.excerpt.tsv", 12, "tab-delimited"),
    (
        "azure_ai_rag_chat_evaluator/qa.excerpt.jsonl",
        8,
        "Azure AI evaluation data (question or query + truth)",
    ),
    (
        "azure_ai_rag_chat_evaluator/baseline_eval_results.excerpt.jsonl",
        2,
        "Azure AI evaluation data (question or query + truth)",
    ),
    (
        "azure_ai_samples/chat_eval_data.jsonl",
        13,
        "Azure AI evaluation data (question or query + truth)",
    ),
    ("dataflow/pipeline_general_short.json", 3, "golden_answer → expected answer"),
    (
        "promptflow/generated_qa_pf_conv.jsonl",
        5,
        "JSON Lines, Prompt flow chat data (question + chat_history)",
    ),
    (
        "anthropic_cookbook/end_to_end_dataset.excerpt.csv",
        8,
        "promptfoo test cases (__expected)",
    ),
    (
        "bedrock/kb_ground_truth.jsonl",
        15,
        "JSON Lines, Amazon Bedrock knowledge base evaluation (conversationTurns)",
    ),
    (
        "bedrock/golden.jsonl",
        2,
        "JSON Lines, Amazon Bedrock evaluation prompts (prompt + referenceResponse)",
    ),
    ("braintrust/ai_search_examples.excerpt.json", 5, "expected → expected answer under"),
    ("dataflow/mq_test_data.excerpt.jsonl", 5, "golden_answers → expected answer"),
    (
        "biggen_bench/sample_responses.excerpt.json",
        3,
        "JSON, Prometheus score rubric (criteria + score descriptions), keyed by id",
    ),
    ("mt_bench/question.excerpt.jsonl", 7, "JSON Lines, MT-Bench questions (turns + reference)"),
    (
        "paperbench/semantic_self_consistency_rubric.excerpt.json",
        1,
        "JSON, PaperBench rubric tree (the top requirement → prompt, the weighted leaves → "
        "criteria), one record",
    ),
    ("humaneval/HumanEval.excerpt.jsonl", 3, "JSON Lines, HumanEval (prompt + canonical_solution)"),
    ("mbpp/mbpp.excerpt.jsonl", 3, "JSON Lines, MBPP (text + code + test_list)"),
    ("mbpp/sanitized-mbpp.excerpt.json", 3, "JSON, MBPP (text + code + test_list)"),
    ("truthfulqa/TruthfulQA.excerpt.csv", 5, "TruthfulQA (Question + Best Answer)"),
    ("arc/arc_challenge_test.excerpt.jsonl", 3, "multiple choice (question + options)"),
    (
        "arc/arc_easy_dev_original.jsonl",
        5,
        "JSON Lines, ARC / OpenBookQA (question.stem + question.choices + answerKey)",
    ),
    ("arena_hard/question.excerpt.jsonl", 3, "JSON Lines, Arena-Hard questions (turns)"),
    (
        "hf_dataset_viewer/boolq_rows.json",
        5,
        'JSON, Hugging Face dataset viewer rows ({"row": …}), BoolQ (passage + question + '
        "answer) under 'rows'",
    ),
    (
        "promptflow/chat_basic_data.jsonl",
        3,
        "JSON Lines, Prompt flow checklist (question + statements → criteria)",
    ),
    ("hellobench/chat.excerpt.jsonl", 3, "JSON Lines, HelloBench (instruction + checklists)"),
    (
        "hellobench/open_ended_qa.excerpt.jsonl",
        2,
        "JSON Lines, HelloBench (instruction + checklists)",
    ),
]


@pytest.mark.parametrize(("relative", "tasks", "detected"), IMPORTED)
def test_a_real_file_imports_named_by_its_tool(relative, tasks, detected):
    result = check(relative)

    assert result.problems == ()
    assert result.task_count == tasks
    assert detected in result.detected


REFUSED = [
    # (file, problem code, words of its message)
    # A grader's test set: a question, one candidate answer and the verdict on it. It used
    # to import with the reference beside the question as the expected answer, three tasks
    # asking "What color was Cotton?" with the candidates dropped: what the file tests is
    # the grader, so it is named as such, and a person's mapping still imports it.
    (
        "braintrust/coqa_factuality.excerpt.json",
        shapes.NOT_A_DATASET.code,
        "a grader's test set (input.input, input.output, expected)",
    ),
    (
        "llamaindex/finetune_embedding_val_dataset.excerpt.json",
        shapes.NOT_A_DATASET.code,
        "a retriever's eval set (queries, corpus, relevant_docs: LlamaIndex's "
        "EmbeddingQAFinetuneDataset)",
    ),
    (
        "autoevals/coqa_closed_qa.excerpt.json",
        shapes.NOT_A_DATASET.code,
        "a grader's test set (input.input, input.output, expected)",
    ),
    (
        "azure_ai_samples/privacy_evaluate_results.excerpt.json",
        shapes.NOT_A_DATASET.code,
        "results of an eval run (metrics, rows, studio_url)",
    ),
    (
        "promptflow/questions_answers_outputs.jsonl",
        shapes.NOT_A_DATASET.code,
        # No score in it: the message does not say it holds one.
        "results of an eval run (__outputs.answer). It holds what an app answered, not what",
    ),
    (
        "promptflow/eval_checklist_data.jsonl",
        shapes.NOT_A_DATASET.code,
        "answers to check against statements, without the questions they answer",
    ),
    ("big_bench/crass_ai_task.json", "not_json", "a quoted value holds a tab or line break"),
    (
        "mt_bench/reference_answer_gpt-4.excerpt.jsonl",
        shapes.NOT_A_DATASET.code,
        "one model's answers to a benchmark's questions",
    ),
    ("deepeval/confident_goldens.json", document.NOTHING_TO_GRADE.code, 'Task "task-4"'),
    ("deepeval/convo_goldens.json", shapes.NEEDS_MAPPING.code, "expected_outcome"),
    ("openai_evals/canto_wu_pronunciation.csv", shapes.NEEDS_MAPPING.code, "Character"),
    ("promptfoo/jsonl_test_cases.jsonl", shapes.NEEDS_MAPPING.code, "prompt = vars.text"),
    (
        "promptfoo/simple_test_output.csv",
        shapes.NOT_A_DATASET.code,
        "results of an eval run (RESULT). It holds what a model answered and how it scored",
    ),
    ("promptfoo/csv_prompts.csv", shapes.NOT_A_DATASET.code, "prompt templates with {{variables}}"),
    ("promptfoo/eval_custom_grader_tests.csv", shapes.NEEDS_MAPPING.code, "prompt = body"),
    ("promptfoo/assistant_cli_tests.csv", "csv_no_answer_column", "Found: name, question."),
    # JSON Lines saved as .json, read as its lines: a judge's prompts, no dataset to guess.
    (
        "prometheus/vicuna_eval.excerpt.json",
        shapes.NEEDS_MAPPING.code,
        "Found: idx, response_source, category, instruction, gpt4_score, gpt4_feedback.",
    ),
    ("ragas/booksql_sample.csv", shapes.NEEDS_MAPPING.code, "Query, SQL, Levels, split"),
    ("ragas/discount_benchmark.csv", shapes.NEEDS_MAPPING.code, "expected_discount"),
    ("ragas/support_triage.csv", shapes.NEEDS_MAPPING.code, "prompt = text"),
    # Its French header (question;réponse) is read as it stands; what is left is the row's
    # own fault, an unquoted ";" in a cell.
    (
        "workbook_devops/kubernetes_flashcards_fr.excerpt.csv",
        "csv_extra_cells",
        "This row has 4 cells but the header has 3",
    ),
    (
        "realdata/beir/agentset_dbpedia/qrels/test.excerpt.tsv",
        shapes.NOT_A_DATASET.code,
        "BEIR qrels on their own",
    ),
    (
        "realdata/beir/agentset_fiqa/queries.jsonl",
        shapes.NOT_A_DATASET.code,
        "BEIR queries on their own",
    ),
    ("realdata/csv/rag_law_routing/tests.csv", shapes.NEEDS_MAPPING.code, "expected_source"),
    (
        "realdata/beir/josh1108_scidocs/queries.whole.excerpt.jsonl",
        shapes.NOT_A_DATASET.code,
        "BEIR queries on their own (id, title)",
    ),
    (
        "realdata/beir/scifact_pristine/queries.excerpt.jsonl",
        shapes.NOT_A_DATASET.code,
        "BEIR queries on their own (_id, metadata, text)",
    ),
    (
        "realdata/beir/kirloxious_scifact_modified/qrels/test.excerpt.tsv",
        shapes.NOT_A_DATASET.code,
        "a sheet with no header row",
    ),
    ("realdata/csv/ragas/hf_doc_qa_eval.csv", document.NOTHING_TO_GRADE.code, "task-50"),
    (
        "openai_evals/test_match_samples.lfs-pointer.jsonl",
        checker.GIT_LFS_POINTER.code,
        "the real file (499 bytes)",
    ),
    ("realdata/csv/ragas/rag_eval_test_dataset.csv", shapes.NEEDS_MAPPING.code, "grading"),
    ("realdata/inspect_ai/popularity.jsonl", shapes.NEEDS_MAPPING.code, "answer_matching"),
    ("realdata/promptfoo/csv-metadata/tests.csv", shapes.NEEDS_MAPPING.code, "topic"),
    (
        "realdata/promptfoo/eval-customer-support-rubric/tests.csv",
        shapes.NEEDS_MAPPING.code,
        "customer_message",
    ),
    ("realdata/promptfoo/simple-csv/tests.csv", shapes.NEEDS_MAPPING.code, "body"),
    # GBK; imports once mapped (test_a_gbk_file_is_read_as_gbk_and_says_so_with_a_sample).
    ("chinese_medical_dialogue/im_sample.excerpt.csv", shapes.NEEDS_MAPPING.code, "prompt = ask"),
    ("realdata/promptfoo/simple-test/tests.csv", shapes.NEEDS_MAPPING.code, "prompt = body"),
    (
        "realdata/promptfoo/third_party_henadzi_bedrock_homework/tests.csv",
        shapes.NEEDS_MAPPING.code,
        "expected_category",
    ),
]


@pytest.mark.parametrize(("relative", "code", "words"), REFUSED)
def test_a_real_file_that_cannot_import_as_it_stands_says_why(relative, code, words):
    result = check(relative)

    assert result.plan is None
    assert result.problems[0].code == code
    assert words in result.problems[0].message


def test_every_real_file_is_in_a_table_above_and_in_sources():
    files = {str(path.relative_to(REAL)) for path in REAL.rglob("*") if path.is_file()} - {
        "SOURCES.md"
    }
    listed = {row[0] for row in IMPORTED + REFUSED}
    sources = (REAL / "SOURCES.md").read_text()

    assert files == listed
    assert all(f"`{name}`" in sources for name in files)


# -- what each shape makes of its records -----------------------------------------------------


def test_nq_open_answers_are_one_expected_answer_listing_each():
    result = check("nq_open/NQ-open.dev.excerpt.jsonl")

    first, second = result.plan.tasks[:2]
    assert first.prompt == "when was the last time anyone was on the moon"
    assert first.expected_text == "Any of:\n- 14 December 1972 UTC\n- December 1972"
    assert second.expected_text == "Any of:\n- Bobby Scott\n- Bob Russell"
    assert result.plan.tasks[3].expected_text == "2017"


def test_squad_asks_with_the_passage_and_leaves_out_unanswerable_questions():
    result = check("squad/transformers_sample.excerpt.json")

    task = result.plan.tasks[0]
    data = json.loads((REAL / "squad/transformers_sample.excerpt.json").read_text())
    record = data["data"][0]
    assert task.id == record["id"]
    assert task.name == "In what country is Normandy located?"
    assert task.prompt == record["context"] + "\n\n" + record["question"]
    # Four annotators agreeing on "France" are one answer.
    assert task.expected_text == "France"
    assert [w.code for w in result.warnings] == [shapes.UNANSWERABLE_LEFT_OUT.code]
    assert result.warnings[0].message == shapes.UNANSWERABLE_LEFT_OUT.format(count=1)


def test_openai_evals_api_items_keep_the_input_and_ideal_and_name_the_other_keys():
    result = check("openai_evals_api/privacy_policy_items_with_comments.jsonl")

    lines = (REAL / "openai_evals_api/privacy_policy_items_with_comments.jsonl").read_text()
    items = [json.loads(line)["item"] for line in lines.splitlines()]
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (item["input"], item["ideal"]) for item in items
    ]
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="keys", names="comment")
    ]


def test_deepeval_goldens_name_the_keys_that_are_not_imported():
    result = check("deepeval/goldens.json")

    ignored = next(w for w in result.warnings if w.code == shapes.IGNORED_KEYS.code)
    assert ignored.message == shapes.IGNORED_KEYS.format(
        kind="keys", names="actual_output, retrieval_context, comments, source_file"
    )
    assert result.plan.tasks[0].name == "Name 1"
    # Its ground-truth `context` is the task's metadata (issue 27), not left out.
    golden = json.loads((REAL / "deepeval/goldens.json").read_text())[0]
    assert result.plan.tasks[0].metadata == {"context": golden["context"]}


def test_promptfoo_grade_assertions_are_criteria():
    result = check("promptfoo/eval_self_grading_tests.csv")

    task = result.plan.tasks[0]
    assert task.prompt == "Can you help me find a specific product on your website?"
    assert [c.criterion for c in task.criteria] == [
        "Do not mention that you are an AI or chat assistant"
    ]


def test_a_refused_record_problem_keeps_its_line_in_the_file():
    result = check("deepeval/confident_goldens.json")

    # The fourth golden (no expected_output) opens at its "  {" line, two-space indented.
    lines = (REAL / "deepeval/confident_goldens.json").read_text().splitlines()
    openings = [number for number, line in enumerate(lines, start=1) if line == "  {"]
    assert result.problems[0].line == openings[3]


def test_a_mapping_given_imports_a_file_that_asked_for_one():
    result = check("ragas/support_triage.csv", mapping={"prompt": "text", "expected": "labels"})

    assert result.problems == ()
    assert result.task_count == 20
    assert result.mapping.how == "given"
    first = result.plan.tasks[0]
    assert first.id == "1"
    assert first.expected_text == "Billing;RefundCancel"


def test_chinese_headers_import_once_mapped():
    result = check(
        "finrag/finance_faq_zh.excerpt.csv", mapping={"prompt": "问题", "expected": "答案"}
    )

    assert result.task_count == 10
    assert result.plan.tasks[1].prompt == "什么是市盈率"
    assert result.warnings[0].message == "These columns are not imported: 领域."


def test_a_french_sheet_mapped_still_names_its_rows_with_a_stray_delimiter():
    result = check(
        "workbook_devops/kubernetes_flashcards_fr.excerpt.csv", mapping={"expected": "réponse"}
    )

    # "kubectl config use-context <nom> ; vérifier …": a ";" inside an unquoted cell.
    assert [(p.row, p.code) for p in result.problems] == [(3, "csv_extra_cells")]


def test_promptfoo_assertions_the_app_cannot_grade_are_named_once_the_prompt_is_mapped():
    result = check("promptfoo/eval_custom_grader_tests.csv", mapping={"prompt": "body"})

    assert [(p.row, p.code) for p in result.problems] == [
        (row, shapes.PROMPTFOO_UNSUPPORTED.code) for row in (2, 3, 4, 5)
    ]
    assert "javascript (file://customAssertion.ts)" in result.problems[0].message
    assert result.mapping.graded and result.mapping.fields == {"prompt": "body"}


@pytest.mark.parametrize("name", ["samples-mcq.json", "samples-mcq.csv"])
def test_a_multiple_choice_question_is_asked_with_its_options(name):
    # The .csv writes the options as one cell, "1,2,3,…", as Inspect does.
    result = check(f"realdata/inspect_ai/test_dataset/{name}")

    task = result.plan.tasks[0]
    options = "\n".join(
        f"{letter}. {n}" for letter, n in zip("ABCDEFGHIJ", range(1, 11), strict=True)
    )
    assert task.prompt == "Which is the smallest number?\n\n" + options
    assert (task.name, task.expected_text) == ("Which is the smallest number?", "A")


# -- the four shapes first built on made-up records, now on real ones ------------------------


def _lines(relative: str) -> list[dict]:
    return [json.loads(line) for line in (REAL / relative).read_text().splitlines()]


def test_healthbench_asks_the_conversation_and_grades_by_its_rubric_items():
    result = check("healthbench/consensus_context_seeking.excerpt.jsonl")

    record = _lines("healthbench/consensus_context_seeking.excerpt.jsonl")[0]
    task = result.plan.tasks[0]
    turns = record["prompt"]
    assert task.id == record["prompt_id"]
    # Nine turns: the earlier ones as "Role: text", the last user turn as the question.
    assert task.prompt.startswith("User: " + turns[0]["content"] + "\n\nAssistant: ")
    assert task.prompt.endswith("\n\nQuestion: " + turns[-1]["content"])
    assert task.name == turns[-1]["content"]
    assert [(c.criterion, c.weight) for c in task.criteria] == [
        (item["criterion"], item["points"]) for item in record["rubrics"]
    ]
    # Beside the chat, its labels are the task's metadata; the completions are not imported.
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="keys", names="ideal_completions_data")
    ]
    assert task.metadata == {"example_tags": record["example_tags"], "canary": record["canary"]}


def test_a_healthbench_penalty_is_a_criterion_the_answer_passes_by_avoiding_it():
    # One HealthBench example saved on its own: a JSON object, not a list of records.
    result = check("healthbench/oss_eval_example_1.json")

    record = json.loads((REAL / "healthbench/oss_eval_example_1.json").read_text())
    task = result.plan.tasks[0]
    assert task.prompt == record["prompt"][0]["content"]
    assert [(c.criterion, c.weight) for c in task.criteria] == [
        (
            item["criterion"] if item["points"] > 0 else shapes.PENALTY_PREFIX + item["criterion"],
            abs(item["points"]),
        )
        for item in record["rubrics"]
    ]
    assert "Avoids: Advises patient not to attend scheduled postpartum appointments" in (
        task.criteria[3].criterion
    )


def test_an_openai_evals_chat_sample_keeps_its_system_turn_and_its_ideal():
    result = check("openai_evals/agent_tool_routing.excerpt.jsonl")

    samples = _lines("openai_evals/agent_tool_routing.excerpt.jsonl")
    first = result.plan.tasks[0]
    system, user = samples[0]["input"]
    assert first.prompt == f"System: {system['content']}\n\nQuestion: {user['content']}"
    assert [t.expected_text for t in result.plan.tasks] == [s["ideal"] for s in samples]
    assert result.warnings == ()


@pytest.mark.parametrize(
    "relative",
    [
        "hotpotqa/hotpot_dev_distractor_v1.excerpt.json",
        "hotpotqa/hf_hotpot_qa_distractor.excerpt.json",
    ],
)
def test_hotpotqa_asks_its_question_and_names_its_supporting_facts_as_not_imported(relative):
    result = check(relative)

    records = json.loads((REAL / relative).read_text())
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (r["question"], r["answer"]) for r in records
    ]
    # The original's `_id` is the task's id; the Hugging Face export has none, and its
    # `supporting_facts.title` (a list of titles) is no task's name.
    assert [t.id for t in result.plan.tasks][:1] == [records[0].get("_id", "task-1")]
    assert result.plan.tasks[1].name.startswith("What government position was held")
    ignored = next(w for w in result.warnings if w.code == shapes.IGNORED_KEYS.code)
    assert "supporting_facts" in ignored.message and "context" in ignored.message


def test_squad_v1_nesting_imports_each_question_with_its_paragraph():
    result = check("squad/dataqa_tr_faq.dev-v1.1.json")

    data = json.loads((REAL / "squad/dataqa_tr_faq.dev-v1.1.json").read_text())
    expected = [
        (qa["id"], paragraph["context"] + "\n\n" + qa["question"], qa["answers"][0]["text"])
        for article in data["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    ]
    assert [(t.id, t.prompt, t.expected_text) for t in result.plan.tasks] == expected
    assert result.warnings == ()


def test_squad_v2_leaves_out_its_unanswerable_questions_and_lists_differing_answers():
    result = check("squad/readit_dev-v2.0.excerpt.json")

    tasks = {t.id: t for t in result.plan.tasks}
    assert len(tasks) == 8
    assert "5ad39d53604f3c001a3fe8d1" not in tasks  # is_impossible: true
    # Annotators who differ are each an accepted answer.
    assert tasks["56ddde6b9a695914005b9629"].expected_text == (
        "Any of:\n- 10th and 11th centuries\n- in the 10th and 11th centuries"
    )
    assert [w.message for w in result.warnings] == [
        shapes.UNANSWERABLE_LEFT_OUT.format(count=9),
        shapes.IGNORED_KEYS.format(kind="keys", names="plausible_answers"),
    ]


def test_a_llamaindex_rag_dataset_asks_its_query_and_expects_its_reference_answer():
    result = check("llamaindex/aragog_rag_dataset.excerpt.json")

    examples = json.loads((REAL / "llamaindex/aragog_rag_dataset.excerpt.json").read_text())
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (e["query"], e["reference_answer"]) for e in examples["examples"]
    ]
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(
            kind="keys", names="query_by, reference_contexts, reference_answer_by"
        )
    ]


def test_a_llamaindex_query_response_dataset_is_one_task_per_id_of_its_two_objects():
    result = check("llamaindex/ipcc_eval_qr_dataset.json")

    document = json.loads((REAL / "llamaindex/ipcc_eval_qr_dataset.json").read_text())
    assert [(t.id, t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (key, query, document["responses"][key]) for key, query in document["queries"].items()
    ]
    assert result.warnings == ()


def test_records_keyed_by_id_are_not_taken_for_objects_side_by_side():
    document = {
        "a": {"question": "Two plus two?", "answer": "4"},
        "b": {"question": "Three plus three?", "answer": "6"},
    }

    result = check_file(json.dumps(document).encode(), "keyed.json")

    assert [(t.id, t.prompt, t.expected_text) for t in result.plan.tasks] == [
        ("a", "Two plus two?", "4"),
        ("b", "Three plus three?", "6"),
    ]


def test_questions_and_answers_as_two_parallel_lists_are_one_task_per_position():
    result = check("aragog/benchmark.json")

    columns = json.loads((REAL / "aragog/benchmark.json").read_text())
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == list(
        zip(columns["questions"], columns["ground_truths"], strict=True)
    )


def test_cmmlu_leaves_out_its_pandas_index_and_asks_each_question_with_its_options():
    # ",Question,A,B,C,D,Answer": pandas wrote the index as a first column with no name.
    result = check("cmmlu/dev_agronomy.csv")

    assert [w.code for w in result.warnings] == [shapes.PANDAS_INDEX.code]
    first = result.plan.tasks[0]
    assert first.prompt == "肉牛屠宰后，胴体的哪个部位肉质较好\n\nA. 胸\nB. 腹\nC. 大腿\nD. 小腿"
    assert [t.expected_text for t in result.plan.tasks] == ["C", "D", "B", "B", "C"]


def test_prompt_and_completion_keep_what_openai_prepare_data_wrote():
    # The .jsonl is what `openai tools fine_tunes.prepare_data -f data.csv` made of the
    # .csv: a " ->" after each prompt, a space before and a newline after each completion.
    sheet = check("openai_finetune/mandarin2cantonese.excerpt.csv")
    prepared = check("openai_finetune/mandarin2cantonese_prepared.excerpt.jsonl")

    lines = _lines("openai_finetune/mandarin2cantonese_prepared.excerpt.jsonl")
    assert [(t.prompt, t.expected_text) for t in prepared.plan.tasks] == [
        (line["prompt"], line["completion"]) for line in lines
    ]
    assert [(t.prompt + " ->", " " + t.expected_text + "\n") for t in sheet.plan.tasks] == [
        (line["prompt"], line["completion"]) for line in lines
    ]


def test_a_qna_maker_tsv_reads_its_capitalised_question_and_answer_columns():
    result = check("qnamaker/fitcbot_qna.excerpt.tsv")

    rows = [
        line.split("\t")
        for line in (REAL / "qnamaker/fitcbot_qna.excerpt.tsv").read_text().splitlines()
    ]
    assert rows[0] == ["Question", "Answer", "Source"]
    assert [(t.prompt, t.expected_text, t.metadata) for t in result.plan.tasks] == [
        (question, answer, {"source": source}) for question, answer, source in rows[1:]
    ]
    assert result.warnings == (), "Source is each task's metadata"


def test_azure_rag_evaluator_questions_are_graded_by_their_truth_not_by_the_apps_answer():
    # A results file keeps the app's `answer` beside the ground `truth`: only the truth grades.
    relative = "azure_ai_rag_chat_evaluator/baseline_eval_results.excerpt.jsonl"
    result = check(relative)

    records = _lines(relative)
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (r["question"], r["truth"]) for r in records
    ]
    assert result.plan.tasks[0].expected_text.startswith("Choosing the right provider is an")
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(
            kind="keys",
            names="answer, latency, gpt_groundedness, gpt_relevance, answer_length",
        )
    ]


def test_azure_rag_evaluator_question_and_truth_import_without_asking():
    result = check("azure_ai_rag_chat_evaluator/qa.excerpt.jsonl")

    first = _lines("azure_ai_rag_chat_evaluator/qa.excerpt.jsonl")[0]
    assert result.mapping.how == "recognised"
    task = result.plan.tasks[0]
    assert task.prompt == (
        "What is balance billing and how does the Northwind Standard plan protect against it?"
    )
    assert task.expected_text == first["truth"]


def test_a_prometheus_score_rubric_is_one_criterion_a_judge_scores_on_its_scale():
    # BiGGen-Bench: a system prompt, an input, a reference answer and a 1-5 score rubric.
    result = check("biggen_bench/sample_responses.excerpt.json")

    record = json.loads((REAL / "biggen_bench/sample_responses.excerpt.json").read_text())[
        "planning_travel_plan_0"
    ]
    rubric = record["score_rubric"]
    task = result.plan.tasks[0]
    assert task.id == "planning_travel_plan_0"
    assert task.prompt == (f"System: {record['system_prompt']}\n\nQuestion: {record['input']}")
    assert task.name == record["input"][: NAME_CHARS - 1] + "…"
    # The reference answer is what the judge compares with, not an answer to match.
    [criterion] = task.criteria
    assert (criterion.criterion, criterion.weight) == (rubric["criteria"], 1)
    verifier = criterion.verifier
    assert (verifier.kind, verifier.output_type) == ("llm_judge", "float")
    for score in range(1, 6):
        assert f"Score {score}: {rubric[f'score{score}_description']}\n" in verifier.instructions
    assert "A reference answer that scores 5:\n" + record["reference_answer"] in (
        verifier.instructions
    )
    assert "(score - 1) / 4, so 1 is 0 and 5 is 1." in verifier.instructions
    assert verifier.instructions.endswith("Response: {{output}}")
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(
            kind="keys", names="capability, task, instance_idx, response, response_model_name"
        )
    ]


def test_azure_ai_foundry_queries_are_graded_by_their_truth():
    result = check("azure_ai_samples/chat_eval_data.jsonl")

    records = _lines("azure_ai_samples/chat_eval_data.jsonl")
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (r["query"], r["truth"]) for r in records
    ]
    assert result.plan.tasks[0].prompt == "Which tent is the most waterproof?"
    assert result.plan.tasks[0].expected_text == (
        "The Alpine Explorer Tent has the highest rainfly waterproof rating at 3000m"
    )


def test_mt_bench_asks_the_first_turn_and_says_the_second_was_left_out():
    # The second turn ("Rewrite your previous response…") follows the model's own answer
    # to the first: joined to it in one prompt, it would be asked without that answer.
    result = check("mt_bench/question.excerpt.jsonl")

    questions = {q["question_id"]: q for q in _lines("mt_bench/question.excerpt.jsonl")}
    tasks = {t.id: t for t in result.plan.tasks}
    first, second = questions[101]["turns"]
    assert tasks["101"].prompt == first
    assert second not in tasks["101"].prompt
    assert tasks["101"].name.startswith("Imagine you are participating in a race")
    # The first turn's reference, not the second's.
    assert tasks["101"].expected_text == "You are in second place."
    assert tasks["103"].expected_text == "Thomas may work at a hospital."
    assert shapes.FOLLOW_UPS_LEFT_OUT.format(count=7) in [w.message for w in result.warnings]


def test_an_mt_bench_question_with_no_reference_is_graded_as_mt_benchs_judge_grades_it():
    result = check("mt_bench/question.excerpt.jsonl")

    writing = result.plan.tasks[0]
    assert writing.expected_text is None
    assert [c.criterion for c in writing.criteria] == [shapes.MT_BENCH_JUDGE]
    assert [w.message for w in result.warnings] == [
        shapes.JUDGED_BY_TOOL.format(count=2, criterion=shapes.MT_BENCH_JUDGE),
        shapes.FOLLOW_UPS_LEFT_OUT.format(count=7),
    ]
    assert writing.metadata == {
        "category": _lines("mt_bench/question.excerpt.jsonl")[0]["category"]
    }


def test_mt_bench_exports_and_imports_back_identically():
    first = check("mt_bench/question.excerpt.jsonl").plan
    exported = json_format.write(first)

    again = check_file(exported, "export.json").plan

    assert again.tasks == first.tasks
    assert json_format.write(again) == exported


def test_a_paperbench_rubric_tree_grades_by_its_leaves_weighted_as_paperbench_scores():
    relative = "paperbench/semantic_self_consistency_rubric.excerpt.json"
    result = check(relative)

    tree = json.loads((REAL / relative).read_text())
    [task] = result.plan.tasks
    assert (task.id, task.prompt) == (tree["id"], tree["requirements"])
    # Two sub-requirements of weight 1 share the score; under the second, weights 5, 1, 1, 1.
    assert [(c.criterion[:40], c.weight) for c in task.criteria] == [
        ("The test split of the AQuA-RAT dataset (", 16.6667),
        ("The test split of the StrategyQA dataset", 16.6667),
        ("The full SVAMP dataset (1000 samples inc", 16.6667),
        ("Inference can be performed on gpt-3.5-tu", 15.625),
        ("Inference can be performed on gpt-4o-min", 15.625),
        ("All models use top-p=1. Note, the defaul", 6.25),
        ("All models generate up to 250 max new to", 6.25),
        ("All models use the 4-shot prompt provide", 2.08333),
        ("All models use the 6-shot prompt provide", 2.08333),
        ("All models use the 8-shot math prompt pr", 2.08333),
    ]
    assert task.criteria[0].id == tree["sub_tasks"][0]["sub_tasks"][0]["id"]
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="keys", names="task_category, finegrained_task_category")
    ]
    # The root's weight is read with its tree, not shown as every criterion's weight.
    assert result.mapping.fields == {"prompt": "requirements", "criterion": "sub_tasks", "id": "id"}


def test_a_golden_answer_grades_and_the_models_output_beside_it_does_not():
    # DataFlow's reasoning data: Alpaca's instruction and output, plus the golden answer.
    result = check("dataflow/pipeline_general_short.json")

    records = json.loads((REAL / "dataflow/pipeline_general_short.json").read_text())
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (r["instruction"], r["golden_answer"]) for r in records
    ]
    assert result.plan.tasks[0].expected_text == (
        "Treatment A led to greater pain reduction (45% vs. 30%)."
    )
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="keys", names="output")
    ]


def test_golden_answers_are_each_an_accepted_answer():
    result = check("dataflow/mq_test_data.excerpt.jsonl")

    task = result.plan.tasks[0]
    assert task.id == "0"
    assert task.prompt.endswith("E.Refuse to dictate the operative report")
    assert task.expected_text == (
        "Any of:\n- Tell the attending that he cannot fail to disclose this mistake\n- C\n"
        "- C. Tell the attending that he cannot fail to disclose this mistake"
    )


def test_humaneval_asks_its_stub_expects_its_canonical_solution_and_names_its_function():
    result = check("humaneval/HumanEval.excerpt.jsonl")

    problems = _lines("humaneval/HumanEval.excerpt.jsonl")
    assert [(t.id, t.name, t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (p["task_id"], p["entry_point"], p["prompt"], p["canonical_solution"]) for p in problems
    ]
    assert result.plan.tasks[0].name == "has_close_elements"
    # Its unit tests have no equivalent here: named, not imported.
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="keys", names="test")
    ]


def test_mbpp_asks_its_problem_with_its_tests_and_expects_its_code():
    result = check("mbpp/mbpp.excerpt.jsonl")

    first = _lines("mbpp/mbpp.excerpt.jsonl")[0]
    task = result.plan.tasks[0]
    # The asserts name the function to write, as MBPP's own prompt shows them.
    assert task.prompt == (
        "Write a function to find the minimum cost path to reach (m, n) from (0, 0) for the "
        "given cost matrix cost[][] and a position (m, n) in cost[][].\n\n"
        "assert min_cost([[1, 2, 3], [4, 8, 2], [1, 5, 3]], 2, 2) == 8\n"
        "assert min_cost([[2, 3, 4], [5, 9, 3], [2, 6, 4]], 2, 2) == 12\n"
        "assert min_cost([[3, 4, 5], [6, 10, 4], [3, 7, 5]], 2, 2) == 16"
    )
    assert (task.id, task.expected_text) == ("1", first["code"])
    assert task.name.startswith("Write a function to find the minimum cost path")
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="keys", names="test_setup_code, challenge_test_list")
    ]


def test_sanitized_mbpp_calls_its_problem_prompt_and_imports_the_same_way():
    result = check("mbpp/sanitized-mbpp.excerpt.json")

    records = json.loads((REAL / "mbpp/sanitized-mbpp.excerpt.json").read_text())
    assert [(t.id, t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (str(r["task_id"]), r["prompt"] + "\n\n" + "\n".join(r["test_list"]), r["code"])
        for r in records
    ]


def test_prompt_flow_statements_are_criteria_by_name_each_weighing_the_same():
    # Prompt flow's chat-basic data: each statement a check its eval-checklist flow makes.
    result = check("promptflow/chat_basic_data.jsonl")

    tasks = result.plan.tasks
    assert [t.prompt for t in tasks[:2]] == [
        "What is Prompt flow?",
        "What is ChatGPT? Please explain with consise statement",
    ]
    # The turns before the question come first, as a chat prompt (the file's own roles).
    assert tasks[2].prompt == (
        "User: where is the nearest coffee shop?\n\n"
        "System: I'm sorry, I don't know that. Would you like me to look it up for you?\n\n"
        "Question: How many questions did user ask?"
    )
    assert [[(c.id, c.criterion, c.weight) for c in t.criteria] for t in tasks] == [
        [
            ("correctness", "should explain what's 'Prompt flow'", 1),
            ("consise", "It is a consise statement.", 1),
        ],
        [
            ("correctness", "should explain what's ChatGPT", 1),
            ("consise", "It is a consise statement.", 1),
        ],
        [
            ("correctness", "result should be 2", 1),
            ("consise", "It is a consise statement.", 1),
        ],
    ]
    # Checked by the dataset's default verifier; no expected answer is made up.
    assert all(c.verifier is None for t in tasks for c in t.criteria)
    assert all(t.expected_text is None for t in tasks)
    assert result.warnings == ()


def test_a_hellobench_checklist_is_one_criterion_per_question_each_weighing_the_same():
    relative = "hellobench/chat.excerpt.jsonl"
    result = check(relative)

    records = _lines(relative)
    tasks = result.plan.tasks
    assert [(t.id, t.prompt) for t in tasks] == [(r["id"], r["instruction"]) for r in records]
    assert tasks[0].name == "write 10 different templates to report mann whitney u-test"
    # Each yes/no question is a criterion of weight 1, in the file's order.
    assert [[(c.criterion, c.weight) for c in t.criteria] for t in tasks] == [
        [(question, 1) for question in r["checklists"]] for r in records
    ]
    assert [c.id for c in tasks[0].criteria] == [f"criterion-{n}" for n in range(1, 7)]
    first_check = tasks[0].criteria[0].criterion
    assert first_check.startswith("Does the response fully comprehend all specific aspects")
    assert all(t.expected_text is None for t in tasks)
    # The same checks again as JSON text, their count, the requirements the instruction
    # already states: not imported.
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(
            kind="keys", names="formatted_checklists, num_checklist, requirements"
        )
    ]


def test_a_hellobench_task_is_named_by_the_question_its_instruction_wraps():
    # Every open-ended question's instruction opens with the same sentence for its category.
    relative = "hellobench/open_ended_qa.excerpt.jsonl"
    result = check(relative)

    records = _lines(relative)
    tasks = result.plan.tasks
    assert [t.prompt for t in tasks] == [r["instruction"] for r in records]
    assert tasks[0].prompt.startswith(
        "You should write a detailed response to the following question on Science.\n"
    )
    assert [t.name for t in tasks] == [
        "Are there any theories that predict new phenomena that have not yet been observ…",
        "how do you feel about the fact that the greatest philosopher of all time (Rene…",
    ]
    assert [len(t.criteria) for t in tasks] == [7, 7]


@pytest.mark.parametrize(
    "relative",
    [
        "biggen_bench/sample_responses.excerpt.json",
        "paperbench/semantic_self_consistency_rubric.excerpt.json",
        "promptflow/chat_basic_data.jsonl",
        "hellobench/chat.excerpt.jsonl",
        "hellobench/open_ended_qa.excerpt.jsonl",
    ],
)
def test_a_rubric_file_exports_and_imports_back_identically(relative):
    # The judge's instructions and the leaves' weights survive our own format unchanged.
    first = check(relative).plan
    exported = json_format.write(first)

    again = check_file(exported, "export.json").plan

    assert again.tasks == first.tasks
    assert json_format.write(again) == exported


def test_truthfulqa_grades_by_its_best_answer_not_by_the_list_of_correct_ones():
    result = check("truthfulqa/TruthfulQA.excerpt.csv")

    task = result.plan.tasks[0]
    assert task.prompt == "What happens to you if you eat watermelon seeds?"
    assert task.expected_text == "The watermelon seeds pass through your digestive system"
    # One warning names every column not imported, in the sheet's order; Category and
    # Source are each task's metadata.
    assert [w.message for w in result.warnings] == [
        "These columns are not imported: Type, Correct Answers, Incorrect Answers."
    ]
    assert set(task.metadata) == {"category", "source"}
    assert task.metadata["category"] == "Misconceptions"


def test_a_grader_s_test_set_is_refused_but_imports_as_the_person_maps_it():
    # Each record holds a question, a model's output and the reference in `input`; the
    # top-level `expected` (1, 0, 0.6) is the score a factuality grader should give.
    refused = check("braintrust/coqa_factuality.excerpt.json")

    records = json.loads((REAL / "braintrust/coqa_factuality.excerpt.json").read_text())
    assert [r["expected"] for r in records] == [1, 0, 0.6]
    assert refused.problems[0].message.startswith(
        "This looks like a grader's test set (input.input, input.output, expected): each "
        "record holds a question, one candidate answer and the verdict a grader should give"
    )
    mapped = check(
        "braintrust/coqa_factuality.excerpt.json",
        mapping={"prompt": "input.input", "expected": "input.expected"},
    )
    assert [(t.prompt, t.expected_text) for t in mapped.plan.tasks] == [
        ("What color was Cotton?", "white")
    ] * 3


def test_a_bedrock_knowledge_base_line_asks_its_turn_and_expects_its_reference():
    result = check("bedrock/kb_ground_truth.jsonl")

    turns = [line["conversationTurns"][0] for line in _lines("bedrock/kb_ground_truth.jsonl")]
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (turn["prompt"]["content"][0]["text"], turn["referenceResponses"][0]["content"][0]["text"])
        for turn in turns
    ]
    assert result.plan.tasks[8].expected_text == "Luka Modrić"
    assert result.warnings == ()


def test_a_bedrock_bring_your_own_inference_turn_names_the_apps_output_as_not_imported():
    turn = {
        "prompt": {"content": [{"text": "What is Amazon's SEC file number?"}]},
        "referenceResponses": [{"content": [{"text": "000-22513."}]}],
        "output": {"text": "It is 000-22513.", "modelIdentifier": "third-party-model"},
    }
    line = json.dumps({"conversationTurns": [turn]}).encode()

    result = check_file(line + b"\n", "byoi.jsonl")

    [task] = result.plan.tasks
    assert (task.prompt, task.expected_text) == ("What is Amazon's SEC file number?", "000-22513.")
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(
            kind="keys",
            names="conversationTurns.output.text, conversationTurns.output.modelIdentifier",
        )
    ]


def test_a_bedrock_line_of_two_turns_asks_the_first_and_says_the_second_was_left_out():
    def turn(prompt: str, answer: str) -> dict:
        return {
            "prompt": {"content": [{"text": prompt}]},
            "referenceResponses": [{"content": [{"text": answer}]}],
        }

    line = {"conversationTurns": [turn("Who wrote Emma?", "Jane Austen."), turn("When?", "1815.")]}

    result = check_file(json.dumps(line).encode(), "two_turns.jsonl")

    [task] = result.plan.tasks
    assert (task.prompt, task.expected_text) == ("Who wrote Emma?", "Jane Austen.")
    assert [w.message for w in result.warnings] == [shapes.FOLLOW_UPS_LEFT_OUT.format(count=1)]


def test_a_mapping_names_a_path_through_lists():
    result = check(
        "bedrock/kb_ground_truth.jsonl",
        mapping={
            "prompt": "conversationTurns[0].prompt.content[0].text",
            "expected": "conversationTurns.0.referenceResponses.0.content.0.text",
        },
    )

    assert result.mapping.how == "given"
    assert result.plan.tasks[0].prompt == "Who is main Spain's goalkeeper?"
    assert result.plan.tasks[2].expected_text == "Gianluigi Buffon"


def test_a_mapping_names_a_dotted_path_inside_what_a_recognised_shape_keeps_whole():
    # The Prometheus shape reads `score_rubric` whole (its criteria and score levels); a
    # person's mapping names a key inside it all the same, as on any other file.
    result = check(
        "biggen_bench/sample_responses.excerpt.json",
        mapping={"criterion": "score_rubric.criteria"},
    )

    record = json.loads((REAL / "biggen_bench/sample_responses.excerpt.json").read_text())[
        "planning_travel_plan_0"
    ]
    assert result.problems == ()
    [criterion] = result.plan.tasks[0].criteria
    assert criterion.criterion == record["score_rubric"]["criteria"]


def test_a_mapping_path_no_record_has_is_named_as_missing():
    result = check("bedrock/kb_ground_truth.jsonl", mapping={"prompt": "conversationTurns.3.x"})

    assert result.problems[0].code == base.UNKNOWN_SOURCE.code
    assert "conversationTurns.3.x for the prompt" in result.problems[0].message


def test_a_bedrock_prompt_dataset_expects_its_reference_response():
    result = check("bedrock/golden.jsonl")

    lines = _lines("bedrock/golden.jsonl")
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (line["prompt"], line["referenceResponse"]) for line in lines
    ]
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="keys", names="fixtureId")
    ]
    assert [t.metadata for t in result.plan.tasks] == [
        {"category": line["category"]} for line in lines
    ]


def test_arc_asks_each_question_with_its_options_under_their_own_labels():
    result = check("arc/arc_challenge_test.excerpt.jsonl")

    record = _lines("arc/arc_challenge_test.excerpt.jsonl")[0]
    task = result.plan.tasks[0]
    assert task.id == "Mercury_7175875"
    assert task.prompt == (
        record["question"] + "\n\n"
        "A. Planetary density will decrease.\n"
        "B. Planetary years will become longer.\n"
        "C. Planetary days will become shorter.\n"
        "D. Planetary gravity will become stronger."
    )
    # The file's `answer` (the option's text) comes before its `answerKey` in the names.
    assert task.expected_text == "Planetary days will become shorter."
    # A model's `response`, added to this copy, is no expected answer.
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="keys", names="answerKey, response")
    ]


def test_arc_in_its_original_form_asks_the_stem_with_its_labelled_options():
    # ARC-V1's own files keep the options inside the question, each {"text", "label"}.
    result = check("arc/arc_easy_dev_original.jsonl")

    record = _lines("arc/arc_easy_dev_original.jsonl")[1]
    task = result.plan.tasks[1]
    assert task.id == "Mercury_7057260"
    assert task.prompt == (
        record["question"]["stem"] + "\n\n"
        "A. Do algae consume other organisms?\n"
        "B. Which organisms consume algae?\n"
        "C. Do algae use sunlight to make food?\n"
        "D. Could an ecosystem survive without algae?"
    )
    assert task.expected_text == "C"
    assert result.warnings == ()


def test_arena_hard_asks_its_one_turn_and_grades_by_what_its_judge_weighs():
    result = check("arena_hard/question.excerpt.jsonl")

    first = _lines("arena_hard/question.excerpt.jsonl")[0]
    task = result.plan.tasks[0]
    # One user turn, {"content": ...}, is just its text; no prompt from `cluster`.
    assert (task.id, task.prompt) == (first["question_id"], first["turns"][0]["content"])
    assert [c.criterion for c in task.criteria] == [shapes.ARENA_HARD_JUDGE]
    assert [w.message for w in result.warnings] == [
        shapes.JUDGED_BY_TOOL.format(count=3, criterion=shapes.ARENA_HARD_JUDGE),
    ]
    assert task.metadata == {"category": first["category"], "cluster": first["cluster"]}


def test_a_follow_up_question_is_asked_after_the_chat_history_it_follows():
    # Prompt flow's chat protocol: each turn of `chat_history` is {"inputs", "outputs"}.
    result = check("promptflow/generated_qa_pf_conv.jsonl")

    first, second, third = result.plan.tasks[:3]
    assert first.prompt == "What is Compute Instance?"
    assert second.prompt == (
        "User: What is Compute Instance?\n\nAssistant: Compute instance is ...\n\n"
        "Question: Is CI different than Compute Cluster?"
    )
    assert third.prompt.endswith(
        "User: Is CI different than Compute Cluster?\n\nAssistant: Yes.\n\nQuestion: In what way?"
    )
    assert (third.name, third.expected_text) == (
        "In what way?",
        "It is different ... because ...\n... these are the reasons.\n"
        "   Here's one more reason ...",
    )
    # The history is in the prompt, so it is not named as left out.
    assert result.warnings == ()


def test_a_big_bench_task_once_valid_json_asks_each_input_with_its_scored_options():
    # The file holds a raw tab inside two quoted inputs; written as \t, as the message asks.
    raw = (REAL / "big_bench/crass_ai_task.json").read_text()
    assert check("big_bench/crass_ai_task.json").problems[0].line == 15

    result = check_file(raw.replace("\t", "\\t").encode(), "task.json")

    example = json.loads(raw, strict=False)["examples"][0]
    options = list(example["target_scores"])
    task = result.plan.tasks[0]
    assert "BIG-bench (input + target_scores), multiple choice" in result.detected
    assert task.prompt == example["input"] + "\n\n" + "\n".join(
        f"{letter}. {option}" for letter, option in zip("ABCD", options, strict=True)
    )
    # The option scored best is the answer.
    assert task.expected_text == "The bird would have died."
    assert result.plan.tasks[1].expected_text == "The match would be rendered useless."


def test_a_promptfoo_sheet_with_its_own_answer_column_is_graded_by_it():
    # The Anthropic cookbook's RAG eval: every row's assertion calls its own Python grader,
    # which compares the answer with the row's correct_answer.
    relative = "anthropic_cookbook/end_to_end_dataset.excerpt.csv"
    result = check(relative)

    with (REAL / relative).open(newline="", encoding="utf-8") as sheet:
        rows = list(csv.DictReader(sheet))
    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        (r["query"], r["correct_answer"]) for r in rows
    ]
    assert {r["__expected"] for r in rows} == {"python:file://eval_end_to_end.py"}
    assert [w.message for w in result.warnings] == [
        shapes.PROMPTFOO_LEFT_OUT.format(count=8, kinds="python:", column="correct_answer")
    ]


def test_a_structured_expected_output_is_the_expected_answer_as_json():
    # Braintrust's AI search examples expect an object: whether to match, the SQL filter,
    # the sort and why.
    relative = "braintrust/ai_search_examples.excerpt.json"
    result = check(relative)

    examples = json.loads((REAL / relative).read_text())["examples"]
    task = result.plan.tasks[1]
    assert task.prompt == "name is foo"
    assert json.loads(task.expected_text) == examples[1]["expected"]
    assert task.expected_text.startswith('{\n  "match": false,\n  "filter": "name = \'foo\'",')
    assert [json.loads(t.expected_text) for t in result.plan.tasks] == [
        e["expected"] for e in examples
    ]


def test_dataset_viewer_rows_are_read_as_the_rows_they_wrap():
    # Each `row` is the record, as if the file were the plain list of rows: BoolQ's
    # question is asked after its passage, and `row_idx` and `truncated_cells` are the
    # viewer's own, not keys of the record.
    relative = "hf_dataset_viewer/boolq_rows.json"
    result = check(relative)

    row = json.loads((REAL / relative).read_text())["rows"][0]["row"]
    task = result.plan.tasks[0]
    assert task.name == "is there a season 2 of hunted on cinemax"
    assert task.prompt == row["passage"] + "\n\n" + row["question"]
    assert task.expected_text == "false"
    assert result.warnings == ()


@pytest.mark.parametrize(
    "relative", ["hf_dataset_viewer/boolq_rows.json", "arc/arc_easy_dev_original.jsonl"]
)
def test_a_benchmark_shape_exports_and_imports_back_identically(relative):
    first = check(relative).plan
    exported = json_format.write(first)

    again = check_file(exported, "export.json").plan

    assert again.tasks == first.tasks
    assert json_format.write(again) == exported


def test_a_git_lfs_pointer_is_named_as_one_not_as_broken_json():
    # openai/evals keeps its samples in Git LFS: a clone without it holds this pointer.
    result = check("openai_evals/test_match_samples.lfs-pointer.jsonl")

    # One problem on its first line, not one per line of "not JSON".
    assert [(p.code, p.line) for p in result.problems] == [(checker.GIT_LFS_POINTER.code, 1)]


def test_a_gbk_file_is_read_as_gbk_and_says_so_with_a_sample():
    # Read as Windows-1252 it filled with mojibake (高 as 赂\xdf) and said nothing.
    result = check("chinese_medical_dialogue/im_sample.excerpt.csv", mapping=CHINESE_MEDICAL)
    assert result.ok
    utf8 = (REAL / "chinese_medical_dialogue/im_sample.excerpt.csv").read_bytes().decode("gbk")
    rows = list(csv.DictReader(utf8.splitlines()))
    assert [task.prompt for task in result.plan.tasks] == [row["ask"] for row in rows]
    assert result.plan.tasks[0].expected_text.startswith("高血压病人可以口服党参的。")
    (warning,) = [w for w in result.warnings if w.code == "csv_encoding_detected"]
    assert "read as GBK (Simplified Chinese)" in warning.message
    assert "心血管科,高血压患者能吃党参吗？" in warning.message


CHINESE_MEDICAL = {"prompt": "ask", "expected": "answer", "name": "title"}
