"""How the commands print a checked file: the detected format, then every problem (one a
line, starting with its location) or the preview, its warnings and notes.

Both `check_dataset_file` and `import_dataset_file` print through here, from the check as
`checker.result_to_json` writes it (the form a worker stores on the upload).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from datasets_app import wording
from datasets_app.importing.shapes import LABELS
from datasets_app.importing.spec import Problem


def write_check(
    write: Callable[[str], None],
    result: dict[str, Any],
    extra_problems: Sequence[dict[str, Any]] = (),
) -> bool:
    """Print the check; True when the file can be imported."""
    problems = [Problem.from_json(p) for p in [*result.get("problems", []), *extra_problems]]
    write(result.get("detected", ""))
    mapping = result.get("mapping")
    if mapping and mapping.get("fields"):
        fields = ", ".join(
            f"{LABELS.get(key, key)} ← {source}" for key, source in mapping["fields"].items()
        )
        write(f"Mapping ({mapping.get('how', '')}): {fields}")
    if problems or not result.get("ok"):
        count = len(problems)
        write(f"{count} problem{'s' if count != 1 else ''}; nothing can be imported:")
        for problem in problems:
            write(f"{wording.full(problem.to_json())}: {problem.message}")
        return False
    for task in result.get("tasks", []):
        scored_by = "criteria" if task["scored_by"] == "criteria" else "expected answer"
        write(
            f"  {task['id']}  {task['name']}  scored by {scored_by}  "
            f"{task['criteria']} criteria  total weight {task['total_weight']:g}"
        )
    for warning in result.get("warnings", []):
        warning = Problem.from_json(warning)
        write(f"Warning: {wording.full(warning.to_json())}: {warning.message}")
    for note in result.get("notes", []):
        write(f"Note: {note}")
    return True
