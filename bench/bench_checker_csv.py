"""How long checking a 1,000-task CSV takes, next to just splitting it with csv.reader.

The file is one row per criterion, 5 criteria per task (~5,000 rows), as a rubric export
writes it. The check is the whole path a person waits for: decode, sniff, split, build the
document, validate it. Goal: at most 5.5x the bare csv.reader over the same bytes on
these machines (issue 26: 5.2x measured before the importer became one pipeline; the twin
paths and the process-wide GC pause stay gone, as decided).
"""

from __future__ import annotations

import csv
import io
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")

from timing import median_ratio, verdict

from datasets_app.importing import csv_format
from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import (
    CheckOptions,
    CriterionSpec,
    DatasetSpec,
    TaskSpec,
    Verifier,
)

GOAL = 5.5
ROUNDS = 11


def dataset() -> DatasetSpec:
    tasks = []
    for number in range(1_000):
        criteria = tuple(
            CriterionSpec(
                id=f"c{index}",
                criterion=f"The reply covers point {index} of ticket {number}, politely.",
                weight=float(index + 1),
                verifier=Verifier("llm_judge", "boolean") if index == 4 else None,
            )
            for index in range(5)
        )
        tasks.append(
            TaskSpec(
                id=f"ticket-{number}",
                name=f"Support ticket {number}",
                prompt=f'Customer {number} writes:\n"My order #{number} is late, again."\n'
                "Draft a reply that apologises and gives the new date.",
                criteria=criteria,
            )
        )
    return DatasetSpec(name="bench", tasks=tuple(tasks))


def check(data: bytes) -> int:
    result = check_file(data, "bench.csv", options=CheckOptions(max_tasks=1_000))
    assert result.ok, result.problems[:3]
    return result.task_count


def bare(data: bytes) -> int:
    return len(list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""))))


def main() -> None:
    data, _ = csv_format.write(dataset())
    assert check(data) == 1_000
    assert bare(data) == 5_001
    ratio = median_ratio(lambda: check(data), lambda: bare(data), rounds=ROUNDS)
    print(f"bench check_csv: {ratio:.1f}x csv.reader (goal {GOAL:g}x) {verdict(ratio <= GOAL)}")


if __name__ == "__main__":
    main()
