"""The Procfile's `verifiers` worker, started as the Procfile says, on the Redis at
127.0.0.1:6379: it holds none of the secrets of the environment it was started from, runs
the sandbox self-test before it takes work, and runs Python checks in the sandbox. Skipped,
with the reason shown, when no Redis answers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from context_verifiers.sandbox import sandbox_status
from contextevals.celery import app
from datasets_app.verifier_tasks import verifier_code_check
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.redis, pytest.mark.slow]

# A Redis database of its own: the task's queue is always `verifiers`.
REDIS_URL = "redis://127.0.0.1:6379/12"
SECRETS = {
    "DATABASE_URL": "postgres://owner:database-password@127.0.0.1/app",
    "STORAGE_SECRET_ACCESS_KEY": "storage-secret",
    "JUDGE_API_KEY": "judge-secret",
}
CODE = (
    "from context_verifiers import Verdict\n\n"
    "def verify(task, output):\n"
    "    return Verdict.score(0.75, reasoning=output.text)\n"
)


def _procfile_line(name: str) -> str:
    for line in (REPO_ROOT / "Procfile").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"the Procfile has no {name} process")


@pytest.fixture
def verifiers_worker(tmp_path, monkeypatch) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    if not sandbox_status()[0]:
        pytest.skip("the sandbox is unavailable here")
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        pytest.skip("no Redis answered on 127.0.0.1:6379 (CI has one): worker test skipped")
    env = {
        **os.environ,
        **SECRETS,
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        "CELERY_BROKER_URL": REDIS_URL,
        "CELERY_RESULT_BACKEND": REDIS_URL,
        "VERIFIER_CONCURRENCY": "1",
    }
    log = tmp_path / "verifiers.log"
    with log.open("ab") as out:
        worker = subprocess.Popen(
            ["bash", "-c", f"exec {_procfile_line('verifiers')}"],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url", "result_backend")}
    app.conf.update(task_always_eager=False, broker_url=REDIS_URL, result_backend=REDIS_URL)
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    # The app keeps the result backend it made first (none, when eager): made anew here.
    vars(app._local).pop("backend", None)
    try:
        yield worker, log
    finally:
        app.conf.update(saved)
        vars(app._local).pop("backend", None)
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)


def _wait_for(log: Path, text: str, seconds: float = 90) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        content = log.read_text(errors="replace")
        if text in content:
            return content
        time.sleep(0.2)
    raise AssertionError(f"the worker never logged {text!r}:\n{log.read_text()[-3000:]}")


def test_the_verifiers_worker_holds_no_secret_self_tests_and_runs_checks(verifiers_worker):
    worker, log = verifiers_worker
    started = _wait_for(log, " ready.")
    assert "sandbox self-test: passed: 20 of 20 hostile programs contained" in started
    environ = Path(f"/proc/{worker.pid}/environ").read_bytes().split(b"\0")
    names = {entry.split(b"=", 1)[0].decode() for entry in environ if entry}
    assert not names & set(SECRETS)
    assert names <= {"PATH", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "DEBUG"} | {
        "SECRET_KEY",
        "LOG_FORMAT",
    }
    task = {"id": "t", "name": "T", "prompt": "P"}
    result = verifier_code_check.delay(CODE, task, {"text": "three quarters"}).get(timeout=60)
    assert result["verdict"] == {"kind": "score", "value": 0.75, "reasoning": "three quarters"}
