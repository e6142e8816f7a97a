"""Runs for tests, made the way the app makes them: an outputs file through `run_create`
(graded at once, Celery being eager in tests)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping
from typing import Any

from datasets_app.models import Run, RunOutcome, RunResult, RunState, Version
from datasets_app.services import runs


def outputs_jsonl(outputs: Mapping[str, Any]) -> bytes:
    """A .jsonl outputs file: a line per task, `{"task", "output"}` (a dict: more keys)."""
    lines = []
    for task, output in outputs.items():
        line = output if isinstance(output, dict) else {"output": output}
        lines.append(json.dumps({"task": task, **line}))
    return ("\n".join(lines) + "\n").encode()


def run_outputs(version: Version, user, outputs: Mapping[str, Any], **options: Any) -> Run:
    """Grade `outputs` (task id → output) against `version`, as the API does."""
    run = runs.run_create(
        version=version,
        user=user,
        data=outputs_jsonl(outputs),
        file_name="outputs.jsonl",
        **options,
    )
    run.refresh_from_db()
    return run


def as_before_grading(run: Run) -> None:
    """`run` as it stood before a worker took it up: grading, nothing written."""
    RunOutcome.objects.filter(run=run).delete()
    RunResult.objects.filter(run=run).update(
        graded=False,
        score=None,
        coverage=0.0,
        failed_count=0,
        error_count=0,
        lease="",
        claimed_at=None,
    )
    Run.objects.filter(pk=run.pk).update(state=RunState.GRADING, outcomes_done=0, summary={})


# A Python check that passes when the task's output files hold report.csv saying 42.
READS_REPORT = {
    "kind": "code_verifier",
    "code": (
        "from context_verifiers import Verdict\n\n"
        "def verify(task, output):\n"
        "    files = {f.name: f.text for f in output.files}\n"
        "    ok = files.get('report.csv') == 'total\\n42\\n'\n"
        "    return Verdict.boolean(passed=ok, reasoning=f'files: {sorted(files)}')\n"
    ),
}


def zipped(members: dict[str, bytes]) -> bytes:
    """A zip of outputs holding `members`, each name's bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()
