"""Timing shared by the bench scripts: the best of several runs, measured in turns."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of_each(*runs: Callable[[], object], repeats: int) -> list[float]:
    """The best time of each run, taking turns so that a slow moment hits all alike."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for run, taken in zip(runs, times, strict=True):
            start = time.perf_counter()
            run()
            taken.append(time.perf_counter() - start)
    return [min(taken) for taken in times]


def verdict(ok: bool) -> str:
    return "ok" if ok else "FAIL"
