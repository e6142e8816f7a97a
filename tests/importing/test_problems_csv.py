"""The problems download: the person's own sheet with a `problem` column, or a list."""

from __future__ import annotations

import codecs
import csv
import io

from datasets_app.importing import problems_csv as module
from datasets_app.importing import xlsx_format
from datasets_app.importing.problems_csv import problems_csv
from datasets_app.importing.spec import CheckResult, DatasetSpec, Problem, TaskSpec
from tests.importing.csv_helpers import check_csv, check_xlsx


def rows_of(data: bytes) -> list[list[str]]:
    assert data.startswith(codecs.BOM_UTF8)
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def result_for(data: bytes, file_name: str, fmt: str, problems) -> CheckResult:
    return CheckResult(file_name=file_name, format=fmt, detected="", problems=tuple(problems))


def test_csv_rows_come_back_row_for_row_with_their_problems():
    data = b'prompt;answer;weight\r\nQ1;A;\r\n\r\n"two\nlines";;\r\nQ3;=1+1;x\r\n'
    _, problems, _ = check_csv(data, "quiz.csv")

    out = rows_of(problems_csv(result_for(data, "quiz.csv", "csv", problems), data))

    assert out[0] == ["prompt", "answer", "weight", "problem_code", "problem"]
    assert out[1] == ["Q1", "A", "", "", ""]
    assert out[2] == ["", "", "", "", ""]  # the blank row stays, so row numbers still match
    assert out[3][0] == "two\nlines"
    (on_row_4,) = [p for p in problems if p.row == 4]
    assert out[3][3:] == [on_row_4.code, on_row_4.message]
    assert "task-2" in on_row_4.message
    # A formula is written back neutralised.
    assert out[4][1] == "'=1+1"
    assert len(out) == 5


def test_problems_of_no_row_go_on_one_extra_last_row():
    data = b"question,grading_notes\nWhat?,- notes\n"
    _, problems, _ = check_csv(data, "notes.csv")

    out = rows_of(problems_csv(result_for(data, "notes.csv", "csv", problems), data))

    assert out[:2] == [
        ["question", "grading_notes", "problem_code", "problem"],
        ["What?", "'- notes", "", ""],
    ]
    assert out[2][:2] == ["", ""]
    assert out[2][2:] == [problems[0].code, module.WHOLE_FILE + problems[0].message]


def test_several_problems_on_one_row_are_joined():
    data = b"task_id,prompt,criterion,weight,verifier\nt1,P,a,heavy,magic\n"
    _, problems, _ = check_csv(data)

    out = rows_of(problems_csv(result_for(data, "t.csv", "csv", problems), data))

    verifier, weight = sorted(problems, key=lambda p: p.field)
    assert out[1][-1] == f"{weight.message} (weight); {verifier.message} (verifier)"
    assert out[1][-2] == f"{weight.code}; {verifier.code}"


def test_xlsx_rows_come_back_as_csv_with_their_problems():
    spec = DatasetSpec(tasks=(TaskSpec("t1", "n", "P", expected_text="A"),))
    data, _ = xlsx_format.write(spec)
    problem = Problem("x", "Something is off.", "t.xlsx", row=2)

    out = rows_of(problems_csv(result_for(data, "t.xlsx", "xlsx", [problem]), data))

    assert out[0][-2:] == ["problem_code", "problem"]
    assert out[1][:3] == ["t1", "n", "P"]
    assert out[1][-2:] == ["x", "Something is off."]
    assert check_xlsx(data)[1] == []


def test_json_results_and_missing_uploads_are_a_list_of_problems():
    problems = [
        Problem("bad_weight", "A weight must be a positive number.", "d.json", line=7, field="w"),
        Problem("no_tasks", "The file has no tasks.", "d.json"),
    ]

    out = rows_of(problems_csv(result_for(b"{}", "d.json", "json", problems), b"{}"))
    unreadable = rows_of(problems_csv(result_for(b"", "q.csv", "csv", problems), None))

    assert out == [
        ["file", "row", "line", "field", "code", "problem"],
        ["d.json", "", "7", "w", "bad_weight", "A weight must be a positive number."],
        ["d.json", "", "", "", "no_tasks", "The file has no tasks."],
    ]
    assert unreadable == out


def test_an_undecodable_csv_falls_back_to_the_list():
    data = b"prompt,answer\nQ,\x81\n"
    _, problems, _ = check_csv(data)

    out = rows_of(problems_csv(result_for(data, "t.csv", "csv", problems), data))

    assert out[0] == ["file", "row", "line", "field", "code", "problem"]
    assert len(out) == 2
