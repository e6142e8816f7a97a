"""The .xlsx reader: the first sheet, numbered as Excel shows it, and bounded."""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import replace

from openpyxl import Workbook

from datasets_app.importing import checker, columns, shapes, xlsx_format
from datasets_app.importing.spec import CheckOptions
from tests.importing.csv_helpers import check_csv, check_xlsx


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
    assert xlsx_format.OTHER_SHEETS.code in [w.code for w in warnings]


def test_a_corrupt_workbook_is_one_problem():
    _, problems, _ = check_xlsx(b"PK\x03\x04 this is not really a zip")

    assert [p.code for p in problems] == [xlsx_format.NOT_A_WORKBOOK.code]


def test_a_zip_that_is_not_a_workbook_is_one_problem():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tasks.csv", "prompt,answer\nQ,A\n")

    _, problems, _ = check_xlsx(buffer.getvalue())

    assert [p.code for p in problems] == [xlsx_format.NOT_A_WORKBOOK.code]


def test_a_sheet_with_too_many_rows_is_refused(monkeypatch):
    monkeypatch.setattr(xlsx_format, "MAX_ROWS", 3)
    data = workbook_bytes([["prompt", "answer"], ["Q1", "A"], ["Q2", "B"], ["Q3", "C"]])

    _, problems, _ = check_xlsx(data)

    assert [(p.code, p.row) for p in problems] == [(xlsx_format.TOO_MANY_ROWS.code, 4)]


def test_a_value_past_the_column_limit_is_refused():
    row = ["prompt", "answer"] + [None] * (xlsx_format.MAX_COLUMNS - 2) + ["too far"]
    data = workbook_bytes([row, ["Q", "A"]])

    _, problems, _ = check_xlsx(data)

    assert [(p.code, p.row) for p in problems] == [(xlsx_format.TOO_MANY_COLUMNS.code, 1)]
    assert "column CW" in problems[0].message


def test_a_workbook_that_unpacks_too_large_is_refused_before_opening(monkeypatch):
    monkeypatch.setattr(xlsx_format, "MAX_UNPACKED_BYTES", 1000)
    data = workbook_bytes([["prompt", "answer"], ["Q", "A" * 5000]])

    _, problems, _ = check_xlsx(data)

    assert [p.code for p in problems] == [xlsx_format.TOO_LARGE_UNPACKED.code]


def test_an_empty_sheet_is_a_problem():
    _, problems, _ = check_xlsx(workbook_bytes([]))

    assert [p.code for p in problems] == [xlsx_format.EMPTY_SHEET.code]


def test_same_columns_and_problems_as_csv():
    data = workbook_bytes([["question", "grading_notes"], ["What?", "- notes"]])

    _, problems, _ = check_xlsx(data, "t.xlsx")

    _, csv_problems, _ = check_csv(b"question,grading_notes\nWhat?,- notes\n")
    assert problems == [replace(p, file="t.xlsx") for p in csv_problems]


def test_written_cells_are_text_never_formulas():
    from openpyxl import load_workbook

    from datasets_app.importing.spec import DatasetSpec, TaskSpec

    spec = DatasetSpec(tasks=(TaskSpec("t1", "n", "=1+1", expected_text="@x"),))
    data, _ = xlsx_format.write(spec)

    sheet = load_workbook(io.BytesIO(data)).worksheets[0]
    cells = {cell.value: cell.data_type for row in sheet.iter_rows() for cell in row}
    assert cells["'=1+1"] == "s"
    assert cells["'@x"] == "s"


def with_sheet_xml(data: bytes, edit, extra: dict[str, str] | None = None) -> bytes:
    """The workbook with its first sheet's XML passed through `edit` (str -> str), and the
    parts in `extra` added (name -> XML)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                content = edit(content.decode()).encode()
            target.writestr(info.filename, content)
        for name, xml in (extra or {}).items():
            target.writestr(name, xml)
    return buffer.getvalue()


def with_shared_string(data: bytes, cell: str, text: str) -> bytes:
    """The workbook with `cell` of its first sheet pointing at a shared string `text`
    (openpyxl itself writes inline strings, and cuts them at Excel's 32,767 characters)."""
    content_types = zipfile.ZipFile(io.BytesIO(data)).read("[Content_Types].xml").decode()
    override = (
        '<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
    )
    table = (
        '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" '
        f'uniqueCount="1"><si><t>{text}</t></si></sst>'
    )
    pattern = re.compile(f'<c r="{cell}"[^>]*>.*?</c>')
    data = with_sheet_xml(
        data,
        lambda xml: pattern.sub(f'<c r="{cell}" t="s"><v>0</v></c>', xml),
        {"xl/sharedStrings.xml": table},
    )
    # Replace the content types part (written once above, unchanged) with one naming it.
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == "[Content_Types].xml":
                content = content_types.replace("</Types>", override).encode()
            target.writestr(info.filename, content)
    return buffer.getvalue()


def test_an_empty_cell_a_billion_rows_down_is_read_by_its_row_number():
    # A 2 KB workbook whose one empty cell sits at row 1,000,000,000: openpyxl's iter_rows
    # would make up the billion rows in between (hours of work) before the reader saw it.
    data = with_sheet_xml(
        workbook_bytes([["prompt", "answer"], ["Q1", "A"]]),
        lambda xml: xml.replace(
            "</sheetData>", '<row r="1000000000"><c r="A1000000000" s="0"/></row></sheetData>'
        ),
    )

    plan, problems, _ = check_xlsx(data)

    assert problems == []
    assert [task.prompt for task in plan.tasks] == ["Q1"]


def test_a_value_a_billion_rows_down_is_too_many_rows():
    data = with_sheet_xml(
        workbook_bytes([["prompt", "answer"], ["Q1", "A"]]),
        lambda xml: xml.replace(
            "</sheetData>",
            '<row r="1000000000"><c r="B1000000000" t="inlineStr"><is><t>x</t></is></c>'
            "</row></sheetData>",
        ),
    )

    _, problems, _ = check_xlsx(data)

    assert [(p.code, p.row) for p in problems] == [(xlsx_format.TOO_MANY_ROWS.code, 1_000_000_000)]


def test_a_value_far_past_the_column_limit_is_refused():
    data = with_sheet_xml(
        workbook_bytes([["prompt", "answer"], ["Q1", "A"]]),
        lambda xml: xml.replace(
            '<c r="B2"', '<c r="XFD2" t="inlineStr"><is><t>far</t></is></c><c r="B2"'
        ),
    )

    _, problems, _ = check_xlsx(data)

    assert [(p.code, p.row) for p in problems] == [(xlsx_format.TOO_MANY_COLUMNS.code, 2)]


def test_a_shared_string_table_past_the_cap_is_refused_while_it_is_read(monkeypatch):
    # The file: one huge string in a small workbook, refused by the bytes inflated,
    # not by what the zip declares (the declared total stays under its own limit here).
    monkeypatch.setattr(xlsx_format, "MAX_PART_BYTES", 100_000)
    data = with_shared_string(
        workbook_bytes([["prompt", "answer"], ["Q", "A"]]), "B2", "A" * 200_000
    )
    assert len(data) < 10_000

    _, problems, _ = check_xlsx(data)

    assert [p.code for p in problems] == [xlsx_format.TOO_LARGE_UNPACKED.code]
    assert "shared strings" in problems[0].message


def test_a_shared_string_within_the_cap_is_read():
    data = with_shared_string(workbook_bytes([["prompt", "answer"], ["Q", "A"]]), "B2", "forty-two")

    plan, problems, _ = check_xlsx(data)

    assert problems == []
    assert plan.tasks[0].expected_text == "forty-two"


def test_a_sheet_past_the_cap_is_refused_while_it_is_read(monkeypatch):
    monkeypatch.setattr(xlsx_format, "MAX_PART_BYTES", 50_000)
    rows = [["prompt", "answer"]] + [[f"Q{n}", n] for n in range(5_000)]
    data = workbook_bytes(rows)

    _, problems, _ = check_xlsx(data)

    assert [p.code for p in problems] == [xlsx_format.TOO_LARGE_UNPACKED.code]
    assert "sheet" in problems[0].message


def test_a_shared_string_past_the_cap_on_text_is_refused_at_its_first_cell():
    # One string, referenced by every cell, would become a copy per cell after the reader.
    from datasets_app.importing.spec import MAX_TEXT_CHARS

    data = with_shared_string(
        workbook_bytes([["prompt", "answer"], ["Q", "A"]]), "B2", "x" * (MAX_TEXT_CHARS + 1)
    )

    _, problems, _ = check_xlsx(data)

    assert [(p.code, p.row) for p in problems] == [(xlsx_format.CELL_TOO_LONG.code, 2)]


def test_a_sheet_past_the_cap_on_a_files_text_is_refused(monkeypatch):
    monkeypatch.setattr(xlsx_format, "MAX_TEXT_CHARS_PER_FILE", 40)
    data = workbook_bytes([["prompt", "answer"], ["Q" * 10, "A" * 10], ["Q" * 10, "A" * 10]])

    _, problems, _ = check_xlsx(data)

    assert [(p.code, p.row) for p in problems] == [(xlsx_format.TOO_MUCH_TEXT.code, 3)]


def test_a_sheet_of_too_many_elements_is_refused_without_reading_on(monkeypatch):
    monkeypatch.setattr(xlsx_format, "MAX_SHEET_ELEMENTS", 200)
    data = workbook_bytes([["prompt", "answer"]] + [[f"Q{n}", "A"] for n in range(100)])

    _, problems, _ = check_xlsx(data)

    assert [p.code for p in problems] == [xlsx_format.TOO_LARGE_UNPACKED.code]
    assert "more than 200 cells and other elements" in problems[0].message


def test_parts_that_describe_the_workbook_have_a_smaller_cap(monkeypatch):
    monkeypatch.setattr(xlsx_format, "MAX_OTHER_PART_BYTES", 1000)
    data = workbook_bytes([["prompt", "answer"], ["Q", "A"]])  # styles.xml is 2.6 KB

    _, problems, _ = check_xlsx(data)

    assert [p.code for p in problems] == [xlsx_format.TOO_LARGE_UNPACKED.code]
    assert "part xl/" in problems[0].message


def test_what_follows_the_sheets_data_is_not_read():
    # openpyxl builds an object for each conditional format after the data; the reader
    # stops at the end of the data, so a damaged one there is never even parsed.
    data = with_sheet_xml(
        workbook_bytes([["prompt", "answer"], ["Q1", "A"]]),
        lambda xml: xml.replace("</sheetData>", "</sheetData><conditionalFormatting><bad"),
    )

    plan, problems, _ = check_xlsx(data)

    assert problems == []
    assert [task.prompt for task in plan.tasks] == ["Q1"]


def test_a_pandas_index_and_other_tools_headers_read_as_in_a_csv():
    # df.to_excel() writes the index as a first column with no header.
    data = workbook_bytes(
        [[None, "Questions", "Reference Answer"], [0, "Q1?", "A1"], [1, "Q2?", 2]]
    )

    plan, problems, warnings = check_xlsx(data)

    assert problems == []
    assert [(t.prompt, t.expected_text) for t in plan.tasks] == [("Q1?", "A1"), ("Q2?", "2")]
    assert [w.code for w in warnings] == [shapes.PANDAS_INDEX.code]


def test_a_sheets_header_is_found_below_title_lines_as_a_csvs_is():
    rows = [["Exported from EvalTool"], [], ["id", "prompt", "expected"], ["a", "Q?", "A"]]
    data = workbook_bytes(rows)
    csv_text = b"Exported from EvalTool,,\n,,\nid,prompt,expected\na,Q?,A\n"

    sheet = checker.check_file(data, "t.xlsx")
    text = checker.check_file(csv_text, "t.csv")

    assert sheet.ok and [t.prompt for t in sheet.plan.tasks] == ["Q?"]
    said = [(w.code, w.row, w.message) for w in sheet.warnings]
    assert said == [(w.code, w.row, w.message) for w in text.warnings]
    assert said[0][:2] == (columns.HEADER_BELOW_PREAMBLE.code, 3)


def test_the_header_row_a_person_chose_is_read_and_a_blank_one_refused():
    data = workbook_bytes([["Report", "Q3"], ["id", "prompt", "expected"], ["a", "Q?", "A"]])

    chosen = checker.check_file(data, "t.xlsx", options=CheckOptions(header_row=2))
    blank = checker.check_file(data, "t.xlsx", options=CheckOptions(header_row=7))

    assert chosen.ok and [t.expected_text for t in chosen.plan.tasks] == ["A"]
    assert [(p.code, p.message) for p in blank.problems] == [
        (columns.NO_HEADER_THERE.code, columns.NO_HEADER_THERE.format(number=7, rows=3))
    ]
