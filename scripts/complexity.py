"""`make lint`'s complexity check: no function above 15 by radon.

radon counts what ruff's C901 does not (each `and`/`or`, each comprehension's `if`), so it
finds the functions that read as a list of cases. A function above the limit fails the
check, named with its complexity: make it simpler (split it into steps with names, or give
its cases a table). The 36 functions above it when the check came in were brought under it
(issue 26), and the baseline that let them stay is gone.
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


def findings(found: dict[str, int]) -> list[str]:
    """What fails the check, as lines to print."""
    return [
        f"{key}: complexity {complexity}, above {LIMIT}: make it simpler"
        for key, complexity in sorted(found.items())
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    failing = findings(measure())
    print("\n".join(failing) if failing else f"complexity: no function above {LIMIT}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
