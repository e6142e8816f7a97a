"""Runs on real Celery workers on Redis, judged by the local OpenAI-compatible server: a
200-task run with one worker killed (kill -9) mid-run, which the other finishes, every
outcome written exactly once; and a run stopped mid-way, which grades nothing more.

Redis databases 13 (broker) and 14 (the judges' reply cache) and a queue of the test's own.
Skipped, with the reason shown, when no Redis answers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from context_verifiers.judges import JudgeConfig
from contextevals.celery import app
from datasets_app import selectors
from datasets_app.models import Run, RunOutcome, RunState, SiteSettings
from datasets_app.services import runs
from tests.conftest import REPO_ROOT
from tests.runs import READS_REPORT, outputs_jsonl, zipped
from tests.runs.conftest import saved_version
from tests.test_worker import _redis_answers, shared_db  # noqa: F401 - a fixture
from tests.verifiers.judge_server import JudgeServer

pytestmark = [pytest.mark.redis, pytest.mark.slow]

BROKER_URL = "redis://127.0.0.1:6379/13"
CACHE_URL = "redis://127.0.0.1:6379/14"
TASKS = 200


class Workers:
    """Celery workers on one queue, each its own process group; always stopped."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log, self.processes = env, log, []

    def start(self, name: str) -> subprocess.Popen:
        command = [sys.executable, "-m", "celery", "-A", "contextevals", "worker", "-c", "1"]
        command += ["-Q", self.env["RECIPE_QUEUE"], "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"]
        with self.log.open("ab") as out:
            process = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes.append(process)
        return process

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


@pytest.fixture
def judge():
    server = JudgeServer(latency=0.05).start()
    yield server
    server.stop()


@pytest.fixture
def workers(shared_db, settings, judge, tmp_path, monkeypatch) -> Iterator[Workers]:  # noqa: F811
    if not _redis_answers():
        pytest.skip("no Redis answered on 127.0.0.1:6379 (CI has one): the worker test skipped")
    import redis

    redis.Redis.from_url(CACHE_URL).flushdb()  # no reply kept from an earlier run
    queue = f"runs-{uuid.uuid4().hex[:12]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.recipe_settings",
        "DATABASE_URL": shared_db,
        "CELERY_BROKER_URL": BROKER_URL,
        "CACHE_URL": CACHE_URL,
        "RECIPE_QUEUE": queue,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "JUDGE_BASE_URL": judge.base_url,
        "JUDGE_MODEL": "local-judge",
        "JUDGE_SEED": "7",
        "JUDGE_CONCURRENCY": "4",
        "RUN_CHUNK_TASKS": "10",
        # A chunk not acknowledged goes back on the queue after this (not the production 20
        # minutes), whether its worker died or still grades it; a claim not renewed for the
        # lease (renewed every second here) is taken over by the other worker.
        "CELERY_VISIBILITY_TIMEOUT": "6",
        "RUN_LEASE_SECONDS": "4",
    }
    settings.JUDGE = JudgeConfig(base_url=judge.base_url, model="local-judge", seed=7)
    settings.RUN_CHUNK_TASKS = 10
    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_url", "task_default_queue")}
    app.conf.update(task_always_eager=False, broker_url=BROKER_URL, task_default_queue=queue)
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    running = Workers(env, tmp_path / "workers.log")
    try:
        yield running
    finally:
        running.stop()
        app.connection_for_write(BROKER_URL).default_channel.queue_delete(queue)
        app.conf.update(saved)


def wait_until(condition, seconds: float, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out; the workers' log ends:\n{log.read_text()[-4000:]}")


def start_run(user, judged: bool = True, tasks: int = TASKS) -> Run:
    version = saved_version(user, tasks=tasks, judged=judged)
    outputs = {
        f"t{n}": f"Answer {n}, correct" if n % 3 else f"wrong {n}" for n in range(1, tasks + 1)
    }
    return runs.run_create(
        version=version, user=user, data=outputs_jsonl(outputs), file_name="o.jsonl"
    )


def test_a_worker_killed_mid_run_leaves_nothing_half_written(workers, user, judge):
    first = workers.start("first")
    second = workers.start("second")
    run = start_run(user)
    total = Run.objects.get(pk=run.pk).outcome_count
    assert total == 2 * TASKS

    wait_until(lambda: Run.objects.get(pk=run.pk).outcomes_done >= 40, 120, workers.log)
    os.killpg(first.pid, signal.SIGKILL)  # the worker and its pool: kill -9
    first.wait(timeout=10)
    assert Run.objects.get(pk=run.pk).outcomes_done < total, "killed mid-run"

    # What this asserts is that the run ends whole, not how fast: one worker with a pool of
    # one grades the other 360 outcomes, and on a loaded 2-core machine (the suite's second
    # pytest worker beside it) that took more than 180 s once.
    wait_until(lambda: Run.objects.get(pk=run.pk).ended, 420, workers.log)
    run.refresh_from_db()
    assert run.state == RunState.DONE, workers.log.read_text()[-3000:]
    assert run.outcomes_done == total
    outcomes = RunOutcome.objects.filter(run=run)
    assert outcomes.filter(written_at__isnull=True).count() == 0
    assert set(outcomes.values_list("status", flat=True)) == {"passed", "failed"}
    # One judge call per judged outcome, but for the few the killed worker had in flight
    # (its replies that came back before it died are in the shared cache, not asked again).
    assert TASKS <= len(judge.requests) <= TASKS + 4
    summary = selectors.RunSummary.from_json(run.summary)
    assert summary.tasks == TASKS and summary.coverage == 1.0
    assert second.poll() is None


def test_a_chunk_handed_to_a_second_worker_while_the_first_grades_it_is_paid_once(
    workers, user, judge
):
    # One chunk of 10 judged tasks that takes about 24 s (8 s a reply, 4 at a time): past
    # the visibility timeout Redis hands it to the other worker too, while the first still
    # grades it and renews its claims. The second waits on them; nothing is asked twice.
    judge.latency = 8.0
    workers.start("first")
    workers.start("second")
    run = start_run(user, tasks=10)
    wait_until(lambda: Run.objects.get(pk=run.pk).ended, 240, workers.log)
    run.refresh_from_db()
    log = workers.log.read_text()
    assert run.state == RunState.DONE and run.outcomes_done == 20, log[-3000:]
    chunk = RunOutcome.objects.filter(run=run).values_list("status", flat=True)
    assert sorted(set(chunk)) == ["failed", "passed"]
    received = [line for line in log.splitlines() if line.rstrip().endswith("received")]
    assert len([r for r in received if "grade_run_chunk" in r]) >= 2, "handed over twice"
    assert len(judge.requests) == 10, "each judged criterion asked once"


def test_a_zip_of_outputs_is_read_by_the_worker_and_its_files_reach_the_checks(workers, user):
    # The kept zip is read from the storage by the worker's own process, and each task's
    # files reach its Python check in the worker's sandbox.
    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": True})
    workers.start("only")
    version = saved_version(user, tasks=2, verifier=READS_REPORT)
    data = zipped(
        {
            "outputs.jsonl": outputs_jsonl({"t1": "Answer 1", "t2": "Answer 2"}),
            "files/t1/report.csv": b"total\n42\n",
            "files/t2/report.csv": b"total\n41\n",
        }
    )
    run = runs.run_create(version=version, user=user, data=data, file_name="outputs.zip")
    wait_until(lambda: Run.objects.get(pk=run.pk).ended, 120, workers.log)
    run.refresh_from_db()
    assert run.state == RunState.DONE, workers.log.read_text()[-3000:]
    checked = dict(
        RunOutcome.objects.filter(run=run, criterion_key="clear").values_list(
            "result__task_key", "status"
        )
    )
    assert checked == {"t1": "passed", "t2": "failed"}  # t2's report says 41, not 42
    assert selectors.RunSummary.from_json(run.summary).score.value == 0.75


def test_a_stopped_run_grades_nothing_more_and_keeps_what_it_graded(workers, user):
    workers.start("only")
    run = start_run(user)
    wait_until(lambda: Run.objects.get(pk=run.pk).outcomes_done >= 20, 120, workers.log)
    assert runs.run_stop(run=run)
    time.sleep(3)  # a chunk being graded still writes; then nothing more
    settled = Run.objects.get(pk=run.pk).outcomes_done
    time.sleep(3)
    run.refresh_from_db()
    assert run.state == RunState.STOPPED and run.outcomes_done == settled < run.outcome_count
    assert RunOutcome.objects.filter(run=run).count() == settled, "only what was graded"
    summary = selectors.RunSummary.from_json(run.summary)
    assert summary.outcomes["pending"] == run.outcome_count - settled
