"""How much checking a .json dataset file costs next to only parsing it.

A valid 1,000-task file (5 criteria each, about 1.7 MB) should check in at most 3x the time
of `json.loads` on the same bytes; the same file with one problem in its last task in at most
10x (finding the problem's line must not map the whole file). Three more keep the one-pass
path the path of ordinary files: a 10,000-task file whose prose is full of colons (log
lines, timestamps) against `json.loads` (3x) and against the same file with dashes for
colons (1.2x), and how a 10,000-task file's check grows over a 1,000-task one's of the same
shape next to how `json.loads` grows on them (1.2x: linear as the parser is). Each ratio is
the median of rounds in alternating turns, in CPU time (`timing.median_ratio`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")

from timing import median_ratio, verdict

from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import CheckOptions

ROUNDS = 11
TASKS = 1_000
CRITERIA_PER_TASK = 5
# 10,000 tasks, each prompt a pasted log of many lines with a timestamp and colons each.
MANY_TASKS = 10_000
LOG_LINE = (
    "2025-03-01T12{c}{minute:02}{c}07Z INFO worker{c} job {number}{c} status{c} ok{c} 0{c}03\n"
)
BIG = CheckOptions(max_tasks=MANY_TASKS)


def dataset(
    *,
    broken_last_task: bool,
    tasks_count: int = TASKS,
    criteria_per_task: int = CRITERIA_PER_TASK,
    log_lines: int = 0,
    colon: str = ":",
) -> bytes:
    tasks = []
    for number in range(1, tasks_count + 1):
        criteria = [
            {
                "id": f"c{criterion}",
                "criterion": f"Criterion {criterion} of task {number}: the answer states the "
                "figure, shows the calculation, names the source it came from and says how "
                "sure it is of the result.",
                "weight": 10 * criterion,
            }
            for criterion in range(1, criteria_per_task + 1)
        ]
        tasks.append(
            {
                "id": f"task-{number}",
                "name": f"Task {number}",
                "prompt": f"Question {number}: revenue was $120M in fiscal 2024 and $150M in "
                "fiscal 2025. What was the year-over-year growth rate? Show the calculation. "
                * 2
                + "".join(
                    LOG_LINE.format(minute=line % 60, number=number, c=colon)
                    for line in range(log_lines)
                ),
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
    result = check_file(data, "bench.json", options=BIG)
    assert result.ok is expect_ok, result.problems[:3]
    ratio = median_ratio(
        lambda: check_file(data, "bench.json", options=BIG),
        lambda: json.loads(data),
        rounds=ROUNDS,
    )
    print(f"bench {name}: {ratio:.1f}x json.loads (goal {goal:g}x) {verdict(ratio <= goal)}")


def report_colons(colons: bytes, dashes: bytes) -> None:
    """The colon-heavy file against the same file with its prose's colons made dashes: the
    colons must not send it down a slower path."""
    assert check_file(dashes, "bench.json", options=BIG).ok
    ratio = median_ratio(
        lambda: check_file(colons, "bench.json", options=BIG),
        lambda: check_file(dashes, "bench.json", options=BIG),
        rounds=ROUNDS,
    )
    print(
        f"bench check_json_colons_vs_dashes: {ratio:.2f}x the same file without them "
        f"(goal 1.2x) {verdict(ratio <= 1.2)}"
    )


def report_scaling(small: bytes, large: bytes, goal: float) -> None:
    """How the check grows from 1,000 to 10,000 tasks, next to how `json.loads` grows on the
    same two files: a larger file costs the parser more per task too (memory no longer in
    cache), and the check should grow no faster than that."""
    assert check_file(large, "bench.json", options=BIG).task_count == MANY_TASKS
    check = median_ratio(
        lambda: check_file(large, "bench.json", options=BIG),
        lambda: check_file(small, "bench.json", options=BIG),
        rounds=ROUNDS,
    )
    parse = median_ratio(lambda: json.loads(large), lambda: json.loads(small), rounds=ROUNDS)
    ratio = check / parse
    print(
        f"bench check_json_10000_tasks: {check:.1f}x the 1,000-task check, json.loads "
        f"{parse:.1f}x: {ratio:.2f}x the parser's growth (goal {goal:g}x) " + verdict(ratio <= goal)
    )


def main() -> None:
    valid = dataset(broken_last_task=False)
    broken = dataset(broken_last_task=True)
    report("check_json_valid", valid, 3, expect_ok=True)
    report("check_json_last_task_problem", broken, 10, expect_ok=False)
    # A file holds at most 20,000 criteria (spec.MAX_CRITERIA_PER_FILE): the 10,000-task
    # files have none of their own (each lands with its expected answer as one), and neither
    # has the 1,000-task file they are compared with.
    colons = dataset(
        broken_last_task=False, tasks_count=MANY_TASKS, criteria_per_task=0, log_lines=10
    )
    report("check_json_many_colons", colons, 3, expect_ok=True)
    dashes = dataset(
        broken_last_task=False,
        tasks_count=MANY_TASKS,
        criteria_per_task=0,
        log_lines=10,
        colon="-",
    )
    report_colons(colons, dashes)
    report_scaling(
        dataset(broken_last_task=False, criteria_per_task=0),
        dataset(broken_last_task=False, tasks_count=MANY_TASKS, criteria_per_task=0),
        1.2,
    )


if __name__ == "__main__":
    main()
