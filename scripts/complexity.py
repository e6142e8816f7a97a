"""`make lint`'s complexity check: no function above 15 by radon, but for a baseline that
may only shrink.

radon counts what ruff's C901 does not (each `and`/`or`, each comprehension's `if`), so it
finds the functions that read as a list of cases. The functions above the limit when the
check came in are listed in `scripts/complexity-baseline.txt` with their complexity then.
The check fails when
- a function not listed is above the limit (make it simpler: split it, or give its cases
  a table);
- a listed function got more complex than listed;
- a listed function is at or below the limit now, or is gone, or got simpler (run
  `scripts/complexity.py --shrink` to write the lower figures: the list only shrinks).

`--shrink` never adds a function or raises a figure; nothing does but editing the file by
hand, which a reviewer sees.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

LIMIT = 15
REPO = Path(__file__).resolve().parent.parent
BASELINE = REPO / "scripts" / "complexity-baseline.txt"
# The project's own code; migrations are generated.
ROOTS = ("datasets_app", "contextgrid", "context_verifiers", "contextevals", "scripts", "bench")
SKIPPED_PARTS = frozenset({"migrations", "__pycache__"})


def _functions(path: Path) -> Iterator[tuple[str, int]]:
    """(qualified name, complexity) of every function and method in a file."""
    for block in cc_visit(path.read_text(encoding="utf-8")):
        if isinstance(block, Function):
            name = f"{block.classname}.{block.name}" if block.classname else block.name
            yield name, block.complexity
        else:  # a class: radon lists its methods in it
            for method in block.methods:
                yield f"{block.name}.{method.name}", method.complexity


def measure() -> dict[str, int]:
    """{"path::name": complexity} of every function above the limit."""
    found: dict[str, int] = {}
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            if SKIPPED_PARTS & set(path.parts):
                continue
            relative = path.relative_to(REPO).as_posix()
            for name, complexity in _functions(path):
                if complexity > LIMIT:
                    key = f"{relative}::{name}"
                    found[key] = max(complexity, found.get(key, 0))
    return found


def read_baseline() -> dict[str, int]:
    baseline: dict[str, int] = {}
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, complexity = line.rsplit(" ", 1)
            baseline[key] = int(complexity)
    return baseline


def write_baseline(baseline: dict[str, int]) -> None:
    lines = [
        "# Functions above complexity 15 (radon) when scripts/complexity.py came in, with",
        "# their complexity: this list may only shrink (see the script's docstring).",
        *(f"{key} {complexity}" for key, complexity in sorted(baseline.items())),
    ]
    BASELINE.write_text("\n".join(lines) + "\n", encoding="utf-8")


def findings(found: dict[str, int], baseline: dict[str, int]) -> tuple[list[str], list[str]]:
    """(what fails the check, what `--shrink` mends) as lines to print."""
    failing = [
        f"{key}: complexity {complexity}, above {LIMIT}: make it simpler"
        if key not in baseline
        else f"{key}: complexity {complexity}, more than the baseline's {baseline[key]}"
        for key, complexity in sorted(found.items())
        if complexity > baseline.get(key, LIMIT)
    ]
    shrinking = [
        f"{key}: the baseline says {listed}, now "
        + (f"{found[key]}" if key in found else f"{LIMIT} or below, or gone")
        for key, listed in sorted(baseline.items())
        if found.get(key, 0) < listed
    ]
    return failing, shrinking


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shrink", action="store_true", help="lower the baseline to what is measured now"
    )
    args = parser.parse_args(argv)
    found = measure()
    baseline = read_baseline()
    failing, shrinking = findings(found, baseline)
    if shrinking and args.shrink:
        write_baseline({key: min(c, baseline[key]) for key, c in found.items() if key in baseline})
        print(f"{BASELINE.relative_to(REPO)}: {len(shrinking)} lines lowered or removed")
    elif shrinking:
        failing += [f"{line}: run scripts/complexity.py --shrink" for line in shrinking]
    print("\n".join(failing) if failing else f"complexity: none above {LIMIT} but the baseline's")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
