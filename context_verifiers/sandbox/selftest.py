"""Hostile programs run through the real sandbox, each of which must be contained.

Each probe is an author's check that tries one thing a check must never do. One that is
refused says so (`Verdict.boolean(passed=False, reasoning="refused: ...")`); one that gets
through says "ESCAPED" (passed=True), which fails the self-test. Probes that a limit must
stop (spin, sleep, allocate, print) pass when they end with that limit's code.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from context_verifiers.sandbox.launcher import Limits, run_code_check, sandbox_status

REFUSED = "refused"
# The probes that only a clock stops (spin, sleep) get a tight one, so the self-test takes a
# few seconds when a worker starts; the others, which end at once when contained, get room
# for a machine that is busy starting everything else at the same time.
LIMITS = Limits(memory_mib=256, cpu_seconds=1, wall_seconds=2.0)
ROOMY = Limits(memory_mib=256, cpu_seconds=5, wall_seconds=20.0)
PARALLEL = 4
PROJECT_FILE = Path(__file__).resolve().parents[2] / "manage.py"

PRELUDE = """
import os, sys
from context_verifiers import Verdict

def refused(what):
    return Verdict.boolean(passed=False, reasoning="refused: " + what)

def escaped(what):
    return Verdict.boolean(passed=True, reasoning="ESCAPED: " + what)

def read(path):
    with open(path, "rb") as file:
        return file.read(100)

"""


@dataclass(frozen=True, slots=True)
class Probe:
    name: str
    attempt: str
    expect: str  # REFUSED, or the code the sandbox must end it with
    code: str


@dataclass(frozen=True, slots=True)
class ProbeResult:
    name: str
    attempt: str
    expected: str
    got: str
    contained: bool
    detail: str


@dataclass(frozen=True, slots=True)
class SelfTestReport:
    """Whether every probe was contained; `reason` when the sandbox could not even start."""

    passed: bool
    probes: tuple[ProbeResult, ...]
    reason: str = ""
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """One line a probe, then the outcome, as the management command prints them."""
        lines = [f"sandbox unavailable: {self.reason}"] if self.reason else []
        for probe in self.probes:
            mark = "contained" if probe.contained else "NOT CONTAINED"
            lines.append(
                f"{mark:>13}  {probe.name}: {probe.attempt} -> {probe.got} ({probe.detail})"
            )
        contained = sum(probe.contained for probe in self.probes)
        total = f"{contained:,} of {len(self.probes):,} hostile programs contained"
        lines.append(f"{'passed' if self.passed else 'FAILED'}: {total} in {self.seconds:.1f} s")
        return lines


def _probes(*, port: int, outside: str, secret: str) -> list[Probe]:
    def refused_unless(name: str, attempt: str, body: str) -> Probe:
        return Probe(name, attempt, REFUSED, PRELUDE + "def verify(task, output):\n" + body)

    def stopped_with(name: str, attempt: str, code: str, body: str) -> Probe:
        return Probe(name, attempt, code, PRELUDE + "def verify(task, output):\n" + body)

    return [
        refused_unless(
            "network",
            f"connect to 127.0.0.1:{port}, which is listening",
            "    import socket\n    try:\n"
            f"        socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            "    except OSError as e:\n        return refused(repr(e))\n"
            "    return escaped('connected')\n",
        ),
        refused_unless(
            "environment",
            "read the environment (os.environ and /proc/self/environ)",
            "    if os.environ:\n        return escaped(', '.join(os.environ))\n"
            "    try:\n        return escaped(repr(read('/proc/self/environ')))\n"
            "    except OSError as e:\n        return refused(repr(e))\n",
        ),
        *(
            refused_unless(
                name,
                f"read {path}",
                f"    try:\n        return escaped(repr(read({path!r})))\n"
                "    except OSError as e:\n        return refused(repr(e))\n",
            )
            for name, path in (
                ("other process", "/proc/1/environ"),
                ("parent process", "/proc/{ppid}/environ"),  # {ppid}: filled in the child
                ("system file", "/etc/passwd"),
                ("project file", str(PROJECT_FILE)),
                ("secret file", secret),
            )
        ),
        refused_unless(
            "other checks",
            "list the folder that holds every check's folder",
            "    try:\n        return escaped(repr(os.listdir('..')))\n"
            "    except OSError as e:\n        return refused(repr(e))\n",
        ),
        refused_unless(
            "write outside",
            f"write {outside}",
            "    try:\n"
            f"        with open({outside!r}, 'w') as file:\n            file.write('x')\n"
            "    except OSError as e:\n        return refused(repr(e))\n"
            "    return escaped('wrote it')\n",
        ),
        refused_unless(
            "fork",
            "os.fork()",
            "    try:\n        pid = os.fork()\n    except OSError as e:\n"
            "        return refused(repr(e))\n"
            "    if pid == 0:\n        os._exit(0)\n    return escaped(f'child {pid}')\n",
        ),
        refused_unless(
            "exec",
            "os.execv('/bin/sh', ...)",
            "    try:\n        os.execv('/bin/sh', ['sh', '-c', 'exit 0'])\n"
            "    except OSError as e:\n        return refused(repr(e))\n",
        ),
        refused_unless(
            "kill the parent",
            "os.kill(os.getppid(), SIGKILL)",
            "    try:\n        os.kill(os.getppid(), 9)\n    except OSError as e:\n"
            "        return refused(repr(e))\n    return escaped('signal sent')\n",
        ),
        refused_unless(
            "kill the grader",
            f"os.kill({os.getpid()}, SIGKILL), the process that asked for the check",
            "    try:\n"
            f"        os.kill({os.getpid()}, 9)\n    except OSError as e:\n"
            "        return refused(repr(e))\n    return escaped('signal sent')\n",
        ),
        refused_unless(
            "signal by SIGIO",
            "fcntl(F_SETOWN) a pipe to the parent, so the kernel signals it",
            "    import fcntl\n    reading, writing = os.pipe()\n    try:\n"
            "        fcntl.fcntl(reading, fcntl.F_SETOWN, os.getppid())\n"
            "    except OSError as e:\n        return refused(repr(e))\n"
            "    return escaped('owner set')\n",
        ),
        refused_unless(
            "ptrace",
            "ptrace(PTRACE_ATTACH) the parent",
            "    import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n"
            "    if libc.ptrace(16, os.getppid(), 0, 0) == 0:\n"
            "        return escaped('attached')\n"
            "    return refused(os.strerror(ctypes.get_errno()))\n",
        ),
        refused_unless(
            "raise a limit",
            "setrlimit(RLIMIT_CPU, unlimited)",
            "    import resource\n    try:\n"
            "        resource.setrlimit(resource.RLIMIT_CPU, (-1, -1))\n"
            "    except (OSError, ValueError) as e:\n        return refused(repr(e))\n"
            "    return escaped('unlimited CPU')\n",
        ),
        stopped_with("spin", "while True: pass", "code_timeout", "    while True:\n        pass\n"),
        stopped_with(
            "sleep", "time.sleep(1000)", "code_timeout", "    import time\n    time.sleep(1000)\n"
        ),
        stopped_with(
            "allocate 2 GiB",
            "bytearray(2 GiB)",
            "code_memory",
            "    data = bytearray(2 * 1024 ** 3)\n    return escaped(f'{len(data)} bytes')\n",
        ),
        stopped_with(
            "print 100 MiB",
            "print 100 MiB to stdout",
            "code_output_too_large",
            "    chunk = 'x' * (1024 * 1024)\n    for _ in range(100):\n"
            "        print(chunk)\n    return escaped('printed it all')\n",
        ),
    ]


TASK = {"id": "probe", "name": "Probe", "prompt": "Contain this."}
OUTPUT = {"text": "An answer."}


def _run_probe(probe: Probe) -> ProbeResult:
    code = probe.code.replace("{ppid}", "' + str(os.getppid()) + '")
    limits = LIMITS if probe.expect == "code_timeout" else ROOMY
    result = run_code_check(code, task=TASK, output=OUTPUT, limits=limits)
    if result.verdict is not None:
        passed = result.verdict.get("passed")
        got = "escaped" if passed is not False else REFUSED
        detail = str(result.verdict.get("reasoning", ""))
    else:
        got = str(result.code)
        detail = (result.detail.strip().splitlines() or [""])[-1]
    return ProbeResult(
        name=probe.name,
        attempt=probe.attempt,
        expected=probe.expect,
        got=got,
        contained=got == probe.expect,
        detail=detail[:300],
    )


def self_test() -> SelfTestReport:
    """Run every hostile program through the sandbox; passed only if all were contained."""
    started = time.monotonic()
    available, reason = sandbox_status()
    if not available:
        return SelfTestReport(passed=False, probes=(), reason=reason)
    with (
        socket.create_server(("127.0.0.1", 0)) as listener,
        tempfile.TemporaryDirectory(prefix="cv-selftest-") as outside_dir,
    ):
        outside = os.path.join(outside_dir, "written-by-a-check.txt")
        secret = os.path.join(outside_dir, "secret.env")
        Path(secret).write_text("JUDGE_API_KEY=not-for-checks\n")
        probes = _probes(port=listener.getsockname()[1], outside=outside, secret=secret)
        # Side by side: each probe is its own process, and the slow ones mostly wait.
        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            results = list(pool.map(_run_probe, probes))
        listener.setblocking(False)
        results = [_confirm(result, outside=outside, listener=listener) for result in results]
    return SelfTestReport(
        passed=all(result.contained for result in results),
        probes=tuple(results),
        seconds=time.monotonic() - started,
    )


def _confirm(result: ProbeResult, *, outside: str, listener: socket.socket) -> ProbeResult:
    """What a probe reported, checked from outside: no file written, no connection made."""
    if result.name == "write outside" and os.path.exists(outside):
        return _escaped(result, f"{outside} exists")
    if result.name == "network":
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            return result
        connection.close()
        return _escaped(result, "the listener was connected to")
    return result


def _escaped(result: ProbeResult, detail: str) -> ProbeResult:
    return ProbeResult(result.name, result.attempt, result.expected, "escaped", False, detail)
