"""A run's figures from its outcomes, in one place: means, pass rates and their standard errors.

Scores are the scorers' (`scoring`); these are the metrics over them, as Inspect AI keeps
`accuracy()` and `stderr()` apart from its scorers. A standard error is the sample's
(n - 1) over sqrt(n); where several values come from one task (a pass rate over every
criterion), it is clustered by task (the cluster-robust sandwich estimator), since the
criteria of one task do not vary independently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from context_verifiers.outcome import GRADED

# A difference is noise when it is within this many standard errors of 0 (about 95%).
NOISE_Z = 1.96


@dataclass(frozen=True, slots=True)
class Mean:
    """A mean with its standard error (None with fewer than two values) over `n` values."""

    value: float | None
    stderr: float | None
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "stderr": self.stderr, "n": self.n}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Mean:
        return cls(value=data["value"], stderr=data["stderr"], n=data["n"])


def mean(values: Sequence[float]) -> Mean:
    """The mean of independent values and its standard error."""
    n = len(values)
    if n == 0:
        return Mean(None, None, 0)
    average = math.fsum(values) / n
    if n < 2:
        return Mean(average, None, n)
    variance = math.fsum((x - average) ** 2 for x in values) / (n - 1)
    return Mean(average, math.sqrt(variance / n), n)


def clustered_mean(clusters: Iterable[Sequence[float]]) -> Mean:
    """The mean of every value, with its standard error clustered by `clusters` (a task's
    values together): G/(G-1) · Σ_g (Σ_i (x_gi - mean))² / N²."""
    groups = [list(group) for group in clusters if group]
    n = sum(len(group) for group in groups)
    if n == 0:
        return Mean(None, None, 0)
    average = math.fsum(x for group in groups for x in group) / n
    g = len(groups)
    if g < 2:
        return Mean(average, None, n)
    spread = math.fsum(math.fsum(x - average for x in group) ** 2 for group in groups)
    return Mean(average, math.sqrt(g / (g - 1) * spread) / n, n)


@dataclass(frozen=True)
class Difference:
    """Run B's figure less run A's, with the standard error of the difference (the two runs
    taken as independent) and whether it is within the noise."""

    delta: float | None
    stderr: float | None

    @property
    def noise(self) -> bool:
        """Smaller than NOISE_Z standard errors: nobody should celebrate it."""
        if self.delta is None:
            return True
        if self.stderr is None:
            return False
        return abs(self.delta) <= NOISE_Z * self.stderr


def difference(a: Mean, b: Mean) -> Difference:
    if a.value is None or b.value is None:
        return Difference(None, None)
    errors = [e for e in (a.stderr, b.stderr) if e is not None]
    stderr = math.sqrt(math.fsum(e * e for e in errors)) if errors else None
    return Difference(b.value - a.value, stderr)


def paired_difference(pairs: Sequence[tuple[float, float]]) -> Difference:
    """B less A over the same tasks: the mean of the per-task differences and its standard
    error, which is smaller than the unpaired one when the tasks' difficulty is shared."""
    result = mean([b - a for a, b in pairs])
    return Difference(result.value, result.stderr)


@dataclass
class CriterionRate:
    """One criterion's outcomes across tasks, every one counted: the pass rate is over the
    graded ones (`rate`), and the errors, skips and missing outputs are shown beside it."""

    id: str
    text: str
    kind: str
    passed: int = 0
    failed: int = 0
    scored: int = 0
    error: int = 0
    skipped: int = 0
    no_output: int = 0
    points: list[float] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.scored + self.error + self.skipped

    @property
    def graded(self) -> int:
        return self.passed + self.failed + self.scored

    @property
    def rate(self) -> Mean:
        return mean(self.points)

    def add(self, status: str, score: float | None, code: str | None) -> None:
        setattr(self, status, getattr(self, status) + 1)
        if code == "no_answer":
            self.no_output += 1
        if status in GRADED:
            self.points.append(score or 0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "passed": self.passed,
            "failed": self.failed,
            "scored": self.scored,
            "error": self.error,
            "skipped": self.skipped,
            "no_output": self.no_output,
            "total": self.total,
            "graded": self.graded,
            "rate": self.rate.to_json(),
        }


def criterion_rates(
    rows: Iterable[tuple[str, str, str, str, float | None, str | None]],
) -> list[CriterionRate]:
    """Per criterion id, in first-seen order, from (id, text, kind, status, score, code)."""
    rates: dict[str, CriterionRate] = {}
    for criterion_id, text, kind, status, score, code in rows:
        rate = rates.get(criterion_id)
        if rate is None:
            rate = rates[criterion_id] = CriterionRate(criterion_id, text, kind)
        rate.add(status, score, code)
    return list(rates.values())


@dataclass
class Calibration:
    """How often a judge agrees with people on one criterion: agreement (verdicts equal, a
    score within `SCORE_AGREES` of the person's), Cohen's kappa when both are pass/fail,
    and the mean absolute difference of the scores."""

    id: str
    n: int = 0
    agreed: int = 0
    kappa: float | None = None
    mean_abs_diff: float | None = None

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.n if self.n else None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "n": self.n,
            "agreed": self.agreed,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "mean_abs_diff": self.mean_abs_diff,
        }


# A judge's score and a person's agree when they are this close (on a 0 to 1 scale).
SCORE_AGREES = 0.25


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' pass/fail verdicts: agreement beyond chance."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first = sum(a for a, _ in pairs) / n
    second = sum(b for _, b in pairs) / n
    chance = first * second + (1 - first) * (1 - second)
    if chance >= 1:
        return 1.0 if observed == 1 else 0.0
    return (observed - chance) / (1 - chance)


def calibration(criterion_id: str, pairs: Sequence[tuple[float, bool | float]]) -> Calibration:
    """The judge's points (1/0 or a score) against people's labels (True/False or a score)."""
    result = Calibration(criterion_id, n=len(pairs))
    if not pairs:
        return result
    people = [float(label) for _, label in pairs]
    judge = [points for points, _ in pairs]
    result.agreed = sum(abs(j - p) <= SCORE_AGREES for j, p in zip(judge, people, strict=True))
    result.mean_abs_diff = math.fsum(abs(j - p) for j, p in zip(judge, people, strict=True)) / len(
        pairs
    )
    if all(isinstance(label, bool) for _, label in pairs) and all(j in (0.0, 1.0) for j in judge):
        result.kappa = cohen_kappa(
            [(j == 1.0, bool(label)) for j, (_, label) in zip(judge, pairs, strict=True)]
        )
    return result
