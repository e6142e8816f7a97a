"""The run's metrics: means with standard errors, clustered by task, and differences."""

from __future__ import annotations

import math

import pytest

from context_verifiers import metrics


def test_the_mean_carries_the_sample_standard_error():
    result = metrics.mean([1.0, 0.0, 1.0, 0.0])
    assert result.value == 0.5 and result.n == 4
    # sample variance 1/3, over n = 4
    assert result.stderr == pytest.approx(math.sqrt((1 / 3) / 4))
    assert metrics.mean([]).value is None
    assert metrics.mean([0.7]).stderr is None


def test_clustered_errors_grow_when_a_tasks_criteria_move_together():
    together = metrics.clustered_mean([[1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    apart = metrics.clustered_mean([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    assert together.value == apart.value == 0.5
    assert together.stderr > metrics.mean([1, 1, 0, 0, 1, 1, 0, 0]).stderr
    assert apart.stderr == pytest.approx(0.0)


def test_a_difference_within_its_noise_is_marked_as_such():
    a = metrics.mean([1.0, 0.0] * 5)
    b = metrics.mean([1.0, 0.0, 1.0, 1.0, 0.0] * 2)
    small = metrics.difference(a, b)
    assert small.delta == pytest.approx(0.1) and small.noise
    large = metrics.difference(
        metrics.mean([0.0] * 50 + [1.0] * 50), metrics.mean([1.0] * 99 + [0.0])
    )
    assert not large.noise


def test_criterion_rates_count_errors_and_missing_outputs_beside_the_rate():
    rates = metrics.criterion_rates(
        [
            ("c1", "Right", "exact_match", "passed", 1.0, None),
            ("c1", "Right", "exact_match", "failed", 0.0, "no_answer"),
            ("c1", "Right", "exact_match", "error", None, "judge_unreachable"),
            ("c2", "Clear", "llm_judge", "scored", 0.5, None),
        ]
    )
    c1, c2 = rates
    assert (c1.passed, c1.failed, c1.error, c1.no_output, c1.total, c1.graded) == (1, 1, 1, 1, 3, 2)
    assert c1.rate.value == 0.5
    assert c2.rate.value == 0.5 and c2.rate.n == 1


def test_cohens_kappa_is_agreement_beyond_chance():
    assert metrics.cohen_kappa([(True, True), (False, False)]) == 1.0
    assert metrics.cohen_kappa([(True, False), (False, True)]) == -1.0
    scored = metrics.calibration("c", [(0.9, 1.0), (0.2, 0.7)])
    assert (scored.n, scored.agreed, scored.kappa) == (2, 1, None)
    assert scored.mean_abs_diff == pytest.approx(0.3)
