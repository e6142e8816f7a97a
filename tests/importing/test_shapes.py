"""Other tools' shapes, one by one: what each record becomes, and what is refused and why.

The files under tests/files/real (test_real_files.py) prove these on real data; these tests
hold each decision on the smallest file that shows it.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from datasets_app.importing import aliases, columns, document, json_format, shapes, spec
from datasets_app.importing.checker import check_file
from datasets_app.importing.csv_format import write as write_csv
from datasets_app.importing.spec import CheckOptions


def check(name: str, data: bytes | str, **options):
    raw = data.encode() if isinstance(data, str) else data
    return check_file(raw, name, options=CheckOptions(**options))


def lines(*records: dict) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def only(result):
    assert len(result.problems) == 1, result.problems
    return result.problems[0]


# -- chat prompts -----------------------------------------------------------------------------

CHAT = [
    {"role": "system", "content": "You are a careful pharmacist."},
    {"role": "user", "content": "Can I take ibuprofen?"},
    {"role": "assistant", "content": "What else are you taking?"},
    {"role": "user", "content": "Only aspirin.\nTwice a day."},
]


def test_a_chat_prompt_is_the_conversation_with_the_last_user_turn_as_its_question():
    result = check("evals.jsonl", lines({"input": CHAT, "ideal": "Ask a doctor first."}))

    task = result.plan.tasks[0]
    assert task.prompt == (
        "System: You are a careful pharmacist.\n\n"
        "User: Can I take ibuprofen?\n\n"
        "Assistant: What else are you taking?\n\n"
        "Question: Only aspirin.\nTwice a day."
    )
    assert task.name == "Only aspirin."
    assert "OpenAI evals (input + ideal)" in result.detected


def test_a_single_user_turn_is_just_its_text():
    result = check("t.jsonl", lines({"input": [{"role": "user", "content": "Hi?"}], "target": "x"}))

    assert result.plan.tasks[0].prompt == "Hi?"


def test_content_parts_are_joined_and_an_image_part_is_named_on_its_line():
    parts = [{"type": "text", "text": "Describe"}, {"type": "text", "text": "this."}]
    image = [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]
    result = check(
        "t.jsonl",
        lines(
            {"input": [{"role": "user", "content": parts}], "ideal": "ok"},
            {"input": [{"role": "user", "content": image}], "ideal": "ok"},
        ),
    )

    problem = only(result)
    assert (problem.code, problem.line) == (shapes.CHAT_PART_NOT_TEXT.code, 2)
    assert "image_url" in problem.message


@pytest.mark.parametrize("name", ["t.jsonl", "t.json"])
def test_a_file_whose_every_record_is_refused_names_each_and_not_an_empty_file(name):
    image = [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]
    records = [{"input": [{"role": "user", "content": image}], "ideal": "ok"}] * 2
    data = lines(*records) if name.endswith(".jsonl") else json.dumps(records, indent=1)

    result = check(name, data)

    # Each record's own problem says why it is refused; "the file has no tasks" would not.
    assert [p.code for p in result.problems] == [shapes.CHAT_PART_NOT_TEXT.code] * 2
    assert all(p.line for p in result.problems)


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_a_chat_prompt_exports_and_imports_back_identically(fmt):
    first = check("evals.jsonl", lines({"input": CHAT, "ideal": "Ask a doctor first."})).plan
    if fmt == "csv":
        exported, _ = write_csv(first)
    else:
        exported = json_format.write(first)
    name = f"export.{'json' if fmt == 'jsonl' else fmt}"

    again = check(name, exported).plan

    assert again.tasks == first.tasks
    tasks = json_format.to_document(first)["tasks"]
    assert json_format.to_document(again)["tasks"] == tasks


# -- HealthBench rubrics ----------------------------------------------------------------------


def test_healthbench_rubrics_are_criteria_and_a_penalty_is_a_criterion_to_avoid():
    record = {
        "prompt": CHAT[1:2],
        "rubrics": [
            {"criterion": "Advises checking for interactions.", "points": 7, "tags": ["a"]},
            {"criterion": "Recommends a double dose.", "points": -8, "tags": ["b"]},
        ],
        "prompt_id": "hb-1",
        "example_tags": ["theme:drugs"],
    }

    result = check("healthbench.jsonl", lines(record))

    task = result.plan.tasks[0]
    assert task.id == "hb-1"
    assert [(c.criterion, c.weight) for c in task.criteria] == [
        ("Advises checking for interactions.", 7),
        (f"{shapes.PENALTY_PREFIX}Recommends a double dose.", 8),
    ]
    assert "HealthBench (chat prompt + rubrics)" in result.detected
    assert result.warnings == ()
    assert task.metadata == {"example_tags": ["theme:drugs"]}


def test_a_score_rubric_keeps_a_weight_the_record_gives():
    rubric = {"criteria": "Is it kind?", "score1_description": "No.", "score2_description": "Yes."}
    record = {"input": "Greet me.", "score_rubric": rubric, "weight": 3}

    result = check("rubric.jsonl", lines(record))

    [criterion] = result.plan.tasks[0].criteria
    assert (criterion.criterion, criterion.weight) == ("Is it kind?", 3)
    assert "(score - 1) / 1, so 1 is 0 and 2 is 1." in criterion.verifier.instructions
    assert "reference answer" not in criterion.verifier.instructions


def _requirement(text: str, weight, *subs: dict) -> dict:
    return {"id": text.lower(), "requirements": text, "weight": weight, "sub_tasks": list(subs)}


def test_a_requirement_tree_is_its_leaves_weighted_by_their_share_of_the_score():
    tree = _requirement(
        "Reproduced",
        1,
        _requirement("Data", 1, _requirement("A", 1), _requirement("B", 3)),
        _requirement("Runs", 3),
    )

    result = check("rubric.json", json.dumps(tree))

    [task] = result.plan.tasks
    assert task.prompt == "Reproduced"
    assert [(c.id, c.criterion, c.weight) for c in task.criteria] == [
        ("a", "A", 6.25),
        ("b", "B", 18.75),
        ("runs", "Runs", 75),
    ]


@pytest.mark.parametrize("weight", [0, -1, "2", None])
def test_a_requirement_whose_weight_is_no_positive_number_is_named(weight):
    tree = _requirement("Reproduced", 1, _requirement("A", 1), _requirement("B", weight))

    result = check("rubric.json", json.dumps(tree))

    assert result.plan is None
    [problem] = [p for p in result.problems if p.code == shapes.REQUIREMENT_WEIGHT.code]
    assert problem.message == shapes.REQUIREMENT_WEIGHT.format(
        requirement="B", weight=json.dumps(weight), source="sub_tasks"
    )


# -- other tools' records ---------------------------------------------------------------------


def test_langsmith_inputs_and_outputs():
    records = [
        {"inputs": {"question": "Where is Kilimanjaro?"}, "outputs": {"answer": "Tanzania."}},
        {"inputs": {"question": "Lowest point?"}, "outputs": {"answer": "The Dead Sea."}},
    ]

    result = check("langsmith.json", json.dumps(records))

    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        ("Where is Kilimanjaro?", "Tanzania."),
        ("Lowest point?", "The Dead Sea."),
    ]
    assert "LangSmith examples (inputs + outputs)" in result.detected


def test_langsmith_single_keys_of_any_name_are_the_prompt_and_the_answer():
    record = {"inputs": {"input": "2+2?"}, "outputs": {"output": "4"}, "metadata": {"s": 1}}

    result = check("ls.jsonl", lines(record))

    assert (result.plan.tasks[0].prompt, result.plan.tasks[0].expected_text) == ("2+2?", "4")
    assert result.warnings == () and result.plan.tasks[0].metadata == {"s": 1}


def test_promptfoo_vars_and_assertions():
    record = {
        "vars": {"question": "Say hi in French"},
        "assert": [
            {"type": "equals", "value": "Bonjour"},
            {"type": "llm-rubric", "value": "Is polite", "weight": 2},
        ],
    }

    task = check("cases.jsonl", lines(record)).plan.tasks[0]

    assert task.prompt == "Say hi in French"
    assert (task.expected_text, task.expected_verifier.kind) == ("Bonjour", "exact_match")
    assert [(c.criterion, c.weight) for c in task.criteria][-1] == ("Is polite", 2)


def test_a_promptfoo_assertion_without_an_equivalent_is_named_on_its_line():
    record = {"vars": {"question": "q"}, "assert": [{"type": "contains", "value": "x"}]}

    fine = {"vars": {"question": "ok"}, "assert": [{"type": "equals", "value": "ok"}]}
    problem = only(check("cases.jsonl", lines(fine, record)))

    assert (problem.code, problem.line) == (shapes.PROMPTFOO_UNSUPPORTED.code, 2)
    assert problem.message.startswith("The promptfoo assertion contains (x)")


# One promptfoo rule for CSV, JSON and YAML (issue 26): the same assertion reads the same
# whether it is a sheet's `__expected` cell or an `assert` of a test case.
@pytest.mark.parametrize(
    ("assertion", "expected", "criterion", "unsupported"),
    [
        ("equals:4", "4", None, None),
        ("What is 2+2: four", "What is 2+2: four", None, None),
        ("llm-rubric: Is polite", None, "Is polite", None),
        ("icontains:bonjour", None, None, "The promptfoo assertion icontains (bonjour)"),
        ("is-json", None, None, "The promptfoo assertion is-json ()"),
    ],
)
def test_a_promptfoo_assertion_reads_the_same_in_a_sheet_and_in_json(
    assertion, expected, criterion, unsupported
):
    sheet = write_csv_rows(["prompt", "__expected"], ["Say it", assertion])
    record = {"vars": {"question": "Say it"}, "assert": [assertion]}

    for result in (check("t.csv", sheet), check("cases.jsonl", lines(record))):
        if unsupported:
            assert [p.code for p in result.problems] == [shapes.PROMPTFOO_UNSUPPORTED.code]
            assert result.problems[0].message.startswith(unsupported)
            continue
        (task,) = result.plan.tasks
        assert task.expected_text == expected
        assert [c.criterion for c in task.criteria if c.criterion == criterion] == (
            [criterion] if criterion else []
        )


def write_csv_rows(*rows: list[str]) -> bytes:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode()


def test_alpaca_instruction_and_input_are_one_prompt():
    record = {"instruction": "Translate to French.", "input": "Good morning", "output": "Bonjour"}

    task = check("alpaca.json", json.dumps([record])).plan.tasks[0]

    assert task.prompt == "Translate to French.\n\nGood morning"
    assert task.expected_text == "Bonjour"


def test_a_target_conversation_is_what_the_assistant_says():
    record = {
        "input": [{"role": "user", "content": "Greet me."}],
        "expected_output": [{"role": "assistant", "content": "Hello!"}],
    }

    assert check("t.jsonl", lines(record)).plan.tasks[0].expected_text == "Hello!"


def test_prompt_and_completion():
    result = check("ft.jsonl", lines({"prompt": "2+2=", "completion": " 4"}))

    assert result.plan.tasks[0].expected_text == " 4"
    assert "prompt + completion" in result.detected


def test_openai_ideal_list_is_any_of_them():
    task = check("e.jsonl", lines({"input": "Pick a primary colour", "ideal": ["red", "blue"]}))

    assert task.plan.tasks[0].expected_text == "Any of:\n- red\n- blue"


def test_squad_nesting_flattens_to_one_task_per_question_with_its_passage():
    squad = {
        "version": "v2.0",
        "data": [
            {
                "title": "Normans",
                "paragraphs": [
                    {
                        "context": "The Normans gave their name to Normandy, in France.",
                        "qas": [
                            {
                                "id": "q1",
                                "question": "In what country is Normandy?",
                                "answers": [{"text": "France", "answer_start": 44}],
                                "is_impossible": False,
                            },
                            {
                                "id": "q2",
                                "question": "Who ruled in 2020?",
                                "answers": [],
                                "is_impossible": True,
                            },
                        ],
                    }
                ],
            }
        ],
    }

    result = check("dev-v2.0.json", json.dumps(squad, indent=2))

    (task,) = result.plan.tasks
    assert (task.id, task.expected_text) == ("q1", "France")
    assert task.prompt.endswith("in France.\n\nIn what country is Normandy?")
    assert result.warnings[0].code == shapes.UNANSWERABLE_LEFT_OUT.code


def test_hotpotqa_keeps_its_question_and_answer_and_names_its_own_evidence():
    record = {
        "_id": "5a8b57f25542995d1e6f1371",
        "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
        "answer": "yes",
        "supporting_facts": [["Scott Derrickson", 0], ["Ed Wood", 0]],
        "evidence": [["Scott Derrickson", "nationality", "American"]],
        "context": [["Ed Wood", ["Edward Davis Wood Jr. was an American filmmaker."]]],
        "type": "comparison",
        "level": "hard",
    }

    result = check("hotpot_dev.jsonl", lines(record))

    task = result.plan.tasks[0]
    assert (task.id, task.expected_text, task.evidence) == (record["_id"], "yes", {})
    assert "HotpotQA" in result.detected
    assert result.warnings[0].message == shapes.IGNORED_KEYS.format(
        kind="keys", names="supporting_facts, evidence, context, type, level"
    )


def test_nq_open_routes_to_the_dataset_path_not_the_eval_set_reader():
    result = check("NQ-open.dev.jsonl", lines({"question": "who sang it", "answer": ["ABBA"]}))

    assert result.problems == ()
    assert "NQ-open" in result.detected


def test_a_contextgrid_item_with_evidence_still_routes_to_the_eval_set_reader():
    anchor = {"source_id": "handbook.pdf", "quote": "30 days written notice."}
    item = {"id": "q1", "question": "Notice period?", "anchors": [anchor]}

    assert "contextgrid eval set" in check("quiz.jsonl", lines(item)).detected
    assert (
        "contextgrid eval set" not in check("qa.jsonl", lines({**item, "anchors": 1})).detected[:0]
    )


@pytest.mark.parametrize("key", ["data", "examples", "goldens", "test_cases", "items"])
def test_records_under_a_key_are_read(key):
    document_ = {"version": 1, key: [{"question": "Q?", "reference_answer": "A."}]}

    result = check("set.json", json.dumps(document_))

    assert result.plan.tasks[0].expected_text == "A."
    assert f"under '{key}'" in result.detected


def test_records_keyed_by_id_take_the_key_as_their_id():
    keyed = {"q-7": {"question": "Q?", "answer": "A"}, "q-9": {"question": "R?", "answer": "B"}}

    result = check("keyed.json", json.dumps(keyed))

    assert [t.id for t in result.plan.tasks] == ["q-7", "q-9"]


def test_our_own_document_with_other_tools_tasks_keeps_its_name_and_settings():
    doc = {"name": "Mine", "tasks": [{"question": "Q?", "ground_truth": "A"}]}

    result = check("mine.json", json.dumps(doc))

    assert result.plan.name == "Mine"
    assert result.plan.tasks[0].expected_text == "A"


# -- the same names in every format -----------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "answer"),
    [
        ("Questions", "Answers"),
        ("QUESTION", "Reference Answer"),
        ("input", "ideal"),
        ("query", "expected_output"),
        ("User Input", "ground_truth"),
    ],
)
def test_one_list_of_names_in_csv_json_and_jsonl(prompt, answer):
    csv_text = f"{prompt},{answer}\nWhat is 2+2?,4\n"
    record = {prompt: "What is 2+2?", answer: "4"}

    for name, data in (
        ("t.csv", csv_text),
        ("t.json", json.dumps([record])),
        ("t.jsonl", lines(record)),
    ):
        task = check(name, data).plan.tasks[0]
        assert (task.prompt, task.expected_text) == ("What is 2+2?", "4"), name


def test_the_csv_columns_take_their_names_from_the_one_list():
    for field in aliases.FIELDS:
        column = {"id": "task_id"}.get(field.key, field.key)
        for spelling in field.spellings:
            assert columns.field_for_header(spelling) == column


# -- spreadsheet habits -----------------------------------------------------------------------


def test_a_pandas_index_column_is_left_out_with_a_warning():
    data = ",question,answer\n0,Q1?,A1\n1,Q2?,A2\n"

    result = check("df.csv", data)

    assert [t.prompt for t in result.plan.tasks] == ["Q1?", "Q2?"]
    assert [w.code for w in result.warnings] == [shapes.PANDAS_INDEX.code]


def test_a_tsv_is_read_like_a_tab_delimited_csv():
    result = check("set.tsv", "question\tanswer\nQ?\tA\n")

    assert result.plan.tasks[0].expected_text == "A"
    assert "tab-delimited" in result.detected


def test_a_header_that_is_one_quoted_cell_is_named_as_such():
    problem = only(check("t.csv", '"topic,theme,question"\nA,B,C\n'))

    assert (problem.code, problem.row) == (shapes.ONE_CELL_HEADER.code, 1)
    assert '("topic,theme,question")' not in problem.message
    assert "(topic,theme,question)" in problem.message


def test_nul_bytes_in_a_column_that_is_not_imported_are_a_warning():
    data = b"question,answer,blob\nQ?,A,ab\x00\x01cd\n"

    result = check("t.csv", data)

    assert result.plan.tasks[0].expected_text == "A"
    assert shapes.NUL_IN_IGNORED_COLUMN.format(column="blob") in [
        w.message for w in result.warnings
    ]


def test_a_nul_byte_in_an_imported_column_is_a_problem_on_its_row():
    problem = only(check("t.csv", b"question,answer\nQ?,A\nR?,B\x00\n"))

    assert (problem.code, problem.row, problem.field) == (shapes.NUL_IN_CELL.code, 3, "answer")


def test_utf16_without_a_byte_order_mark_is_still_refused():
    data = "question,answer\nQ?,A\n".encode("utf-16-le")

    assert only(check("t.csv", data)).code == "binary_content"


# -- never silently wrong ---------------------------------------------------------------------


def test_a_column_no_field_reads_is_named_in_a_warning():
    result = check("t.json", json.dumps([{"question": "Q", "answer": "A", "notes": "n"}]))

    assert result.warnings[0].message == shapes.IGNORED_KEYS.format(kind="keys", names="notes")


@pytest.mark.parametrize(
    ("name", "data", "what"),
    [
        (
            "corpus.jsonl",
            lines({"_id": "d1", "title": "Doc", "text": "Body"}),
            "a document corpus",
        ),
        ("queries.jsonl", lines({"_id": "1", "text": "What?"}), "BEIR queries on their own"),
        ("qrels.tsv", "query-id\tcorpus-id\tscore\n1\td1\t1\n", "BEIR qrels on their own"),
        (
            "results.json",
            json.dumps([{"input": "Q", "actual_output": "A", "score": 0.5}]),
            "the results of an eval run",
        ),
    ],
)
def test_a_file_that_is_not_a_dataset_says_what_it_looks_like(name, data, what):
    problem = only(check(name, data))

    assert problem.code == shapes.NOT_A_DATASET.code
    assert problem.message.startswith(f"This looks like {what}")


def test_a_json_array_is_never_told_to_be_saved_as_jsonl():
    result = check("t.json", json.dumps([{"title": "x"}, {"title": "y"}]))

    assert all(".jsonl" not in p.message for p in result.problems)


def test_a_guessed_mapping_imports_nothing_until_it_is_given():
    data = json.dumps([{"problem": "Add 2 and 2.", "solution": "4"}])

    guessed = check("t.json", data)
    given = check("t.json", data, mapping={"prompt": "problem", "expected": "solution"})

    assert guessed.plan is None
    assert only(guessed).code == shapes.NEEDS_MAPPING.code
    assert guessed.mapping.fields == {"prompt": "problem", "expected": "solution"}
    assert guessed.mapping.sample[0]["expected"] == "4"
    assert given.plan.tasks[0].expected_text == "4"
    assert given.mapping.how == "given"


def test_a_nested_key_is_mapped_by_its_dotted_path():
    data = lines({"meta": {"q": "Where?"}, "gold": {"a": "Here"}})

    result = check("t.jsonl", data, mapping={"prompt": "meta.q", "expected": "gold.a"})

    assert (result.plan.tasks[0].prompt, result.plan.tasks[0].expected_text) == ("Where?", "Here")


def test_a_mapping_remembered_for_the_shape_is_offered_not_applied():
    data = json.dumps([{"problem": "P", "solution": "S"}])
    remembered = {
        spec.signature_of(["problem", "solution"]): {"prompt": "solution", "expected": "problem"}
    }

    result = check("t.json", data, remembered_mappings=remembered)

    assert result.plan is None
    assert result.mapping.how == "remembered"
    assert result.mapping.fields == {"prompt": "solution", "expected": "problem"}
    assert "As you mapped this dataset's last file" in only(result).message


def test_our_own_format_is_not_shaped():
    data = lines({"id": "a", "prompt": "P", "expected": "E"})

    result = check("t.jsonl", data)

    assert result.mapping is None
    assert result.detected == "JSON Lines, one task per line, UTF-8"


def test_a_validator_problem_keeps_its_line_in_a_json_array():
    data = '[\n{"question": "Q", "answer": "A"},\n{"question": "R", "answer": ""}\n]'

    problem = only(check("t.json", data))

    assert (problem.code, problem.line) == (document.MISSING_EXPECTED_TEXT.code, 3)


def test_a_whole_eval_run_saved_as_json_is_results_not_a_dataset():
    # The top-level keys of promptfoo's examples/config-node-package/output.json.
    run = {
        "_resultsLoaded": False,
        "createdAt": 1758065695513,
        "id": "eval-IF3-2025-09-16T23:34:55",
        "config": {"tests": [{"vars": {"body": "Hello world"}}]},
        "results": [],
        "prompts": [{"raw": "Write a haiku about: {{body}}", "label": "haiku", "metrics": {}}],
        "persisted": True,
        "vars": ["body"],
    }

    problem = only(check("output.json", json.dumps(run, indent=2)))

    assert problem.code == shapes.NOT_A_DATASET.code
    assert problem.message.startswith("This looks like the results of an eval run")


def test_mmlu_columns_a_to_d_are_the_options_of_the_question():
    data = "Question,A,B,C,D,Answer,Subject\nWhat is 2+2?,3,4,5,22,B,math\n"

    result = check("mmlu.csv", data)

    task = result.plan.tasks[0]
    assert task.prompt == "What is 2+2?\n\nA. 3\nB. 4\nC. 5\nD. 22"
    assert task.expected_text == "B"
    assert "multiple choice" in result.detected


def test_arc_options_keep_their_own_labels_which_its_answer_key_names():
    # Some ARC questions label their options 1-4, and their answerKey says "2", not "B".
    choices = {"text": ["Sun", "Mars", "Moon"], "label": ["1", "2", "3"]}
    record = {"id": "Mercury_1", "question": "Which is a planet?", "choices": choices}

    result = check("arc.jsonl", lines({**record, "answerKey": "2"}))

    task = result.plan.tasks[0]
    assert task.prompt == "Which is a planet?\n\n1. Sun\n2. Mars\n3. Moon"
    assert task.expected_text == "2"
    assert result.mapping.how == "recognised"


def test_arc_original_options_inside_the_question_keep_their_own_labels_too():
    # ARC-V1's own files: the stem and a list of {"text", "label"} inside `question`.
    choices = [{"text": t, "label": n} for t, n in (("Sun", "1"), ("Mars", "2"), ("Moon", "3"))]
    question = {"stem": "Which is a planet?", "choices": choices}

    result = check("arc.jsonl", lines({"id": "Mercury_1", "question": question, "answerKey": "2"}))

    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        ("Which is a planet?\n\n1. Sun\n2. Mars\n3. Moon", "2")
    ]
    assert result.mapping.how == "recognised"


def test_a_dataset_viewer_row_with_a_cell_cut_short_is_refused_on_its_line():
    # The viewer cuts a long cell and names it: importing it would import part of the text.
    rows = [
        {"row_idx": 0, "row": {"question": "Q1?", "answer": "A1"}, "truncated_cells": []},
        {"row_idx": 1, "row": {"question": "Q2?", "answer": "A2"}, "truncated_cells": ["answer"]},
    ]
    data = json.dumps({"features": [], "rows": rows, "num_rows_total": 2}, indent=2)

    result = check("rows.json", data)

    assert [(p.code, p.line) for p in result.problems] == [(shapes.CELLS_CUT.code, 12)]
    assert result.problems[0].message == shapes.CELLS_CUT.format(cells="answer")


def test_big_bench_options_scored_best_are_each_an_accepted_answer():
    scores = {"Paris": 1, "Lyon": 0, "the capital, Paris": 1}
    record = {"input": "Where is the Louvre?", "target_scores": scores}

    result = check("task.json", json.dumps({"examples": [record]}))

    task = result.plan.tasks[0]
    assert task.prompt == "Where is the Louvre?\n\nA. Paris\nB. Lyon\nC. the capital, Paris"
    assert task.expected_text == "Any of:\n- Paris\n- the capital, Paris"


def test_a_triviaqa_answer_object_is_its_value():
    answer = {"value": "Sinclair Lewis", "aliases": ["Lewis"]}
    record = {"question": "Who wrote Babbitt?", "answer": answer}

    assert check("t.jsonl", lines(record)).plan.tasks[0].expected_text == "Sinclair Lewis"


def test_alpaca_columns_in_a_spreadsheet_make_one_prompt_too():
    data = "instruction,input,output\nTranslate to French.,Good morning,Bonjour\n"

    task = check("alpaca.csv", data).plan.tasks[0]

    assert (task.prompt, task.expected_text) == ("Translate to French.\n\nGood morning", "Bonjour")


def test_millions_of_records_are_one_problem():
    # Its time and memory are bench_hostile_files' figure (json_two_million_records).
    result = check("big.json", "[" + ",".join(['{"q": 1}'] * 2_000_000) + "]")

    assert [p.code for p in result.problems] == [document.TOO_MANY_TASKS.code]
    assert result.problems[0].message == document.TOO_MANY_TASKS.format(count=2_000_000, limit=1000)
    lines_result = check("big.jsonl", '{"question": "q", "answer": "a"}\n' * 1001)
    assert [p.code for p in lines_result.problems] == [document.TOO_MANY_TASKS.code]


@pytest.mark.parametrize(
    ("document", "detected"),
    [
        (
            {"question": {"0": "Q1?", "1": "Q2?"}, "answer": {"0": "A1", "1": "A2"}},
            "pandas to_json() by column",
        ),
        (
            {
                "columns": ["question", "answer"],
                "index": [0, 1],
                "data": [["Q1?", "A1"], ["Q2?", "A2"]],
            },
            "pandas to_json(orient='split')",
        ),
    ],
)
def test_pandas_to_json_orientations_are_records(document, detected):
    result = check("df.json", json.dumps(document))

    assert [(t.prompt, t.expected_text) for t in result.plan.tasks] == [
        ("Q1?", "A1"),
        ("Q2?", "A2"),
    ]
    assert detected in result.detected


def test_a_whole_conversation_is_its_prompt_and_the_last_assistant_turn_its_answer():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
    ]
    sharegpt = [{"from": "human", "value": "Hi?"}, {"from": "gpt", "value": "Hello!"}]

    result = check("ft.jsonl", lines({"messages": messages}))
    second = check("sharegpt.json", json.dumps([{"conversations": sharegpt}])).plan.tasks[0]

    first = result.plan.tasks[0]
    assert (first.prompt, first.expected_text, first.name) == (
        "System: Be brief.\n\nQuestion: Capital of France?",
        "Paris.",
        "Capital of France?",
    )
    assert (second.prompt, second.expected_text) == ("Hi?", "Hello!")
    assert "chat conversations" in result.detected


def test_a_zip_with_another_tools_sheet_is_mapped_like_the_sheet():
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tests.csv", "text,labels\nDouble charge on my card,Billing\n")
    data = buffer.getvalue()

    guessed = check("set.zip", data)
    given = check("set.zip", data, mapping={"prompt": "text", "expected": "labels"})

    assert only(guessed).code == shapes.NEEDS_MAPPING.code
    assert guessed.mapping.fields == {"prompt": "text", "expected": "labels"}
    assert given.plan.tasks[0].expected_text == "Billing"
    assert given.mapping.how == "given"


def test_one_record_saved_as_a_json_object_is_one_task_not_a_list_of_its_turns():
    # Before, the chat turns (the object's only list of objects) were read as its records.
    sample = {"input": CHAT, "ideal": "Yes, at different times."}

    result = check("sample.json", json.dumps(sample, indent=2))

    assert result.problems == ()
    assert "OpenAI evals (input + ideal), one record" in result.detected
    task = result.plan.tasks[0]
    assert task.prompt.endswith("Question: Only aspirin.\nTwice a day.")
    assert task.expected_text == "Yes, at different times."


def test_an_object_that_names_no_prompt_is_still_not_a_record():
    result = check("settings.json", json.dumps({"model": "gpt-4o", "temperature": 0}))

    assert only(result).code == shapes.NO_RECORDS.code


def test_a_list_under_a_key_that_spells_name_is_no_tasks_name():
    records = [{"question": "Q?", "answer": "A", "meta": {"title": ["a", "b"]}}]

    result = check("nested.json", json.dumps(records))

    assert result.problems == ()
    assert result.plan.tasks[0].name == "Q?"


def test_columns_as_lists_of_unequal_length_are_not_rows():
    result = check("columns.json", json.dumps({"question": ["Q1?", "Q2?"], "answer": ["A1"]}))

    assert only(result).code == shapes.NO_RECORDS.code


def test_a_value_of_a_column_as_a_list_is_placed_on_its_line():
    text = json.dumps({"question": ["Q1?", "Q2?"], "answer": ["A1", ""]}, indent=2)

    result = check("columns.json", text)

    assert "one list per column" in result.detected
    assert [(p.code, p.line) for p in result.problems] == [("missing_expected_text", 4)]


def test_a_sheet_whose_names_read_as_ours_is_still_graded_as_its_tools_shape_says():
    # Azure's RAG chat evaluator results: `answer` is what the app said, `truth` grades it.
    result = check("results.csv", "question,truth,answer\nWhat is 2+2?,4,5\n")

    assert result.problems == ()
    assert result.plan.tasks[0].expected_text == "4"
    assert [w.message for w in result.warnings] == [
        shapes.IGNORED_KEYS.format(kind="columns", names="answer")
    ]


def test_a_conversation_history_of_messages_comes_before_the_question():
    # Giskard's test sets keep the turns before a conversational question as messages.
    record = {
        "question": "And in Spain?",
        "reference_answer": "Madrid",
        "conversation_history": [
            {"role": "user", "content": "What is the capital of France?"},
            {"role": "assistant", "content": "Paris."},
        ],
    }
    result = check("testset.jsonl", lines(record))

    task = result.plan.tasks[0]
    assert task.prompt == (
        "User: What is the capital of France?\n\nAssistant: Paris.\n\nQuestion: And in Spain?"
    )
    assert (task.name, task.expected_text) == ("And in Spain?", "Madrid")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("pregunta", "respuesta"),
        ("Pergunta", "Resposta"),
        ("question", "réponse"),
        ("Frage", "Antwort"),
        ("问题", "答案"),
        ("質問", "回答"),
    ],
)
def test_a_sheet_headed_in_another_language_is_read_as_it_stands(question, answer):
    sheet = write_csv_rows([question, answer], ["¿Cuánto es 2+2?", "4"])

    (task,) = check("t.csv", sheet).plan.tasks

    assert (task.prompt, task.expected_text) == ("¿Cuánto es 2+2?", "4")
