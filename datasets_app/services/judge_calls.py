"""Recording the judges' calls: a try keeps these and nothing else; a run keeps them too."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction

from context_verifiers.grading import TaskResult
from context_verifiers.outcome import JudgeCall as Call
from datasets_app.models import Dataset, JudgeCall
from datasets_app.services import bulk


def calls_of(results: Iterable[TaskResult]) -> list[Call]:
    """Every judge call made for these results, in criterion order."""
    return [call for result in results for one in result.criteria for call in one.outcome.calls]


@transaction.atomic
def judge_calls_record(
    *, calls: Iterable[Call], dataset: Dataset | None, user: User | None
) -> list[JudgeCall]:
    """Keep each call as sent and answered, all or none."""
    rows = [
        JudgeCall(
            dataset=dataset,
            created_by=user,
            model=call.model,
            prompt_version=call.prompt_version,
            request=call.request,
            reply=call.reply or "",
            prompt_tokens=call.prompt_tokens,
            completion_tokens=call.completion_tokens,
            latency_ms=max(0.0, call.latency_ms),
            cached=call.cached,
            error=call.error or "",
        )
        for call in calls
    ]
    for row in rows:
        # The people and the dataset are the caller's, already read: not looked up again.
        row.full_clean(exclude=["dataset", "created_by"])
    # COPY on PostgreSQL, the app's one bulk writer: a run keeps thousands of calls, each
    # with its whole request, which Django's bulk_create quoted in Python for seconds.
    return list(bulk.insert_rows(JudgeCall, rows))
