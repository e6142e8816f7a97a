"""Run one author's Python check in its own sandboxed process, and read back what it decided.

Each process that grades starts one fork server (`harness.py`) on its first check: a
`python -I -S` process with an empty environment, in a throwaway folder, that loads what a
check needs and locks itself in (Landlock, seccomp, no capabilities) before anything else.
For each check the server forks a new process, which sets its limits and locks itself in
further (its own folder only, no fork, no signal but to itself) before it asks for the code.
The server never runs an author's code and holds no secret; a check never shares a process
with another. This side keeps the wall clock, reads every pipe with a cap, removes the
check's folder, and turns what came back (or how the process ended) into a SandboxResult.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

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
# The system's own shared libraries (libffi, libz, libcrypto, ... that compiled modules of
# the standard library load): the multiarch folder where there is one, else all of /usr/lib.
_MULTIARCH = f"/usr/lib/{sysconfig.get_config_var('MULTIARCH') or ''}".rstrip("/")
SHARED_LIBRARIES = _MULTIARCH if os.path.isdir(_MULTIARCH) else "/usr/lib"
# What a check may read after it is locked in: the standard library (and its compiled
# modules), the shared libraries those load, and the loader's cache to find them. Not the
# rest of /etc, not /proc, /home, /tmp or the project.
# The interpreter's own standard library, found from a module of it: sysconfig's "platstdlib"
# in a virtualenv is the virtualenv's folder, site-packages and all.
STDLIB = os.path.dirname(os.__file__)
COMPILED_STDLIB = str(sysconfig.get_config_var("DESTSHARED") or STDLIB)
READ_ONLY = sorted(
    {STDLIB, COMPILED_STDLIB, SHARED_LIBRARIES}
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
# Starting the fork server: a second on a quiet machine; ten on one that is very busy.
START_SECONDS = 10.0
# After a kill, how long the server may take to report the exit status.
KILL_GRACE_SECONDS = 2.0


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
    # The CPU time the check's process used (0 when it never started).
    cpu_seconds: float = 0.0


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


class SandboxUnavailable(Exception):
    """The fork server did not start, or could not start a check."""


class _Server:
    """This process's fork server (`harness.py`), started on first use: a `python -I -S`
    process with an empty environment, already locked in, that forks one process a check."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.root = tempfile.mkdtemp(prefix="cv-sandbox-")
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {
            "sandbox_dir": str(SANDBOX_DIR),
            "library": LIBRARY,
            "read_only": READ_ONLY,
            "root": self.root,
        }
        try:
            self.process = subprocess.Popen(
                [PYTHON, "-I", "-S", "-X", "utf8", str(HARNESS), json.dumps(config)],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={},
                cwd=self.root,
                start_new_session=True,
            )
        except OSError as error:
            self.control.close()
            shutil.rmtree(self.root, ignore_errors=True)
            raise SandboxUnavailable(f"{PYTHON} could not be started ({error})") from error
        finally:
            theirs.close()
        self.lock = threading.Lock()
        self.control.settimeout(START_SECONDS)
        try:
            first = _message(self.control.recv(CHUNK))
        except OSError as error:
            first = {"detail": f"the sandbox did not start ({error})"}
        if first.get("ready") is not True:
            self.stop()
            raise SandboxUnavailable(str(first.get("detail", "the sandbox did not start")))
        atexit.register(self.stop)

    def alive(self) -> bool:
        # A cleaner of the temporary folder may have taken its folder: then start anew.
        return self.process.poll() is None and os.path.isdir(self.root)

    def spawn(self, work: str, limits: Limits) -> _Pipes:
        """A new check process on fresh pipes, locked in to `work` (not yet sent any code)."""
        ends = [os.pipe() for _ in range(5)]  # stdin, stdout, stderr, reply, exit status
        theirs = [ends[0][0], ends[1][1], ends[2][1], ends[3][1], ends[4][1]]
        message = json.dumps({"work": work, "limits": limits.for_child()}).encode()
        try:
            with self.lock:
                socket.send_fds(self.control, [message], theirs)
                answer = _message(self.control.recv(CHUNK))
        except OSError as error:
            answer = {"error": f"the sandbox stopped ({error})"}
        finally:
            for fd in theirs:
                os.close(fd)
        pipes = _Pipes(
            answer.get("pid", 0), ends[0][1], ends[1][0], ends[2][0], ends[3][0], ends[4][0]
        )
        if not pipes.pid:
            pipes.close()
            raise SandboxUnavailable(str(answer.get("error", "the sandbox stopped")))
        return pipes

    def kill(self, pid: int) -> None:
        with self.lock, contextlib.suppress(OSError):
            self.control.send(json.dumps({"kill": pid}).encode())

    def stop(self) -> None:
        self.control.close()  # the server kills its checks and leaves
        if os.getpid() != self.owner:  # a forked worker exiting: the server is its parent's
            return
        try:
            self.process.wait(timeout=START_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class _Pipes:
    pid: int
    stdin: int
    stdout: int
    stderr: int
    reply: int
    status: int

    def close(self) -> None:
        for fd in (self.stdin, self.stdout, self.stderr, self.reply, self.status):
            if fd >= 0:
                os.close(fd)
        self.stdin = self.stdout = self.stderr = self.reply = self.status = -1


_servers: dict[int, _Server] = {}  # by the pid of the process that started it
_servers_lock = threading.Lock()


def _server() -> _Server:
    with _servers_lock:
        server = _servers.get(os.getpid())
        if server is None or not server.alive():
            if server is not None:
                server.stop()
            server = _servers[os.getpid()] = _Server()
        return server


def _forget_servers() -> None:
    """In a forked worker: the parent's server stays the parent's; this one starts its own."""
    global _servers_lock
    for server in _servers.values():
        server.control.close()
    _servers.clear()
    _servers_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_servers)


def run_code_check(
    code: str, *, task: dict[str, Any], output: dict[str, Any], limits: Limits | None = None
) -> SandboxResult:
    """Run `code`'s verify(task, output) in its own sandboxed process; never without one."""
    available, reason = sandbox_status()
    if not available:
        return _failed("sandbox_unavailable", reason)
    limits = limits or Limits()
    request = json.dumps({"code": code, "task": task, "output": output}).encode()
    try:
        server = _server()
        work = tempfile.mkdtemp(prefix="check-", dir=server.root)
        try:
            return _Child(server, work, limits).run(request)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    except SandboxUnavailable as error:
        return _failed("sandbox_unavailable", f"The sandbox is unavailable: {error}")


class _Child:
    """One check's process, its pipes and its clock."""

    def __init__(self, server: _Server, work: str, limits: Limits) -> None:
        self.server = server
        self.limits = limits
        self.work = work
        self.replies = bytearray()
        self.printed = 0
        self.stderr_tail = b""
        self.overflow = ""
        self.timed_out = False

    def run(self, request: bytes) -> SandboxResult:
        deadline = time.monotonic() + self.limits.wall_seconds
        pipes = self.server.spawn(self.work, self.limits)
        try:
            self._exchange(pipes, request, deadline)
            status, cpu = None, 0.0
            if not (self.timed_out or self.overflow):
                # Its pipes are closed; it has ended, or closed them and goes on (a check can
                # close its own fds): the wall clock still holds.
                status, cpu = _exit_status(pipes.status, deadline)
                self.timed_out = status is None
            if status is None:
                self.server.kill(pipes.pid)
                status, cpu = _exit_status(pipes.status, time.monotonic() + KILL_GRACE_SECONDS)
        finally:
            pipes.close()
        return replace(self._result(status), cpu_seconds=cpu)

    def _exchange(self, pipes: _Pipes, request: bytes, deadline: float) -> None:
        pending: memoryview | None = memoryview(request)
        with selectors.DefaultSelector() as selector:
            reading = {pipes.reply, pipes.stdout, pipes.stderr}
            for fd in reading:
                selector.register(fd, selectors.EVENT_READ)
            while reading:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.timed_out = True
                    return
                for key, _ in selector.select(left):
                    if key.fd == pipes.stdin:
                        pending = self._send(selector, pipes, pending)
                        continue
                    data = os.read(key.fd, CHUNK)
                    if not data:
                        selector.unregister(key.fd)
                        reading.discard(key.fd)
                        continue
                    self._take(key.fd, pipes, data)
                    if self.overflow:
                        return
                    if key.fd == pipes.reply and self._ready() and pending is not None:
                        os.set_blocking(pipes.stdin, False)
                        selector.register(pipes.stdin, selectors.EVENT_WRITE)
                        pending = self._send(selector, pipes, pending)

    def _ready(self) -> bool:
        return self.replies.startswith(b'{"ready": true}\n')

    def _send(
        self, selector: selectors.BaseSelector, pipes: _Pipes, pending: memoryview | None
    ) -> memoryview | None:
        """Write what the child can take now; close stdin when it has all the request."""
        if pending is None:
            return None
        try:
            written = os.write(pipes.stdin, pending)
        except BlockingIOError:
            return pending
        except BrokenPipeError:
            written = len(pending)
        pending = pending[written:]
        if not pending:
            selector.unregister(pipes.stdin)
            os.close(pipes.stdin)
            pipes.stdin = -1
            return None
        return pending

    def _take(self, fd: int, pipes: _Pipes, data: bytes) -> None:
        if fd in (pipes.stdout, pipes.stderr):
            self.printed += len(data)
            if fd == pipes.stderr:
                self.stderr_tail = (self.stderr_tail + data)[-STDERR_TAIL_BYTES:]
            if self.printed > self.limits.output_bytes:
                self.overflow = f"The check printed more than {_size(self.limits.output_bytes)}"
            return
        self.replies += data
        if len(self.replies) > self.limits.output_bytes:
            self.overflow = f"The check's answer is larger than {_size(self.limits.output_bytes)}"

    def _result(self, status: int | None) -> SandboxResult:
        if self.overflow:
            return _failed("code_output_too_large", self.overflow)
        lines = bytes(self.replies).split(b"\n")
        first = _message(lines[0])
        if first.get("error") == "sandbox_unavailable":
            return _failed("sandbox_unavailable", str(first.get("detail", "")))
        answer = _message(lines[1]) if self._ready() and len(lines) > 2 else {}
        if answer:  # a whole answer counts, even one that came as the clock ran out
            return _answer(answer)
        if self.timed_out:
            seconds = _seconds(self.limits.wall_seconds)
            return _failed("code_timeout", f"The check ran for more than {seconds}")
        if not self._ready():
            return _failed(
                "sandbox_unavailable", f"The sandbox did not start: {self._ended(status)}"
            )
        return self._died(status)

    def _died(self, status: int | None) -> SandboxResult:
        if status in (-signal.SIGXCPU, -signal.SIGKILL):
            seconds = _seconds(self.limits.cpu_seconds)
            return _failed("code_timeout", f"The check used more than {seconds} of CPU time")
        if b"MemoryError" in self.stderr_tail:
            return _failed("code_memory", "The check ran out of memory")
        return _failed("code_crash", f"The check ended without an answer: {self._ended(status)}")

    def _ended(self, status: int | None) -> str:
        if status is None:
            how = "the sandbox stopped"
        elif status < 0:
            how = f"ended by signal {signal.Signals(-status).name}"
        else:
            how = f"exit status {status}"
        tail = self.stderr_tail.decode("utf-8", "replace").strip()
        return f"{how}; it printed: {tail}" if tail else how


def _exit_status(fd: int, deadline: float) -> tuple[int | None, float]:
    """The check's exit status as the server reports it once it has reaped the process
    (a negative number is the signal that ended it; None if the server stopped first), and
    the CPU time it used."""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        data = b""
        while selector.select(max(deadline - time.monotonic(), 0)):
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            data += chunk
    message = _message(data)
    status, cpu = message.get("status"), message.get("cpu")
    return (
        status if isinstance(status, int) else None,
        float(cpu) if isinstance(cpu, int | float) else 0.0,
    )


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


def _seconds(count: float) -> str:
    return f"{count:g} second" if count == 1 else f"{count:g} seconds"


def _size(count: int) -> str:
    return f"{count // (1024 * 1024):,} MiB" if count >= 1024 * 1024 else f"{count:,} bytes"
