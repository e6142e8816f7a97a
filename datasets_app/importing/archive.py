"""Reading an uploaded .zip without trusting it: the limits, the checks on member names and
headers, and a member reader that counts the bytes it hands out.

Nothing here knows about datasets; `zip_format` turns what this finds into Problems.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO

from datasets_app.importing.spec import file_size

# 1,000 tasks × (10 input + 10 expected files) = 20,000 files a dataset can really attach,
# plus the dataset file and room for folders and stray files. More entries than that is not
# a dataset, and zipfile builds one ZipInfo per entry (and reads the whole central
# directory into memory) before we can look at any of them.
MAX_MEMBERS = 25_000
# An entry of the central directory is 46 bytes plus its name, extra field and comment;
# 20,000 attachments named like "files/<task id>/input/<name>" take about 3 MiB. 16 MiB
# leaves room for long names while bounding what zipfile reads in one go, whatever the
# end record claims about the entry count.
MAX_CENTRAL_DIRECTORY_BYTES = 16 * 1024 * 1024
# What the whole archive may expand to. The product's own ceiling (1,000 tasks × 20 files
# × 10 MiB = 200 GB) is no basis for a web request; real datasets with files are far below
# 2 GiB, and a larger one can be split into several imports.
MAX_TOTAL_UNCOMPRESSED_BYTES = 2 * 1024 * 1024 * 1024
# No limit on how much a member shrinks: repetitive text (logs, a CSV of similar rows)
# deflates 1,000:1 just as a bomb does. What a bomb costs is bounded by bytes, counted as
# they come out: a member past 10 MiB stops being read (`iter_chunks`, `VerifiedMember`),
# the whole archive past MAX_TOTAL_UNCOMPRESSED_BYTES, the dataset file past its own cap;
# members no task attaches are never inflated.
# The methods zipfile can inflate and that zip tools actually write (stored, deflate, and
# bzip2/LZMA from 7-Zip). Deflate64, which Windows uses for large files, is not among them.
SUPPORTED_METHODS: dict[int, str] = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "LZMA",
}
# Bit 0: traditional (ZipCrypto) encryption; bit 6: strong encryption. Either way the
# member cannot be read without a password we don't have.
ENCRYPTED_FLAGS = 0x1 | 0x40
CHUNK_BYTES = 256 * 1024

# Everything zipfile and the decompressors raise on damaged or hostile input: a bad
# signature or CRC (BadZipFile), data that ends early (EOFError), undecodable names
# (UnicodeDecodeError, a ValueError), unsupported features (NotImplementedError), raw
# decompressor failures (zlib.error, LZMAError; bz2 raises OSError), truncated structures
# (struct.error) and read errors of the underlying file (OSError).
READ_ERRORS: tuple[type[Exception], ...] = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    ValueError,
    NotImplementedError,
    OSError,
    zlib.error,
    lzma.LZMAError,
    struct.error,
)
# Opening a member raises these, and RuntimeError for an encrypted one.
OPEN_ERRORS: tuple[type[Exception], ...] = (RuntimeError, *READ_ERRORS)

_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF


# A stored zip: its path, or a seekable binary file.
ZipSource = str | os.PathLike[str] | IO[bytes]


class ArchiveError(Exception):
    """A member could not be read as the check said it could (the archive is damaged or
    has changed since it was checked, or the member is larger than allowed)."""


class MemberTooLarge(ArchiveError):
    """A member produced more bytes than the reader allowed it (counted as they came out)."""


def directory_extent(fp: IO[bytes]) -> tuple[int, int] | None:
    """The (entry count, central directory size in bytes) the archive's end record declares,
    or None when there is no end record (the file is not a zip, or it is truncated).

    Read before zipfile parses the directory, so that an absurd directory is refused
    without building it in memory.
    """
    fp.seek(0, io.SEEK_END)
    end = fp.tell()
    # The end record sits at the very end, followed only by a comment of up to 64 KiB.
    start = max(0, end - _EOCD_SIZE - _MAX_COMMENT)
    fp.seek(start)
    tail = fp.read(end - start)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < _EOCD_SIZE:
        return None
    entries, cd_size = struct.unpack("<HL", tail[at + 10 : at + 16])
    if entries != 0xFFFF and cd_size != 0xFFFFFFFF:
        return entries, cd_size
    # Zip64: the real figures are in a second end record that a locator points to.
    locator_at = start + at - 20
    if locator_at < 0:
        return None
    fp.seek(locator_at)
    locator = fp.read(20)
    if len(locator) != 20 or locator[:4] != _EOCD64_LOCATOR:
        return None
    (record_at,) = struct.unpack("<Q", locator[8:16])
    if record_at >= end:
        return None
    fp.seek(record_at)
    record = fp.read(56)
    if len(record) != 56 or record[:4] != _EOCD64:
        return None
    entries64, cd_size64 = struct.unpack("<QQ", record[32:48])
    return entries64, cd_size64


_LOCAL_HEADER = b"PK\x03\x04"
_LOCAL_HEADER_SIZE = 30


def overlapping_member(fp: IO[bytes], zf: zipfile.ZipFile) -> zipfile.ZipInfo | None:
    """The first member whose local header or data runs into the next member's local
    header; None when every member has bytes of its own. Raises zipfile.BadZipFile for a
    member with no local header where the directory says.

    Zip bombs that stay small on disk make many directory entries share the same compressed
    bytes, each member's data quoting the next one's header (CVE-2024-0450); this Python's
    zipfile reads them all without noticing. Each member is laid out as its local header
    (30 bytes, its name and extra field, which may differ from the directory's) followed by
    its compressed data, and in a real zip those extents follow one another without
    overlapping, in the order of their offsets. One read of 30 bytes per member. (A last
    member whose declared size runs past the end of its bytes is damaged rather than a bomb:
    reading it fails, and the checks of sizes name it better.)
    """
    infos = sorted(zf.infolist(), key=lambda info: info.header_offset)
    previous_end = 0
    for index, info in enumerate(infos):
        start = info.header_offset
        if start < previous_end:
            return infos[index - 1]
        fp.seek(start)
        header = fp.read(_LOCAL_HEADER_SIZE)
        if len(header) < _LOCAL_HEADER_SIZE or header[:4] != _LOCAL_HEADER:
            raise zipfile.BadZipFile(f"{info.filename} has no local header where it should")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        previous_end = start + _LOCAL_HEADER_SIZE + name_length + extra_length + info.compress_size
    return None


# General purpose flag bit 11: the member's name is UTF-8. Without it the name is, by the
# specification, code page 437.
_UTF8_NAME_FLAG = 0x800


def open_archive(source: ZipSource) -> zipfile.ZipFile:
    """A ZipFile whose member names are what the person who zipped them saw.

    Info-ZIP's `zip` (Linux and older macOS) writes UTF-8 names without setting the UTF-8
    flag, so zipfile decodes `données.csv` as cp437 mojibake and the path a task names
    would not match. A name that re-encodes to valid UTF-8 is taken as UTF-8; real cp437
    names (bytes over 0x7F) almost never form valid UTF-8 sequences. Look members up with
    `find_member`, which knows the corrected names. Raises what zipfile raises.
    """
    zf = zipfile.ZipFile(source)
    for info in zf.infolist():
        if info.flag_bits & _UTF8_NAME_FLAG or info.filename.isascii():
            continue
        try:
            info.filename = info.orig_filename.encode("cp437").decode("utf-8")
        except UnicodeError:
            continue
    return zf


def find_member(zf: zipfile.ZipFile, name: str) -> zipfile.ZipInfo | None:
    """The member called `name` (as `open_archive` names it), or None."""
    for info in zf.infolist():
        if info.filename == name:
            return info
    return None


def unsafe_path_reason(name: str) -> str | None:
    """Why a member name could write outside the folder it is unpacked into, or None.

    We never unpack to disk, but a name like `../x` or `C:\\x` is only ever made to attack
    tools that do, and a path a task names must mean one thing on every system.
    """
    if not name or "\x00" in name:
        return "an empty name"
    if "\\" in name:
        return "a backslash"
    if name.startswith("/"):
        return "an absolute path"
    if len(name) >= 2 and name[1] == ":" and name[0].isalpha():
        return "a drive letter"
    if ".." in name.split("/"):
        return "a '..' step out of its folder"
    return None


def is_symlink(info: zipfile.ZipInfo) -> bool:
    """Whether the member is a Unix symbolic link (its mode is in the high 16 bits)."""
    return stat.S_ISLNK(info.external_attr >> 16)


def iter_chunks(zf: zipfile.ZipFile, info: zipfile.ZipInfo, *, max_bytes: int) -> Iterator[bytes]:
    """The member's bytes in chunks, raising ArchiveError once more than `max_bytes` came out.

    zipfile already stops at the size the central directory declares, and a member that
    inflates to more fails its CRC; counting here too means the limit holds without relying
    on either, and it is the one place that says how many bytes a member really has.
    """
    seen = 0
    with zf.open(info) as member:
        while chunk := member.read(CHUNK_BYTES):
            seen += len(chunk)
            if seen > max_bytes:
                raise MemberTooLarge(f"{info.filename} is larger than {file_size(max_bytes)}")
            yield chunk


class VerifiedMember(io.RawIOBase):
    """A read-only stream over one member that refuses to hand out more than `max_bytes`,
    turns zipfile's errors into ArchiveError and, when given the size and SHA-256 a check
    measured, raises ArchiveError at the end if the bytes turned out different."""

    def __init__(
        self,
        member: IO[bytes],
        name: str,
        *,
        max_bytes: int,
        size: int | None = None,
        sha256: str | None = None,
    ) -> None:
        self._member = member
        self._name = name
        self._max_bytes = max_bytes
        self._seen = 0
        self._size = size
        self._sha256 = sha256
        self._digest = hashlib.sha256() if sha256 is not None else None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        # One byte more than the cap allows is enough to tell "at the cap" from "over it".
        want = min(len(buffer), self._max_bytes - self._seen + 1)
        try:
            data = self._member.read(want)
        except READ_ERRORS as exc:
            raise ArchiveError(f"{self._name} could not be read: {exc}") from exc
        self._seen += len(data)
        if self._seen > self._max_bytes:
            raise MemberTooLarge(f"{self._name} is larger than {file_size(self._max_bytes)}")
        if self._digest is not None:
            self._digest.update(data)
        if not data:
            self._verify()
        buffer[: len(data)] = data
        return len(data)

    def _verify(self) -> None:
        if self._size is not None and self._seen != self._size:
            raise ArchiveError(f"{self._name} has {self._seen} bytes, not {self._size}")
        if self._digest is not None and self._digest.hexdigest() != self._sha256:
            raise ArchiveError(f"{self._name} is not the file that was checked")

    def close(self) -> None:
        if not self.closed:
            self._member.close()
        super().close()


def open_member(source: ZipSource, member_name: str, *, max_bytes: int) -> IO[bytes]:
    """A streaming, read-only file object for one member of a (checked) zip.

    `source` is a path or a seekable binary file; the zip's central directory is read again
    but no member other than this one. Reading past `max_bytes`, a damaged member or a
    member that is missing raises ArchiveError. Close the stream when done (use `with`); a
    path's file handle closes with it.
    """
    try:
        zf = open_archive(source)
    except READ_ERRORS as exc:
        raise ArchiveError(f"the zip could not be opened: {exc}") from exc
    # zipfile keeps the underlying file open while a member stream is open, so closing the
    # ZipFile here only drops our reference; the stream closes the file when it is closed.
    with zf:
        info = find_member(zf, member_name)
        if info is None:
            raise ArchiveError(f"the zip has no member {member_name!r}")
        try:
            member = zf.open(info)
        except OPEN_ERRORS as exc:
            raise ArchiveError(f"{member_name} could not be opened: {exc}") from exc
    return io.BufferedReader(VerifiedMember(member, member_name, max_bytes=max_bytes), CHUNK_BYTES)
