"""Migration 0021: a run's tasks are claimed, not each criterion, and an outcome row is made
only when it is written. The rows never written go; every verdict an ended run wrote stays;
a run still being graded grades its unscored tasks again, whole."""

from __future__ import annotations

import pytest

from datasets_app import selectors
from datasets_app.models import Run, RunOutcome
from tests.migrating import migrate_to_latest, tables_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("datasets_app", "0020_version_task_count")]


@pytest.fixture
def old_apps():
    """The tables as they were at 0020; back to the latest migration afterwards."""
    with tables_at(BEFORE) as apps:
        yield apps


def _old_run(apps, version, state: str, outcomes: dict[str, list[str]], graded: set[str]):
    """A run at 0020 with, for each task, its criteria's statuses (pending rows included)."""
    OldRun = apps.get_model("datasets_app", "Run")
    OldResult = apps.get_model("datasets_app", "RunResult")
    OldOutcome = apps.get_model("datasets_app", "RunOutcome")
    Task = apps.get_model("datasets_app", "Task")
    written = sum(s not in ("pending", "claimed") for got in outcomes.values() for s in got)
    count = sum(len(got) for got in outcomes.values())
    run = OldRun.objects.create(
        version=version, state=state, task_count=len(outcomes), outcome_count=count
    )
    run.outcomes_done = written
    run.save()
    for position, (key, statuses) in enumerate(outcomes.items()):
        result = OldResult.objects.create(
            run=run,
            task=Task.objects.get(task_id=key),
            task_key=key,
            position=position,
            graded=key in graded,
            score=1.0 if key in graded else None,
        )
        for index, status in enumerate(statuses):
            OldOutcome.objects.create(
                run=run,
                result=result,
                position=index,
                criterion_key=f"c{index}",
                kind="exact_match",
                status=status,
                lease="a-worker" if status == "claimed" else "",
            )
    return run.pk


def test_rows_never_written_go_and_every_verdict_an_ended_run_wrote_stays(old_apps, user):
    Dataset = old_apps.get_model("datasets_app", "Dataset")
    Task = old_apps.get_model("datasets_app", "Task")
    OldVersion = old_apps.get_model("datasets_app", "Version")
    dataset = Dataset.objects.create(owner_id=user.pk, name="Old runs")
    tasks = [
        Task.objects.create(dataset=dataset, task_id=f"t{n}", prompt="?", position=n, state="saved")
        for n in (1, 2)
    ]
    version = OldVersion.objects.create(dataset=dataset, number=1, snapshot={}, task_count=2)
    version.tasks.set(tasks)
    stopped = _old_run(
        old_apps, version, "stopped", {"t1": ["passed", "failed"], "t2": ["pending"]}, {"t1"}
    )
    # Two workers shared t1 (one wrote c0, the other still holds c1): graded again, whole.
    going = _old_run(
        old_apps, version, "grading", {"t1": ["passed", "claimed"], "t2": ["passed"]}, {"t2"}
    )

    migrate_to_latest()

    kept = RunOutcome.objects.filter(run_id=stopped).order_by("result__position", "position")
    assert [(o.result.task_key, o.status) for o in kept] == [("t1", "passed"), ("t1", "failed")]
    assert selectors.run_summary(run_id=stopped).outcomes == {
        "passed": 1,
        "failed": 1,
        "pending": 1,
    }
    left = RunOutcome.objects.filter(run_id=going)
    assert [(o.result.task_key, o.status) for o in left] == [("t2", "passed")]
    assert Run.objects.get(pk=going).outcomes_done == 1
