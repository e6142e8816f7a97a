"""Timing shared by the bench scripts: a ratio of two runs, steady on a shared machine.

Each run is timed in CPU time (`time.process_time`): the work this process did, which
other processes on a busy machine do not lengthen as they do the wall clock. The two
contenders run in alternating turns (ours first in one round, theirs first in the next),
so a warm cache favours neither; each round gives one ratio, and the median of at least
nine rounds is reported, which one disturbed round cannot move.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

MIN_ROUNDS = 9


Clock = Callable[[], float]


def _timed(
    run: Callable[[], object],
    clock: Clock = time.process_time,
    before: Callable[[], object] | None = None,
) -> float:
    if before is not None:
        before()
    start = clock()
    run()
    return clock() - start


def median_ratio(
    ours: Callable[[], object],
    theirs: Callable[[], object],
    *,
    rounds: int = MIN_ROUNDS,
    clock: Clock = time.process_time,
    before: Callable[[], object] | None = None,
) -> float:
    """The median, over `rounds` rounds, of ours' CPU time over theirs' in the same round.

    `clock=time.perf_counter` times the wall clock instead: for work that another process
    does too (a PostgreSQL server's, which this process's CPU time does not see).
    `before` runs, untimed, before each run of either: to give every round the same start
    (a VACUUM after rounds rolled back, say).
    """
    rounds = max(rounds, MIN_ROUNDS)
    ratios = []
    for number in range(rounds):
        if number % 2:
            theirs_time = _timed(theirs, clock, before)
            ours_time = _timed(ours, clock, before)
        else:
            ours_time = _timed(ours, clock, before)
            theirs_time = _timed(theirs, clock, before)
        ratios.append(ours_time / theirs_time)
    return statistics.median(ratios)


def median_time(
    run: Callable[[], object],
    *,
    rounds: int = MIN_ROUNDS,
    clock: Clock = time.process_time,
    before: Callable[[], object] | None = None,
) -> float:
    """The median time of `run` over `rounds` runs (for figures shown without a goal)."""
    runs = range(max(rounds, MIN_ROUNDS))
    return statistics.median(_timed(run, clock, before) for _ in runs)


def verdict(ok: bool) -> str:
    return "ok" if ok else "FAIL"
