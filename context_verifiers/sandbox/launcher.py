"""Run one author's Python check in a fresh sandboxed process, and read back what it decided.

The child is `python -I -S harness.py` with an empty environment, its own new session and a
throwaway working folder that is removed afterwards; the harness locks itself in (limits,
Landlock, seccomp) before it asks for the code. This side keeps the wall clock, reads every
pipe with a cap, and turns what came back (or how the process ended) into a SandboxResult.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import IO, Any

from context_verifiers.sandbox import landlock, seccomp
from context_verifiers.verdict import Verdict

SANDBOX_DIR = Path(__file__).resolve().parent
HARNESS = SANDBOX_DIR / "harness.py"
LIBRARY = {
    "verdict": str(SANDBOX_DIR.parent / "verdict.py"),
    "views": str(SANDBOX_DIR.parent / "views.py"),
}
# The interpreter itself, not a virtualenv's link to it: with -S no site-packages is on the
# path, and Landlock lets the check read the standard library and nothing of the project.
PYTHON = os.path.realpath(sys.executable)
# What a check may read after it is locked in: the standard library (and its compiled
# modules), and the shared libraries those modules load. Not /etc, /proc, /home, the project.
READ_ONLY = sorted(
    {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"], "/usr/lib"}
    | ({"/etc/ld.so.cache"} if os.path.exists("/etc/ld.so.cache") else set())
)

CODES = (
    "code_timeout",
    "code_memory",
    "code_crash",
    "code_bad_return",
    "code_output_too_large",
    "sandbox_unavailable",
)
# What the harness may answer once it said "ready": the code's own outcomes. Nothing else
# (no sandbox_unavailable, no timeout) is taken from a process that ran the author's code.
CHECK_ERRORS = frozenset({"code_crash", "code_bad_return", "code_memory"})
MAX_DETAIL_CHARS = 4_000
STDERR_TAIL_BYTES = 4_096
CHUNK = 65_536


@dataclass(frozen=True, slots=True)
class Limits:
    """What one check may use. The defaults fit a check that reads an answer and its files
    (each at most 1 MiB as the check sees it) and decides: a tenth of a second, a few MiB."""

    memory_mib: int = 256
    cpu_seconds: int = 2
    wall_seconds: float = 5.0
    file_size_mib: int = 16
    open_files: int = 64
    # stdout and stderr together, and the reply apart: a check has nothing to print, and
    # 1 MiB of prints is a loop gone wrong, not debugging output.
    output_bytes: int = 1024 * 1024

    def for_child(self) -> dict[str, int]:
        fields = asdict(self)
        return {
            name: fields[name]
            for name in ("memory_mib", "cpu_seconds", "file_size_mib", "open_files")
        }


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """What a check decided (`verdict`, as Verdict.to_json writes it) or why it did not:
    `code` is one of CODES and `detail` says what happened in words for the author."""

    verdict: dict[str, Any] | None
    code: str | None = None
    detail: str = ""


def _failed(code: str, detail: str) -> SandboxResult:
    return SandboxResult(verdict=None, code=code, detail=detail[-MAX_DETAIL_CHARS:])


@cache
def sandbox_status() -> tuple[bool, str]:
    """(True, what protects a check) when this kernel can sandbox one, else (False, why)."""
    abi = landlock.abi_version()
    if abi < landlock.REQUIRED_ABI:
        found = f"Landlock version {abi}" if abi else "no Landlock"
        return False, (
            f"The kernel has {found}; Python checks need Landlock version "
            f"{landlock.REQUIRED_ABI} or later (Linux 6.7+, with lsm=landlock)"
        )
    try:
        seccomp.load_library()
    except seccomp.SeccompError as error:
        return False, f"{error.strerror}; Python checks need libseccomp 2"
    if not Path("/proc/self/status").read_text().count("Seccomp:"):
        return False, "The kernel has no seccomp; Python checks need it"
    return True, f"Landlock version {abi} and seccomp"


def run_code_check(
    code: str, *, task: dict[str, Any], output: dict[str, Any], limits: Limits | None = None
) -> SandboxResult:
    """Run `code`'s verify(task, output) in its own sandboxed process; never without one."""
    available, reason = sandbox_status()
    if not available:
        return _failed("sandbox_unavailable", reason)
    limits = limits or Limits()
    request = json.dumps({"code": code, "task": task, "output": output}).encode()
    work = tempfile.mkdtemp(prefix="cv-check-")
    try:
        return _Child(work, limits).run(request)
    finally:
        shutil.rmtree(work, ignore_errors=True)


class _Child:
    """One harness process, its pipes and its clock."""

    def __init__(self, work: str, limits: Limits) -> None:
        self.limits = limits
        self.work = work
        self.replies = bytearray()
        self.printed = 0
        self.stderr_tail = b""
        self.overflow = ""
        self.timed_out = False

    def run(self, request: bytes) -> SandboxResult:
        reply_read, reply_write = os.pipe()
        config = {
            "reply_fd": reply_write,
            "sandbox_dir": str(SANDBOX_DIR),
            "library": LIBRARY,
            "read_only": READ_ONLY,
            "work": self.work,
            "limits": self.limits.for_child(),
        }
        try:
            process = subprocess.Popen(
                [PYTHON, "-I", "-S", "-X", "utf8", str(HARNESS), json.dumps(config)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(reply_write,),
                env={},
                cwd=self.work,
                start_new_session=True,
            )
        finally:
            os.close(reply_write)
        with process, open(reply_read, "rb", buffering=0) as reply:
            self._exchange(process, reply, request)
            process.wait()
        return self._result(process.returncode)

    def _exchange(self, process: subprocess.Popen[bytes], reply: IO[bytes], request: bytes) -> None:
        assert process.stdin and process.stdout and process.stderr
        deadline = time.monotonic() + self.limits.wall_seconds
        pending: memoryview | None = memoryview(request)
        with selectors.DefaultSelector() as selector:
            for stream in (reply, process.stdout, process.stderr):
                selector.register(stream, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    self.timed_out = True
                    process.kill()
                    return
                for key, _ in selector.select(left):
                    if key.fileobj is process.stdin:
                        pending = self._send(selector, process.stdin, pending)
                        continue
                    data = os.read(key.fd, CHUNK)
                    if not data:
                        selector.unregister(key.fileobj)
                        continue
                    self._take(key.fileobj, process, data)
                    if self.overflow:
                        process.kill()
                        return
                    if key.fileobj is reply and self._ready() and pending is not None:
                        os.set_blocking(process.stdin.fileno(), False)
                        selector.register(process.stdin, selectors.EVENT_WRITE)
                        pending = self._send(selector, process.stdin, pending)

    def _ready(self) -> bool:
        return self.replies.startswith(b'{"ready": true}\n')

    def _send(
        self, selector: selectors.BaseSelector, stdin: IO[bytes], pending: memoryview | None
    ) -> memoryview | None:
        """Write what the child can take now; close stdin when it has all the request."""
        if pending is None:
            return None
        try:
            written = os.write(stdin.fileno(), pending)
        except BlockingIOError:
            return pending
        except BrokenPipeError:
            written = len(pending)
        pending = pending[written:]
        if not pending:
            selector.unregister(stdin)
            stdin.close()
            return None
        return pending

    def _take(self, stream: object, process: subprocess.Popen[bytes], data: bytes) -> None:
        if stream is process.stdout or stream is process.stderr:
            self.printed += len(data)
            if stream is process.stderr:
                self.stderr_tail = (self.stderr_tail + data)[-STDERR_TAIL_BYTES:]
            if self.printed > self.limits.output_bytes:
                self.overflow = f"The check printed more than {_size(self.limits.output_bytes)}"
            return
        self.replies += data
        if len(self.replies) > self.limits.output_bytes:
            self.overflow = f"The check's answer is larger than {_size(self.limits.output_bytes)}"

    def _result(self, status: int) -> SandboxResult:
        if self.overflow:
            return _failed("code_output_too_large", self.overflow)
        if self.timed_out:
            seconds = f"{self.limits.wall_seconds:g}"
            return _failed("code_timeout", f"The check ran for more than {seconds} seconds")
        lines = bytes(self.replies).split(b"\n")
        first = _message(lines[0])
        if first.get("error") == "sandbox_unavailable":
            return _failed("sandbox_unavailable", str(first.get("detail", "")))
        if not self._ready():
            return _failed(
                "sandbox_unavailable", f"The sandbox did not start: {self._ended(status)}"
            )
        answer = _message(lines[1]) if len(lines) > 2 else {}
        if answer:
            return _answer(answer)
        return self._died(status)

    def _died(self, status: int) -> SandboxResult:
        if status in (-signal.SIGXCPU, -signal.SIGKILL):
            seconds = self.limits.cpu_seconds
            return _failed(
                "code_timeout", f"The check used more than {seconds} seconds of CPU time"
            )
        if b"MemoryError" in self.stderr_tail:
            return _failed("code_memory", "The check ran out of memory")
        return _failed("code_crash", f"The check ended without an answer: {self._ended(status)}")

    def _ended(self, status: int) -> str:
        if status < 0:
            how = f"ended by signal {signal.Signals(-status).name}"
        else:
            how = f"exit status {status}"
        tail = self.stderr_tail.decode("utf-8", "replace").strip()
        return f"{how}; it printed: {tail}" if tail else how


def _message(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _answer(answer: dict[str, Any]) -> SandboxResult:
    """The harness's second line: a verdict (checked again here) or the code's own failure."""
    if "verdict" in answer:
        try:
            verdict = Verdict.from_json(answer["verdict"])
        except ValueError as error:
            return _failed(
                "code_bad_return", f"verify returned a Verdict that is not valid: {error}"
            )
        return SandboxResult(verdict=verdict.to_json())
    code, detail = answer.get("error"), answer.get("detail")
    if code in CHECK_ERRORS and isinstance(detail, str):
        return _failed(code, detail)
    return _failed("code_bad_return", "The check's answer is not a verdict")


def _size(count: int) -> str:
    return f"{count // (1024 * 1024):,} MiB" if count >= 1024 * 1024 else f"{count:,} bytes"
