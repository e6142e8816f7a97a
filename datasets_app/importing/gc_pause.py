"""A pause of Python's cyclic garbage collector around one file check.

A check builds tens of thousands of objects that all live until it returns (records,
the document, the plan) and makes no reference cycles, so every collection the
allocations trigger meanwhile walks objects that cannot be garbage: on a 1,000-task CSV
that was a third of the check. Reference counting still frees everything at once when
the result is dropped; only the cycle detector waits.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector disabled, then as it was.

    Safe with several threads (gunicorn runs threads), although `gc.disable` is global to
    the process:

    - Only a pause that found the collector enabled enables it again, in a `finally`, so
      every `disable` here is followed by an `enable` from the same thread: whatever the
      interleaving, the collector is never left disabled by a check, and a check that
      found it off (the process turned it off) leaves it off.
    - A pause lasts one check: when another thread's check ends first it enables the
      collector, and this check goes on with it enabled (slower, still correct). So the
      collector is never off for longer than the longest single check, which the 50 MiB
      file cap (`MAX_FILE_BYTES`) bounds to well under a second; cyclic garbage other
      threads make meanwhile is collected as soon as it is back on.

    Not `gc.freeze()`: that moves every object alive in the whole process (other
    requests' too) to a generation never collected until `gc.unfreeze()`, which is for a
    server's parent process before it forks, not for the middle of a request.
    """
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
