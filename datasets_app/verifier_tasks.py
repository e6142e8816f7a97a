"""Python checks on their own Celery queue, `verifiers`.

Its worker (the Procfile's `verifiers` line) starts from an empty environment: no database
URL, no storage keys, no judge key, only the broker. So this task takes the check's code,
task and output themselves, not an id to look up, and returns the SandboxResult as a dict.
The worker runs the sandbox's self-test once as it starts, before its pool forks; if any
hostile program got through, every check it is sent ends as sandbox_unavailable, with why.
Without a broker (Celery eager, the default) the task runs in the caller's process, through
the same sandbox.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from celery import shared_task
from celery.signals import celeryd_after_setup

from context_verifiers.sandbox import SandboxResult, run_code_check, self_test

logger = logging.getLogger(__name__)

QUEUE = "verifiers"
# Why checks are refused, set when the worker that consumes QUEUE starts and its self-test
# fails; empty everywhere else (eager, other queues).
worker_refusal: list[str] = []


@celeryd_after_setup.connect
def _self_test_on_start(sender: str, instance: Any, **kwargs: Any) -> None:
    if QUEUE not in instance.app.amqp.queues.consume_from:
        return
    report = self_test()
    for line in report.lines():
        logger.info("sandbox self-test: %s", line)
    if not report.passed:
        logger.error("The sandbox self-test failed: this worker will run no Python check")
        worker_refusal.append(report.lines()[-1])


@shared_task(queue=QUEUE)
def verifier_code_check(code: str, task: dict[str, Any], output: dict[str, Any]) -> dict[str, Any]:
    """One Python check in the sandbox; the SandboxResult's fields as a dict."""
    if worker_refusal:
        result = SandboxResult(
            verdict=None,
            code="sandbox_unavailable",
            detail=f"This worker's sandbox self-test failed: {worker_refusal[0]}",
        )
    else:
        result = run_code_check(code, task=task, output=output)
    return dataclasses.asdict(result)
