"""A file checked within the check's time limit where a web request checks it itself.

The dialog's check runs on a worker, which stops it at `CHECK_TIME_LIMIT_SECONDS` (the
`check_too_slow` problem). `POST /api/v1/check` answers in the request, so it runs the
checker in a child process that is stopped at the same limit: a thread cannot be stopped,
and an unbounded check would hold a web thread (and a core) for as long as a hostile file
makes it take.
"""

from __future__ import annotations

import json
import multiprocessing
from multiprocessing.connection import Connection
from typing import IO

from django.conf import settings as project_settings

from datasets_app.importing import checker
from datasets_app.importing.spec import CheckOptions, CheckResult


class CheckFailed(Exception):
    """The child process checking a file ended without an answer (it crashed or was killed
    by the system, as for running out of memory)."""


def check_too_slow(file_name: str) -> CheckResult:
    """A check stopped at its time limit: the file's one problem, as the dialog shows it."""
    seconds = project_settings.CHECK_TIME_LIMIT_SECONDS
    problem = checker.CHECK_TOO_SLOW.at(file_name, seconds=seconds)
    return CheckResult(file_name=file_name, format=None, detected="", problems=(problem,))


def result_text(result: CheckResult) -> str:
    """The check as `check_dataset_file --json` prints it, as JSON text."""
    return json.dumps(checker.result_to_json(result), ensure_ascii=False)


def _check_in_child(
    answer: Connection, source: IO[bytes], file_name: str, options: CheckOptions
) -> None:
    result = checker.check_file(source, file_name, options=options)
    answer.send_bytes(result_text(result).encode())
    answer.close()


def file_check_bounded(*, source: IO[bytes], file_name: str, options: CheckOptions) -> str:
    """`checker.check_file` as `result_text`, stopped after `CHECK_TIME_LIMIT_SECONDS` with
    `check_too_slow`.

    The child is forked, so it has the file open and the checker loaded already; it runs
    only the checker, which is pure Python (no database, no locks another thread holds),
    and sends back the answer's text (pickling the plan instead costs more than the check).
    Raises `CheckFailed` if it dies without one.
    """
    seconds = project_settings.CHECK_TIME_LIMIT_SECONDS
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(
        target=_check_in_child, args=(send, source, file_name, options), daemon=True
    )
    child.start()
    send.close()  # the child's end: reading sees the end of the pipe once the child exits
    try:
        if not receive.poll(seconds):
            return result_text(check_too_slow(file_name))
        try:
            return receive.recv_bytes().decode()
        except EOFError as exc:
            raise CheckFailed(f"the check of {file_name} ended with no answer") from exc
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
