"""The limits of what one file can import (issue 15, items 2, 3 and 7): every text field is
capped, the file as a whole has totals, and the checker knows every limit the database and
the storage have, so a file it passes also imports. Each of these files used to pass the
check and then fail the import (or import a 199 MB prompt)."""

from __future__ import annotations

from typing import Any

import pytest

from datasets_app.importing import document as doc
from datasets_app.importing.spec import (
    MAX_FILE_NAME_BYTES,
    MAX_ID_CHARS,
    MAX_TASK_NAME_CHARS,
    MAX_TEXT_CHARS,
    MAX_URL_CHARS,
    CheckOptions,
    nowhere,
)

OVER = MAX_TEXT_CHARS + 1


def check(document: Any, *, zip_members: dict[str, int] | None = None):
    return doc.validate_document(
        document,
        file_name="d.json",
        locate=nowhere,
        options=CheckOptions(),
        zip_members=zip_members,
    )


def task(**fields: Any) -> dict[str, Any]:
    return {"id": "t1", "prompt": "What is 2 + 2?", "expected": {"text": "4"}, **fields}


def only(problems) -> tuple[str, str | None]:
    assert len(problems) == 1, problems
    return problems[0].code, problems[0].field


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"tasks": [task(prompt="p" * OVER)]}, "tasks[0].prompt"),
        ({"tasks": [task(expected={"text": "a" * OVER})]}, "tasks[0].expected.text"),
        ({"tasks": [task(expected="a" * OVER)]}, "tasks[0].expected"),
        ({"tasks": [task(criteria=[{"criterion": "c" * OVER}])]}, "tasks[0].criteria[0].criterion"),
        (
            {
                "tasks": [
                    task(
                        criteria=[
                            {
                                "criterion": "Is kind",
                                "verifier": {"kind": "llm_judge", "instructions": "i" * OVER},
                            }
                        ]
                    )
                ]
            },
            "tasks[0].criteria[0].verifier.instructions",
        ),
        (
            {
                "settings": {"defaultVerifier": {"kind": "code_verifier", "code": "#" * OVER}},
                "tasks": [task()],
            },
            "settings.defaultVerifier.code",
        ),
    ],
)
def test_every_text_field_is_capped(document, field):
    plan, problems, _ = check(document)

    assert plan is None
    assert only(problems) == (doc.TEXT_TOO_LONG.code, field)
    assert f"{OVER:,} characters long; the most it can be is {MAX_TEXT_CHARS:,}" in (
        problems[0].message
    )


def test_text_at_the_cap_is_imported():
    plan, problems, _ = check({"tasks": [task(prompt="p" * MAX_TEXT_CHARS)]})

    assert problems == []
    assert len(plan.tasks[0].prompt) == MAX_TEXT_CHARS


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"tasks": [task(id="i" * (MAX_ID_CHARS + 1))]}, "tasks[0].id"),
        ({"tasks": [task(id=int("9" * (MAX_ID_CHARS + 1)))]}, "tasks[0].id"),
        (
            {"tasks": [task(criteria=[{"id": "c" * (MAX_ID_CHARS + 1), "criterion": "Kind"}])]},
            "tasks[0].criteria[0].id",
        ),
        ({"tasks": [task(name="n" * (MAX_TASK_NAME_CHARS + 1))]}, "tasks[0].name"),
        (
            {"tasks": [task(inputFiles=["https://example.com/" + "a" * MAX_URL_CHARS])]},
            "tasks[0].inputFiles[0].url",
        ),
    ],
)
def test_ids_names_and_links_fit_the_database(document, field):
    plan, problems, _ = check(document)

    assert plan is None
    assert only(problems) == (doc.TEXT_TOO_LONG.code, field)


def test_ids_names_and_links_at_the_database_limits_pass():
    link = "https://example.com/" + "a" * (MAX_URL_CHARS - len("https://example.com/"))
    document = {
        "tasks": [
            task(
                id="i" * MAX_ID_CHARS,
                name="n" * MAX_TASK_NAME_CHARS,
                inputFiles=[{"url": link, "name": "page.html"}],
            )
        ]
    }

    plan, problems, _ = check(document)

    assert problems == []
    assert plan.tasks[0].input_files[0].url == link


@pytest.mark.parametrize(
    ("attached", "field", "reason"),
    [
        ({"path": "a.csv", "name": ".."}, "tasks[0].inputFiles[0].name", "names a folder"),
        ({"path": "a.csv", "name": "/"}, "tasks[0].inputFiles[0].name", "has a folder in it"),
        ({"path": "a.csv", "name": "x/y.csv"}, "tasks[0].inputFiles[0].name", "folder"),
        (
            {"path": "a.csv", "name": "é" * 128},  # 128 characters, 256 bytes
            "tasks[0].inputFiles[0].name",
            "256 bytes long",
        ),
        # A name made from a link or a path is checked the same way.
        ("https://example.com/files/%2E%2E", "tasks[0].inputFiles[0]", "names a folder"),
        ("https://example.com/a%2Fb.pdf", "tasks[0].inputFiles[0]", "has a folder in it"),
        (f"{'n' * 300}.csv", "tasks[0].inputFiles[0]", "304 bytes long"),
    ],
)
def test_an_attached_files_name_is_one_name_a_file_system_takes(attached, field, reason):
    members = {"a.csv": 10, f"{'n' * 300}.csv": 10}

    plan, problems, _ = check({"tasks": [task(inputFiles=[attached])]}, zip_members=members)

    assert plan is None
    assert only(problems) == (doc.BAD_FILE_NAME.code, field)
    assert reason in problems[0].message


def test_a_name_of_255_bytes_is_a_name():
    name = "é" * (MAX_FILE_NAME_BYTES // 2) + "x"

    plan, problems, _ = check(
        {"tasks": [task(inputFiles=[{"path": "a.csv", "name": name}])]},
        zip_members={"a.csv": 10},
    )

    assert problems == []
    assert plan.tasks[0].input_files[0].name == name


def test_the_file_has_a_total_of_criteria(monkeypatch):
    monkeypatch.setattr(doc, "MAX_CRITERIA_PER_FILE", 4)
    criteria = [{"id": f"c{n}", "criterion": f"Says {n}"} for n in range(3)]
    document = {
        "criteria": [{"id": "shared", "criterion": "Is polite"}],
        "tasks": [
            {"id": "a", "prompt": "A?", "criteria": criteria},
            {"id": "b", "prompt": "B?", "criteria": criteria[:1]},
        ],
    }

    plan, problems, _ = check(document)

    assert plan is None
    assert only(problems) == (doc.TOO_MANY_CRITERIA_IN_FILE.code, None)
    assert "5 criteria in all; the most one file can import is 4" in problems[0].message


def test_the_file_has_a_total_of_text(monkeypatch):
    monkeypatch.setattr(doc, "MAX_TEXT_CHARS_PER_FILE", 100)
    # 2 tasks of 40 characters of prompt, 10 of answer and 40 of name (made from the
    # prompt): 180.
    document = {
        "tasks": [{"id": f"t{n}", "prompt": "p" * 40, "expected": "a" * 10} for n in range(2)]
    }

    plan, problems, _ = check(document)

    assert plan is None
    assert only(problems) == (doc.TOO_MUCH_TEXT.code, None)
    assert "180 characters of text in all" in problems[0].message
