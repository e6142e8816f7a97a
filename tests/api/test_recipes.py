"""docs/api.md's CI recipes, run as they are written against a live gunicorn on 127.0.0.1
with a real Celery worker on Redis; then the versions they saved are read back.

Redis database 11 and a queue of its own: nothing else here uses them. Run it alone on a
shared machine with `flock /work/redis.lock` (CI runs one suite at a time). Skipped, with
the reason shown, when no Redis answers or curl and jq are missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from datasets_app.models import Dataset, ExportJob
from datasets_app.services import tokens
from tests.conftest import FILES, REPO_ROOT
from tests.test_worker import _redis_answers, shared_db  # noqa: F401 - a fixture

pytestmark = [pytest.mark.redis, pytest.mark.slow]

BROKER_URL = "redis://127.0.0.1:6379/11"
DOCS = REPO_ROOT / "docs" / "api.md"


def recipe(language: str) -> str:
    """The docs' one fenced block in `language`, as a reader would copy it."""
    blocks = re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(), flags=re.S)
    assert len(blocks) == 1, f"docs/api.md should hold one {language} block"
    return blocks[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Services:
    """gunicorn and a Celery worker on one database, broker and queue; always stopped."""

    def __init__(self, database_url: str, media: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.recipe_settings",
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": BROKER_URL,
            "RECIPE_QUEUE": f"recipe-{uuid.uuid4().hex[:12]}",
            "MEDIA_ROOT": str(media),
            "PORT": str(self.port),
        }
        web = [sys.executable, "-m", "gunicorn", "contextevals.wsgi"]
        web += ["--bind", f"127.0.0.1:{self.port}", "--workers", "1", "--threads", "4"]
        worker = [sys.executable, "-m", "celery", "-A", "contextevals", "worker", "-c", "1"]
        worker += ["-Q", env["RECIPE_QUEUE"], "-n", f"{env['RECIPE_QUEUE']}@%h"]
        worker += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        self.queue = env["RECIPE_QUEUE"]
        self.processes = []
        with log.open("ab") as out:
            for command in (web, worker):
                self.processes.append(
                    subprocess.Popen(
                        command,
                        cwd=REPO_ROOT,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        self._wait_for_web()

    def _wait_for_web(self, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        pytest.fail(f"gunicorn did not start; its log ends:\n{self.tail()}")

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, 15)
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait(timeout=10)


@pytest.fixture
def live(shared_db, settings, tmp_path) -> Iterator[Services]:  # noqa: F811 - the fixture
    if not _redis_answers():
        pytest.skip("no Redis answered on 127.0.0.1:6379 (CI has one): the recipe test skipped")
    missing = [tool for tool in ("curl", "jq") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"the curl recipe needs {' and '.join(missing)}")
    running = Services(shared_db, settings.MEDIA_ROOT, tmp_path / "services.log")
    try:
        yield running
    finally:
        running.stop()
        from contextevals.celery import app

        app.connection_for_write(BROKER_URL).default_channel.queue_delete(running.queue)


def run(command: list[str], live: Services, env: dict[str, str], cwd: Path):
    result = subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, (
        f"{command[0]} exited {result.returncode}\n{result.stdout}\n{result.stderr}\n"
        f"services:\n{live.tail()}"
    )
    return result


def test_the_docs_recipes_check_import_save_and_download_through_real_workers(live, user, tmp_path):
    dataset = Dataset.objects.create(owner=user, name="Nightly")
    _row, token = tokens.api_token_create(user=user, name="CI")
    env = {"CE_URL": live.url, "CE_TOKEN": token, "CE_DATASET": str(dataset.pk)}
    first = tmp_path / "qa.json"
    first.write_bytes((FILES / "json" / "expected_answers_template.json").read_bytes())

    # The curl recipe, as docs/api.md has it.
    script = tmp_path / "ci.sh"
    script.write_text(recipe("bash"))
    out = run(["bash", str(script), str(first)], live, env, tmp_path)
    assert "Saved and downloaded v1" in out.stdout
    header, *items = (tmp_path / "eval-set-v1.jsonl").read_text().splitlines()
    assert "_evalset" in json.loads(header)
    assert [json.loads(line)["id"] for line in items] == ["yoy-growth", "q3-end-date"]

    # The Python recipe, with a changed file: the next version.
    second = tmp_path / "more.jsonl"
    second.write_text(
        "\n".join(
            json.dumps({"id": f"q{n}", "prompt": f"Question {n}?", "expected": f"{n}"})
            for n in range(1, 4)
        )
        + "\n"
    )
    program = tmp_path / "ci.py"
    program.write_text(recipe("python"))
    out = run([sys.executable, str(program), str(second)], live, env, tmp_path)
    assert "Saved and downloaded v2" in out.stdout
    # Built by the worker (recipe_settings: past 1 task), as the request would build it.
    items = (tmp_path / "eval-set-v2.jsonl").read_text().splitlines()[1:]
    assert [json.loads(line)["id"] for line in items] == ["q1", "q2", "q3"]
    assert ExportJob.objects.filter(dataset=dataset, state="ready").count() == 2

    # Read back what was saved, through the API and in the database.
    import httpx

    with httpx.Client(
        base_url=f"{live.url}/api/v1", headers={"Authorization": f"Bearer {token}"}
    ) as api:
        versions = api.get(f"/datasets/{dataset.pk}/versions").json()
        v2_tasks = api.get(f"/datasets/{dataset.pk}/tasks", params={"version": 2}).json()
    assert [(v["number"], v["task_count"]) for v in versions] == [(2, 3), (1, 2)]
    assert [t["task_id"] for t in v2_tasks] == ["q1", "q2", "q3"]
    assert list(dataset.versions.order_by("number").values_list("number", flat=True)) == [1, 2]

    # A file with problems fails the curl job, printing where, and imports nothing.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "prompt": ""}\n')
    failed = subprocess.run(
        ["bash", str(script), str(bad)],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert failed.returncode == 1 and "bad.jsonl line 1" in failed.stdout
    assert dataset.versions.count() == 2


def test_the_docs_run_recipe_grades_outputs_and_fails_below_the_previous_run(live, user, tmp_path):
    from tests.runs import outputs_jsonl
    from tests.runs.conftest import saved_version

    version = saved_version(user, tasks=2, name="Nightly runs")
    _row, token = tokens.api_token_create(user=user, name="CI")
    env = {"CE_URL": live.url, "CE_TOKEN": token, "CE_DATASET": str(version.dataset_id)}
    script = tmp_path / "grade.sh"
    script.write_text(recipe("sh"))

    def grade(outputs: dict[str, str] | bytes, **extra: str) -> subprocess.CompletedProcess:
        path = tmp_path / "outputs.jsonl"
        path.write_bytes(outputs if isinstance(outputs, bytes) else outputs_jsonl(outputs))
        return subprocess.run(
            ["bash", str(script), str(path)],
            cwd=tmp_path,
            env={**os.environ, **env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
        )

    first = grade({"t1": "Answer 1", "t2": "Answer 2"})
    assert first.returncode == 0, f"{first.stdout}{first.stderr}\n{live.tail()}"
    assert re.search(r"^Run \d+: score 1(\.0)? ", first.stdout, re.M)
    results = json.loads((tmp_path / "results.json").read_text())
    assert [t["task"] for t in results["tasks"]] == ["t1", "t2"]

    worse = grade({"t1": "Answer 1"})
    assert worse.returncode == 2 and "below the previous run's 1" in worse.stdout
    low = grade({"t1": "Answer 1", "t2": "Answer 2"}, CE_MIN_SCORE="1.5")
    assert low.returncode == 2 and "The score is below 1.5." in low.stdout

    bad = grade(b'{"task": "t9", "output": "x"}\n')
    assert bad.returncode == 1 and 'outputs.jsonl line 1: The dataset has no task "t9".' in (
        bad.stdout
    )
    assert version.runs.count() == 3
