"""Scores from outcomes, in one place: a task's and a dataset's, each with its coverage.

A task's score is the weighted mean of its graded criteria (passed 1, failed 0, scored its
value); its coverage is the graded weight over the total weight. A criterion in error or
skipped is left out of both the mean and the graded weight, so a broken grader makes the
score partial (coverage below 1), never lower. A dataset's score is the mean of its tasks'
scores, over the tasks that have one; its coverage the mean of their coverages.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from context_verifiers.outcome import Outcome


@dataclass(frozen=True, slots=True)
class Score:
    """A score from 0 to 1 (None when nothing was graded) and how much of it was graded."""

    value: float | None
    coverage: float

    def to_json(self) -> dict[str, Any]:
        return {"score": self.value, "coverage": self.coverage}


def _clamped(value: float) -> float:
    # fsum of values in [0, 1] divided by their weights can land a rounding step outside.
    return min(1.0, max(0.0, value))


def task_score(weighted: Iterable[tuple[float, Outcome]]) -> Score:
    """The score of one task from its criteria's (weight, outcome)."""
    items = list(weighted)
    total = math.fsum(weight for weight, _ in items)
    graded = [(weight, outcome) for weight, outcome in items if outcome.graded]
    graded_weight = math.fsum(weight for weight, _ in graded)
    if not graded or graded_weight <= 0:
        return Score(value=None, coverage=0.0)
    points = math.fsum(weight * (outcome.score or 0.0) for weight, outcome in graded)
    coverage = graded_weight / total if total > 0 else 0.0
    return Score(value=_clamped(points / graded_weight), coverage=_clamped(coverage))


def dataset_score(tasks: Iterable[Score]) -> Score:
    """The score of a dataset from its tasks' scores: their mean, and their mean coverage."""
    scores = list(tasks)
    if not scores:
        return Score(value=None, coverage=0.0)
    values = [score.value for score in scores if score.value is not None]
    coverage = math.fsum(score.coverage for score in scores) / len(scores)
    if not values:
        return Score(value=None, coverage=_clamped(coverage))
    return Score(value=_clamped(math.fsum(values) / len(values)), coverage=_clamped(coverage))
