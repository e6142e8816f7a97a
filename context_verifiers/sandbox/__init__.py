"""Python checks in a real sandbox: a process of its own per check, forked from a `python -I`
server that holds no secret, locked in with resource limits, Landlock and seccomp before the
author's code is even sent to it.

`run_code_check` runs one; `sandbox_status` says whether this machine can; `self_test` runs
hostile programs and says whether each was contained.
"""

from context_verifiers.sandbox.launcher import (
    CODES,
    Limits,
    SandboxResult,
    run_code_check,
    sandbox_status,
)
from context_verifiers.sandbox.selftest import ProbeResult, SelfTestReport, self_test

__all__ = [
    "CODES",
    "Limits",
    "ProbeResult",
    "SandboxResult",
    "SelfTestReport",
    "run_code_check",
    "sandbox_status",
    "self_test",
]
