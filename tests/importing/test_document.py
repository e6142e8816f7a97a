"""The shared validator: the page's rules on a canonical document, whatever format it came in."""

from __future__ import annotations

import json
from typing import Any

import pytest

from datasets_app.importing import document as doc
from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import (
    DEFAULT_EXPECTED_ANSWER_VERIFIER,
    EXPECTED_ANSWER_CRITERION_ID,
    EXPECTED_ANSWER_CRITERION_TEXT,
    MAX_PROBLEMS,
    CheckOptions,
    Verifier,
    nowhere,
)

VERIFY = "def verify(task, output):\n    return 1\n"


def check(document: Any, **kwargs: Any):
    kwargs.setdefault("options", CheckOptions())
    return doc.validate_document(document, file_name="d.json", locate=nowhere, **kwargs)


def task(**fields: Any) -> dict[str, Any]:
    return {"id": "t1", "prompt": "What is 2 + 2?", "expected": {"text": "4"}, **fields}


def codes(problems) -> list[str]:
    return [problem.code for problem in problems]


def test_a_minimal_task_with_an_expected_answer_is_a_plan():
    plan, problems, warnings = check({"tasks": [task()]})

    assert problems == [] and warnings == []
    assert plan is not None
    (only,) = plan.tasks
    assert (only.id, only.name, only.prompt, only.expected_text) == (
        "t1",
        "What is 2 + 2?",
        "What is 2 + 2?",
        "4",
    )
    assert only.criteria == ()


def test_missing_ids_are_numbered_from_the_position_and_names_come_from_the_prompt():
    plan, problems, _ = check(
        {"tasks": [{"prompt": "a", "expected": "x", "criteria": [{"criterion": "c"}]}]}
    )

    assert problems == []
    assert plan.tasks[0].id == "task-1"
    # As a spreadsheet's row and another tool's record are named (issue 26).
    assert plan.tasks[0].name == "a"
    assert [c.id for c in plan.tasks[0].criteria] == [EXPECTED_ANSWER_CRITERION_ID, "criterion-1"]


def test_a_whole_number_id_reads_as_its_digits_but_true_is_not_an_id():
    plan, problems, _ = check({"tasks": [task(id=7)]})
    assert plan.tasks[0].id == "7"

    _, problems, _ = check({"tasks": [task(id=True)]})
    assert codes(problems) == [doc.BAD_ID.code]


def test_a_task_needs_a_prompt_and_something_to_grade_it():
    _, problems, _ = check({"tasks": [{"id": "a"}, {"id": "b", "prompt": "  "}]})

    assert codes(problems) == [
        doc.MISSING_PROMPT.code,
        doc.NOTHING_TO_GRADE.code,
        doc.MISSING_PROMPT.code,
        doc.NOTHING_TO_GRADE.code,
    ]
    assert problems[0].field == "tasks[0].prompt"
    assert problems[0].message == doc.MISSING_PROMPT.format(task='"a"')


def test_criteria_for_every_task_are_enough_to_grade_a_task():
    plan, problems, _ = check(
        {"criteria": [{"id": "c", "criterion": "Is polite"}], "tasks": [{"prompt": "Hi"}]}
    )

    assert problems == []
    assert plan.criteria[0].criterion == "Is polite"
    assert plan.tasks[0].criteria == ()


def test_a_task_given_both_lands_as_a_rubric_with_the_expected_answer_first():
    plan, _, _ = check(
        {
            "settings": {"expectedAnswerVerifier": {"kind": "exact_match"}},
            "tasks": [task(criteria=[{"id": "c", "criterion": "Shows work", "weight": 3}])],
        }
    )

    first, second = plan.tasks[0].criteria
    assert (first.id, first.criterion, first.weight) == (
        EXPECTED_ANSWER_CRITERION_ID,
        EXPECTED_ANSWER_CRITERION_TEXT,
        1.0,
    )
    assert first.verifier == Verifier(kind="exact_match")
    assert second.id == "c"
    assert plan.tasks[0].expected_text == "4"


def test_the_expected_answer_criterion_uses_the_answer_s_own_verifier_then_the_default():
    own = task(
        expected={"text": "4", "verifier": {"kind": "llm_judge"}},
        criteria=[{"criterion": "c"}],
    )
    plan, _, _ = check({"tasks": [own, task(id="t2", criteria=[{"criterion": "c"}])]})

    assert plan.tasks[0].criteria[0].verifier == Verifier(kind="llm_judge")
    assert plan.tasks[1].criteria[0].verifier == Verifier.from_json(
        DEFAULT_EXPECTED_ANSWER_VERIFIER
    )


def test_an_existing_matches_expected_answer_criterion_is_not_added_twice():
    criteria = [{"id": EXPECTED_ANSWER_CRITERION_ID, "criterion": "Right", "weight": 5}]
    plan, _, _ = check({"tasks": [task(criteria=criteria)]})

    assert [(c.id, c.weight) for c in plan.tasks[0].criteria] == [
        (EXPECTED_ANSWER_CRITERION_ID, 5.0)
    ]


def test_file_criteria_make_a_task_with_an_expected_answer_a_rubric_too():
    plan, _, _ = check({"criteria": [{"criterion": "Polite"}], "tasks": [task()]})

    assert [c.id for c in plan.tasks[0].criteria] == [EXPECTED_ANSWER_CRITERION_ID]


def test_repeated_task_ids_are_problems_and_repeated_prompts_warnings():
    _, problems, warnings = check({"tasks": [task(), task(), task(id="t3")]})

    assert codes(problems) == [doc.DUPLICATE_TASK_ID.code]
    assert problems[0].field == "tasks[1].id"
    assert problems[0].message == doc.DUPLICATE_TASK_ID.format(task='"t1"', first=1)
    assert codes(warnings) == [doc.DUPLICATE_PROMPT.code, doc.DUPLICATE_PROMPT.code]


def test_criterion_ids_are_unique_within_a_task_and_among_those_for_every_task():
    twice = [{"id": "c", "criterion": "a"}, {"id": "c", "criterion": "b"}]
    _, problems, _ = check({"criteria": twice, "tasks": [task(criteria=twice)]})

    assert codes(problems) == [doc.DUPLICATE_CRITERION_ID.code] * 2
    assert {p.field for p in problems} == {"criteria[1].id", "tasks[0].criteria[1].id"}


def test_the_same_criterion_id_in_a_task_and_for_every_task_is_allowed():
    _, problems, _ = check(
        {
            "criteria": [{"id": "c", "criterion": "a"}],
            "tasks": [task(criteria=[{"id": "c", "criterion": "b"}])],
        }
    )

    assert problems == []


@pytest.mark.parametrize(
    ("weight", "expected"),
    [(None, 1.0), ("", 1.0), ("  ", 1.0), (20, 20.0), (0.5, 0.5), ("2.5", 2.5)],
)
def test_weights_blank_or_null_count_as_one(weight, expected):
    plan, problems, _ = check({"tasks": [task(criteria=[{"criterion": "c", "weight": weight}])]})

    assert problems == []
    assert plan.tasks[0].criteria[-1].weight == expected


@pytest.mark.parametrize("weight", [0, -1, True, False, "heavy", "nan", "inf", [], {}])
def test_a_weight_must_be_a_positive_number(weight):
    _, problems, _ = check({"tasks": [task(criteria=[{"criterion": "c", "weight": weight}])]})

    assert codes(problems) == [doc.BAD_WEIGHT.code]
    assert problems[0].field == "tasks[0].criteria[0].weight"


def test_verifier_kinds_and_output_types_are_checked():
    criteria = [
        {"criterion": "a", "verifier": {"kind": "regex"}},
        {"criterion": "b", "verifier": {"kind": "llm_judge", "outputType": "int"}},
        {"criterion": "c", "verifier": {"outputType": "float"}},
    ]
    _, problems, _ = check({"tasks": [task(criteria=criteria)]})

    assert codes(problems) == [
        doc.UNKNOWN_VERIFIER_KIND.code,
        doc.UNKNOWN_OUTPUT_TYPE.code,
        doc.MISSING_VERIFIER_KIND.code,
    ]
    assert problems[0].message == doc.UNKNOWN_VERIFIER_KIND.format(value='"regex"')
    assert problems[2].field == "tasks[0].criteria[2].verifier.kind"


def test_an_empty_verifier_means_none_given():
    plan, problems, _ = check({"tasks": [task(expected={"text": "4", "verifier": {}})]})

    assert problems == []
    assert plan.tasks[0].expected_verifier is None


def test_llm_judge_instructions_may_only_use_the_four_placeholders():
    ok = "C: {{criterion}} P: {{ prompt }} O: {{output}} E: {{expected}}"
    criteria = [
        {"criterion": "a", "verifier": {"kind": "llm_judge", "instructions": ok}},
        {"criterion": "b", "verifier": {"kind": "llm_judge", "instructions": "{{answer}}"}},
    ]
    _, problems, _ = check({"tasks": [task(criteria=criteria)]})

    assert codes(problems) == [doc.UNKNOWN_PLACEHOLDER.code]
    assert '"{{answer}}"' in problems[0].message


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("def verify(task, output:\n", doc.CODE_SYNTAX_ERROR),
        ("def check(task, output):\n    return 1\n", doc.CODE_MISSING_VERIFY),
        ("def verify(output):\n    return 1\n", doc.CODE_MISSING_VERIFY),
        ("def verify(task, output, extra):\n    return 1\n", doc.CODE_MISSING_VERIFY),
        ("def verify(*args):\n    return 1\n", doc.CODE_MISSING_VERIFY),
        ("", doc.MISSING_CODE),
        ("(" * 500, doc.CODE_SYNTAX_ERROR),
    ],
)
def test_code_verifier_code_must_parse_and_define_verify(code, rule):
    criteria = [{"criterion": "a", "verifier": {"kind": "code_verifier", "code": code}}]
    _, problems, _ = check({"tasks": [task(criteria=criteria)]})

    assert codes(problems) == [rule.code]


def test_code_is_parsed_never_run(tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\n{VERIFY}"
    criteria = [{"criterion": "a", "verifier": {"kind": "code_verifier", "code": code}}]
    check({"tasks": [task(criteria=criteria)]}, options=CheckOptions(python_checks_enabled=True))

    assert not marker.exists()


def test_python_checks_off_makes_each_code_verifier_a_warning_not_a_problem():
    criteria = [
        {"id": "len", "criterion": "a", "verifier": {"kind": "code_verifier", "code": VERIFY}}
    ]
    plan, problems, warnings = check({"tasks": [task(criteria=criteria)]})

    assert problems == [] and plan is not None
    assert codes(warnings) == [doc.PYTHON_CHECKS_OFF.code]
    assert warnings[0].message == doc.PYTHON_CHECKS_OFF.format(subject='Criterion "len"')
    assert "until an administrator turns Python checks on" in warnings[0].message

    _, _, warnings = check(
        {"tasks": [task(criteria=criteria)]}, options=CheckOptions(python_checks_enabled=True)
    )
    assert warnings == []


def test_unknown_keys_are_warnings_and_the_file_still_imports():
    plan, problems, warnings = check(
        {"$schema": "x", "tasks": [task(notes="n", criteria=[{"criterion": "c", "colour": 1}])]}
    )

    assert problems == [] and plan is not None
    assert {w.field for w in warnings} == {
        "$schema",
        "tasks[0].notes",
        "tasks[0].criteria[0].colour",
    }
    assert set(codes(warnings)) == {doc.UNKNOWN_FIELD.code}


def test_format_and_version_when_given_must_be_this_format():
    _, problems, _ = check({"format": "other", "version": 2, "tasks": [task()]})

    assert codes(problems) == [doc.NOT_A_DATASET_FILE.code, doc.UNSUPPORTED_VERSION.code]


def test_no_tasks_and_too_many_tasks():
    _, problems, _ = check({"tasks": []})
    assert codes(problems) == [doc.NO_TASKS.code]

    many = [task(id=f"t{n}", prompt=f"p{n}") for n in range(4)]
    _, problems, _ = check({"tasks": many}, options=CheckOptions(max_tasks=3))
    assert codes(problems) == [doc.TOO_MANY_TASKS.code]
    assert problems[0].message == doc.TOO_MANY_TASKS.format(count=4, limit=3)


def test_wrong_types_everywhere_are_each_named_and_the_rest_still_checked():
    document = {
        "name": 5,
        "settings": [],
        "tasks": [
            "not a task",
            {"id": "a", "prompt": ["x"], "expected": 3},
            {"id": "a", "prompt": "p", "criteria": {"criterion": "c"}},
            {"id": "b"},
        ],
    }
    plan, problems, _ = check(document)

    assert plan is None
    assert {(p.code, p.field) for p in problems} == {
        (doc.NOT_TEXT.code, "name"),
        (doc.NOT_AN_OBJECT_FIELD.code, "settings"),
        (doc.NOT_AN_OBJECT_FIELD.code, "tasks[0]"),
        (doc.NOT_TEXT.code, "tasks[1].prompt"),
        (doc.NOT_TEXT_OR_OBJECT.code, "tasks[1].expected"),
        (doc.NOT_A_LIST.code, "tasks[2].criteria"),
        # Found by the rules although other values are wrong: one pass lists everything.
        (doc.DUPLICATE_TASK_ID.code, "tasks[2].id"),
        (doc.MISSING_PROMPT.code, "tasks[3].prompt"),
        (doc.NOTHING_TO_GRADE.code, "tasks[3]"),
    }


@pytest.mark.parametrize("document", [None, [], "tasks", 3])
def test_a_document_that_is_not_an_object_is_one_problem(document):
    plan, problems, _ = check(document)

    assert plan is None
    assert codes(problems) == [doc.NOT_AN_OBJECT.code]


def test_problems_stop_at_the_cap_with_a_count_of_the_rest():
    tasks = [{"id": n} for n in range(MAX_PROBLEMS)]
    _, problems, _ = check({"tasks": tasks}, options=CheckOptions(max_tasks=10**6))

    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[-1].message == doc.TOO_MANY_PROBLEMS.format(count=MAX_PROBLEMS)


def test_the_evidence_must_not_hold_nan():
    _, problems, _ = check({"tasks": [task(evidence={"score": float("nan")})]})

    assert codes(problems) == [doc.NON_FINITE_EVIDENCE.code]


def test_locate_gives_the_line_and_a_missing_field_the_line_of_its_object():
    asked = []

    def locate(path):
        asked.append(path)
        return (None, 10 + len(path))

    _, problems, _ = doc.validate_document(
        {"tasks": [{"id": "a", "expected": "x"}, {"id": "b", "prompt": 3, "expected": "x"}]},
        file_name="d.json",
        locate=locate,
        options=CheckOptions(),
    )

    by_field = {p.field: p for p in problems}
    # tasks[0].prompt is missing: it is reported where tasks[0] starts.
    assert by_field["tasks[0].prompt"].line == 12
    assert by_field["tasks[1].prompt"].line == 13
    assert all(p.file == "d.json" for p in problems)


class TestFiles:
    def files(self, *entries: Any, zip_members: dict[str, int] | None = None):
        return check({"tasks": [task(inputFiles=list(entries))]}, zip_members=zip_members)

    def test_a_link_must_be_https(self):
        _, problems, _ = self.files("https://example.com/a%20b.pdf", "http://example.com/x")

        assert codes(problems) == [doc.LINK_NOT_HTTPS.code]
        assert problems[0].field == "tasks[0].inputFiles[1].url"

    def test_a_link_is_named_after_its_last_segment(self):
        plan, _, _ = self.files(
            "https://example.com/docs/a%20b.pdf", {"url": "https://x.org/", "name": "N"}
        )

        assert [(f.name, f.url) for f in plan.tasks[0].input_files] == [
            ("a b.pdf", "https://example.com/docs/a%20b.pdf"),
            ("N", "https://x.org/"),
        ]

    def test_a_path_on_its_own_says_to_use_a_zip(self):
        _, problems, _ = self.files("report.pdf")

        assert codes(problems) == [doc.FILE_NEEDS_ZIP.code]
        assert "can only link files" in problems[0].message

    def test_a_path_must_be_in_the_zip_and_at_most_10_mib(self):
        members = {"in/a.pdf": 100, "big.bin": 10 * 1024 * 1024 + 1}
        plan, problems, _ = self.files(
            "in/a.pdf",
            "./in//a.pdf",
            "missing.pdf",
            "../etc/passwd",
            "big.bin",
            zip_members=members,
        )

        assert codes(problems) == [
            doc.FILE_NOT_IN_ZIP.code,
            doc.FILE_NOT_IN_ZIP.code,
            doc.FILE_TOO_LARGE.code,
        ]
        plan, problems, _ = self.files({"path": "./in/a.pdf", "name": "A"}, zip_members=members)
        assert plan.tasks[0].input_files[0].path == "in/a.pdf"
        assert plan.tasks[0].input_files[0].size == 100

    def test_a_file_has_a_path_or_a_url_not_both(self):
        _, problems, _ = self.files({"path": "a", "url": "https://x/a"}, {"name": "n"})

        assert codes(problems) == [doc.FILE_PATH_AND_URL.code, doc.FILE_NO_LOCATION.code]

    def test_a_task_has_at_most_ten_files_of_each_kind(self):
        links = [f"https://example.com/{n}" for n in range(11)]
        _, problems, _ = self.files(*links)

        assert codes(problems) == [doc.TOO_MANY_FILES.code]


@pytest.mark.parametrize("text", ["", "  \n\t", "\u00a0", "\x1c"])
def test_blank_text_a_person_must_give_is_a_problem_named_after_its_owner(text):
    document = {
        "tasks": [
            {
                "id": "t1",
                "prompt": text,
                "expected": {"text": text},
                "criteria": [{"id": "tone", "criterion": text}],
            },
            {"id": "t2", "prompt": "p", "expected": text},
        ]
    }
    _, problems, _ = check(document)

    assert [(p.code, p.field, p.message) for p in problems] == [
        (doc.MISSING_PROMPT.code, "tasks[0].prompt", doc.MISSING_PROMPT.format(task='"t1"')),
        (
            doc.MISSING_EXPECTED_TEXT.code,
            "tasks[0].expected.text",
            doc.MISSING_EXPECTED_TEXT.format(task='"t1"'),
        ),
        (
            doc.MISSING_CRITERION_TEXT.code,
            "tasks[0].criteria[0].criterion",
            doc.MISSING_CRITERION_TEXT.format(criterion='"tone"'),
        ),
        (
            doc.MISSING_EXPECTED_TEXT.code,
            "tasks[1].expected.text",
            doc.MISSING_EXPECTED_TEXT.format(task='"t2"'),
        ),
    ]


def test_missing_or_null_text_is_reported_where_its_object_starts():
    document = {
        "tasks": [
            {"prompt": None, "expected": {"verifier": {"kind": "exact_match"}}},
            {"prompt": "p", "criteria": [{"weight": 2}, {"criterion": None}]},
        ]
    }
    asked = []

    def locate(path):
        asked.append(path)
        return (None, len(path))

    _, problems, _ = doc.validate_document(
        document, file_name="d.json", locate=locate, options=CheckOptions()
    )

    assert [(p.code, p.field, p.line) for p in problems] == [
        (doc.MISSING_PROMPT.code, "tasks[0].prompt", 2),
        (doc.MISSING_EXPECTED_TEXT.code, "tasks[0].expected.text", 3),
        (doc.MISSING_CRITERION_TEXT.code, "tasks[1].criteria[0].criterion", 4),
        (doc.MISSING_CRITERION_TEXT.code, "tasks[1].criteria[1].criterion", 4),
    ]
    assert problems[0].message == doc.MISSING_PROMPT.format(task='"task-1"')
    assert problems[2].message == doc.MISSING_CRITERION_TEXT.format(criterion='"criterion-1"')


def test_number_tasks_replaces_every_given_id_and_says_how_many():
    lines = [
        {"id": "a", "prompt": "P1", "expected": "x"},
        {"id": "a", "prompt": "P2", "expected": "y"},
        {"prompt": "P3", "expected": "z"},
        {"id": "task-9", "prompt": "P4", "expected": "w"},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    result = check_file(data, "g.jsonl", options=CheckOptions(number_tasks=True))
    assert result.ok
    assert [task.id for task in result.plan.tasks] == ["task-1", "task-2", "task-3", "task-4"]
    (warning,) = result.warnings
    assert warning.message == doc.TASKS_NUMBERED.format(
        first="task-1", last="task-4", replaced="3 ids", repeated=1
    )
    # Without it, the repeat is the problem it always was.
    plain = check_file(data, "g.jsonl")
    assert [p.code for p in plain.problems] == [doc.DUPLICATE_TASK_ID.code]
