"""Every way a grader can fail to grade, as "Try an answer" shows it: never a 0, and the
task's total left partial with its coverage (graded weight / total weight).

Each code the library defines (`outcome.REASONS`) is brought about for real through the
view: the real judge server's faults, the real sandbox, the administrator's switch. The
criteria beside the broken one, their weights and whether the answer is right are drawn
by hypothesis; the total the page shows must be theirs alone.
"""

from __future__ import annotations

import html
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_verifiers import outcome as reasons
from context_verifiers.judges import JudgeConfig
from datasets_app.importing.spec import Verifier, expected_answer_criterion
from datasets_app.models import Criterion, Dataset, SiteSettings, Task
from datasets_app.templatetags.wording import percent, score, weight
from tests.verifiers.conftest import judge_server  # noqa: F401 - the library's fixture
from tests.verifiers.judge_server import Fault

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
JUDGED = {"kind": "llm_judge", "outputType": "boolean", "instructions": "{{criterion}} {{output}}"}


def code(body: str) -> dict[str, str]:
    return {
        "kind": "code_verifier",
        "code": f"from context_verifiers import Verdict\n\ndef verify(task, output):\n{body}\n",
    }


@dataclass(frozen=True)
class Cause:
    """What makes a criterion end in a code: its verifier and the site around it."""

    verifier: dict[str, Any]
    faults: tuple[Fault, ...] = ()
    judge: bool = True
    python: bool = True
    expected: bool = True
    max_retries: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


CAUSES: dict[str, Cause] = {
    "judge_unparseable": Cause(JUDGED, faults=(Fault(content="no verdict"),) * 2),
    "judge_unreachable": Cause(JUDGED, faults=(Fault(status=500),)),
    "judge_refused": Cause(JUDGED, faults=(Fault(status=401),)),
    "no_judge_configured": Cause(JUDGED, judge=False),
    "unknown_placeholder": Cause({**JUDGED, "instructions": "{{rubric}} {{output}}"}),
    # The others beside it are judged then: there is no expected answer to match.
    "no_expected_answer": Cause({"kind": "exact_match"}, expected=False),
    "python_checks_off": Cause(code("    return Verdict.boolean(passed=True)"), python=False),
    "code_timeout": Cause(code("    while True:\n        pass")),
    "code_memory": Cause(code("    data = bytearray(2 * 1024 ** 3)")),
    "code_crash": Cause(code("    return 1 / 0")),
    "code_bad_return": Cause(code("    return 3")),
    "code_output_too_large": Cause(code("    print('x' * 2_000_000)")),
    "unknown_verifier": Cause({"kind": "regex_match"}),
}
# A kernel without Landlock or seccomp cannot be brought about inside this test process
# without faking the kernel; tests/verifiers/test_sandbox.py runs a grading process under a
# seccomp filter that refuses them, and test_scoring.py scores the code with every other.
NOT_BROUGHT_ABOUT = {"sandbox_unavailable"}


def test_every_code_the_library_defines_is_brought_about_here():
    assert set(CAUSES) | NOT_BROUGHT_ABOUT == set(reasons.REASONS)


def badges(page: str) -> list[str]:
    return re.findall(r'<span class="badge (?:passed|failed|scored|error|skipped)">([^<]+)', page)


@pytest.fixture
def site(settings, judge_server):  # noqa: F811 - the fixture imported above
    settings.RATELIMIT_TRIES = "10000/m"
    return settings, judge_server


@pytest.mark.parametrize("code", sorted(CAUSES))
@settings(
    # A few drawings for each code: every code is tried on every run of the suite.
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    broken_weight=st.integers(1, 40),
    others=st.lists(st.integers(1, 40), max_size=3),
    right=st.booleans(),
)
def test_the_try_shows_every_code_as_no_zero_and_a_partial_total(
    auth_client, user, site, code, broken_weight, others, right
):
    django_settings, server = site
    cause = CAUSES[code]
    server.faults.clear()
    server.fail(*cause.faults)
    django_settings.JUDGE = (
        JudgeConfig(base_url=server.base_url, model="local-judge", max_retries=cause.max_retries)
        if cause.judge
        else JudgeConfig()
    )
    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": cause.python})
    dataset = Dataset.objects.create(owner=user, name=f"Codes {uuid.uuid4().hex[:8]}")
    task = Task.objects.create(
        dataset=dataset,
        task_id="t",
        prompt="Answer it.",
        expected_text="correct" if cause.expected else "",
        expected_verifier={"kind": "exact_match"} if cause.expected else {},
    )
    # Beside it: criteria that grade, by exact match on the expected answer, else by the
    # judge (which passes an answer with "correct" in it): the answer passes all or none.
    other_verifier = {"kind": "exact_match"} if cause.expected else JUDGED
    rows = [("broken", cause.verifier, broken_weight)]
    rows += [(f"other-{i + 1}", other_verifier, w) for i, w in enumerate(others)]
    for position, (cid, verifier, w) in enumerate(rows):
        Criterion.objects.create(
            dataset=dataset,
            task=task,
            criterion_id=cid,
            text=f"Criterion {cid}",
            verifier=verifier,
            weight=w,
            position=position,
        )
    url = reverse("datasets_app:task_try", args=[dataset.pk, task.pk])

    response = auth_client.post(url, {"answer": "correct" if right else "wrong"}, **HX)

    assert response.status_code == 200
    page = response.content.decode()
    graded = [float(w) for w in others]
    if cause.expected:  # "Matches the expected answer", first among the criteria
        graded.insert(0, expected_answer_criterion(Verifier(kind="exact_match")).weight)
    shown = badges(page)
    broken = shown[1 if cause.expected else 0]
    assert broken == reasons.REASONS[code].status.capitalize()
    assert html.escape(reasons.REASONS[code].message.split("{")[0]) in page
    assert shown.count("Passed" if right else "Failed") == len(graded)
    total = sum(graded) + broken_weight
    value = (1.0 if right else 0.0) if graded else None
    assert f"Weighted total: <strong>{score(value)}</strong>" in page
    assert f"coverage <strong>{percent(sum(graded) / total)}</strong>" in page
    assert f"({weight(sum(graded))} of {weight(total)} weight graded;" in page
    assert "leaves the total partial, never lower" in page
