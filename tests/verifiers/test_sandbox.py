"""Python checks in the real sandbox: the page's `length` check as written, the outcomes an
author sees when their code goes wrong, and hostile programs, each contained.

No database. Every test runs real `python -I` children under Landlock and seccomp; on a
kernel without them the sandbox says it is unavailable, and that is what is tested there.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from context_verifiers.sandbox import Limits, run_code_check, sandbox_status, self_test
from tests.conftest import SHARED

AVAILABLE, REASON = sandbox_status()
needs_sandbox = pytest.mark.skipif(not AVAILABLE, reason=f"sandbox unavailable: {REASON}")
# Tight limits keep the slow probes (spin, sleep) to about a second each; the rest, which end
# at once when contained, get room for a busy machine.
FAST = Limits(cpu_seconds=1, wall_seconds=1.5)
ROOMY = Limits(cpu_seconds=5, wall_seconds=20)
TASK = {
    "id": "delayed-shipment",
    "name": "Delayed shipment email",
    "prompt": "Draft an email to a customer whose order #4417 will arrive 5 days late.",
    "criterion": {"id": "length", "text": "Is 150 words or fewer.", "weight": 10},
}
# The `length` criterion of the page's Rubric template, character for character.
LENGTH_CHECK = (
    "from context_verifiers import Verdict\n\n"
    "def verify(task, output):\n"
    "    words = len(output.text.split())\n"
    '    return Verdict.boolean(passed=words <= 150, reasoning=f"{words} words")\n'
)


def check(body: str, *, output: str = "An answer.", limits: Limits = ROOMY):
    code = "import os, sys\nfrom context_verifiers import Verdict\n\n" + textwrap.dedent(body)
    return run_code_check(code, task=TASK, output={"text": output}, limits=limits)


def words(count: int) -> str:
    return " ".join(["word"] * count)


def page_length_check() -> str:
    """The `length` criterion's code, as the page's Rubric template has it."""
    text = next((SHARED / "seeds").glob("001_*.txt")).read_text()
    start = text.index('"code": "', text.index('"id": "length"')) + len('"code": ')
    code, _ = json.JSONDecoder().raw_decode(text, start)
    return code


@needs_sandbox
@pytest.mark.parametrize(("count", "passed"), [(149, True), (151, False)])
def test_the_pages_length_check_runs_as_the_page_writes_it(count, passed):
    code = page_length_check()
    assert code.startswith("from context_verifiers import Verdict\n")
    result = run_code_check(code, task=TASK, output={"text": words(count)})
    assert result.code is None, result.detail
    assert result.verdict == {"kind": "boolean", "passed": passed, "reasoning": f"{count} words"}


@needs_sandbox
@pytest.mark.parametrize(("count", "passed"), [(149, True), (150, True), (151, False)])
def test_the_length_check_runs_as_written(count, passed):
    result = run_code_check(LENGTH_CHECK, task=TASK, output={"text": words(count)})
    assert result.code is None, result.detail
    assert result.verdict == {"kind": "boolean", "passed": passed, "reasoning": f"{count} words"}


@needs_sandbox
def test_a_score_comes_back_as_a_score_and_the_check_sees_the_task():
    result = check(
        """
        def verify(task, output):
            return Verdict.score(0.25, reasoning=f"{task.criterion.id} {task.id} {output.text}")
        """
    )
    assert result.verdict == {
        "kind": "score",
        "value": 0.25,
        "reasoning": "length delayed-shipment An answer.",
    }


@needs_sandbox
def test_a_crash_gives_the_authors_traceback_lines():
    result = check(
        """
        def ratio(text):
            return len(text) / 0

        def verify(task, output):
            return Verdict.score(ratio(output.text))
        """
    )
    assert result.code == "code_crash"
    assert result.verdict is None
    # Python 3.11 marks the failing expression with ^ and ~ under the line: kept for authors.
    lines = [line for line in result.detail.splitlines() if line.strip(" ^~")]
    assert lines == [
        '  File "check.py", line 9, in verify',
        "    return Verdict.score(ratio(output.text))",
        '  File "check.py", line 6, in ratio',
        "    return len(text) / 0",
        "ZeroDivisionError: division by zero",
    ]
    assert "harness" not in result.detail


@needs_sandbox
def test_a_syntax_error_names_its_line():
    result = check("def verify(task, output)\n    return 1\n")
    assert result.code == "code_crash"
    assert 'File "check.py", line 4' in result.detail
    assert "SyntaxError" in result.detail


@needs_sandbox
@pytest.mark.parametrize(
    ("body", "returned"),
    [
        ("def verify(task, output):\n    return 1\n", "it returned an int"),
        ("def verify(task, output):\n    return True\n", "it returned a bool"),
        ("def verify(task, output):\n    pass\n", "it returned None"),
        ("def verify(task, output):\n    return {'kind': 'boolean', 'passed': True}\n", "a dict"),
    ],
)
def test_a_wrong_return_type_names_what_verify_must_return(body, returned):
    result = check(body)
    assert result.code == "code_bad_return"
    assert "verify(task, output) must return a Verdict: Verdict.boolean(passed=..." in result.detail
    assert returned in result.detail


@needs_sandbox
def test_code_without_verify_is_told_to_define_it():
    result = check("def check(task, output):\n    return Verdict.boolean(passed=True)\n")
    assert result.code == "code_bad_return"
    assert (
        result.detail
        == "The code must define a function verify(task, output) that returns a Verdict"
    )


@needs_sandbox
def test_a_verdict_refused_by_verdict_itself_is_a_crash_in_the_authors_code():
    result = check("def verify(task, output):\n    return Verdict.score(1.5)\n")
    assert result.code == "code_crash"
    assert result.detail.endswith("ValueError: a score must be from 0 to 1 inclusive, not 1.5")


@needs_sandbox
def test_what_the_code_prints_is_never_taken_for_its_verdict():
    result = check(
        """
        def verify(task, output):
            print('{"verdict": {"kind": "boolean", "passed": true, "reasoning": "forged"}}')
            print('{"ready": true}', file=sys.stderr)
            return Verdict.boolean(passed=False, reasoning="real")
        """
    )
    assert result.verdict == {"kind": "boolean", "passed": False, "reasoning": "real"}


@needs_sandbox
def test_the_check_works_in_its_own_folder_which_is_removed_after():
    result = check(
        """
        def verify(task, output):
            with open("notes.txt", "w") as file:
                file.write(output.text)
            os.mkdir("sub")
            os.rename("notes.txt", "sub/notes.txt")
            with open("sub/notes.txt") as file:
                return Verdict.boolean(passed=True, reasoning=os.getcwd() + " " + file.read())
        """
    )
    assert result.verdict is not None, result.detail
    folder, text = result.verdict["reasoning"].split(" ", 1)
    assert text == "An answer."
    assert not os.path.exists(folder)


@needs_sandbox
def test_the_standard_library_and_threads_still_work():
    result = check(
        """
        import json, re, math, statistics, decimal, datetime, collections, hashlib, csv, io
        import threading, unicodedata, difflib

        def verify(task, output):
            found = []
            thread = threading.Thread(target=lambda: found.append(re.findall(r"\\w+", output.text)))
            thread.start()
            thread.join()
            return Verdict.score(statistics.mean([0, 1]), reasoning=json.dumps(found))
        """
    )
    assert result.verdict == {"kind": "score", "value": 0.5, "reasoning": '[["An", "answer"]]'}


@needs_sandbox
def test_the_check_cannot_reach_a_server_listening_on_127_0_0_1():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        result = check(
            f"""
            import socket

            def verify(task, output):
                socket.create_connection(("127.0.0.1", {port}), timeout=1)
            """
        )
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert result.code == "code_crash"
    assert result.detail.endswith("PermissionError: [Errno 1] Operation not permitted")


@needs_sandbox
@pytest.mark.parametrize(
    "path", ["/etc/passwd", "/proc/1/environ", "/proc/self/environ", str(Path.cwd() / "manage.py")]
)
def test_the_check_cannot_read_outside_the_standard_library(path):
    result = check(f"def verify(task, output):\n    open({path!r}).read()\n")
    assert result.code == "code_crash"
    assert result.detail.endswith(f"PermissionError: [Errno 13] Permission denied: {path!r}")


@needs_sandbox
def test_the_check_cannot_import_what_the_app_has_installed():
    result = check("import django\n\ndef verify(task, output):\n    pass\n")
    assert result.code == "code_crash"
    assert result.detail.endswith("ModuleNotFoundError: No module named 'django'")


@needs_sandbox
def test_the_check_can_read_only_the_standard_library_and_shared_libraries():
    # This process's prefix is the app's virtualenv, with every package the app installed.
    app = (sys.prefix, str(Path(__file__).resolve().parents[2]))
    result = check(
        f"""
        import os

        def verify(task, output):
            readable = []
            for path in ("/usr/lib", "/root", "/home", "/tmp", "/", sys.prefix + "/lib", *{app}):
                try:
                    os.listdir(path)
                    readable.append(path)
                except OSError:
                    pass
            return Verdict.boolean(passed=not readable, reasoning=", ".join(readable))
        """
    )
    assert result.verdict == {"kind": "boolean", "passed": True, "reasoning": ""}


@needs_sandbox
def test_the_environment_is_empty_and_the_parent_cannot_be_killed():
    result = check(
        """
        def verify(task, output):
            assert not os.environ, os.environ
            os.kill(os.getppid(), 9)
        """
    )
    assert result.code == "code_crash"
    assert result.detail.endswith("PermissionError: [Errno 1] Operation not permitted")


@needs_sandbox
@pytest.mark.parametrize(
    ("body", "code", "detail"),
    [
        ("while True:\n        pass", "code_timeout", "The check "),
        (
            "import time\n    time.sleep(60)",
            "code_timeout",
            "The check ran for more than 1.5 seconds",
        ),
        ("data = bytearray(2 * 1024 ** 3)", "code_memory", "The check ran out of memory"),
        (
            "sys.stdout.write('x' * 100 * 1024 * 1024)",
            "code_output_too_large",
            "The check printed more than 1 MiB",
        ),
    ],
    ids=["spin", "sleep", "allocate 2 GiB", "print 100 MiB"],
)
def test_limits_end_a_check_with_their_code(body, code, detail):
    limits = FAST if code == "code_timeout" else ROOMY
    result = check(f"def verify(task, output):\n    {body}\n", limits=limits)
    assert result.code == code
    assert result.detail.startswith(detail)


@needs_sandbox
def test_a_check_that_closes_its_pipes_and_sleeps_is_still_timed_out():
    result = check(
        """
        import time

        def verify(task, output):
            os.closerange(0, 64)
            time.sleep(60)
        """,
        limits=FAST,
    )
    assert result.code == "code_timeout"
    assert result.detail == "The check ran for more than 1.5 seconds"


@needs_sandbox
def test_a_fork_server_that_died_or_lost_its_folder_is_started_anew():
    from context_verifiers.sandbox import launcher

    first = launcher._server()
    first.process.kill()
    first.process.wait()
    assert check(LENGTH_CHECK.replace("def verify", "def unused")).code == "code_bad_return"
    second = launcher._server()
    assert second is not first
    shutil.rmtree(second.root)
    result = run_code_check(LENGTH_CHECK, task=TASK, output={"text": words(3)})
    assert result.verdict == {"kind": "boolean", "passed": True, "reasoning": "3 words"}
    assert launcher._server() is not second


@needs_sandbox
def test_an_answer_larger_than_the_limit_is_too_large():
    limits = Limits(cpu_seconds=5, wall_seconds=20, output_bytes=4096)
    result = check(
        "def verify(task, output):\n"
        "    return Verdict.boolean(passed=True, reasoning='x' * 8000)\n",
        limits=limits,
    )
    assert result.code == "code_output_too_large"
    assert result.detail == "The check's answer is larger than 4,096 bytes"


@needs_sandbox
def test_the_self_test_contains_every_hostile_program():
    report = self_test()
    assert report.passed, "\n".join(report.lines())
    names = {probe.name for probe in report.probes}
    assert {"network", "environment", "fork", "kill the parent", "spin", "print 100 MiB"} <= names
    assert report.lines()[-1].startswith("passed: 20 of 20 hostile programs contained in ")


@pytest.mark.skipif(AVAILABLE, reason="this kernel has the sandbox")
def test_without_the_sandbox_no_code_runs():
    result = check("def verify(task, output):\n    return Verdict.boolean(passed=True)\n")
    assert result.code == "sandbox_unavailable"
    assert result.detail == REASON


# A grading process whose kernel refuses one system call the sandbox needs: it is started
# under a seccomp filter (inherited by everything it starts) that makes that call fail.
REFUSING = """
import ctypes, errno, json, sys
from context_verifiers.sandbox import seccomp
lib = seccomp.load_library()
ctx = lib.seccomp_init(seccomp.ALLOW)
for refused in sys.argv[1:]:  # a call's name, or NAME:N for the call with N as first argument
    name, _, first = refused.partition(":")
    number = lib.seccomp_syscall_resolve_name(name.encode())
    cmp = seccomp._ArgCmp(0, seccomp.CMP_EQ, int(first or 0), 0)
    args = (seccomp._ArgCmp * 1)(cmp) if first else None
    refuse = 0x00050000 | errno.EPERM
    assert lib.seccomp_rule_add_array(ctx, refuse, number, bool(first), args) == 0
assert lib.seccomp_load(ctx) == 0
from context_verifiers.sandbox import run_code_check
code = "def verify(task, output):\\n    open('MARKER', 'w').write('ran')\\n"
result = run_code_check(code.replace('MARKER', sys.argv[0]), task={"id": "t", "name": "T",
    "prompt": "P"}, output={"text": "x"})
print(json.dumps([result.code, result.detail]))
"""


@needs_sandbox
@pytest.mark.parametrize(
    ("refused", "says"),
    [
        (["landlock_create_ruleset"], "The kernel has no Landlock; Python checks need Landlock"),
        # libseccomp falls back to prctl(PR_SET_SECCOMP) when seccomp() fails: both refused.
        (["seccomp", "prctl:22"], "The sandbox is unavailable: "),
    ],
    ids=["no Landlock", "no seccomp filter"],
)
def test_where_the_kernel_refuses_the_sandbox_no_code_runs(tmp_path, refused, says):
    marker = tmp_path / "ran.txt"
    script = REFUSING.replace("sys.argv[0]", repr(str(marker)))
    done = subprocess.run(
        [sys.executable, "-c", script, *refused],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    code, detail = json.loads(done.stdout)
    assert code == "sandbox_unavailable"
    assert detail.startswith(says)
    assert not marker.exists()
