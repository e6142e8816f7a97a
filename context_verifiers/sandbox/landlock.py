"""Landlock through ctypes: the files a process may read or write, and no TCP at all.

Standard library only, and no import from this package: the harness loads it by its own
name inside the sandboxed child (`python -I -S`), and the launcher imports it to ask the
kernel which Landlock version it has.
"""

from __future__ import annotations

import ctypes
import os

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

# Version 4 is the first that can refuse TCP bind and connect; without it a check could reach
# the database or a judge's proxy on 127.0.0.1, so an older kernel means no Python checks.
REQUIRED_ABI = 4

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

READ_ONLY = READ_FILE | READ_DIR
# The check's own folder: make, read, write and remove files and folders; no devices, fifos,
# sockets or symlinks, and nothing there may be executed.
WORK_FOLDER = (
    (READ_FILE | READ_DIR | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG)
    | REFER
    | TRUNCATE
)
# A right that applies to a file (not a folder); a rule on a file may hold only these.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV


class LandlockError(OSError):
    """The kernel refused a Landlock call (or has no Landlock)."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is __attribute__((packed))
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(number: int, *args: object) -> int:
    result = _libc.syscall(number, *args)
    if result < 0:
        errno = ctypes.get_errno()
        raise LandlockError(errno, os.strerror(errno))
    return int(result)


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (or it is turned off)."""
    try:
        return _syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    except LandlockError:
        return 0


def _handled_fs(abi: int) -> int:
    handled = (1 << 13) - 1  # every right of ABI 1
    for version, right in ((2, REFER), (3, TRUNCATE), (5, IOCTL_DEV)):
        if abi >= version:
            handled |= right
    return handled


def restrict_self(*, read_only: list[str], read_write: list[str]) -> int:
    """Limit this process (and threads it starts) for good: read only beneath `read_only`,
    read and write beneath `read_write`, no TCP bind or connect, and from ABI 6 no signal to
    a process outside the sandbox. Returns the ABI used; LandlockError if refused."""
    abi = abi_version()
    if abi < REQUIRED_ABI:
        raise LandlockError(0, f"Landlock ABI {abi}: version {REQUIRED_ABI} or later is needed")
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, NET_BIND_TCP | NET_CONNECT_TCP, 0)
    size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = _syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    try:
        for paths, rights in ((read_only, READ_ONLY), (read_write, WORK_FOLDER)):
            for path in paths:
                _allow(ruleset, path, rights & handled)
        _syscall(SYS_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return abi


def _allow(ruleset: int, path: str, rights: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        _syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
    finally:
        os.close(fd)
