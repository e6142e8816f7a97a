"""The page's rules: which checks a task has, exact match, and a task's total and coverage."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from context_verifiers import outcome as reasons
from context_verifiers.grading import Graders, checks_for, grade_task, grade_tasks, show_prompt
from context_verifiers.sandbox import sandbox_status
from context_verifiers.templates import OUTPUT_LEFT_OUT
from context_verifiers.views import OutputView
from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import (
    DEFAULT_CRITERION_VERIFIER,
    EXPECTED_ANSWER_CRITERION_ID,
    EXPECTED_ANSWER_CRITERION_TEXT,
    CriterionSpec,
    DatasetSpec,
    TaskSpec,
    Verifier,
)
from tests.conftest import SHARED


def page_example(heading: str) -> dict:
    """The JSON example under `heading` on the reference page ("Dataset files")."""
    page = next((SHARED / "seeds").glob("001_*.txt")).read_text()
    after = page[page.index(heading) :]
    start = after.index('{ "format"')
    return json.JSONDecoder().raw_decode(after[start:])[0]


def plan_of(document: dict):
    result = check_file(json.dumps(document).encode(), "dataset.json")
    assert result.ok, result.problems
    return result.plan


EXPECTED_ANSWERS = plan_of(page_example("Expected answers template"))
RUBRIC = plan_of(page_example("Rubric template"))


def task(plan, task_id):
    return next(t for t in plan.tasks if t.id == task_id)


def test_a_task_with_only_an_expected_answer_is_graded_by_it_under_its_own_id():
    checks = checks_for(EXPECTED_ANSWERS, task(EXPECTED_ANSWERS, "yoy-growth"))

    assert [(c.id, c.text, c.weight) for c in checks] == [
        (EXPECTED_ANSWER_CRITERION_ID, EXPECTED_ANSWER_CRITERION_TEXT, 1.0)
    ]
    # No verifier on the answer: the settings' expectedAnswerVerifier.
    assert checks[0].verifier == Verifier(kind="agent_judge", output_type="float")


def test_an_expected_answers_own_verifier_wins():
    checks = checks_for(EXPECTED_ANSWERS, task(EXPECTED_ANSWERS, "q3-end-date"))

    assert [c.verifier.kind for c in checks] == ["exact_match"]


def test_criteria_without_a_verifier_use_the_default_verifier_and_shared_ones_follow():
    checks = checks_for(RUBRIC, task(RUBRIC, "delayed-shipment"))

    assert [(c.id, c.weight, c.verifier.kind) for c in checks] == [
        ("apology", 10, "llm_judge"),
        ("new-date", 20, "llm_judge"),
        ("offer", 20, "llm_judge"),
        ("length", 10, "code_verifier"),
        ("tone", 10, "llm_judge"),
        ("no-invented-facts", 20, "llm_judge"),
    ]
    assert checks[0].verifier.instructions == RUBRIC.settings["defaultVerifier"]["instructions"]
    assert checks[4].verifier.instructions.startswith("Fail the response if")


def test_without_a_default_verifier_a_criterion_is_judged_pass_or_fail():
    plan = plan_of(
        {"tasks": [{"id": "t", "prompt": "p", "criteria": [{"criterion": "Is polite."}]}]}
    )

    (check,) = checks_for(plan, plan.tasks[0])

    assert check.verifier == Verifier.from_json(DEFAULT_CRITERION_VERIFIER)


def test_a_task_with_both_is_a_rubric_with_matches_the_expected_answer_weighted():
    plan = plan_of(
        {
            "tasks": [
                {
                    "id": "t",
                    "prompt": "2 + 2?",
                    "expected": {"text": "4", "verifier": {"kind": "exact_match"}},
                    "criteria": [{"id": "shows-work", "criterion": "Shows work", "weight": 3}],
                }
            ]
        }
    )

    checks = checks_for(plan, plan.tasks[0])
    result = grade_task(plan, plan.tasks[0], "4", graders=Graders())

    assert [(c.id, c.weight, c.verifier.kind) for c in checks] == [
        (EXPECTED_ANSWER_CRITERION_ID, 1.0, "exact_match"),
        ("shows-work", 3, "llm_judge"),
    ]
    assert [r.outcome.status for r in result.criteria] == ["passed", "skipped"]
    assert result.score.value == 1.0
    assert result.score.coverage == 0.25


def test_exact_match_is_character_for_character():
    q3 = task(EXPECTED_ANSWERS, "q3-end-date")
    graders = Graders()

    same = grade_task(EXPECTED_ANSWERS, q3, "2025-09-30", graders=graders).criteria[0].outcome
    spaced = grade_task(EXPECTED_ANSWERS, q3, " 2025-09-30\n", graders=graders).criteria[0].outcome
    other = grade_task(EXPECTED_ANSWERS, q3, "2025-09-31", graders=graders).criteria[0].outcome

    assert (same.status, same.score) == ("passed", 1.0)
    assert (spaced.status, spaced.score) == ("failed", 0.0)
    assert spaced.reasoning == "The answer differs from the expected answer only in spaces."
    assert other.reasoning == "The answer differs from the expected answer from character 10 on."


def test_exact_match_says_when_only_case_differs():
    plan = plan_of(
        {
            "tasks": [
                {
                    "id": "t",
                    "prompt": "p",
                    "expected": {"text": "Paris", "verifier": {"kind": "exact_match"}},
                }
            ]
        }
    )

    outcome = grade_task(plan, plan.tasks[0], "PARIS", graders=Graders()).criteria[0].outcome

    assert outcome.status == "failed"
    assert outcome.reasoning == "The answer differs from the expected answer only in case."


@pytest.mark.parametrize("answer", [None, "", "  \n"])
def test_no_answer_is_the_agents_failure_not_an_error(answer):
    result = grade_task(RUBRIC, task(RUBRIC, "delayed-shipment"), answer, graders=Graders())

    assert {r.outcome.status for r in result.criteria} == {"failed"}
    assert result.criteria[0].outcome.reasoning == reasons.NO_ANSWER_REASONING
    assert (result.score.value, result.score.coverage) == (0.0, 1.0)


def test_without_a_judge_judge_criteria_are_skipped_and_say_how_to_configure_one():
    result = grade_task(RUBRIC, task(RUBRIC, "delayed-shipment"), "Sorry.", graders=Graders())

    by_id = {r.id: r.outcome for r in result.criteria}
    assert by_id["apology"].status == "skipped"
    assert by_id["apology"].code == "no_judge_configured"
    assert "JUDGE_BASE_URL" in by_id["apology"].reasoning
    assert by_id["length"].code == "python_checks_off"
    assert (result.score.value, result.score.coverage) == (None, 0.0)


def test_judge_criteria_grade_through_the_judge(judge, judge_server):
    shipment = task(RUBRIC, "delayed-shipment")
    graders = Graders(judge=judge, concurrency=4)

    result = grade_task(RUBRIC, shipment, "correct: sorry, it comes 14 November.", graders=graders)

    statuses = {r.id: r.outcome.status for r in result.criteria}
    assert statuses == {
        "apology": "passed",
        "new-date": "passed",
        "offer": "passed",
        "length": "skipped",
        "tone": "passed",
        "no-invented-facts": "passed",
    }
    assert result.score.value == 1.0
    assert result.score.coverage == pytest.approx(80 / 90)
    prompts = [r["messages"][1]["content"] for r in judge_server.requests]
    assert any("Criterion: States the new delivery date (14 November)." in p for p in prompts)


def test_the_agent_judge_scores_the_expected_answer(judge):
    growth = task(EXPECTED_ANSWERS, "yoy-growth")

    result = grade_task(EXPECTED_ANSWERS, growth, "partly: 25%", graders=Graders(judge=judge))

    outcome = result.criteria[0].outcome
    assert (outcome.status, outcome.score) == ("scored", 0.4)
    assert result.score.value == 0.4


def test_an_agent_judge_on_a_criterion_without_an_expected_answer_is_an_error(judge):
    plan = plan_of(
        {
            "tasks": [
                {
                    "id": "t",
                    "prompt": "p",
                    "criteria": [{"criterion": "c", "verifier": {"kind": "agent_judge"}}],
                }
            ]
        }
    )

    outcome = grade_task(plan, plan.tasks[0], "x", graders=Graders(judge=judge)).criteria[0].outcome

    assert (outcome.status, outcome.code) == ("error", "no_expected_answer")


def test_one_criterion_can_be_tried_alone(judge, judge_server):
    shipment = task(RUBRIC, "delayed-shipment")

    result = grade_task(RUBRIC, shipment, "correct", graders=Graders(judge=judge), only="tone")

    assert [r.id for r in result.criteria] == ["tone"]
    assert len(judge_server.requests) == 1


def test_a_judge_error_leaves_the_task_partial(judge, judge_server):
    from tests.verifiers.judge_server import Fault

    plan = plan_of(
        {
            "tasks": [
                {
                    "id": "t",
                    "prompt": "p",
                    "expected": {"text": "correct", "verifier": {"kind": "exact_match"}},
                    "criteria": [{"id": "c", "criterion": "Is right", "weight": 3}],
                }
            ]
        }
    )
    judge_server.fail(Fault(status=400))

    result = grade_task(plan, plan.tasks[0], "correct", graders=Graders(judge=judge))

    assert [r.outcome.status for r in result.criteria] == ["passed", "error"]
    assert (result.score.value, result.score.coverage) == (1.0, 0.25)


def test_a_dataset_score_is_the_mean_of_its_tasks(judge):
    answers = [
        (task(EXPECTED_ANSWERS, "yoy-growth"), "correct"),
        (task(EXPECTED_ANSWERS, "q3-end-date"), "2025-09-31"),
    ]

    result = grade_tasks(EXPECTED_ANSWERS, answers, graders=Graders(judge=judge, concurrency=2))

    assert [t.score.value for t in result.tasks] == [1.0, 0.0]
    assert (result.score.value, result.score.coverage) == (0.5, 1.0)


def test_output_files_count_as_an_answer():
    q3 = task(EXPECTED_ANSWERS, "q3-end-date")
    from context_verifiers.views import FileView

    output = OutputView(text="", files=(FileView.of("date.txt", b"2025-09-30"),))

    outcome = grade_task(EXPECTED_ANSWERS, q3, output, graders=Graders()).criteria[0].outcome

    assert outcome.code != "no_answer"


def python_task(code):
    return plan_of(
        {
            "tasks": [
                {
                    "id": "email",
                    "prompt": "Write it.",
                    "criteria": [
                        {
                            "id": "length",
                            "criterion": "Is 150 words or fewer.",
                            "verifier": {"kind": "code_verifier", "code": code},
                        }
                    ],
                }
            ]
        }
    )


LENGTH = task(RUBRIC, "delayed-shipment").criteria[3].verifier.code
needs_sandbox = pytest.mark.skipif(
    not sandbox_status()[0],
    reason="the sandbox is unavailable here (its own tests say why)",
)


@needs_sandbox
@pytest.mark.parametrize(("words", "status"), [(149, "passed"), (151, "failed")])
def test_the_pages_length_check_runs_as_written_in_the_sandbox(words, status):
    plan = python_task(LENGTH)

    result = grade_task(plan, plan.tasks[0], "word " * words, graders=Graders(allow_python=True))

    outcome = result.criteria[0].outcome
    assert (outcome.status, outcome.reasoning) == (status, f"{words} words")


@needs_sandbox
def test_an_exception_in_the_check_is_an_error_with_its_traceback_not_a_zero():
    plan = python_task("def verify(task, output):\n    return 1 / 0\n")

    result = grade_task(plan, plan.tasks[0], "hi", graders=Graders(allow_python=True))

    outcome = result.criteria[0].outcome
    assert (outcome.status, outcome.code, outcome.score) == ("error", "code_crash", None)
    assert outcome.detail.endswith("ZeroDivisionError: division by zero")
    assert result.score.value is None


@needs_sandbox
def test_a_wrong_return_names_what_verify_must_return():
    plan = python_task("def verify(task, output):\n    return 3\n")

    outcome = grade_task(plan, plan.tasks[0], "hi", graders=Graders(allow_python=True))
    outcome = outcome.criteria[0].outcome

    assert (outcome.status, outcome.code) == ("error", "code_bad_return")
    assert outcome.reasoning == reasons.CODE_BAD_RETURN.message
    assert "it returned an int" in outcome.detail


@needs_sandbox
def test_a_check_sees_the_task_its_criterion_and_the_answer():
    code = (
        "from context_verifiers import Verdict\n"
        "def verify(task, output):\n"
        "    seen = f'{task.id}|{task.criterion.id}|{task.criterion.weight:g}|{output.text}'\n"
        "    return Verdict.score(0.25, reasoning=seen)\n"
    )
    plan = python_task(code)

    outcome = grade_task(plan, plan.tasks[0], "hello", graders=Graders(allow_python=True))
    outcome = outcome.criteria[0].outcome

    assert (outcome.status, outcome.score, outcome.reasoning) == (
        "scored",
        0.25,
        "email|length|1|hello",
    )


def test_python_checks_off_are_skipped():
    plan = python_task(LENGTH)

    outcome = grade_task(plan, plan.tasks[0], "hi", graders=Graders()).criteria[0].outcome

    assert (outcome.status, outcome.code) == ("skipped", "python_checks_off")


def test_show_the_prompt_is_the_request_a_try_sends(judge, judge_config, judge_server):
    shipment = task(RUBRIC, "delayed-shipment")
    answer = "correct: 14 November"

    shown = show_prompt(RUBRIC, shipment, answer, criterion_id="tone", config=judge_config)
    assert judge_server.requests == []
    grade_task(RUBRIC, shipment, answer, graders=Graders(judge=judge), only="tone")

    assert judge_server.requests == [shown]
    assert shown["messages"][1]["content"].startswith(
        "Fail the response if it contains any internal codes, ticket ids or warehouse names. "
        "Criterion: Uses plain customer-facing language"
    )
    assert show_prompt(RUBRIC, shipment, answer, criterion_id="length", config=judge_config) is None


def judged_task(instructions):
    verifier = Verifier(kind="llm_judge", output_type="boolean", instructions=instructions)
    criterion = CriterionSpec(id="polite", criterion="Is polite.", verifier=verifier)
    return DatasetSpec(), TaskSpec(id="t", name="T", prompt="Say hi.", criteria=(criterion,))


def test_instructions_without_output_still_judge_the_answer_and_warn_the_author(
    judge, judge_server
):
    dataset, polite = judged_task("Pass if the reply meets: {{criterion}}")

    outcome = grade_task(dataset, polite, "correct, hello", graders=Graders(judge=judge))
    outcome = outcome.criteria[0].outcome

    assert outcome.status == "passed"
    assert outcome.warnings == (OUTPUT_LEFT_OUT,)
    user = judge_server.requests[0]["messages"][1]["content"]
    assert "Answer under test:\n```answer\ncorrect, hello\n```" in user


def test_an_unknown_placeholder_is_an_error_that_names_it(judge, judge_server):
    dataset, polite = judged_task("{{output}} against {{rubric}}")

    outcome = grade_task(dataset, polite, "hi", graders=Graders(judge=judge)).criteria[0].outcome

    assert (outcome.status, outcome.code) == ("error", "unknown_placeholder")
    assert "{{rubric}}" in outcome.reasoning
    assert judge_server.requests == []


@given(st.lists(st.sampled_from(["2025-09-30", "2025-09-30 ", "", "2025-9-30"]), max_size=12))
@settings(max_examples=25, deadline=None)
def test_grading_at_once_or_one_by_one_gives_the_same_results_in_order(answers):
    q3 = task(EXPECTED_ANSWERS, "q3-end-date")
    pairs = [(q3, answer) for answer in answers]

    alone = grade_tasks(EXPECTED_ANSWERS, pairs, graders=Graders(concurrency=1))
    together = grade_tasks(EXPECTED_ANSWERS, pairs, graders=Graders(concurrency=8))

    assert together == alone
    assert [t.score.value for t in alone.tasks] == [float(a == "2025-09-30") for a in answers]
