"""check_file: picking the reader, refusing what is not a dataset file, the preview and --json."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from datasets_app.importing import checker
from datasets_app.importing.checker import check_file, preview, result_to_json
from datasets_app.importing.spec import MAX_FILE_BYTES, CheckOptions, TaskPreview

FILES = Path(__file__).resolve().parent.parent / "files" / "json"
RUBRIC = (FILES / "rubric_template.json").read_bytes()
EXPECTED = (FILES / "expected_answers_template.json").read_bytes()


def only_code(result) -> str:
    assert len(result.problems) == 1, result.problems
    return result.problems[0].code


@pytest.mark.parametrize("name", ["data.json", "DATA.JSON", "my.dataset.Json"])
def test_the_extension_picks_the_format_whatever_its_case(name):
    result = check_file(EXPECTED, name)

    assert result.ok and result.format == "json"


def test_a_stream_is_read_like_bytes():
    assert check_file(io.BytesIO(RUBRIC), "r.json").plan == check_file(RUBRIC, "r.json").plan


@pytest.mark.parametrize("name", ["data.txt", "data.yaml", "data", "data.json.exe"])
def test_an_unknown_extension_is_one_problem(name):
    result = check_file(EXPECTED, name)

    assert only_code(result) == checker.UNSUPPORTED_EXTENSION.code
    assert result.format is None


@pytest.mark.parametrize("name", ["empty.json", "empty.jsonl", "empty.csv"])
@pytest.mark.parametrize("data", [b"", b"  \n\t\n"])
def test_an_empty_file_is_one_problem(name, data):
    assert only_code(check_file(data, name)) == checker.EMPTY_FILE.code


def zipped() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("data.json", EXPECTED)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "actual"),
    [
        (zipped(), "zip archive"),
        (b"\x89PNG\r\n\x1a\n" + bytes(200), "PNG image"),
        (b"%PDF-1.7\n...", "PDF document"),
    ],
)
def test_content_that_does_not_match_the_extension_says_what_it_is(data, actual):
    result = check_file(data, "data.json")

    assert only_code(result) == checker.WRONG_CONTENT.code
    assert actual in result.problems[0].message


def test_binary_junk_is_not_text():
    junk = bytes(range(256)) * 40

    assert only_code(check_file(junk, "data.jsonl")) == checker.BINARY_CONTENT.code


def test_an_xlsx_that_is_not_a_zip_is_one_problem():
    result = check_file(b"name,prompt\na,b\n", "data.xlsx")

    assert only_code(result) == checker.WRONG_CONTENT.code


def test_more_than_the_cap_is_refused_without_reading_the_rest():
    class Endless(io.RawIOBase):
        read_bytes = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            buffer[:] = b" " * len(buffer)
            self.read_bytes += len(buffer)
            return len(buffer)

    source = Endless()
    result = check_file(io.BufferedReader(source), "huge.json")

    assert only_code(result) == checker.FILE_TOO_BIG.code
    assert source.read_bytes <= MAX_FILE_BYTES + 1024 * 1024


def test_a_file_exactly_at_the_cap_is_read():
    data = EXPECTED.rstrip() + b" " * (MAX_FILE_BYTES - len(EXPECTED.rstrip()))

    assert check_file(data, "at-cap.json").ok


def test_an_unreadable_stream_is_a_problem():
    class Broken(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            raise OSError(5, "Input/output error")

    assert only_code(check_file(Broken(), "x.json")) == checker.UNREADABLE_FILE.code


def test_the_preview_counts_criteria_for_every_task_and_their_weight():
    result = check_file(RUBRIC, "r.json")

    assert preview(result) == [
        # Five of its own (10+20+20+10+10) and the file's no-invented-facts (20).
        TaskPreview("delayed-shipment", "Delayed shipment email", "criteria", 6, 90.0)
    ]


def test_the_preview_of_expected_answers():
    assert [
        (p.scored_by, p.criteria, p.total_weight) for p in preview(check_file(EXPECTED, "e.json"))
    ] == [
        ("expected_answer", 0, 0.0),
        ("expected_answer", 0, 0.0),
    ]


def test_a_file_with_problems_has_no_preview():
    assert preview(check_file(b'{"tasks": []}', "x.json")) == []


def test_result_to_json_has_exactly_the_documented_shape():
    data = json.loads(RUBRIC)
    data["tasks"][0]["criteria"][0]["weight"] = 2.5
    result = check_file(json.dumps(data).encode(), "r.json")

    assert result_to_json(result) == {
        "ok": True,
        "format": "json",
        "task_count": 1,
        "detected": "JSON dataset, UTF-8",
        "problems": [],
        "warnings": [
            {
                "code": "python_checks_off",
                "file": "r.json",
                "row": None,
                "line": 1,
                "field": "tasks[0].criteria[3].verifier",
                "task": "delayed-shipment",
                "message": result.warnings[0].message,
            }
        ],
        "mapping": None,
        "tasks": [
            {
                "id": "delayed-shipment",
                "name": "Delayed shipment email",
                "scored_by": "criteria",
                "criteria": 6,
                "total_weight": 82.5,
            }
        ],
    }
    json.dumps(result_to_json(result))


def test_result_to_json_of_a_refused_file():
    as_json = result_to_json(check_file(b'{"tasks": [{"id": "a"}]}', "x.json"))

    assert as_json["ok"] is False and as_json["task_count"] == 0 and as_json["tasks"] == []
    assert {p["field"] for p in as_json["problems"]} == {"tasks[0].prompt", "tasks[0]"}


def test_python_checks_on_turn_the_warning_off():
    result = check_file(RUBRIC, "r.json", options=CheckOptions(python_checks_enabled=True))

    assert result.ok and result.warnings == ()


def test_a_zip_goes_to_the_zip_reader():
    result = check_file(zipped(), "bundle.ZIP")

    assert result.format == "zip"
    assert result.ok, result.problems


def test_locate_tasks_places_tasks_by_position_in_each_format():
    import io
    import zipfile

    from datasets_app.importing.checker import locate_tasks

    csv = b"id,prompt,expected_answer\na,P1,x\nb,P2,y\n"
    task_a = b'{"id": "a", "prompt": "p", "expected": "e"}'
    task_b = b'{"id": "b", "prompt": "q", "expected": "e"}'
    jsonl = task_a + b"\n" + task_b + b"\n"
    pretty = b'{\n  "tasks": [\n    ' + task_a + b",\n    " + task_b + b"\n  ]\n}\n"
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("set/dataset.csv", csv)
    assert locate_tasks(csv, "f.csv", [1]) == {1: ("f.csv", 3, None)}
    assert locate_tasks(jsonl, "f.jsonl", [1]) == {1: ("f.jsonl", None, 2)}
    assert locate_tasks(pretty, "f.json", [0, 1]) == {
        0: ("f.json", None, 3),
        1: ("f.json", None, 4),
    }
    assert locate_tasks(archive.getvalue(), "f.zip", [0]) == {0: ("set/dataset.csv", 2, None)}
    assert locate_tasks(b"not a zip", "f.zip", [0]) == {}


@pytest.mark.parametrize(
    ("name", "data"),
    [
        (
            "qa.json",
            b'{"tasks": [{"prompt": "2+2?", "expected": "4"},'
            b' {"prompt": "Hi", "expected": "Hello"}]}',
        ),
        (
            "qa.jsonl",
            b'{"prompt": "2+2?", "expected": "4"}\n{"prompt": "Hi", "expected": "Hello"}\n',
        ),
        ("qa.csv", b"prompt,expected_answer\n2+2?,4\nHi,Hello\n"),
        # promptfoo's sheet: its rows become tasks with ids the reader makes up.
        ("qa.csv", b"prompt,__expected\n2+2?,4\nHi,Hello\n"),
        # A file from another tool, by its shape (OpenAI evals' samples).
        ("qa.jsonl", b'{"input": "2+2?", "ideal": "4"}\n{"input": "Hi", "ideal": "Hello"}\n'),
    ],
)
def test_ids_made_up_for_a_file_count_from_the_first_task_number(name, data):
    result = check_file(data, name, options=CheckOptions(first_task_number=13))

    assert result.ok, result.problems
    assert [task.id for task in result.plan.tasks] == ["task-13", "task-14"]
    assert [task.id for task in check_file(data, name).plan.tasks] == ["task-1", "task-2"]


def test_made_up_ids_skip_the_ids_a_file_gives_itself():
    data = b"task_id,prompt,expected_answer\n,2+2?,4\ntask-13,Hi,Hello\n,Bye,Goodbye\n"

    result = check_file(data, "qa.csv", options=CheckOptions(first_task_number=13))

    assert [task.id for task in result.plan.tasks] == ["task-14", "task-13", "task-15"]
