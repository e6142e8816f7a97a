"""The checker's messages speak to people: counts as 1,000, sizes in MiB, no "task(s)", no
0-based paths, no parser jargon, and a value cut short keeps its closing quote."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from datasets_app.importing import evalset_format, json_text, spec, zip_format
from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import CheckOptions, DatasetSpec, TaskSpec, counted, file_size


def messages(data: bytes | str, name: str) -> list[str]:
    data = data.encode() if isinstance(data, str) else data
    result = check_file(data, name, options=CheckOptions())
    return [p.message for p in (*result.problems, *result.warnings)]


def test_counts_read_with_thousands_separators():
    tasks = [{"id": str(i), "prompt": "p", "expected": "e"} for i in range(1_001)]
    assert messages(json.dumps({"tasks": tasks}), "big.json") == [
        "The file has 1,001 tasks; one file can hold up to 1,000."
    ]


@pytest.mark.parametrize(
    ("size", "words"),
    [(0, "0 bytes"), (1, "1 byte"), (512, "512 bytes"), (1536, "1.5 KiB"),
     (10 * 1024 * 1024, "10 MiB"), (10 * 1024 * 1024 + 1, "10 MiB"), (3 * 1024**3, "3 GiB")],
)  # fmt: skip
def test_sizes_are_in_bytes_kib_mib_gib(size, words):
    assert file_size(size) == words


def test_counted_never_says_s_in_parentheses():
    assert [counted(1, "task"), counted(2, "task"), counted(1000, "criterion", "criteria")] == [
        "1 task",
        "2 tasks",
        "1,000 criteria",
    ]


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ('{"tasks": ', "the text ends in the middle of a value"),
        ('{"tasks": [{"id": "a"', "the text ends before an object is closed"),
        ('{"tasks": [1, 2', "the text ends before a list is closed"),
        ('{"tasks": [], }', "a comma has nothing after it"),
        ("{tasks: []}", "a key is not in double quotes"),
    ],
)
def test_json_parser_phrases_are_plain_words(text, plain):
    (message,) = messages(text, "broken.json")
    assert plain in message
    assert "EOF" not in message and "while parsing" not in message


def test_a_broken_eval_set_line_is_in_plain_words_too():
    text = '{"_evalset": {"id": "q"}}\n{"id": "q1", "question": "Why?", "anchors": [}\n'
    (message,) = messages(text, "set.jsonl")
    assert "a value is missing" in message
    assert "Expecting" not in message


def test_messages_name_a_value_by_its_key_not_by_a_zero_based_path():
    document = {
        "format": "context-evals-dataset",
        "tasks": [{"id": "a", "prompt": ["not", "text"], "expected": "e", "colour": 1}],
    }
    found = messages(json.dumps(document), "d.json")
    assert '"prompt" must be text.' in found
    assert '"colour" is not part of the dataset format; it will be ignored.' in found
    assert not any("[0]" in message for message in found)


def test_a_duplicate_id_names_the_first_task_as_people_count():
    document = {"tasks": [{"id": "a", "prompt": p, "expected": "e"} for p in ("p", "q")]}
    assert messages(json.dumps(document), "d.json") == [
        'Task id "a" is already used by task 1 of the file. Each task needs its own id.'
    ]


def test_every_problem_names_the_task_it_is_in():
    document = {
        "tasks": [
            {"id": "a", "prompt": "p", "expected": "e"},
            {"id": "b", "prompt": "q", "criteria": [{"criterion": "c", "weight": -1}]},
        ]
    }
    result = check_file(json.dumps(document).encode(), "d.json")
    (problem,) = result.problems
    assert (problem.field, problem.task) == ("tasks[1].criteria[0].weight", "b")
    assert problem.to_json()["task"] == "b"
    assert spec.Problem.from_json(problem.to_json()).task == "b"


def test_a_long_path_cut_short_keeps_its_closing_quote():
    path = "files/" + "very-long-folder-name/" * 5 + "input.pdf"
    document = {"tasks": [{"id": "a", "prompt": "p", "expected": "e", "inputFiles": [path]}]}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dataset.json", json.dumps(document))
    (message,) = messages(buffer.getvalue(), "d.zip")
    quoted = message.split(" is not in the zip")[0]
    assert quoted.startswith('"files/') and quoted.endswith('…"')


def test_export_warnings_count_tasks_in_words():
    task = TaskSpec(id="a", name="", prompt="p", criteria=(spec.CriterionSpec("c", "C"),))
    written = evalset_format.export_warnings(DatasetSpec(tasks=(task, task)))
    assert evalset_format.MSG_EXPORT_CRITERIA.format(tasks="2 tasks", ids="a, a") in written
    assert not any("(s)" in warning for warning in written)


def test_zip_limits_read_in_mib():
    assert zip_format.file_size(zip_format.MAX_FILE_BYTES) == "50 MiB"
    assert json_text.plain_words("EOF while parsing a value") == (
        "the text ends in the middle of a value"
    )
