"""seccomp through ctypes and libseccomp: the system calls a check may make, and no others.

An allowlist: what CPython needs to compute, read its standard library and use its own
folder. Everything else fails with EPERM (so a check sees PermissionError, not a dead
process): sockets, exec, fork (threads are allowed: some standard-library code starts them,
and they share the process's limits), ptrace, signals to any other process, raising a
resource limit, mount, namespaces, bpf, io_uring, keys, another seccomp filter.

Standard library only and no import from this package, like `landlock`; libseccomp.so.2 is
loaded with ctypes rather than through a binding package, which `python -I -S` could not
import.
"""

from __future__ import annotations

import ctypes
import errno
import os

ALLOW = 0x7FFF0000
# Another architecture's system call numbers (x32, int 0x80) would slip past the table.
KILL_PROCESS = 0x80000000
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
CLONE_THREAD = 0x00010000
CMP_EQ = 4
CMP_MASKED_EQ = 7
LAST_CAPABILITY = 63

# fcntl commands a check may use: dup, fd and status flags, locks, pipe size. Not F_SETOWN,
# F_SETOWN_EX or F_SETSIG, which would have the kernel signal another process (SIGIO) for it.
FCNTLS = (0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 16, 36, 37, 38, 1030, 1031, 1032, 1033, 1034)
# ioctl requests Python itself makes on its own files (isatty, non-blocking, close-on-exec).
# TIOCSTI, which can type into a terminal, is not one of them.
IOCTLS = (0x5401, 0x541B, 0x5421, 0x5450, 0x5451)

SYSCALLS = """
read write readv writev pread64 pwrite64 preadv pwritev lseek close close_range
open openat openat2 creat stat fstat lstat newfstatat statx statfs fstatfs access faccessat
faccessat2 readlink readlinkat getdents getdents64 getcwd chdir fchdir mkdir mkdirat rmdir
unlink unlinkat rename renameat renameat2 truncate ftruncate fsync fdatasync fallocate
fadvise64 flock dup dup2 dup3 pipe pipe2 chmod fchmod fchmodat utimensat futimesat
umask getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr sendfile copy_file_range
mmap munmap mprotect mremap madvise brk msync mincore membarrier
rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait rt_sigsuspend
sigaltstack restart_syscall
futex set_robust_list get_robust_list rseq set_tid_address arch_prctl exit exit_group
getpid gettid getppid getpgrp getpgid getsid getuid geteuid getgid getegid getgroups
getresuid getresgid getrusage times sysinfo uname getpriority
sched_yield sched_getaffinity sched_getparam sched_getscheduler
getrandom clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday time
alarm getitimer setitimer timer_create timer_settime timer_gettime timer_delete
poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait
epoll_pwait2 eventfd eventfd2
"""

# The fork server's additions. kill is not limited by pid here: the server signals only its
# own checks, and Landlock's signal scope keeps it from any process outside the sandbox.
SERVER_SYSCALLS = """
wait4 waitid kill tgkill setsid prlimit64 setrlimit getrlimit recvmsg sendmsg recvfrom
sendto shutdown prctl capget capset seccomp landlock_create_ruleset landlock_add_rule
landlock_restrict_self
"""
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NEW_ANY = (
    0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
)


class SeccompError(OSError):
    """libseccomp is missing, or it or the kernel refused the filter."""


class _ArgCmp(ctypes.Structure):
    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def load_library() -> ctypes.CDLL:
    """libseccomp, or SeccompError saying it is not installed."""
    try:
        # By its soname, not ctypes.util.find_library, which runs ldconfig in a subprocess.
        lib = ctypes.CDLL("libseccomp.so.2")
    except OSError as exc:
        raise SeccompError(0, f"libseccomp is not installed ({exc})") from exc
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = (ctypes.c_uint32,)
    lib.seccomp_rule_add_array.argtypes = (
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    )
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_load.argtypes = (ctypes.c_void_p,)
    lib.seccomp_release.argtypes = (ctypes.c_void_p,)
    return lib


def drop_privileges() -> None:
    """No new privileges from here on (Landlock and seccomp need it), and, when started as
    root, no capability left: root without capabilities cannot raise its own limits."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise SeccompError(code, f"prctl(NO_NEW_PRIVS): {os.strerror(code)}")
    if _effective_capabilities() == 0:
        return
    for capability in range(LAST_CAPABILITY + 1):
        libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)  # EINVAL past the last one
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (x2): all zero
    if libc.capset(header, data) != 0:
        code = ctypes.get_errno()
        raise SeccompError(code, f"capset: {os.strerror(code)}")


def _effective_capabilities() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    if libc.capget(header, data) != 0:
        return -1  # unknown: drop them all
    return data[0] | data[3] << 32  # effective, low and high words


def load_filter(*, server: bool = False) -> None:
    """Install the allowlist on this process for good. SeccompError when refused.

    `server`: the fork server's wider filter, under which each check then installs its own.
    It adds what starting a check takes (fork, wait, fds passed on its socket, limits,
    Landlock, seccomp); never a new socket or exec. Filters stack: a check is held by both.
    """
    lib = load_library()
    ctx = lib.seccomp_init(_errno_action(errno.EPERM))
    if not ctx:
        raise SeccompError(0, "seccomp_init failed")
    try:
        if server:
            _add_server_rules(lib, ctx)
        else:
            _add_check_rules(lib, ctx)
        result = lib.seccomp_load(ctx)
        if result != 0:
            raise SeccompError(-result, f"seccomp_load: {os.strerror(-result)}")
    finally:
        lib.seccomp_release(ctx)


def _rule(lib: ctypes.CDLL, ctx: int, action: int, name: str, *conditions: _ArgCmp) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number < 0:  # not a system call on this architecture (e.g. a newer or older one)
        return
    array = (_ArgCmp * len(conditions))(*conditions) if conditions else None
    result = lib.seccomp_rule_add_array(ctx, action, number, len(conditions), array)
    if result != 0:
        raise SeccompError(-result, f"seccomp rule for {name}: {os.strerror(-result)}")


def _add_server_rules(lib: ctypes.CDLL, ctx: int) -> None:
    for name in (SYSCALLS + SERVER_SYSCALLS + " fcntl").split():
        _rule(lib, ctx, ALLOW, name)
    # A process, never in a new namespace; clone3 as below.
    _rule(lib, ctx, ALLOW, "clone", _ArgCmp(0, CMP_MASKED_EQ, CLONE_NEW_ANY, 0))
    _rule(lib, ctx, _errno_action(errno.ENOSYS), "clone3")
    for request in IOCTLS:
        _rule(lib, ctx, ALLOW, "ioctl", _ArgCmp(1, CMP_EQ, request, 0))


def _add_check_rules(lib: ctypes.CDLL, ctx: int) -> None:
    for name in SYSCALLS.split():
        _rule(lib, ctx, ALLOW, name)
    pid = os.getpid()
    # Threads only: a clone without CLONE_THREAD makes a process. clone3 hides its flags in
    # memory a filter cannot read, so it says ENOSYS and the C library falls back to clone.
    thread_only = CLONE_THREAD | CLONE_NEW_ANY  # a thread, in no new namespace
    _rule(lib, ctx, ALLOW, "clone", _ArgCmp(0, CMP_MASKED_EQ, thread_only, CLONE_THREAD))
    _rule(lib, ctx, _errno_action(errno.ENOSYS), "clone3")
    # Signals only to itself (signal.raise_signal, os.kill(os.getpid(), ...)).
    _rule(lib, ctx, ALLOW, "kill", _ArgCmp(0, CMP_EQ, pid, 0))
    _rule(lib, ctx, ALLOW, "tgkill", _ArgCmp(0, CMP_EQ, pid, 0))
    # Reading its own limits (resource.getrlimit) but never setting one.
    _rule(lib, ctx, ALLOW, "prlimit64", _ArgCmp(0, CMP_EQ, 0, 0), _ArgCmp(2, CMP_EQ, 0, 0))
    _rule(lib, ctx, ALLOW, "getrlimit")
    for request in IOCTLS:
        _rule(lib, ctx, ALLOW, "ioctl", _ArgCmp(1, CMP_EQ, request, 0))
    for command in FCNTLS:
        _rule(lib, ctx, ALLOW, "fcntl", _ArgCmp(1, CMP_EQ, command, 0))
