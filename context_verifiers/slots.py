"""How many requests a judge's server is sent at once: at most JUDGE_CONCURRENCY per endpoint.

A `Judge` holds one of its endpoint's slots for each request while it is in flight (not
while it waits to retry, nor for a reply from the cache). `LocalSlots` counts in this
process, which is all the command line and the app without a broker have; the app with a
Redis broker counts across all its processes and machines (`datasets_app.judge_slots`), as
the reply cache is this process's memory here and the app's cache there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import ClassVar, Protocol


class SlotsUnavailable(Exception):
    """The slots could not be counted (their store did not answer); the message says so."""


class Slots(Protocol):
    """At most `limit` holders at once; `hold()` waits for a slot and keeps it for the
    `with` block. SlotsUnavailable when the count cannot be kept."""

    limit: int

    def hold(self) -> AbstractContextManager[None]: ...


class LocalSlots:
    """Slots counted in this process: every LocalSlots of the same endpoint and limit
    shares one semaphore, so two judges of one server in one process share its limit."""

    _semaphores: ClassVar[dict[tuple[str, int], threading.BoundedSemaphore]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, endpoint: str, limit: int) -> None:
        self.limit = limit
        with self._lock:
            key = (endpoint, limit)
            if key not in self._semaphores:
                self._semaphores[key] = threading.BoundedSemaphore(limit)
            self._semaphore = self._semaphores[key]

    @contextmanager
    def hold(self) -> Iterator[None]:
        with self._semaphore:
            yield
