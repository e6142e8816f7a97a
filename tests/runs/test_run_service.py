"""Runs through their services: the version's frozen content graded, each task claimed and
its outcomes written once, problems refused whole, judges that fail ending as errors, stopping."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from context_verifiers.judges import MAX_JUDGE_FILE_CHARS, JudgeConfig
from context_verifiers.outcome import Outcome
from datasets_app import selectors
from datasets_app.importing import outputs
from datasets_app.models import (
    JudgeCall,
    Run,
    RunOutcome,
    RunResult,
    RunState,
    Task,
)
from datasets_app.services import runs
from tests.runs import as_before_grading, outputs_jsonl, run_outputs, zipped
from tests.runs.conftest import judge_server, saved_version  # noqa: F401 - a fixture
from tests.verifiers.judge_server import Fault

pytestmark = pytest.mark.django_db


def test_a_run_grades_every_task_of_the_version_and_keeps_each_verdict(user):
    version = saved_version(user, tasks=3)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 9"})

    assert run.state == RunState.DONE
    assert (run.task_count, run.outcome_count, run.outcomes_done) == (3, 3, 3)
    results = {r.task_key: r for r in run.results.prefetch_related("outcomes")}
    assert [results[k].score for k in ("t1", "t2", "t3")] == [1.0, 0.0, 0.0]
    missing = results["t3"].outcomes.get()
    assert (missing.status, missing.code) == ("failed", "no_answer")
    assert not results["t3"].has_output
    summary = selectors.RunSummary.from_json(run.summary)
    assert summary.score.value == pytest.approx(1 / 3) and summary.score.stderr is not None
    assert (summary.tasks, summary.no_output, summary.failed_tasks) == (3, 1, 2)
    assert summary.criteria[0]["passed"] == 1 and summary.criteria[0]["total"] == 3


def test_outputs_with_problems_are_refused_whole_and_nothing_is_written(user):
    version = saved_version(user, tasks=2)
    data = outputs_jsonl({"t1": "Answer 1", "t9": "x"})
    with pytest.raises(runs.RunRefused) as refused:
        runs.run_create(version=version, user=user, data=data, file_name="o.jsonl")
    assert [(p.line, p.code) for p in refused.value.problems] == [(2, outputs.UNKNOWN_TASK.code)]
    assert not Run.objects.exists() and not RunResult.objects.exists()


def test_the_preview_counts_what_the_run_will_do(user, site_judge):
    version = saved_version(user, tasks=3, judged=True)
    plan, _ = runs.run_check(
        version=version, data=outputs_jsonl({"t1": "a", "t2": ""}), file_name="o.jsonl"
    )
    assert (plan.tasks, plan.matched, plan.no_output, plan.outcomes) == (3, 2, 2, 6)
    assert (plan.judge_calls, plan.judge_available, plan.judge_model) == (1, True, "local-judge")
    assert plan.ok and not Run.objects.exists()


def test_a_budget_refuses_the_run_before_it_starts(user, site_judge):
    version = saved_version(user, tasks=3, judged=True)
    data = outputs_jsonl({"t1": "a", "t2": "b", "t3": "c"})
    with pytest.raises(runs.RunRefused) as refused:
        runs.run_create(
            version=version, user=user, data=data, file_name="o.jsonl", budget_judge_calls=2
        )
    assert refused.value.problems[0].message == runs.OVER_BUDGET_CALLS.format(needed=3, budget=2)
    assert not Run.objects.exists()


def test_editing_or_archiving_a_task_later_changes_no_run(user):
    version = saved_version(user, tasks=2)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2"})
    before = selectors.RunSummary.from_json(run.summary)
    Task.objects.filter(task_id="t1").update(state="archived")
    second = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2"})
    assert selectors.RunSummary.from_json(second.summary) == before
    assert run.results.count() == 2


def test_judged_criteria_call_the_judge_and_keep_its_reasoning(user, site_judge):
    version = saved_version(user, tasks=2, judged=True)
    run = run_outputs(version, user, {"t1": "Answer 1 is correct", "t2": "Answer 2, sloppy"})
    assert run.state == RunState.DONE
    verdicts = dict(
        RunOutcome.objects.filter(criterion_key="clear").values_list("result__task_key", "status")
    )
    assert verdicts == {"t1": "passed", "t2": "failed"}
    judged = RunOutcome.objects.get(criterion_key="clear", result__task_key="t1")
    assert judged.reasoning == "The answer is correct." and judged.calls[0]["reply"]
    assert len(site_judge.requests) == 2


def test_a_judge_that_is_down_ends_its_criteria_as_errors_and_the_score_partial(user, settings):
    settings.JUDGE = JudgeConfig(
        base_url="http://127.0.0.1:9/v1", model="gone", max_retries=0, timeout_seconds=2
    )
    version = saved_version(user, tasks=2, judged=True)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2"})
    assert run.state == RunState.DONE_WITH_ERRORS
    summary = selectors.RunSummary.from_json(run.summary)
    assert summary.outcomes == {"passed": 2, "error": 2}
    assert summary.score.value == 1.0 and summary.coverage == pytest.approx(0.5)
    error = RunOutcome.objects.filter(status="error").first()
    assert error.code == "judge_unreachable"


def test_a_task_is_claimed_once_and_its_outcomes_written_once(user):
    version = saved_version(user, tasks=3)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2", "t3": "Answer 3"})
    as_before_grading(run)
    held = RunResult.objects.get(run=run, task_key="t2")
    RunResult.objects.filter(pk=held.pk).update(lease="another-worker", claimed_at=timezone.now())

    graded = runs.run_grade_chunk(run_id=run.pk, first=0, last=2, lease="me")

    assert (graded.written, graded.held_elsewhere) == (2, 1)
    held.refresh_from_db()
    assert (held.graded, held.lease) == (False, "another-worker")
    assert not RunOutcome.objects.filter(result=held).exists()
    assert Run.objects.get(pk=run.pk).state == RunState.GRADING
    again = runs.run_grade_chunk(run_id=run.pk, first=0, last=2, lease="me")
    assert again.written == 0, "a written outcome is never graded again"
    # The other worker died: once its claim is older than the lease, it is taken over.
    RunResult.objects.filter(pk=held.pk).update(
        claimed_at=timezone.now() - timedelta(seconds=runs.lease_seconds() + 1)
    )
    last = runs.run_grade_chunk(run_id=run.pk, first=0, last=2, lease="third")
    assert last.written == 1
    run.refresh_from_db()
    assert run.state == RunState.DONE and run.outcomes_done == 3
    assert RunOutcome.objects.filter(run=run).count() == 3
    assert selectors.RunSummary.from_json(run.summary).score.value == 1.0


def test_a_worker_whose_claim_was_taken_over_writes_nothing(user):
    version = saved_version(user, tasks=2)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2"})
    as_before_grading(run)
    # "slow" claims both tasks and grades them; meanwhile its lease runs out and "third"
    # takes the tasks over and writes them. What "slow" then writes is dropped.
    content = selectors.frozen_version(version)
    claimed, _ = runs._claim(run, 0, 1, "slow")
    RunResult.objects.filter(run=run).update(
        claimed_at=timezone.now() - timedelta(seconds=runs.lease_seconds() + 1)
    )
    assert runs.run_grade_chunk(run_id=run.pk, first=0, last=1, lease="third").written == 2
    late = [Outcome(status="failed", score=0.0)] * 2
    assert runs._write(run, claimed, content, late, "slow") == 0
    statuses = RunOutcome.objects.filter(run=run).values_list("status", flat=True)
    assert list(statuses) == ["passed", "passed"]
    assert Run.objects.get(pk=run.pk).outcomes_done == 2


def test_a_stopped_run_grades_nothing_more_and_keeps_what_it_graded(user):
    version = saved_version(user, tasks=3)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2", "t3": "Answer 3"})
    as_before_grading(run)
    runs.run_grade_chunk(run_id=run.pk, first=0, last=0, lease="me")
    assert runs.run_stop(run=run)
    assert runs.run_grade_chunk(run_id=run.pk, first=1, last=2, lease="me").ended
    run.refresh_from_db()
    assert run.state == RunState.STOPPED and run.outcomes_done == 1
    summary = selectors.RunSummary.from_json(run.summary)
    assert summary.outcomes == {"passed": 1, "pending": 2}
    assert summary.graded_tasks == 1 and summary.score.value == 1.0
    assert not runs.run_stop(run=run), "stopping twice does nothing"


def test_labels_show_how_often_the_judge_agrees_with_people(user, site_judge):
    version = saved_version(user, tasks=4, judged=True)
    outputs = {
        "t1": {"output": "correct", "labels": {"clear": True}},  # judge passes: agrees
        "t2": {"output": "sloppy", "labels": {"clear": False}},  # judge fails: agrees
        "t3": {"output": "sloppy", "labels": {"clear": True}},  # judge fails: disagrees
        "t4": {"output": "correct"},  # no label
    }
    run = run_outputs(version, user, outputs)
    summary = selectors.RunSummary.from_json(run.summary)
    (clear,) = summary.calibration
    assert (clear["id"], clear["n"], clear["agreed"]) == ("clear", 3, 2)
    assert clear["agreement"] == pytest.approx(2 / 3)
    assert clear["kappa"] == pytest.approx(0.4)
    assert summary.disagreements == [
        {
            "task": "t3",
            "criterion": "clear",
            "judge": "failed",
            "score": 0.0,
            "label": True,
            "reasoning": "The answer does not do it.",
        }
    ]


def test_a_judge_that_times_out_every_call_ends_the_run_with_errors_not_a_hang(
    user,
    settings,
    judge_server,  # noqa: F811 - the fixture imported above
):
    settings.JUDGE = JudgeConfig(
        base_url=judge_server.base_url,
        model="local-judge",
        max_retries=0,
        timeout_seconds=0.3,
        concurrency=8,
    )
    judge_server.fail(*[Fault(delay=1.0) for _ in range(8)])
    version = saved_version(user, tasks=8, judged=True)
    run = run_outputs(version, user, {f"t{n}": f"Answer {n}" for n in range(1, 9)})
    assert run.state == RunState.DONE_WITH_ERRORS
    codes = set(RunOutcome.objects.filter(status="error").values_list("code", flat=True))
    assert codes == {"judge_unreachable"}
    summary = selectors.RunSummary.from_json(run.summary)
    assert summary.outcomes == {"passed": 8, "error": 8} and summary.score.value == 1.0


def test_every_attempt_of_a_retried_judge_call_is_kept_and_the_error_counts_them(
    user,
    settings,
    judge_server,  # noqa: F811 - the fixture imported above
):
    settings.JUDGE = JudgeConfig(
        base_url=judge_server.base_url, model="local-judge", max_retries=2, concurrency=1
    )
    fast = {"retry-after-ms": "10"}
    # The first task's call fails all three times; the second's fails once, then answers.
    judge_server.fail(*[Fault(status=503, headers=fast) for _ in range(4)])
    version = saved_version(user, tasks=2, judged=True)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2"})

    assert run.state == RunState.DONE_WITH_ERRORS
    judged = {o.result.task_key: o for o in RunOutcome.objects.filter(criterion_key="clear")}
    assert judged["t1"].code == "judge_unreachable"
    assert judged["t1"].detail.startswith("After 3 attempts: HTTP 503")
    assert judged["t2"].status == "failed"
    assert [len(judged[key].calls) for key in ("t1", "t2")] == [3, 2]
    assert JudgeCall.objects.count() == len(judge_server.requests) == 5


def test_the_token_estimate_counts_the_files_an_agent_judge_is_shown(user, site_judge):
    # An agent judge reads the files the agent wrote (each cut at MAX_JUDGE_FILE_CHARS);
    # an llm_judge does not. A budget is checked against what the calls will send.

    def tokens(kind: str, report: bytes) -> int:
        version = saved_version(
            user, tasks=1, verifier={"kind": kind}, name=f"{kind} {len(report)}"
        )
        data = zipped(
            {"outputs.jsonl": outputs_jsonl({"t1": "See the report."}), "files/t1/r.txt": report}
        )
        plan, _ = runs.run_check(version=version, data=data, file_name="outputs.zip")
        assert plan.ok and plan.judge_calls == 1, plan.problems
        return plan.judge_tokens

    small, large = b"x" * 4_000, b"x" * 100_000
    assert tokens("llm_judge", large) == tokens("llm_judge", small)
    assert tokens("agent_judge", small) - tokens("agent_judge", b"") == 4_000 // 4
    # Cut as the judge cuts it: no more than MAX_JUDGE_FILE_CHARS of one file.
    assert tokens("agent_judge", large) - tokens("agent_judge", b"") == MAX_JUDGE_FILE_CHARS // 4
