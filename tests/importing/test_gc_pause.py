"""The garbage collector is paused during a check and always as it was after it."""

from __future__ import annotations

import gc
import io
import threading
from collections.abc import Iterator

import pytest

from datasets_app.importing import checker
from datasets_app.importing.gc_pause import collection_paused

CSV = b"task_id,prompt,expected_answer\nt1,What is 2+2?,4\n"


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    # A failing test must not leave the rest of the suite without a collector.
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


class _Stream(io.BytesIO):
    """A file that notes whether the collector ran while it was read, or fails to read."""

    def __init__(self, data: bytes, error: Exception | None = None) -> None:
        super().__init__(data)
        self.error = error
        self.collector_enabled: bool | None = None

    def read(self, size: int | None = -1) -> bytes:
        self.collector_enabled = gc.isenabled()
        if self.error is not None:
            raise self.error
        return super().read(size)


def test_check_runs_with_the_collector_paused_and_enables_it_after() -> None:
    gc.enable()
    stream = _Stream(CSV)

    result = checker.check_file(stream, "quiz.csv")

    assert result.ok
    assert stream.collector_enabled is False
    assert gc.isenabled()


def test_collector_is_enabled_after_a_check_that_raises_inside() -> None:
    gc.enable()
    stream = _Stream(CSV, error=RuntimeError("storage went away"))

    with pytest.raises(RuntimeError):
        checker.check_file(stream, "quiz.csv")

    assert stream.collector_enabled is False
    assert gc.isenabled()


def test_check_leaves_a_collector_the_process_disabled_disabled() -> None:
    gc.disable()

    result = checker.check_file(CSV, "quiz.csv")

    assert result.ok
    assert not gc.isenabled()


def test_zip_checks_are_not_paused() -> None:
    gc.enable()
    stream = _Stream(b"PK\x05\x06" + b"\x00" * 18)

    checker.check_file(stream, "files.zip")

    assert stream.collector_enabled is not False
    assert gc.isenabled()


def test_overlapping_pauses_in_two_threads_leave_the_collector_enabled() -> None:
    # A enters, B enters (finding it paused), A leaves, B leaves: the order that would leave
    # it disabled if B restored what it found.
    gc.enable()
    b_entered, a_left = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collection_paused():
            b_entered.wait(5)
        a_left.set()

    def second() -> None:
        with collection_paused():
            b_entered.set()
            a_left.wait(5)
            seen["b_after_a_left"] = gc.isenabled()

    thread_a = threading.Thread(target=first)
    thread_a.start()
    while gc.isenabled():  # A has paused it
        threading.Event().wait(0.001)
    thread_b = threading.Thread(target=second)
    thread_b.start()
    thread_a.join(5)
    thread_b.join(5)

    # B went on with the collector A enabled again, and left it enabled.
    assert seen == {"b_after_a_left": True}
    assert gc.isenabled()
