"""How fast the judges go through many calls: 1,000 llm_judge criteria graded against the
local chat completions server answering each in 20 ms, 16 at a time.

Prints ``bench <name>: <measured> (goal <goal>) ok|FAIL``:
- judge calls: the wall time over the ideal (calls × latency / concurrency), at most 1.5×.
  Wall time, not CPU time: waiting on the server concurrently is what is measured.
- judge memory: how much the process's peak resident memory grew, at most 64 MiB.
Each figure is the median of three rounds of 1,000 calls.

The server runs in its own process (tests/verifiers/judge_server.py), so that its work
does not share this process's interpreter lock; nothing is cached (no seed), so every
criterion is a real request through the SDK.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import verdict

from context_verifiers.grading import Graders, grade_tasks
from context_verifiers.judges import Judge, JudgeConfig
from datasets_app.importing.spec import CriterionSpec, DatasetSpec, TaskSpec, Verifier

ROOT = Path(__file__).resolve().parents[1]
CALLS = 1_000
LATENCY = 0.020
CONCURRENCY = 16
GOAL_RATIO = 1.5
GOAL_MIB = 64
# The median of three rounds: one round disturbed by another process on a shared machine
# does not decide the figure.
ROUNDS = 3

JUDGE = Verifier(kind="llm_judge", output_type="boolean", instructions="{{criterion}} {{output}}")


def _dataset(count: int) -> tuple[DatasetSpec, list[tuple[TaskSpec, str]]]:
    tasks = [
        TaskSpec(
            id=f"t{number}",
            name=f"Task {number}",
            prompt=f"Question {number}?",
            criteria=(CriterionSpec(id="c", criterion="Answers it.", verifier=JUDGE),),
        )
        for number in range(count)
    ]
    answers = [(task, f"correct answer {number}") for number, task in enumerate(tasks)]
    return DatasetSpec(tasks=tuple(tasks)), answers


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> int:
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests/verifiers/judge_server.py"), "--latency", str(LATENCY)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        config = JudgeConfig(
            base_url=base_url, model="bench", concurrency=CONCURRENCY, max_retries=0
        )
        graders = Graders(judge=Judge(config), concurrency=CONCURRENCY)
        # A first round opens the connections and imports the SDK's lazy parts.
        dataset, answers = _dataset(CONCURRENCY * 2)
        grade_tasks(dataset, answers, graders=graders)
        dataset, answers = _dataset(CALLS)
        before = _peak_mib()
        rounds = []
        for _ in range(ROUNDS):
            started, cpu_started = time.perf_counter(), time.process_time()
            result = grade_tasks(dataset, answers, graders=graders)
            rounds.append((time.perf_counter() - started, time.process_time() - cpu_started))
        elapsed, cpu = sorted(rounds)[ROUNDS // 2]
        grown = _peak_mib() - before
    finally:
        server.terminate()
        server.wait()
    passed = sum(t.criteria[0].outcome.status == "passed" for t in result.tasks)
    if passed != CALLS:
        print(f"bench judge calls: only {passed:,} of {CALLS:,} passed FAIL")
        return 1
    ideal = CALLS * LATENCY / CONCURRENCY
    ratio = elapsed / ideal
    print(
        f"bench judge calls: {ratio:.2f}x the ideal {ideal:.2f} s ({elapsed:.2f} s for "
        f"{CALLS:,} calls, {CONCURRENCY} at a time, {cpu:.2f} s of CPU) (goal {GOAL_RATIO:g}x) "
        f"{verdict(ratio <= GOAL_RATIO)}"
    )
    print(f"bench judge memory: {grown:.1f} MiB (goal {GOAL_MIB} MiB) {verdict(grown <= GOAL_MIB)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
