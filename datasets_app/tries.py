"""Try an answer: a pasted answer graded exactly as a run grades it (`grade_task`), one
criterion or all of them, or the judges' exact requests shown without calling them.

A try keeps nothing but the judge calls it made (`services.judge_calls`). With a broker, one
that calls a judge or runs a Python check runs as a Celery task; its state (a `TryState`,
versioned) is kept in the cache for `TRY_KEPT_SECONDS` so that its page can poll for it,
then forgotten. With Celery eager (the default) the request grades it, as the task would.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.http import Http404

from context_verifiers import outcome as reasons
from context_verifiers.grading import Check, Graders, TaskResult, checks_for, grade_task, task_view
from context_verifiers.judges import JudgeConfig, render_prompt
from context_verifiers.templates import UnknownPlaceholders
from context_verifiers.views import OutputView
from datasets_app import grading, selectors
from datasets_app.importing.spec import DatasetSpec, TaskSpec
from datasets_app.models import Dataset, Task
from datasets_app.services.judge_calls import calls_of, judge_calls_record

# How long a try's outcome waits for its page to read it. Long enough for a slow judge and
# a reload; a try is not a record (a run is).
TRY_KEPT_SECONDS = 15 * 60
# A try with many judge criteria, each up to JUDGE_TIMEOUT_SECONDS and its retries, still
# ends: past this the person is told it took too long.
TRY_TIME_LIMIT_SECONDS = 5 * 60

JUDGE_KINDS = frozenset({"llm_judge", "agent_judge"})
TRY_FAILED = "The try could not be graded. Nothing was kept; try again, or tell us."
TRY_TOO_LONG = (
    f"The try took longer than {TRY_TIME_LIMIT_SECONDS // 60} minutes and was stopped. Try "
    "one criterion at a time."
)
TRY_GONE = "This try is no longer kept (tries are forgotten after 15 minutes). Try again."


@dataclass(frozen=True)
class TriedCall:
    """One judge call of a try, as "the raw reply, tokens and latency" show it."""

    model: str
    latency_ms: float
    prompt_tokens: int | None
    completion_tokens: int | None
    cached: bool
    reply: str
    error: str


@dataclass(frozen=True)
class TriedCriterion:
    """One criterion's outcome on the tried answer."""

    id: str
    text: str
    weight: float
    kind: str
    status: str
    score: float | None
    reasoning: str
    code: str | None
    detail: str
    warnings: tuple[str, ...] = ()
    calls: tuple[TriedCall, ...] = ()

    @property
    def is_judge(self) -> bool:
        return self.kind in JUDGE_KINDS

    @property
    def label(self) -> str:
        """The outcome in a word or two: Passed, Failed, Scored 0.60, Error, Skipped."""
        if self.status == "scored" and self.score is not None:
            return f"Scored {self.score:.2f}"
        return self.status.capitalize()


@dataclass(frozen=True)
class TryResult:
    """What a try shows: each criterion's outcome, the weighted total and its coverage."""

    score: float | None
    coverage: float
    graded_weight: float
    total_weight: float
    criteria: tuple[TriedCriterion, ...]

    @classmethod
    def of(cls, result: TaskResult) -> TryResult:
        criteria = tuple(
            TriedCriterion(
                id=one.id,
                text=one.text,
                weight=one.weight,
                kind=one.kind,
                status=one.outcome.status,
                score=one.outcome.score,
                reasoning=one.outcome.reasoning,
                code=one.outcome.code,
                detail=one.outcome.detail,
                warnings=one.outcome.warnings,
                calls=tuple(
                    TriedCall(
                        model=call.model,
                        latency_ms=call.latency_ms,
                        prompt_tokens=call.prompt_tokens,
                        completion_tokens=call.completion_tokens,
                        cached=call.cached,
                        reply=call.reply or "",
                        error=call.error or "",
                    )
                    for call in one.outcome.calls
                ),
            )
            for one in result.criteria
        )
        return cls(
            score=result.score.value,
            coverage=result.score.coverage,
            graded_weight=sum(c.weight for c in criteria if c.status in reasons.GRADED),
            total_weight=sum(c.weight for c in criteria),
            criteria=criteria,
        )

    @property
    def codes(self) -> set[str]:
        return {c.code for c in self.criteria if c.code}

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "coverage": self.coverage,
            "graded_weight": self.graded_weight,
            "total_weight": self.total_weight,
            "criteria": [
                {**vars(c), "warnings": list(c.warnings), "calls": [vars(x) for x in c.calls]}
                for c in self.criteria
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TryResult:
        criteria = tuple(
            TriedCriterion(
                **{
                    **c,
                    "warnings": tuple(c["warnings"]),
                    "calls": tuple(TriedCall(**x) for x in c["calls"]),
                }
            )
            for c in data["criteria"]
        )
        return cls(
            score=data["score"],
            coverage=data["coverage"],
            graded_weight=data["graded_weight"],
            total_weight=data["total_weight"],
            criteria=criteria,
        )


Status = Literal["running", "done", "failed"]


@dataclass(frozen=True)
class TryState:
    """A try handed to a worker, as the cache keeps it between the request and its polls."""

    VERSION = 1

    key: str
    user_id: int
    dataset_id: int
    task_pk: int
    answer: str
    only: str | None = None
    status: Status = "running"
    result: TryResult | None = None
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.VERSION,
            "key": self.key,
            "user_id": self.user_id,
            "dataset_id": self.dataset_id,
            "task_pk": self.task_pk,
            "answer": self.answer,
            "only": self.only,
            "status": self.status,
            "result": self.result.to_json() if self.result else None,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TryState | None:
        """The state, or None for one an older version of the app kept."""
        if data.get("version") != cls.VERSION:
            return None
        fields = {k: v for k, v in data.items() if k not in ("version", "result")}
        result = TryResult.from_json(data["result"]) if data.get("result") else None
        return cls(**fields, result=result)

    def save(self) -> None:
        cache.set(_cache_key(self.key), self.to_json(), TRY_KEPT_SECONDS)


def _cache_key(key: str) -> str:
    return f"try:{key}"


@dataclass(frozen=True)
class Prompt:
    """A judge criterion's exact request ("Show the prompt"), or why it cannot be made."""

    id: str
    text: str
    kind: str
    request: dict[str, Any] | None = None
    error: str = ""
    messages: Sequence[dict[str, Any]] = field(default=())

    @property
    def request_json(self) -> str:
        return json.dumps(self.request, indent=2, ensure_ascii=False)


@dataclass(frozen=True)
class Target:
    """A task to try answers on, with what grades it, read once a request."""

    dataset: Dataset
    task: Task
    dataset_spec: DatasetSpec
    task_spec: TaskSpec

    @classmethod
    def of(cls, dataset: Dataset, task: Task) -> Target:
        """`task` with its criteria and files prefetched (`selectors.task_for`), on a page
        that shows them too."""
        spec = grading.dataset_spec_for_grading(dataset)
        return cls(dataset, task, spec, selectors.task_spec(task))

    @classmethod
    def read(cls, *, user: User, pk: int, task_pk: int) -> Target:
        """The person's task `task_pk` of dataset `pk`, read for a try alone
        (`selectors.task_to_grade`); 404 when they may not see it."""
        task, dataset_spec, task_spec = selectors.task_to_grade(user, pk, task_pk)
        return cls(task.dataset, task, dataset_spec, task_spec)

    def checks(self, only: str | None = None) -> tuple[Check, ...]:
        checks = checks_for(self.dataset_spec, self.task_spec)
        return tuple(check for check in checks if only is None or check.id == only)

    def edited(self, task_spec: TaskSpec) -> Target:
        """The task as the edit page's form has it, unsaved, with the files it has (the
        form does not change them)."""
        spec = replace(
            task_spec,
            input_files=self.task_spec.input_files,
            expected_files=self.task_spec.expected_files,
        )
        return Target(self.dataset, self.task, self.dataset_spec, spec)

    def choices(self) -> list[tuple[str, str]]:
        """The criteria a try can grade alone, by id, as a person reads them."""
        return [(check.id, check.text) for check in self.checks()]


def judge_prompts(*, target: Target, answer: str, only: str | None) -> list[Prompt]:
    """The exact request each judge criterion would send for `answer`; nothing is called."""
    config: JudgeConfig = settings.JUDGE
    output = OutputView(text=answer)
    prompts = []
    for check in target.checks(only):
        if check.verifier.kind not in JUDGE_KINDS:
            continue
        view = task_view(target.task_spec, check, grading.read_task_file)
        try:
            body = render_prompt(check.verifier, view, output, config)
        except UnknownPlaceholders as exc:
            reason = reasons.UNKNOWN_PLACEHOLDER.outcome(placeholder=", ".join(exc.names))
            prompts.append(
                Prompt(check.id, check.text, check.verifier.kind, error=reason.reasoning)
            )
            continue
        prompts.append(
            Prompt(check.id, check.text, check.verifier.kind, body, messages=body["messages"])
        )
    return prompts


def try_grade(
    *,
    target: Target,
    answer: str,
    only: str | None,
    user: User | None,
    graders: Graders | None = None,
) -> TryResult:
    """Grade `answer` as a run would, keeping the judge calls it made."""
    result = grade_task(
        target.dataset_spec,
        target.task_spec,
        answer,
        graders=graders or grading.graders(),
        only=only,
    )
    calls = calls_of([result])
    if calls:
        judge_calls_record(calls=calls, dataset=target.dataset, user=user)
    return TryResult.of(result)


def _runs_slowly(checks: Sequence[Check], graders: Graders) -> bool:
    """Whether the try calls a judge or runs a Python check (else it is graded at once)."""
    kinds = {check.verifier.kind for check in checks}
    return bool(
        (kinds & JUDGE_KINDS and graders.judge is not None)
        or ("code_verifier" in kinds and graders.allow_python)
    )


def _on_a_worker() -> bool:
    """Whether a slow try goes to a worker. With Celery eager (no broker) the task would
    run here, in this request, anyway: it is graded here, without a round trip through the
    cache. A worker elsewhere hands its outcome back through the cache, which must then be
    shared (CACHE_URL): with one in this process's memory, the request grades it here."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return False
    return "locmem" not in settings.CACHES["default"]["BACKEND"].lower()


def try_start(
    *, target: Target, answer: str, only: str | None, user: User, queue: bool = True
) -> TryState:
    """Grade `answer` now, or hand the try to a worker when it calls a judge or runs a
    Python check (and a worker there is); the state says which. `queue=False`: always
    now (a try of unsaved edits, which a worker could not read back)."""
    state = TryState(
        key=uuid.uuid4().hex,
        user_id=user.pk,
        dataset_id=target.dataset.pk,
        task_pk=target.task.pk,
        answer=answer,
        only=only,
    )
    graders = grading.graders()
    if not (queue and _on_a_worker() and _runs_slowly(target.checks(only), graders)):
        result = try_grade(target=target, answer=answer, only=only, user=user, graders=graders)
        return TryState(**{**vars(state), "status": "done", "result": result})
    state.save()
    from datasets_app import tasks

    tasks.enqueue(tasks.try_answer, state.key)
    return try_state(key=state.key, user=user, dataset=target.dataset) or state


def try_state(*, key: str, user: User, dataset: Dataset) -> TryState | None:
    """The person's try of a task in `dataset`; None when it is gone (or not theirs)."""
    data = cache.get(_cache_key(key))
    state = TryState.from_json(data) if isinstance(data, dict) else None
    if state is None or state.user_id != user.pk or state.dataset_id != dataset.pk:
        return None
    return state


def try_run(*, key: str) -> TryState | None:
    """Grade a try handed to a worker, once, and keep its outcome for its page."""
    data = cache.get(_cache_key(key))
    state = TryState.from_json(data) if isinstance(data, dict) else None
    if state is None or state.status != "running":
        return None
    user = User.objects.filter(pk=state.user_id).first()
    try:
        if user is None:
            raise Http404
        target = Target.read(user=user, pk=state.dataset_id, task_pk=state.task_pk)
    except Http404:
        done = TryState(**{**vars(state), "status": "failed", "error": TRY_GONE})
    else:
        result = try_grade(target=target, answer=state.answer, only=state.only, user=user)
        done = TryState(**{**vars(state), "status": "done", "result": result})
    done.save()
    return done


def try_failed(*, key: str, error: str) -> None:
    """Record that a try handed to a worker could not be graded, for its page to say."""
    data = cache.get(_cache_key(key))
    state = TryState.from_json(data) if isinstance(data, dict) else None
    if state is not None:
        TryState(**{**vars(state), "status": "failed", "error": error}).save()
