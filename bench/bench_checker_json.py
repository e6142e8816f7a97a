"""How much checking a .json dataset file costs next to only parsing it.

A valid 1,000-task file (5 criteria each, about 1.7 MB) should check in at most 3x the time
of `json.loads` on the same bytes; the same file with one problem in its last task in at most
10x (finding the problem's line must not map the whole file). Best of several runs each,
measured side by side.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")

from timing import best_of_each

from datasets_app.importing.checker import check_file

REPEATS = 15
TASKS = 1_000
CRITERIA_PER_TASK = 5


def dataset(*, broken_last_task: bool) -> bytes:
    tasks = []
    for number in range(1, TASKS + 1):
        criteria = [
            {
                "id": f"c{criterion}",
                "criterion": f"Criterion {criterion} of task {number}: the answer states the "
                "figure, shows the calculation, names the source it came from and says how "
                "sure it is of the result.",
                "weight": 10 * criterion,
            }
            for criterion in range(1, CRITERIA_PER_TASK + 1)
        ]
        tasks.append(
            {
                "id": f"task-{number}",
                "name": f"Task {number}",
                "prompt": f"Question {number}: revenue was $120M in fiscal 2024 and $150M in "
                "fiscal 2025. What was the year-over-year growth rate? Show the calculation. " * 2,
                "expected": {"text": f"25% growth for task {number}: (150 - 120) / 120 = 0.25."},
                "criteria": criteria,
            }
        )
    if broken_last_task:
        tasks[-1]["criteria"][2]["weight"] = "heavy"
    document = {
        "format": "context-evals-dataset",
        "version": 1,
        "name": "Bench",
        "description": "",
        "settings": {"expectedAnswerVerifier": {"kind": "agent_judge", "outputType": "float"}},
        "criteria": [{"id": "no-invented-facts", "criterion": "No invented facts.", "weight": 20}],
        "tasks": tasks,
    }
    return json.dumps(document, indent=2).encode()


def report(name: str, data: bytes, goal: float, *, expect_ok: bool) -> None:
    result = check_file(data, "bench.json")
    assert result.ok is expect_ok, result.problems[:3]
    parse, check = best_of_each(
        lambda: json.loads(data), lambda: check_file(data, "bench.json"), repeats=REPEATS
    )
    ratio = check / parse
    verdict = "ok" if ratio <= goal else "FAIL"
    print(f"bench {name}: {ratio:.1f}x json.loads (goal {goal:g}x) {verdict}")


def main() -> None:
    valid = dataset(broken_last_task=False)
    broken = dataset(broken_last_task=True)
    report("check_json_valid", valid, 3, expect_ok=True)
    report("check_json_last_task_problem", broken, 10, expect_ok=False)


if __name__ == "__main__":
    main()
