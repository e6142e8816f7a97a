"""A task's metadata in every format: a `metadata` object in .json and .jsonl, a
`metadata.<key>` column each in .csv and .xlsx, and the plain columns other tools' sheets
have (category, difficulty, source, split, context, tags) read as metadata."""

from __future__ import annotations

import json

import pytest

from datasets_app.importing import columns, csv_format, json_format, xlsx_format
from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import DatasetSpec, TaskSpec

SHEET = (
    b"prompt,expected_answer,Category,Difficulty,metadata.tags,metadata.level,notes\n"
    b'What is 2+2?,4,math,easy,"[""arithmetic""]","""3""",x\n'
    b"Capital of France?,Paris,geography,3,,,y\n"
)


def test_plain_and_prefixed_columns_are_each_task_s_metadata():
    result = check_file(SHEET, "quiz.csv")

    assert result.ok, result.problems
    assert [task.metadata for task in result.plan.tasks] == [
        {"category": "math", "difficulty": "easy", "tags": ["arithmetic"], "level": "3"},
        {"category": "geography", "difficulty": 3},
    ]
    assert [w.message for w in result.warnings] == ["These columns are not imported: notes."]


@pytest.mark.parametrize(
    "value", ["easy", "3", 3, 2.5, True, None, ["a", 1], {"k": "v"}, "", " ", '"x"', "NaN"]
)
def test_a_cell_reads_back_as_the_value_written(value):
    assert columns.metadata_value(columns.metadata_cell(value)) == value


def test_json_and_jsonl_carry_a_metadata_object():
    document = {"tasks": [{"prompt": "2+2?", "expected": "4", "metadata": {"split": "test"}}]}
    assert check_file(json.dumps(document).encode(), "a.json").plan.tasks[0].metadata == {
        "split": "test"
    }
    line = json.dumps(document["tasks"][0]).encode() + b"\n"
    result = check_file(line, "a.jsonl")
    assert result.warnings == () and result.plan.tasks[0].metadata == {"split": "test"}


@pytest.mark.parametrize("key", ["", " padded", "two\nlines", "k" * 101])
def test_a_metadata_key_a_column_could_not_carry_is_a_problem(key):
    document = {"tasks": [{"id": "a", "prompt": "p", "expected": "x", "metadata": {key: 1}}]}

    result = check_file(json.dumps(document).encode(), "a.json")

    assert [problem.code for problem in result.problems] == ["bad_metadata_key"]


SPEC = DatasetSpec(
    tasks=(
        TaskSpec(
            id="a",
            name="A",
            prompt="2+2?",
            expected_text="4",
            metadata={"category": "math", "difficulty": 3, "note": "3", "tags": ["x"]},
        ),
        TaskSpec(id="b", name="B", prompt="Hi", expected_text="Hello"),
    )
)


def test_every_writer_writes_metadata_that_reads_back_the_same():
    csv_data, _ = csv_format.write(SPEC)
    header = csv_data.decode("utf-8-sig").splitlines()[0]
    assert header.endswith("metadata.category,metadata.difficulty,metadata.note,metadata.tags")
    xlsx_data, _ = xlsx_format.write(SPEC)
    for data, name in (
        (json_format.write(SPEC), "a.json"),
        (csv_data, "a.csv"),
        (xlsx_data, "a.xlsx"),
    ):
        plan = check_file(data, name).plan
        assert [task.metadata for task in plan.tasks] == [SPEC.tasks[0].metadata, {}], name


def _lines(*records: dict) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def test_other_tools_keys_beside_the_prompt_are_each_task_s_metadata():
    """OpenAI evals' lines with the keys people put beside them: kept, not dropped."""
    data = _lines(
        {"input": "2+2?", "ideal": "4", "category": "math", "Difficulty": 2, "tags": ["easy"]},
        {"input": "Capital of France?", "ideal": "Paris", "source": "wiki", "notes": "x"},
    )

    result = check_file(data, "evals.jsonl")

    assert result.ok, result.problems
    assert [task.metadata for task in result.plan.tasks] == [
        {"category": "math", "difficulty": 2, "tags": ["easy"]},
        {"source": "wiki"},
    ]
    assert [w.message for w in result.warnings] == ["These keys are not imported: notes."]


def test_langsmith_and_langfuse_metadata_objects_and_splits_are_kept():
    langsmith = _lines(
        {
            "inputs": {"question": "2+2?"},
            "outputs": {"answer": "4"},
            "metadata": {"category": "math", "level": 2},
            "split": "test",
        },
        {"inputs": {"question": "Hi"}, "outputs": {"answer": "Hello"}, "split": ["train", "dev"]},
    )
    langfuse = json.dumps(
        [
            {"input": "2+2?", "expected_output": "4", "metadata": {"difficulty": "easy"}},
            {"input": "Hi", "expected_output": "Hello", "metadata": None},
        ]
    ).encode()

    found = check_file(langsmith, "langsmith.jsonl")
    assert found.ok and found.warnings == (), (found.problems, found.warnings)
    assert [task.metadata for task in found.plan.tasks] == [
        {"category": "math", "level": 2, "split": "test"},
        {"split": ["train", "dev"]},
    ]
    found = check_file(langfuse, "langfuse.json")
    assert found.ok and found.warnings == (), (found.problems, found.warnings)
    assert [task.metadata for task in found.plan.tasks] == [{"difficulty": "easy"}, {}]


def test_a_chat_record_s_extra_fields_are_its_metadata():
    data = _lines(
        {
            "input": [
                {"role": "system", "content": "Be brief"},
                {"role": "user", "content": "2+2?"},
            ],
            "ideal": "4",
            "persona": "teacher",
            "turn_count": 1,
        },
    )

    result = check_file(data, "chat.jsonl")

    assert result.ok and result.warnings == (), (result.problems, result.warnings)
    assert result.plan.tasks[0].metadata == {"persona": "teacher", "turn_count": 1}
