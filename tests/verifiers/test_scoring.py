"""Scores: a weighted mean of what was graded, with its coverage; a broken grader never
lowers a score."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from context_verifiers import outcome as reasons
from context_verifiers.outcome import Outcome
from context_verifiers.sandbox import CODES
from context_verifiers.scoring import Score, dataset_score, task_score
from context_verifiers.verdict import Verdict

PASSED = Outcome.of(Verdict.boolean(passed=True))
FAILED = Outcome.of(Verdict.boolean(passed=False))
ERROR = reasons.JUDGE_UNREACHABLE.outcome("connection refused")
SKIPPED = reasons.NO_JUDGE_CONFIGURED.outcome()

graded = st.one_of(
    st.just(PASSED),
    st.just(FAILED),
    st.floats(0, 1).map(lambda value: Outcome.of(Verdict.score(value))),
)
# Every way a grader can fail to grade, as the library defines them.
ungraded = st.sampled_from(sorted(reasons.REASONS)).map(
    lambda code: reasons.REASONS[code].outcome("why")
)
weights = st.floats(min_value=0.5, max_value=1000)


def test_the_pages_rubric_weighs_each_criterion():
    # apology 10 passed, new-date 20 passed, offer 20 failed, length 10 passed, tone 10
    # scored 0.5, no-invented-facts 20 passed: (10 + 20 + 10 + 5 + 20) / 90.
    score = task_score(
        [
            (10, PASSED),
            (20, PASSED),
            (20, FAILED),
            (10, PASSED),
            (10, Outcome.of(Verdict.score(0.5))),
            (20, PASSED),
        ]
    )

    assert score.value == pytest.approx(65 / 90)
    assert score.coverage == 1.0


def test_an_error_leaves_the_score_partial_not_zero():
    score = task_score([(10, PASSED), (30, ERROR)])

    assert score == Score(value=1.0, coverage=0.25)


def test_a_task_whose_every_grader_broke_has_no_score():
    assert task_score([(1, ERROR), (2, SKIPPED)]) == Score(value=None, coverage=0.0)


def test_no_answer_is_the_agents_failure_and_counts_as_graded():
    assert task_score([(1, Outcome.no_answer()), (1, PASSED)]) == Score(value=0.5, coverage=1.0)


@given(st.lists(st.tuples(weights, graded), min_size=1, max_size=20))
def test_a_task_score_is_the_weighted_mean_of_its_graded_criteria(items):
    score = task_score(items)
    expected = math.fsum(w * o.score for w, o in items) / math.fsum(w for w, _ in items)

    assert score.value == pytest.approx(expected)
    assert 0.0 <= score.value <= 1.0
    assert score.coverage == 1.0


@given(
    st.lists(st.tuples(weights, graded), min_size=1, max_size=10),
    st.lists(st.tuples(weights, ungraded), min_size=1, max_size=10),
)
def test_errors_and_skips_change_coverage_never_the_score(items, broken):
    alone = task_score(items)
    mixed = task_score(items + broken)

    assert mixed.value == pytest.approx(alone.value)
    graded_weight = math.fsum(w for w, _ in items)
    assert mixed.coverage == pytest.approx(
        graded_weight / (graded_weight + math.fsum(w for w, _ in broken))
    )
    assert mixed.coverage < 1.0


def test_the_library_names_every_code_the_issue_and_the_sandbox_give():
    issue = {
        "judge_unparseable",
        "judge_unreachable",
        "code_timeout",
        "code_memory",
        "code_crash",
        "code_bad_return",
        "python_checks_off",
        "sandbox_unavailable",
        "no_judge_configured",
    }
    assert issue | set(CODES) <= set(reasons.REASONS)
    assert {r.status for r in reasons.REASONS.values()} == {"error", "skipped"}


@pytest.mark.parametrize("code", sorted(reasons.REASONS))
@given(
    items=st.lists(st.tuples(weights, graded), max_size=8),
    weight=weights,
    others=st.lists(st.tuples(weights, ungraded), max_size=3),
)
def test_an_outcome_of_every_code_is_never_a_zero_and_leaves_the_score_partial(
    code, items, weight, others
):
    reason = reasons.REASONS[code]
    broken = reason.outcome("what happened")
    assert (broken.status, broken.code, broken.score) == (reason.status, code, None)
    assert not broken.graded

    score = task_score([*items, (weight, broken), *others])

    graded_weight = math.fsum(w for w, _ in items)
    total = graded_weight + weight + math.fsum(w for w, _ in others)
    assert score.coverage == pytest.approx(graded_weight / total)
    assert score.coverage < 1.0
    if items:
        assert score.value == pytest.approx(task_score(items).value)
    else:
        assert score.value is None  # nothing graded: no score, not 0
    # A dataset of that task keeps the same score and coverage.
    assert dataset_score([score]) == score


@given(st.lists(st.tuples(weights, graded), min_size=1, max_size=10), st.floats(0.1, 100))
def test_scaling_every_weight_changes_nothing(items, factor):
    scaled = [(w * factor, o) for w, o in items]

    assert task_score(scaled).value == pytest.approx(task_score(items).value)


@given(
    st.lists(
        st.builds(Score, st.one_of(st.none(), st.floats(0, 1)), st.floats(0, 1)),
        min_size=1,
        max_size=30,
    )
)
def test_a_dataset_score_is_the_mean_of_its_tasks_that_have_one(scores):
    result = dataset_score(scores)
    values = [s.value for s in scores if s.value is not None]

    if values:
        assert result.value == pytest.approx(sum(values) / len(values))
    else:
        assert result.value is None
    assert result.coverage == pytest.approx(sum(s.coverage for s in scores) / len(scores))


def test_a_dataset_with_no_tasks_has_no_score():
    assert dataset_score([]) == Score(value=None, coverage=0.0)
