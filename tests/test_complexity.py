"""`make lint`'s complexity check (scripts/complexity.py): new offenders fail, the baseline
only shrinks, and the repository holds to it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("radon")  # requirements-dev.txt; `make install` brings it

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "complexity.py"
spec = importlib.util.spec_from_file_location("complexity", SCRIPT)
assert spec is not None and spec.loader is not None
complexity = importlib.util.module_from_spec(spec)
spec.loader.exec_module(complexity)


def test_a_new_function_above_the_limit_fails_and_a_listed_one_may_not_grow():
    failing, shrinking = complexity.findings(
        {"a.py::new": 16, "a.py::listed": 21, "a.py::same": 18},
        {"a.py::listed": 20, "a.py::same": 18},
    )

    assert failing == [
        "a.py::listed: complexity 21, more than the baseline's 20",
        "a.py::new: complexity 16, above 15: make it simpler",
    ]
    assert shrinking == []


def test_a_listed_function_that_got_simpler_or_went_must_leave_the_baseline():
    failing, shrinking = complexity.findings(
        {"a.py::simpler": 17}, {"a.py::simpler": 19, "b.py::gone": 30}
    )

    assert failing == []
    assert shrinking == [
        "a.py::simpler: the baseline says 19, now 17",
        "b.py::gone: the baseline says 30, now 15 or below, or gone",
    ]


def test_the_repository_holds_to_its_baseline(capsys):
    assert complexity.main([]) == 0, capsys.readouterr().out
