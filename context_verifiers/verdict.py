"""What a verifier decides: passed or not (`Verdict.boolean`), or a score from 0 to 1.

Standard library only: an author's Python check imports it inside the sandbox
(`python -I`), where nothing but the standard library and this package is on the path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

VerdictKind = Literal["boolean", "score"]

# Reasoning is shown beside the verdict and stored with every result; a check that returns
# a whole document as its reasoning would fill both. 20,000 characters is pages of
# explanation, far past what a person reads beside one criterion.
MAX_REASONING_CHARS = 20_000
TRUNCATED_MARK = " [… cut at 20,000 characters]"


def _reasoning(reasoning: object) -> str:
    if not isinstance(reasoning, str):
        raise ValueError(f"reasoning must be text (a str), not {type(reasoning).__name__}")
    if len(reasoning) > MAX_REASONING_CHARS:
        return reasoning[:MAX_REASONING_CHARS] + TRUNCATED_MARK
    return reasoning


def _score_value(value: object) -> float:
    # bool is an int in Python: Verdict.score(True) is almost always a mistaken
    # Verdict.boolean, so it is refused rather than read as 1.0.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"a score must be a number from 0 to 1, not {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"a score must be from 0 to 1 inclusive, not {value!r}")
    return number


@dataclass(frozen=True, slots=True)
class Verdict:
    """A verifier's decision. Build one with `Verdict.boolean` or `Verdict.score`."""

    kind: VerdictKind
    passed: bool | None
    value: float | None
    reasoning: str = ""

    def __post_init__(self) -> None:
        # Checked here, not only in the two constructors, so that no Verdict(...) built by
        # hand can hold a score of 7 or a passed of "yes".
        if self.kind == "boolean":
            if not isinstance(self.passed, bool) or self.value is not None:
                raise ValueError(f"passed must be True or False, not {type(self.passed).__name__}")
        elif self.kind == "score":
            if self.passed is not None:
                raise ValueError("a score has a value, not passed")
            object.__setattr__(self, "value", _score_value(self.value))
        else:
            raise ValueError(f'kind must be "boolean" or "score", not {self.kind!r}')
        object.__setattr__(self, "reasoning", _reasoning(self.reasoning))

    @classmethod
    def boolean(cls, *, passed: bool, reasoning: str = "") -> Verdict:
        """Passed or failed; `passed` must be True or False."""
        return cls(kind="boolean", passed=passed, value=None, reasoning=reasoning)

    @classmethod
    def score(cls, value: float, *, reasoning: str = "") -> Verdict:
        """A score from 0 to 1 inclusive; anything else (True, NaN, 1.5) is refused."""
        return cls(kind="score", passed=None, value=value, reasoning=reasoning)

    @property
    def points(self) -> float:
        """The verdict as a number: passed 1, failed 0, a score its value."""
        if self.kind == "boolean":
            return 1.0 if self.passed else 0.0
        assert self.value is not None
        return self.value

    def to_json(self) -> dict[str, Any]:
        """`{"kind": "boolean", "passed", "reasoning"}` or `{"kind": "score", "value", ...}`."""
        if self.kind == "boolean":
            return {"kind": "boolean", "passed": self.passed, "reasoning": self.reasoning}
        return {"kind": "score", "value": self.value, "reasoning": self.reasoning}

    @classmethod
    def from_json(cls, data: object) -> Verdict:
        """The verdict `to_json` wrote; ValueError (saying what is wrong) for anything else."""
        if not isinstance(data, dict):
            raise ValueError(f"a verdict is a JSON object, not {type(data).__name__}")
        kind = data.get("kind")
        reasoning = data.get("reasoning", "")
        if kind == "boolean" and set(data) <= {"kind", "passed", "reasoning"}:
            return cls.boolean(passed=data.get("passed"), reasoning=reasoning)  # type: ignore[arg-type]
        if kind == "score" and set(data) <= {"kind", "value", "reasoning"}:
            return cls.score(data.get("value"), reasoning=reasoning)  # type: ignore[arg-type]
        raise ValueError(
            'a verdict is {"kind": "boolean", "passed", "reasoning"} or '
            '{"kind": "score", "value", "reasoning"}'
        )
