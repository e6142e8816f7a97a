"""How much checking a dataset .zip costs next to only reading its members with zipfile.

The zip holds 200 members of 1 MiB (random bytes drawn from 16 values, so deflate gets
about 2:1) and a dataset.json whose 100 tasks attach two each. Checking it streams every
member once for its size and SHA-256; that should hold at most 32 MiB more memory at its
peak (tracemalloc, which also sees zlib's buffers) and take at most 1.5x the time of
opening and reading every member in chunks with zipfile alone (the median ratio of
rounds in alternating turns, `timing.median_ratio`).
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")

from timing import median_ratio, verdict

from datasets_app.importing import json_format, zip_format
from datasets_app.importing.spec import (
    CheckOptions,
    CheckResult,
    DatasetSpec,
    FileSpec,
    TaskSpec,
)

ROUNDS = 9
MEMBERS = 200
MEMBER_BYTES = 1024 * 1024
CHUNK_BYTES = 256 * 1024
MiB = 1024 * 1024
MEMORY_GOAL_MIB = 32
TIME_GOAL = 1.5


def build(path: Path, *, seed: int = 20251130) -> None:
    """The bench zip; another `seed` gives members of other bytes (imports store each once)."""
    rng = random.Random(seed)
    # Each byte one of 16 values: about 4 bits of entropy per byte, so deflate halves it.
    sixteen = bytes(rng.randrange(256) for _ in range(16)) * 16
    tasks = []
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for number in range(MEMBERS):
            zf.writestr(
                f"files/part-{number:03}.bin", rng.randbytes(MEMBER_BYTES).translate(sixteen)
            )
        for number in range(MEMBERS // 2):
            tasks.append(
                TaskSpec(
                    id=f"task-{number}",
                    name=f"Task {number}",
                    prompt=f"Compare part {2 * number} with part {2 * number + 1}.",
                    expected_text="They differ.",
                    input_files=tuple(
                        FileSpec(name=f"part-{n:03}.bin", path=f"files/part-{n:03}.bin")
                        for n in (2 * number, 2 * number + 1)
                    ),
                )
            )
        zf.writestr(
            "dataset.json", json_format.write(DatasetSpec(name="Bench", tasks=tuple(tasks)))
        )


def read_with_zipfile(path: Path) -> None:
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            with zf.open(info) as member:
                while member.read(CHUNK_BYTES):
                    pass


def check(path: Path) -> CheckResult:
    with path.open("rb") as upload:
        return zip_format.check(upload, path.name, options=CheckOptions())


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.zip"
        build(path)
        result = check(path)
        assert result.ok, result.problems[:3]
        assert result.detected.endswith(f"and {MEMBERS} attached files"), result.detected

        tracemalloc.start()
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        check(path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        growth = (peak - before) / MiB
        print(
            f"bench check_zip_memory: {growth:.1f} MiB (goal {MEMORY_GOAL_MIB} MiB) "
            + verdict(growth <= MEMORY_GOAL_MIB)
        )

        ratio = median_ratio(lambda: check(path), lambda: read_with_zipfile(path), rounds=ROUNDS)
        print(
            f"bench check_zip_time: {ratio:.1f}x zipfile read (goal {TIME_GOAL:g}x) "
            + verdict(ratio <= TIME_GOAL)
        )


if __name__ == "__main__":
    main()
