"""The import dialog's four starter templates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_app.importing import document as doc
from datasets_app.importing import starters
from datasets_app.importing.checker import check_file, preview

FILES = Path(__file__).resolve().parent.parent / "files" / "json"


def test_the_dialog_offers_four_starters_in_the_page_s_order():
    assert [(s.slug, s.title, s.file_name) for s in starters.STARTERS] == [
        ("rubric-criteria", "Rubric criteria", "rubric-criteria.json"),
        ("expected-answers", "Expected answers", "expected-answers.json"),
        ("files-in-and-out", "Files in and out", "files-in-and-out.zip"),
        ("blank", "Blank", "blank.json"),
    ]
    assert starters.starter("blank") is starters.STARTERS[-1]
    assert starters.starter("nope") is None


@pytest.mark.parametrize("slug", ["rubric-criteria", "expected-answers"])
def test_json_starters_pass_the_checker_unchanged(slug):
    starter = starters.starter(slug)
    result = check_file(starter.build(), starter.file_name)

    assert result.ok, result.problems
    assert starter.content_type == "application/json"


def test_the_rubric_starter_is_the_page_s_template_with_a_description():
    built = json.loads(starters.rubric_criteria())
    page = json.loads((FILES / "rubric_template.json").read_bytes())

    assert "Criteria in" in built.pop("description")
    # The code's indentation is tidied to four spaces; everything else is the page's.
    code = built["tasks"][0]["criteria"][3]["verifier"].pop("code")
    page["tasks"][0]["criteria"][3]["verifier"].pop("code")
    assert built == page
    assert "def verify(task, output):\n    words" in code


def test_the_rubric_starter_previews_as_one_rubric_task():
    result = check_file(starters.rubric_criteria(), "rubric-criteria.json")

    assert [(p.scored_by, p.criteria, p.total_weight) for p in preview(result)] == [
        ("criteria", 6, 90.0)
    ]
    assert [w.code for w in result.warnings] == [doc.PYTHON_CHECKS_OFF.code]


def test_the_expected_answers_starter_is_the_page_s_template():
    built = json.loads(starters.expected_answers())

    assert built == json.loads((FILES / "expected_answers_template.json").read_bytes())


def test_blank_says_what_to_fill_in_and_its_only_problem_is_no_tasks():
    built = json.loads(starters.blank())
    result = check_file(starters.blank(), "blank.json")

    assert built["tasks"] == []
    assert "Fill in" in built["description"]
    assert [p.code for p in result.problems] == [doc.NO_TASKS.code]


def test_files_in_and_out_passes_the_checker_unchanged():
    starter = starters.starter("files-in-and-out")
    result = check_file(starter.build(), starter.file_name)

    assert result.ok, result.problems
    assert result.format == "zip"
    assert starter.content_type == "application/zip"
