"""The .xlsx reader: the first sheet, numbered as Excel shows it, and bounded."""

from __future__ import annotations

import io
import zipfile

from openpyxl import Workbook

from datasets_app.importing import columns, xlsx_format
from tests.importing.csv_helpers import check_xlsx


def workbook_bytes(*sheets: list[list[object]], first_row: int = 1) -> bytes:
    workbook = Workbook()
    workbook.remove(workbook.active)
    for number, rows in enumerate(sheets):
        sheet = workbook.create_sheet(f"Sheet{number + 1}")
        for offset, row in enumerate(rows):
            for column, value in enumerate(row, 1):
                sheet.cell(row=first_row + offset, column=column, value=value)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def test_first_sheet_imports_with_numbers_as_the_text_typed():
    data = workbook_bytes(
        [
            ["Task ID", "Prompt", "Expected Answer", "Criterion", "Weight"],
            [1, "What is 2+2?", 4, None, None],
            [2.0, "Half of 1?", 0.5, "Shows the working", 2.5],
        ]
    )

    plan, problems, _ = check_xlsx(data, "quiz.xlsx")

    assert problems == []
    assert [(t.id, t.expected_text) for t in plan.tasks] == [("1", "4"), ("2", "0.5")]
    assert plan.tasks[1].criteria[-1].weight == 2.5
    assert plan.name == "quiz"


def test_rows_are_numbered_as_excel_shows_them():
    data = workbook_bytes(
        [["prompt", "answer", "weight"], ["Q1", "A"], [None], ["Q2", None]], first_row=3
    )

    parsed = xlsx_format.read(data, "t.xlsx")
    _, problems, _ = check_xlsx(data)

    assert parsed.detected == "Excel workbook, sheet “Sheet1”"
    # Header on row 3, Q1 on 4, a blank row 5, Q2 on row 6.
    assert [p.row for p in problems] == [6]


def test_other_sheets_are_named_in_a_warning():
    data = workbook_bytes([["prompt", "answer"], ["Q", "A"]], [["notes"], ["x"]])

    _, problems, warnings = check_xlsx(data)

    assert problems == []
    assert xlsx_format.OTHER_SHEETS in [w.code for w in warnings]


def test_a_corrupt_workbook_is_one_problem():
    _, problems, _ = check_xlsx(b"PK\x03\x04 this is not really a zip")

    assert [p.code for p in problems] == [xlsx_format.NOT_A_WORKBOOK]


def test_a_zip_that_is_not_a_workbook_is_one_problem():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tasks.csv", "prompt,answer\nQ,A\n")

    _, problems, _ = check_xlsx(buffer.getvalue())

    assert [p.code for p in problems] == [xlsx_format.NOT_A_WORKBOOK]


def test_a_sheet_with_too_many_rows_is_refused(monkeypatch):
    monkeypatch.setattr(xlsx_format, "MAX_ROWS", 3)
    data = workbook_bytes([["prompt", "answer"], ["Q1", "A"], ["Q2", "B"], ["Q3", "C"]])

    _, problems, _ = check_xlsx(data)

    assert [(p.code, p.row) for p in problems] == [(xlsx_format.TOO_MANY_ROWS, 4)]


def test_a_value_past_the_column_limit_is_refused():
    row = ["prompt", "answer"] + [None] * (xlsx_format.MAX_COLUMNS - 2) + ["too far"]
    data = workbook_bytes([row, ["Q", "A"]])

    _, problems, _ = check_xlsx(data)

    assert [(p.code, p.row) for p in problems] == [(xlsx_format.TOO_MANY_COLUMNS, 1)]
    assert "column CW" in problems[0].message


def test_a_workbook_that_unpacks_too_large_is_refused_before_opening(monkeypatch):
    monkeypatch.setattr(xlsx_format, "MAX_UNPACKED_BYTES", 1000)
    data = workbook_bytes([["prompt", "answer"], ["Q", "A" * 5000]])

    _, problems, _ = check_xlsx(data)

    assert [p.code for p in problems] == [xlsx_format.TOO_LARGE_UNPACKED]


def test_an_empty_sheet_is_a_problem():
    _, problems, _ = check_xlsx(workbook_bytes([]))

    assert [p.code for p in problems] == [xlsx_format.EMPTY_SHEET]


def test_same_columns_and_problems_as_csv():
    data = workbook_bytes([["question", "grading_notes"], ["What?", "- notes"]])

    _, problems, _ = check_xlsx(data)

    assert [p.code for p in problems] == [columns.NO_ANSWER_COLUMN]


def test_written_cells_are_text_never_formulas():
    from openpyxl import load_workbook

    from datasets_app.importing.spec import DatasetSpec, TaskSpec

    spec = DatasetSpec(tasks=(TaskSpec("t1", "n", "=1+1", expected_text="@x"),))
    data, _ = xlsx_format.write(spec)

    sheet = load_workbook(io.BytesIO(data)).worksheets[0]
    cells = {cell.value: cell.data_type for row in sheet.iter_rows() for cell in row}
    assert cells["'=1+1"] == "s"
    assert cells["'@x"] == "s"
