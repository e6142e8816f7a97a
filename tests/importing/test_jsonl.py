""".jsonl files: one task per line; one bad line refuses the file, and every bad line is named."""

from __future__ import annotations

import json
from pathlib import Path

from datasets_app.importing import document as doc
from datasets_app.importing import json_text, jsonl_format
from datasets_app.importing.checker import check_file, result_to_json

FILES = Path(__file__).resolve().parent.parent / "files" / "json"
REALDATA = Path("/work/shared/realdata/inspect_ai")


def test_one_task_per_line_with_blank_lines_ignored():
    result = check_file((FILES / "tasks.jsonl").read_bytes(), "tasks.jsonl")

    assert result.ok
    assert result.format == "jsonl"
    assert result.detected == "JSON Lines, one task per line, UTF-8"
    assert [t.id for t in result.plan.tasks] == ["q1", "q2"]
    assert result.plan.tasks[0].expected_verifier.kind == "exact_match"
    assert result.plan.settings == {} and result.plan.criteria == ()


def test_every_bad_line_is_named_and_the_whole_file_refused():
    result = check_file((FILES / "bad_lines.jsonl").read_bytes(), "bad_lines.jsonl")

    assert not result.ok and result.plan is None
    assert [(p.line, p.code) for p in result.problems] == [
        (2, json_text.NOT_JSON.code),
        (3, jsonl_format.LINE_NOT_A_TASK.code),
        (4, jsonl_format.DATASET_KEYS_IN_JSONL.code),
        (5, doc.NOTHING_TO_GRADE.code),
        (5, doc.DUPLICATE_TASK_ID.code),
    ]
    assert all(p.file == "bad_lines.jsonl" for p in result.problems)


def test_a_field_is_named_within_its_line():
    data = b'{"id": "a", "prompt": "p", "criteria": [{"criterion": "c", "weight": -2}]}\n'
    result = check_file(data, "t.jsonl")

    (problem,) = result.problems
    assert (problem.line, problem.field) == (1, "criteria[0].weight")


def test_generated_ids_follow_the_task_s_position():
    result = check_file(
        b'{"prompt": "a", "expected": "x"}\n\n{"prompt": "b", "expected": "y"}\n', "t.jsonl"
    )

    assert [t.id for t in result.plan.tasks] == ["task-1", "task-2"]


def test_a_file_of_blank_lines_has_no_tasks():
    result = check_file(b"\n  \n\n", "t.jsonl")

    assert [p.code for p in result.problems] == ["empty_file"]
    assert result_to_json(result)["ok"] is False


def test_crlf_line_ends_and_a_bom_are_fine():
    data = b'\xef\xbb\xbf{"prompt": "a", "expected": "x"}\r\n{"prompt": "b", "expected": "y"}\r\n'

    assert check_file(data, "t.jsonl").task_count == 2


def test_a_line_nested_too_deep_is_named():
    data = b'{"prompt": "a", "expected": "x"}\n' + b"[" * 5000 + b"]" * 5000 + b"\n"
    (problem,) = check_file(data, "t.jsonl").problems

    assert (problem.code, problem.line) == (json_text.TOO_DEEP.code, 2)


# Inspect AI's question/answer .jsonl imports as a contextgrid eval set: see
# test_evalset_format.test_an_inspect_ai_question_answer_jsonl_imports_as_an_eval_set.


def test_json_lines_saved_as_json_are_read_as_json_lines_each_bad_line_named():
    # Many tools write JSON Lines under a .json name; no JSON document can be read from it.
    data = (FILES / "bad_lines.jsonl").read_bytes()

    as_json = check_file(data, "bad_lines.json")

    as_jsonl = check_file(data, "bad_lines.jsonl")
    assert as_json.format == "jsonl"
    assert [(p.line, p.code) for p in as_json.problems] == [
        (p.line, p.code) for p in as_jsonl.problems
    ]


def test_a_json_lines_file_named_json_imports_and_says_what_it_is():
    result = check_file((FILES / "tasks.jsonl").read_bytes(), "tasks.json")

    assert result.ok
    assert result.detected == "JSON Lines in a .json file, one task per line, UTF-8"
    assert [t.id for t in result.plan.tasks] == ["q1", "q2"]


def test_json_that_is_broken_after_its_first_line_is_still_refused_as_json():
    # A pretty-printed document's first line is "{", not a whole object: not JSON Lines.
    result = check_file(b'{\n  "tasks": [\n    {"id": "a",}\n  ]\n}\n', "broken.json")

    assert [(p.line, p.code) for p in result.problems] == [(3, json_text.NOT_JSON.code)]


# The page's keys mean the page's rules, in every container (issue 26): a line of our own
# keys with a prompt that is no text is named as in a .json, never converted quietly.
WRONG_TYPE_LINES = (
    b'{"id": "a", "prompt": "x", "expected": {"text": "y"}}\n'
    b'{"id": "b", "prompt": 5, "expected": {"text": "y"}}\n'
    b'{"id": "c", "prompt": "z", "expected": {"text": 7}}\n'
)


def test_a_line_of_the_page_s_keys_is_held_to_the_page_s_types():
    result = check_file(WRONG_TYPE_LINES, "t.jsonl")

    assert result.plan is None
    assert [(p.line, p.field, p.message) for p in result.problems] == [
        (2, "prompt", '"prompt" must be text.'),
        (3, "expected.text", '"text" must be text.'),
    ]


def test_the_same_tasks_are_refused_alike_in_a_json_list_and_a_json_document():
    tasks = b"[" + b",".join(WRONG_TYPE_LINES.splitlines()) + b"]"
    as_list = check_file(tasks, "t.json")
    as_document = check_file(b'{"tasks": ' + tasks + b"}", "t.json")

    for result in (as_list, as_document):
        assert result.plan is None
        assert [(p.field, p.message) for p in result.problems] == [
            ("tasks[1].prompt", '"prompt" must be text.'),
            ("tasks[2].expected.text", '"text" must be text.'),
        ]


def test_a_task_without_a_name_is_named_alike_in_every_container():
    prompt = "What grew 25% this year?\nShow the calculation."
    record = {"id": "t1", "prompt": prompt, "expected": "Revenue"}
    files = {
        "t.json": json.dumps({"tasks": [record]}).encode(),
        "t.jsonl": json.dumps(record).encode() + b"\n",
        "t.csv": b'task_id,prompt,expected_answer\nt1,"' + prompt.encode() + b'",Revenue\n',
    }

    names = {name: check_file(data, name).plan.tasks[0].name for name, data in files.items()}

    assert set(names.values()) == {"What grew 25% this year?"}


def test_a_pretty_printed_json_array_saved_as_jsonl_is_one_problem_saying_so():
    records = [{"prompt": "a", "expected": "x"}, {"prompt": "b", "expected": "y"}]

    result = check_file(json.dumps(records, indent=2).encode(), "t.jsonl")

    assert [(p.code, p.line) for p in result.problems] == [
        (jsonl_format.JSON_ARRAY_IN_JSONL.code, 1)
    ]
    assert result.problems[0].message.startswith("The file is one JSON array of 2 items")
