"""Every Python check the reference page ("Dataset files") shows, taken from the page's own
text and run in the real sandbox, on an answer it must pass and one it must fail.

The checks are found by walking every dataset example on the page, not by name: a Python
check added to the page fails `test_every_python_check_on_the_page_has_answers_to_try`
until it is given its two answers here. No database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from context_verifiers.grading import Graders, checks_for, grade_task, task_view
from context_verifiers.sandbox import run_code_check, sandbox_status
from context_verifiers.views import OutputView
from datasets_app.importing.checker import check_file
from tests.conftest import SHARED

AVAILABLE, REASON = sandbox_status()
needs_sandbox = pytest.mark.skipif(not AVAILABLE, reason=f"sandbox unavailable: {REASON}")


def page_documents() -> list[dict[str, Any]]:
    """Every dataset example on the page, as the page writes it."""
    page = next((SHARED / "seeds").glob("001_*.txt")).read_text()
    decoder = json.JSONDecoder()
    documents, at = [], page.find('{ "format"')
    while at >= 0:
        document, end = decoder.raw_decode(page, at)
        documents.append(document)
        at = page.find('{ "format"', end)
    return documents


def code_verifiers(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(where it is, its code) for each code_verifier anywhere in a document."""
    if isinstance(value, dict):
        if value.get("kind") == "code_verifier":
            yield where, value["code"]
        for key, item in value.items():
            yield from code_verifiers(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from code_verifiers(item, f"{where}[{index}]")


def page_python_checks() -> list[tuple[dict[str, Any], str, str]]:
    """(the example, the criterion's id, its code) for every Python check on the page."""
    found = []
    for document in page_documents():
        for where, code in code_verifiers(document):
            # A check sits in a criterion ({"id", "criterion", "verifier"}): name it by id.
            path = where.removesuffix(".verifier")
            node: Any = document
            for part in path.replace("[", ".").replace("]", "").split("."):
                node = node[int(part)] if part.isdigit() else node[part]
            found.append((document, node.get("id", path), code))
    return found


def words(count: int) -> str:
    return " ".join(["word"] * count)


# For each Python check on the page, by its criterion's id: an answer it passes and one it
# fails, and the reasoning each gets.
ANSWERS: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    # "Is 150 words or fewer.": 150 is still in, 151 out.
    "length": ((words(150), "150 words"), (words(151), "151 words")),
}

PAGE_CHECKS = page_python_checks()


def test_every_python_check_on_the_page_has_answers_to_try():
    assert PAGE_CHECKS, "the page shows no Python check: its examples were not found"
    assert sorted(criterion for _, criterion, _ in PAGE_CHECKS) == sorted(ANSWERS)
    for _, _, code in PAGE_CHECKS:
        assert code.startswith("from context_verifiers import Verdict\n")


def plan_and_task(document: dict[str, Any], criterion: str):
    result = check_file(json.dumps(document).encode(), "dataset.json")
    assert result.ok, result.problems
    plan = result.plan
    for task in plan.tasks:
        for check in checks_for(plan, task):
            if check.id == criterion:
                return plan, task, check
    raise AssertionError(f"no task of the example is graded by {criterion}")


@needs_sandbox
@pytest.mark.parametrize(
    ("document", "criterion", "code"),
    PAGE_CHECKS,
    ids=[criterion for _, criterion, _ in PAGE_CHECKS],
)
@pytest.mark.parametrize("passes", [True, False], ids=["passing", "failing"])
def test_each_python_check_on_the_page_runs_in_the_sandbox_as_written(
    document, criterion, code, passes
):
    plan, task, check = plan_and_task(document, criterion)
    assert check.verifier.code == code  # the importer keeps the page's code as it is
    answer, reasoning = ANSWERS[criterion][0 if passes else 1]
    view = task_view(task, check)

    result = run_code_check(code, task=view.to_json(), output=OutputView(text=answer).to_json())

    assert (result.code, result.detail) == (None, "")
    assert result.verdict == {"kind": "boolean", "passed": passes, "reasoning": reasoning}
    # And as grading shows it: the same outcome, the task's own criterion among the rest.
    graded = grade_task(plan, task, answer, graders=Graders(allow_python=True), only=criterion)
    outcome = graded.criteria[0].outcome
    assert (outcome.status, outcome.score, outcome.reasoning) == (
        "passed" if passes else "failed",
        1.0 if passes else 0.0,
        reasoning,
    )
    assert (graded.score.value, graded.score.coverage) == (1.0 if passes else 0.0, 1.0)
