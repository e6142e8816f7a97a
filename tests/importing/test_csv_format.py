"""The .csv reader: columns, layouts, and the bytes spreadsheets really write."""

from __future__ import annotations

import codecs
import csv

import pytest

from datasets_app.importing import columns, csv_format, document, shapes
from datasets_app.importing.checker import check_file
from datasets_app.importing.columns import field_for_header
from datasets_app.importing.spec import MAX_TEXT_CHARS, CheckOptions
from tests.importing.csv_helpers import FILES, check_csv


def codes(problems) -> list[str]:
    return [problem.code for problem in problems]


# -- layouts ---------------------------------------------------------------------------------


def test_one_row_per_task_imports_expected_answers_byte_exact():
    plan, problems, _ = check_csv((FILES / "expected_answers.csv").read_bytes(), "finance.csv")

    assert problems == []
    assert [task.id for task in plan.tasks] == ["task-1", "task-2"]
    assert plan.tasks[0].expected_text == "25% growth:\n(150 - 120) / 120 = 0.25."
    assert plan.tasks[0].name == (
        "Revenue was $120M in 2024 and $150M in 2025. What was the growth rate?"
    )
    assert plan.tasks[0].expected_verifier is None
    assert plan.tasks[1].expected_verifier.kind == "exact_match"
    assert plan.name == "finance"


def test_rows_of_one_task_id_are_one_task_and_leading_criteria_are_for_every_task():
    plan, problems, _ = check_csv((FILES / "rubric.csv").read_bytes())

    assert problems == []
    assert [(c.id, c.weight) for c in plan.criteria] == [("no-invented-facts", 20.0)]
    shipment, refund = plan.tasks
    assert shipment.id == "delayed-shipment"
    assert [(c.id, c.weight) for c in shipment.criteria] == [
        ("apology", 10.0),
        ("new-date", 20.0),
        ("tone", 10.0),
    ]
    assert shipment.criteria[2].verifier.kind == "llm_judge"
    assert shipment.criteria[2].verifier.instructions.endswith("{{criterion}}")
    # A blank criterion id is numbered; a blank weight counts as 1.
    assert [(c.id, c.weight) for c in refund.criteria] == [("c1", 1.0)]


def test_older_prompt_name_golden_output_files_still_import():
    plan, problems, _ = check_csv((FILES / "legacy_golden.csv").read_bytes())

    assert problems == []
    assert [(t.name, t.prompt, t.expected_text) for t in plan.tasks] == [
        ("Addition", "What is 2+2?", "4"),
        ("Capital", "Capital of France?", "Paris"),
    ]


def test_without_a_task_id_column_rows_repeating_a_prompt_add_criteria():
    data = b"prompt,criterion\nWrite a haiku.,Has three lines.\nWrite a haiku.,Mentions snow.\n"

    plan, problems, _ = check_csv(data)

    assert problems == []
    assert len(plan.tasks) == 1
    assert [c.criterion for c in plan.tasks[0].criteria] == ["Has three lines.", "Mentions snow."]


def test_files_are_one_per_line_because_names_contain_pipes():
    link = "https://example.com/maud/Cubic.pdf||Cubic_Amendment%20No.1.txt"
    data = f'prompt,answer,input_files\nQ,A,"{link}\nhttps://example.com/b.txt"\n'.encode()

    plan, problems, _ = check_csv(data)

    assert problems == []
    assert [f.url for f in plan.tasks[0].input_files] == [link, "https://example.com/b.txt"]


def test_generated_ids_skip_ids_the_file_uses():
    data = b"task_id,prompt,answer\ntask-1,First,1\n,Second,2\n"

    plan, problems, _ = check_csv(data)

    assert problems == []
    assert [t.id for t in plan.tasks] == ["task-1", "task-2"]


@pytest.mark.parametrize(
    ("header", "field"),
    [
        ("Expected Completion", "expected"),
        ("expected-completion", "expected"),
        ("goldenOutput", "expected"),
        ("golden_output", "expected"),
        ("GROUND_TRUTH", "expected"),
        ("__expected", "expected"),
        ("User Input", "prompt"),
        (" Question ", "prompt"),
        ("Task ID", "task_id"),
        ("Rubric", "criterion"),
        ("expected_source", None),
        ("incorrect_answer", None),
    ],
)
def test_header_names_match_case_and_separator_insensitively(header, field):
    assert field_for_header(header) == field


def test_unread_columns_are_named_in_one_warning():
    _, problems, warnings = check_csv(b"question,answer,source_file,notes\nQ,A,a.pdf,n\n")

    assert problems == []
    assert [w.message for w in warnings] == [
        columns.IGNORED_COLUMNS.format(columns="source_file, notes")
    ]


# -- files that are not dataset files ---------------------------------------------------------


def test_no_prompt_column_is_one_problem_naming_the_columns():
    _, problems, _ = check_csv(b"foo\n1\n")

    assert len(problems) == 1
    assert problems[0].code == columns.NO_PROMPT_COLUMN.code
    assert problems[0].message.startswith(
        "This file has no prompt column. Found: foo. Expected one of: prompt, input,"
    )


def test_no_answer_or_criterion_column_is_one_problem_naming_the_columns():
    _, problems, _ = check_csv(b"question\nWhat?\n")

    assert codes(problems) == [columns.NO_ANSWER_COLUMN.code]
    assert problems[0].message.startswith(
        "This file has no expected-answer column. Found: question. "
        "Expected one of: expected_answer, expected,"
    )


def test_columns_that_do_not_say_which_is_which_ask_for_a_mapping():
    _, problems, _ = check_csv(b"question,grading_notes\nWhat?,- notes\n")

    assert codes(problems) == [shapes.NEEDS_MAPPING.code]
    assert problems[0].message == shapes.NEEDS_MAPPING.format(
        kind="columns",
        missing="expected answer",
        found="question, grading_notes",
        basis=shapes.BEST_GUESS,
        guess="expected answer = grading_notes",
        flags="--map expected=grading_notes",
    )


def test_two_columns_for_one_field_is_a_problem():
    _, problems, _ = check_csv(b"question,query,answer\nA,B,C\n")

    assert codes(problems) == [columns.DUPLICATE_COLUMN.code]
    assert problems[0].row == 1


def test_a_promptfoo_assertion_without_an_equivalent_is_named_on_its_row():
    data = b"prompt,__expected\nSay hello in French,icontains:bonjour\nSay 2+2,4\n"

    _, problems, _ = check_csv(data)

    assert codes(problems) == [shapes.PROMPTFOO_UNSUPPORTED.code]
    assert (problems[0].row, problems[0].field) == (2, "__expected")
    assert problems[0].message.startswith("The promptfoo assertion icontains (bonjour)")


def test_promptfoo_equals_and_rubric_assertions_become_exact_answers_and_criteria():
    data = (
        b"question,__expected1,__expected2\n"
        b"Say 2+2,equals:4,llm-rubric:Is polite\n"
        b"Greet,grade:Says hello,llm-rubric:Is short\n"
    )

    plan, problems, _ = check_csv(data)

    assert problems == []
    first, second = plan.tasks
    assert (first.expected_text, first.expected_verifier.kind) == ("4", "exact_match")
    assert [c.criterion for c in first.criteria][-1] == "Is polite"
    assert [c.criterion for c in second.criteria] == ["Says hello", "Is short"]


def test_a_plain_promptfoo_expected_value_is_an_expected_answer():
    plan, problems, _ = check_csv(b"prompt,__expected\nSay 2+2,4\n")

    assert problems == []
    # promptfoo compares a value with no assertion type for equality.
    assert plan.tasks[0].expected_text == "4"
    assert plan.tasks[0].expected_verifier.kind == "exact_match"


# -- row shapes -------------------------------------------------------------------------------


def test_rows_are_numbered_by_record_even_when_a_cell_spans_lines():
    data = b'prompt,answer,weight\n"line one\nline two",A\n,,\n\nQ2,B\nQ3,C,x,extra\n'

    _, problems, _ = check_csv(data)

    # Record 1 is the header; the blank record 3 and the empty line 4 still count as rows.
    assert [(p.code, p.row) for p in problems] == [(columns.EXTRA_CELLS.code, 6)]


def test_a_trailing_comma_in_the_header_is_ignored_but_a_value_under_it_is_not():
    data = b'question,expected_answer,\r\n"Q\n",A,\r\nase, d",64\r\n'

    _, problems, _ = check_csv(data)

    assert [(p.code, p.row) for p in problems] == [(columns.NAMELESS_COLUMN_VALUE.code, 3)]
    assert "64" in problems[0].message
    assert "column C" in problems[0].message


def test_short_rows_are_padded_with_blanks():
    plan, problems, _ = check_csv(b"prompt,answer,name\nQ,A\n")

    assert problems == []
    assert plan.tasks[0].name == "Q"


def test_a_different_prompt_for_the_same_task_id_is_a_problem():
    data = b"task_id,prompt,criterion\nt1,First,a\nt1,Other,b\n"

    _, problems, _ = check_csv(data)

    assert [(p.code, p.row, p.field) for p in problems] == [
        (columns.CONFLICTING_TASK_FIELD.code, 3, "prompt")
    ]


def test_a_task_id_repeated_without_a_criterion_is_a_problem():
    data = b"task_id,prompt,answer\nt1,First,a\nt1,First,a\n"

    _, problems, _ = check_csv(data)

    assert [(p.code, p.row) for p in problems] == [(columns.REPEATED_TASK_ROW.code, 3)]


def test_an_answer_before_any_task_belongs_to_no_task():
    _, problems, _ = check_csv(b"prompt,answer\n,A\nQ,B\n")

    assert [(p.code, p.row) for p in problems] == [(columns.ROW_WITHOUT_TASK.code, 2)]


def test_header_only_file_is_a_problem():
    _, problems, _ = check_csv(b"prompt,expected_answer\r\n")

    assert codes(problems) == [columns.NO_ROWS.code]
    assert problems[0].message == columns.NO_ROWS.message


def test_validator_problems_land_on_the_row_and_column_of_the_value():
    data = b"task_id,prompt,criterion,Weight,verifier\nt1,P,a,2\nt1,,b,heavy\nt1,,c,1,magic\n"

    _, problems, _ = check_csv(data)

    found = [(p.code, p.row, p.field) for p in problems]
    assert (document.BAD_WEIGHT.code, 3, "Weight") in found
    assert (document.UNKNOWN_VERIFIER_KIND.code, 4, "verifier") in found


def test_verifier_cells_repeated_on_many_rows_are_each_reported_or_each_kept():
    data = (
        b"task_id,prompt,criterion,verifier,verifier_output_type\n"
        b"t1,P,a,llm_judge,boolean\nt1,,b,magic,\nt1,,c,llm_judge,boolean\n"
        b"t2,Q,d,magic,\nt2,,e,llm_judge,boolean\n"
    )

    _, problems, _ = check_csv(data)

    assert [(p.code, p.row) for p in problems] == [
        (document.UNKNOWN_VERIFIER_KIND.code, 3),
        (document.UNKNOWN_VERIFIER_KIND.code, 5),
    ]

    plan, problems, _ = check_csv(data.replace(b"magic,", b"exact_match,"))

    assert problems == []
    graded = [
        (c.criterion, c.verifier.kind, c.verifier.output_type)
        for t in plan.tasks
        for c in t.criteria
    ]
    assert graded == [
        ("a", "llm_judge", "boolean"),
        ("b", "exact_match", None),
        ("c", "llm_judge", "boolean"),
        ("d", "exact_match", None),
        ("e", "llm_judge", "boolean"),
    ]


def test_a_missing_expected_answer_lands_on_the_task_row():
    _, problems, _ = check_csv(b"prompt,answer\nQ1,A\nQ2,\n")

    assert [(p.code, p.row) for p in problems] == [(document.NOTHING_TO_GRADE.code, 3)]


# -- bytes ------------------------------------------------------------------------------------


def test_windows_1252_semicolon_crlf():
    parsed = csv_format.read((FILES / "windows_1252_semicolon.csv").read_bytes(), "fr.csv")
    plan, problems, _ = check_csv((FILES / "windows_1252_semicolon.csv").read_bytes())

    assert parsed.detected == "CSV, Windows-1252, ';'-delimited, CRLF"
    assert problems == []
    assert [(t.prompt, t.expected_text) for t in plan.tasks] == [
        ("Combien coûte un café ?", "2,50 €"),
        ("Où est l'été ; vraiment ?", "En août"),
    ]


def test_utf16_with_bom_and_tabs():
    data = (FILES / "utf16_tab.csv").read_bytes()

    plan, problems, _ = check_csv(data)

    detected = "CSV, UTF-16 LE, tab-delimited, CRLF, deepeval goldens (input + expected_output)"
    # The reader's part of the Detected line, then the shape's.
    assert check_file(data, "t.csv").detected == detected
    assert problems == []
    assert (plan.tasks[0].prompt, plan.tasks[0].expected_text) == ("Say ‘hi’", "Hi — there")


def test_utf16_big_endian():
    data = codecs.BOM_UTF16_BE + "prompt,answer\nΩ,ω\n".encode("utf-16-be")

    plan, problems, _ = check_csv(data)

    assert csv_format.read(data, "t.csv").detected == "CSV, UTF-16 BE, ','-delimited"
    assert problems == []
    assert plan.tasks[0].expected_text == "ω"


def test_utf8_bom_is_not_part_of_the_first_column_name():
    data = codecs.BOM_UTF8 + "prompt;answer\nQ;Ä\n".encode()

    plan, problems, _ = check_csv(data)

    assert csv_format.read(data, "t.csv").detected == "CSV, UTF-8 with BOM, ';'-delimited"
    assert problems == []
    assert plan.tasks[0].expected_text == "Ä"


def test_delimiter_is_counted_outside_quotes_in_the_header():
    data = b'"prompt;with;semicolons",answer\nQ,A\n'

    parsed = csv_format.read(data, "t.csv")

    assert parsed.detected == "CSV, UTF-8, ','-delimited"


def test_bare_lf_inside_crlf_records():
    data = b'prompt,answer\r\n"two\nlines","x\r\ny"\r\n'

    plan, problems, _ = check_csv(data)

    assert problems == []
    assert (plan.tasks[0].prompt, plan.tasks[0].expected_text) == ("two\nlines", "x\r\ny")


def test_nul_byte_is_a_problem_not_an_exception():
    # In an imported column, on its row; UTF-16 without its mark (NUL every other byte) is
    # the file's problem.
    _, problems, _ = check_csv(b"prompt,answer\nQ,A\x00\n")
    assert codes(problems) == [shapes.NUL_IN_CELL.code]
    assert (problems[0].row, problems[0].field) == (2, "answer")

    _, problems, _ = check_csv("prompt,answer\nQ,A\n".encode("utf-16-le"))
    assert codes(problems) == [csv_format.NUL_BYTE.code]
    assert problems[0].line == 1


def test_bytes_no_code_page_reads_are_a_problem_naming_the_byte():
    _, problems, _ = check_csv(b"prompt,answer\nQ,A\n\x81\x8d\x8f\x90\x9d\x00\n" * 3)

    assert codes(problems) == [csv_format.NOT_TEXT.code]
    assert "0x81 on line 3" in problems[0].message


def test_bytes_that_read_as_several_code_pages_are_the_persons_to_choose():
    # An English file saved as GBK: its curly quotes and dashes are two bytes each, which
    # Big5, EUC-KR and Windows-1256 read too, as other characters. Nothing is guessed.
    text = (
        "id,prompt,expected\n1,Maxwell’s equations — what’s “curl”?,Ampere’s law\n"
        "2,It’s “quoted” here,the answer’s fine\n"
    )
    _, problems, _ = check_csv(text.encode("gbk"))

    assert codes(problems) == [csv_format.ENCODING_UNSURE.code]
    message = problems[0].message
    assert "as GBK (Simplified Chinese), “1,Maxwell’s equations — what’s “curl”?" in message
    assert "as Big5 (Traditional Chinese), “1,Maxwell＊s" in message

    chosen = CheckOptions(encoding="gb18030")
    plan, problems, warnings = check_csv(text.encode("gbk"), options=chosen)
    assert problems == [] and warnings == []
    assert plan.tasks[0].prompt == "Maxwell’s equations — what’s “curl”?"


def test_a_legacy_code_page_is_read_and_said_with_a_sample():
    data = "prompt;expected\nWie heißt die Straße?;Schöne Grüße aus Köln\n".encode("cp1252")
    parsed = csv_format.read(data, "de.csv")

    assert parsed.detected == "CSV, Windows-1252, ';'-delimited"
    assert [w.code for w in parsed.warnings] == [csv_format.ENCODING_DETECTED.code]
    assert "read as Windows-1252 (Western European)" in parsed.warnings[0].message
    assert "“Wie heißt die Straße?;Schöne Grüße aus Köln…”" in parsed.warnings[0].message

    data = "prompt,expected\nКак дела у тебя сегодня?,Хорошо спасибо большое\n".encode("cp1251")
    plan, _, warnings = check_csv(data)
    assert plan.tasks[0].prompt == "Как дела у тебя сегодня?"
    assert "read as Windows-1251 (Cyrillic)" in warnings[0].message


def test_the_encoding_a_person_chose_is_read_strictly_and_a_byte_order_mark_wins():
    data = "prompt,expected\nQ,“A”\n".encode("gbk")
    _, problems, _ = check_csv(data, options=CheckOptions(encoding="utf-8"))
    assert codes(problems) == [csv_format.NOT_IN_ENCODING.code]
    assert problems[0].message == csv_format.NOT_IN_ENCODING.format(
        encoding="UTF-8", byte="0xA1", line_number=2
    )

    marked = codecs.BOM_UTF8 + "prompt,expected\nQ,“A”\n".encode()
    plan, problems, warnings = check_csv(marked, options=CheckOptions(encoding="cp1252"))
    assert problems == [] and warnings == [] and plan.tasks[0].expected_text == "“A”"


def test_an_xlsx_named_csv_is_a_problem():
    _, problems, _ = check_csv(b"PK\x03\x04rest-of-a-zip")

    assert codes(problems) == [csv_format.LOOKS_LIKE_XLSX.code]


def test_a_cell_past_the_field_size_limit_is_a_problem_naming_its_row():
    limit = csv.field_size_limit()
    assert limit == MAX_TEXT_CHARS  # the cap on every text field, not the csv module's own
    data = b"prompt,answer\nQ,A\nQ2," + b"x" * (limit + 1) + b"\n"

    _, problems, _ = check_csv(data)

    assert [(p.code, p.row) for p in problems] == [(csv_format.FIELD_TOO_LARGE.code, 3)]


def test_empty_file_is_a_problem():
    _, problems, _ = check_csv(b"\r\n,,\r\n")

    assert codes(problems) == [csv_format.EMPTY_FILE.code]


def test_neutralised_formula_cells_read_back_as_typed():
    data = b"prompt,answer\n'=SUM(A1),'-5\n'hello,''+x\n"

    plan, problems, _ = check_csv(data)

    assert problems == []
    assert [(t.prompt, t.expected_text) for t in plan.tasks] == [
        ("=SUM(A1)", "-5"),
        ("'hello", "'+x"),
    ]


@pytest.mark.parametrize("other_cell", ["plain", "it's"])
def test_neutralised_formula_cells_of_a_rubric_read_back_as_typed(other_cell):
    # The one-search-per-file shortcut for files without any `'` must not skip these.
    data = (
        "task_id,prompt,criterion\n"
        f"t1,{other_cell},'=Apologizes once\n"
        "t1,,'-Gives the date\n"
        "t2,Second,Plain\n"
    ).encode()

    plan, problems, _ = check_csv(data)

    assert problems == []
    assert [[c.criterion for c in task.criteria] for task in plan.tasks] == [
        ["=Apologizes once", "-Gives the date"],
        ["Plain"],
    ]


def test_a_header_below_a_title_and_a_blank_row_is_found_and_said():
    # As some tools export a sheet: a title line (padded with delimiters) and a blank row.
    data = (
        b"Exported from the eval tool on 2024-05-01. Do not edit.,,\r\n,,\r\n"
        b"id,prompt,expected\r\nq1,What is 2+2?,4\r\nq2,Capital of France?,Paris\r\n"
    )
    plan, problems, warnings = check_csv(data)

    assert problems == []
    assert [(task.id, task.expected_text) for task in plan.tasks] == [("q1", "4"), ("q2", "Paris")]
    (warning,) = warnings
    assert (warning.code, warning.row) == (columns.HEADER_BELOW_PREAMBLE.code, 3)
    assert warning.message == columns.HEADER_BELOW_PREAMBLE.format(above="rows 1 to 2 above it are")


def test_a_problem_below_a_title_row_names_the_row_a_spreadsheet_shows():
    plan, problems, _ = check_csv(b"My eval set\nprompt,expected\nQ1,A1\n,A2\n")

    assert plan is None
    assert [problem.row for problem in problems] == [4]


@pytest.mark.parametrize(
    "data",
    [
        b"prompt,expected\nQ,A\n",
        b"prompt\nQ\n",
        b"prompt,,\nQ,,\n",
        b"note,\nprompt,expected\n",
    ],
)
def test_a_file_that_starts_with_its_header_is_read_from_row_1(data):
    decoded = csv_format.decode(data, "a.csv")
    assert decoded.table is not None and decoded.table.header_row == 1
    assert decoded.warnings == []
