"""`make lint`'s complexity check (scripts/complexity.py): a function above radon's 15
fails it, and the repository holds to it."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("radon")  # requirements-dev.txt; `make install` brings it

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "complexity.py"
spec = importlib.util.spec_from_file_location("complexity", SCRIPT)
assert spec is not None and spec.loader is not None
complexity = importlib.util.module_from_spec(spec)
spec.loader.exec_module(complexity)


def test_a_function_above_the_limit_fails_with_its_name_and_complexity():
    assert complexity.findings({"a.py::tangled": 16}) == [
        "a.py::tangled: complexity 16, above 15: make it simpler"
    ]


def test_boolean_conditions_count_as_radon_counts_them(tmp_path):
    # Sixteen `and`s in one condition: ruff's C901 sees one branch, radon 18.
    conditions = " and ".join(f"x{n}" for n in range(17))
    path = tmp_path / "cases.py"
    path.write_text(
        textwrap.dedent(f"""
        def cases({", ".join(f"x{n}" for n in range(17))}):
            if {conditions}:
                return 1
            return 0
        """)
    )

    assert dict(complexity._functions(path)) == {"cases": 18}


def test_the_repository_has_no_function_above_the_limit(capsys):
    assert complexity.main([]) == 0, capsys.readouterr().out
