"""Runs for tests, made the way the app makes them: an outputs file through `run_create`
(graded at once, Celery being eager in tests)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from datasets_app.models import Run, Version
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
