"""Resource limits a check runs under, set by the harness on itself before the code loads.

Standard library only and no import from this package (the harness loads it by name).
"""

from __future__ import annotations

import resource

MiB = 1024 * 1024


def apply(*, memory_mib: int, cpu_seconds: int, file_size_mib: int, open_files: int) -> None:
    """Address space, CPU time, size of a file written, open files; no core dump.

    The CPU limit is soft at `cpu_seconds` (SIGXCPU, which ends the process) and hard one
    second later (SIGKILL), for a check that ignores SIGXCPU.
    """
    limits = (
        (resource.RLIMIT_AS, memory_mib * MiB, memory_mib * MiB),
        (resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
        (resource.RLIMIT_FSIZE, file_size_mib * MiB, file_size_mib * MiB),
        (resource.RLIMIT_NOFILE, open_files, open_files),
        (resource.RLIMIT_CORE, 0, 0),
    )
    for kind, soft, hard in limits:
        resource.setrlimit(kind, (soft, hard))
