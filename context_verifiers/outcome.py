"""What grading one criterion ends in: one type for every verifier, like pytest's outcomes.

`passed`, `failed` and `scored` are verdicts on the answer. `error` (the grader broke) and
`skipped` (it could not run here) are not: they carry a stable `code` and a `detail`, and
leave the task's score partial (see `scoring`), never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from context_verifiers.verdict import Verdict

Status = Literal["passed", "failed", "scored", "error", "skipped"]
STATUSES: tuple[str, ...] = ("passed", "failed", "scored", "error", "skipped")
GRADED: frozenset[str] = frozenset({"passed", "failed", "scored"})


@dataclass(frozen=True)
class Reason:
    """A stable code for why a grader did not grade, and the sentence a person reads."""

    code: str
    message: str
    status: Literal["error", "skipped"] = "error"

    def outcome(self, detail: str = "", **params: Any) -> Outcome:
        """This reason as an outcome; `detail` says more (the server's reply, a traceback)."""
        message = self.message.format(**params) if params else self.message
        return Outcome(status=self.status, reasoning=message, code=self.code, detail=detail)


# Every way a grader can fail to grade. Codes are stable: programs and stored results read
# them; messages are what the task page, the command and the API show.
JUDGE_UNPARSEABLE = Reason(
    "judge_unparseable", "The judge's reply could not be read as a verdict, even when asked again."
)
JUDGE_UNREACHABLE = Reason("judge_unreachable", "The judge could not be reached.")
JUDGE_REFUSED = Reason("judge_refused", "The judge's server refused the request.")
NO_JUDGE_CONFIGURED = Reason(
    "no_judge_configured",
    "No judge is configured: set JUDGE_BASE_URL and JUDGE_MODEL (and JUDGE_API_KEY) to grade "
    "with a model.",
    status="skipped",
)
UNKNOWN_PLACEHOLDER = Reason(
    "unknown_placeholder",
    "The judge's instructions use {placeholder}, which is not one of {{{{criterion}}}}, "
    "{{{{prompt}}}}, {{{{output}}}} and {{{{expected}}}}.",
)
NO_EXPECTED_ANSWER = Reason(
    "no_expected_answer",
    "{kind} compares the answer with the task's expected answer, and this task has none.",
)
PYTHON_CHECKS_OFF = Reason(
    "python_checks_off",
    "Python checks are off: your administrator can turn them on (the command line: "
    "--allow-python).",
    status="skipped",
)
SANDBOX_UNAVAILABLE = Reason(
    "sandbox_unavailable",
    "Python checks cannot run on this machine: the sandbox is unavailable ({reason}).",
    status="skipped",
)
CODE_TIMEOUT = Reason("code_timeout", "The Python check ran out of time.")
CODE_MEMORY = Reason("code_memory", "The Python check ran out of memory.")
CODE_CRASH = Reason("code_crash", "The Python check raised an exception.")
CODE_BAD_RETURN = Reason(
    "code_bad_return",
    "verify(task, output) must return Verdict.boolean(passed=..., reasoning=...) or "
    "Verdict.score(value, reasoning=...).",
)
CODE_OUTPUT_TOO_LARGE = Reason("code_output_too_large", "The Python check printed too much.")
UNKNOWN_VERIFIER = Reason("unknown_verifier", "Unknown verifier kind {kind}.")

# The sandbox's codes (`SandboxResult.code`), as outcomes.
SANDBOX_REASONS: dict[str, Reason] = {
    reason.code: reason
    for reason in (
        CODE_TIMEOUT,
        CODE_MEMORY,
        CODE_CRASH,
        CODE_BAD_RETURN,
        CODE_OUTPUT_TOO_LARGE,
        SANDBOX_UNAVAILABLE,
    )
}

# Every reason above, by its code: what a program (or a test) reads to know them all.
REASONS: dict[str, Reason] = {
    value.code: value for value in list(globals().values()) if isinstance(value, Reason)
}

NO_ANSWER_REASONING = "The agent gave no answer."


@dataclass(frozen=True)
class JudgeCall:
    """One request to a judge as it was sent and answered: what "the raw reply, tokens and
    latency" show, and what a run stores."""

    model: str
    prompt_version: str
    request: dict[str, Any]
    reply: str | None
    latency_ms: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prompt_version": self.prompt_version,
            "request": self.request,
            "reply": self.reply,
            "latency_ms": round(self.latency_ms, 3),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached": self.cached,
            "error": self.error,
        }


@dataclass(frozen=True)
class Outcome:
    """How one criterion graded one answer.

    `score` is 1/0 for passed/failed, the value for scored, None for error and skipped.
    `warnings` are for the author (instructions without {{output}}), not about the answer.
    """

    status: Status
    score: float | None = None
    reasoning: str = ""
    code: str | None = None
    detail: str = ""
    warnings: tuple[str, ...] = ()
    calls: tuple[JudgeCall, ...] = field(default=(), compare=False)

    @property
    def graded(self) -> bool:
        return self.status in GRADED

    @classmethod
    def of(cls, verdict: Verdict, **extra: Any) -> Outcome:
        """A verifier's verdict as an outcome: passed/failed, or scored."""
        if verdict.kind == "boolean":
            status: Status = "passed" if verdict.passed else "failed"
        else:
            status = "scored"
        return cls(status=status, score=verdict.points, reasoning=verdict.reasoning, **extra)

    @classmethod
    def no_answer(cls) -> Outcome:
        """The agent gave nothing: its failure, graded 0, not the grader's error."""
        return cls(status="failed", score=0.0, reasoning=NO_ANSWER_REASONING, code="no_answer")

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "score": self.score,
            "reasoning": self.reasoning,
            "code": self.code,
            "detail": self.detail,
            "warnings": list(self.warnings),
            "calls": [call.to_json() for call in self.calls],
        }
