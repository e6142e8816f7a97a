"""Hostile and damaged .zip uploads: each ends in problems, quickly and in little memory,
never in an exception. The archives are built here with zipfile and, where zipfile refuses
to write something (encryption, lying sizes, odd methods), patched byte by byte.
"""

from __future__ import annotations

import io
import json
import stat
import struct
import tracemalloc
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasets_app.importing import archive, document, zip_format
from datasets_app.importing.archive import ArchiveError
from datasets_app.importing.spec import CheckOptions, CheckResult

OPTIONS = CheckOptions()
MiB = 1024 * 1024


def make_zip(
    members: dict[str, bytes] | list[tuple[str, bytes]], compression: int = zipfile.ZIP_DEFLATED
) -> bytes:
    out = io.BytesIO()
    items = members.items() if isinstance(members, dict) else members
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate names we want
        with zipfile.ZipFile(out, "w", compression=compression) as zf:
            for name, data in items:
                zf.writestr(name, data)
    return out.getvalue()


def dataset_json(*attached: str) -> bytes:
    task = {
        "id": "a",
        "prompt": "Read the files.",
        "expected": "Done.",
        "inputFiles": list(attached),
    }
    return json.dumps({"tasks": [task]}).encode()


def check(data: bytes, name: str = "upload.zip") -> CheckResult:
    # How long hostile archives take to check is bench_hostile_files' figure, not a test's.
    return zip_format.check(data, name, options=OPTIONS)


def codes(result: CheckResult) -> set[str]:
    return {problem.code for problem in result.problems}


# Where each field sits in a central directory entry and in the member's local header
# (APPNOTE.TXT 4.3.7 and 4.3.12); the external attributes exist only in the directory.
_FIELDS = {
    "flag_bits": (8, 6, "<H"),
    "compress_type": (10, 8, "<H"),
    "CRC": (16, 14, "<L"),
    "compress_size": (20, 18, "<L"),
    "file_size": (24, 22, "<L"),
    "external_attr": (38, None, "<L"),
}


def _directory(data: bytes) -> Iterator[tuple[int, int, str]]:
    """(directory entry offset, local header offset, name) of each member."""
    end = data.rfind(b"PK\x05\x06")
    count, _size, offset = struct.unpack("<HLL", data[end + 10 : end + 20])
    at = offset
    for _ in range(count):
        name_len, extra_len, comment_len = struct.unpack("<HHH", data[at + 28 : at + 34])
        (local,) = struct.unpack("<L", data[at + 42 : at + 46])
        yield at, local, data[at + 46 : at + 46 + name_len].decode()
        at += 46 + name_len + extra_len + comment_len


def patch(data: bytes, name: str, **values: int) -> bytes:
    """`data` with the named member's header fields set to `values` (zipfile won't write
    encrypted, lying or oddly compressed members, so we edit a good archive's bytes)."""
    patched = bytearray(data)
    for entry, local, member in _directory(data):
        if member != name:
            continue
        for field, value in values.items():
            in_directory, in_local, fmt = _FIELDS[field]
            struct.pack_into(fmt, patched, entry + in_directory, value)
            if in_local is not None:
                struct.pack_into(fmt, patched, local + in_local, value)
    return bytes(patched)


def deflated_zeros(size: int) -> bytes:
    """A zip whose one member `zeros.bin` is `size` zero bytes, deflated ~1000:1."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("dataset.json", dataset_json("zeros.bin"))
        with zf.open("zeros.bin", "w", force_zip64=True) as member:
            chunk = bytes(MiB)
            for _ in range(size // MiB):
                member.write(chunk)
    return out.getvalue()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return deflated_zeros(200 * MiB)


def test_a_zip_bomb_is_refused_by_the_member_limit(bomb: bytes) -> None:
    # A 200 MiB member is over the 10 MiB an attached file may have: the task's file is
    # refused by its size, and nothing past the limit is ever inflated (a member whose
    # header lies is stopped while streaming, below), in a few MiB of memory.
    assert len(bomb) < 1 * MiB

    tracemalloc.start()
    try:
        result = check(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert codes(result) == {document.FILE_TOO_LARGE.code}
    assert "zeros.bin" in result.problems[0].message
    assert peak < 4 * MiB


def repetitive_log(size: int) -> bytes:
    line = b"2025-11-14T09:30:00Z INFO worker-3 job=export status=ok rows=1000 took=12ms\n"
    return (line * (size // len(line) + 1))[:size]


def test_an_ordinary_10_mib_member_of_repetitive_text_is_accepted() -> None:
    # The defect: log lines (or a CSV of similar rows) compress over 100:1, and a ratio
    # check refused them as "would expand 1,027 times" although 10 MiB is within the limit.
    log = repetitive_log(10 * MiB)
    data = make_zip({"dataset.json": dataset_json("server.log"), "server.log": log})
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo("server.log")
        assert info.file_size // info.compress_size > 100

    result = check(data)

    assert result.ok, result.problems
    (attached,) = result.plan.tasks[0].input_files
    assert attached.size == 10 * MiB


def test_one_byte_over_the_member_limit_is_refused_by_what_comes_out() -> None:
    data = make_zip(
        {"dataset.json": dataset_json("server.log"), "server.log": repetitive_log(10 * MiB + 1)}
    )
    assert codes(check(data)) == {document.FILE_TOO_LARGE.code}


def test_a_member_whose_header_understates_its_size_is_caught_while_streaming() -> None:
    # 20 MiB of zeros whose directory says 1,000 bytes: small enough to pass every check on
    # the directory (1,000 bytes, no ratio to speak of), so only what comes out can tell.
    honest = deflated_zeros(20 * MiB)
    lying = patch(honest, "zeros.bin", file_size=1000)

    result = check(lying)

    assert codes(result) == {zip_format.MEMBER_CORRUPT.code}
    assert result.problems[0].file == "zeros.bin"
    assert result.plan is None


def test_the_streaming_count_holds_whatever_the_header_says() -> None:
    data = make_zip({"a.bin": bytes(2 * MiB)})
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo("a.bin")

        with pytest.raises(ArchiveError):
            for _chunk in archive.iter_chunks(zf, info, max_bytes=MiB):
                pass


def test_an_archive_declaring_more_than_2_gib_in_all_is_refused() -> None:
    data = make_zip(
        {"dataset.json": dataset_json(), "a": b"", "b": b"", "c": b""},
        compression=zipfile.ZIP_STORED,
    )
    for name in ("a", "b", "c"):
        # Stored, so the ratio is 1:1 and only the total gives them away.
        data = patch(data, name, file_size=1024 * MiB, compress_size=1024 * MiB)

    result = check(data)

    assert codes(result) == {zip_format.TOO_LARGE_UNZIPPED.code}
    assert result.problems[0].file == "upload.zip"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil.txt", "a '..' step out of its folder"),
        ("files/../../evil.txt", "a '..' step out of its folder"),
        ("/etc/passwd", "an absolute path"),
        ("files\\evil.txt", "a backslash"),
        ("C:/Windows/evil.txt", "a drive letter"),
    ],
)
def test_names_that_escape_the_folder_are_refused(name: str, reason: str) -> None:
    data = make_zip({"dataset.json": dataset_json(), name: b"x"})

    result = check(data)

    assert [(p.code, p.file) for p in result.problems] == [(zip_format.UNSAFE_PATH.code, name)]
    assert result.problems[0].message == zip_format.UNSAFE_PATH.format(reason=reason)


def test_a_symbolic_link_member_is_refused() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("dataset.json", dataset_json("secret"))
        link = zipfile.ZipInfo("secret")
        link.create_system = 3  # Unix
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")

    result = check(out.getvalue())

    assert [(p.code, p.file) for p in result.problems] == [(zip_format.SYMLINK.code, "secret")]


def test_duplicate_member_names_are_refused() -> None:
    data = make_zip([("dataset.json", dataset_json("a.txt")), ("a.txt", b"1"), ("a.txt", b"2")])

    result = check(data)

    assert [(p.code, p.file) for p in result.problems] == [
        (zip_format.DUPLICATE_MEMBER.code, "a.txt")
    ]
    assert result.problems[0].message == zip_format.DUPLICATE_MEMBER.format(count=2)


def test_a_password_protected_member_is_refused() -> None:
    data = patch(
        make_zip({"dataset.json": dataset_json(), "a.txt": b"secret"}), "a.txt", flag_bits=0x1
    )

    result = check(data)

    assert [(p.code, p.file) for p in result.problems] == [(zip_format.ENCRYPTED.code, "a.txt")]
    assert result.problems[0].message == zip_format.ENCRYPTED.format()


def test_a_compression_method_zipfile_cannot_read_is_refused() -> None:
    data = patch(make_zip({"dataset.json": dataset_json()}), "dataset.json", compress_type=9)

    result = check(data)

    assert result.problems[0].code == zip_format.UNSUPPORTED_COMPRESSION.code
    assert result.problems[0].message == zip_format.UNSUPPORTED_COMPRESSION.format(method=9)


def test_too_many_members_are_refused_before_the_directory_is_read() -> None:
    data = make_zip({"dataset.json": dataset_json()})
    end = data.rfind(b"PK\x05\x06")
    lying = bytearray(data)
    struct.pack_into("<HH", lying, end + 8, 30_000, 30_000)

    result = check(bytes(lying))

    assert [p.code for p in result.problems] == [zip_format.TOO_MANY_MEMBERS.code]
    assert result.problems[0].message == zip_format.TOO_MANY_MEMBERS.format(
        limit=archive.MAX_MEMBERS
    )


def test_too_many_real_members_are_refused() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for n in range(archive.MAX_MEMBERS + 1):
            zf.writestr(zipfile.ZipInfo(f"{n}"), b"")

    result = check(out.getvalue())

    assert [p.code for p in result.problems] == [zip_format.TOO_MANY_MEMBERS.code]


@pytest.mark.parametrize(
    "data",
    [b"", b"PK", b"hello, this is not a zip at all" * 100, b"PK\x03\x04" + bytes(100)],
    ids=["empty", "two bytes", "text", "local header only"],
)
def test_junk_named_zip_is_not_a_zip(data: bytes) -> None:
    result = check(data, "x.zip")

    assert [(p.code, p.file) for p in result.problems] == [(zip_format.NOT_A_ZIP.code, "x.zip")]
    assert result.problems[0].message == zip_format.NOT_A_ZIP.format()


def test_a_truncated_zip_is_refused() -> None:
    data = make_zip({"dataset.json": dataset_json("a.txt"), "a.txt": b"x" * 1000})

    result = check(data[: len(data) // 2])

    assert codes(result) == {zip_format.NOT_A_ZIP.code}


def test_a_zip_whose_member_data_is_damaged_is_refused() -> None:
    payload = bytes(range(256)) * 64
    data = bytearray(make_zip({"dataset.json": dataset_json("a.bin"), "a.bin": payload}))
    for _entry, local, name in list(_directory(bytes(data))):
        if name == "a.bin":
            data[local + 30 + len(name) + 10] ^= 0xFF  # a byte of the deflated stream

    result = check(bytes(data))

    assert codes(result) == {zip_format.MEMBER_CORRUPT.code}
    assert result.problems[0].file == "a.bin"


def test_a_damaged_directory_is_refused() -> None:
    data = bytearray(make_zip({"dataset.json": dataset_json()}))
    entry, _local, _name = next(_directory(bytes(data)))
    data[entry : entry + 4] = b"XXXX"

    result = check(bytes(data))

    assert codes(result) == {zip_format.CORRUPT.code}


def test_an_unseekable_upload_stream_is_checked_like_bytes() -> None:
    data = make_zip({"dataset.json": dataset_json()})

    class Pipe(io.RawIOBase):
        def __init__(self) -> None:
            self._data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            chunk = self._data.read(len(buffer))
            buffer[: len(chunk)] = chunk
            return len(chunk)

    result = zip_format.check(Pipe(), "upload.zip", options=OPTIONS)

    assert result.ok, result.problems


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048))
def test_random_bytes_named_zip_end_in_problems(data: bytes) -> None:
    result = zip_format.check(data, "x.zip", options=OPTIONS)

    assert result.problems
    assert result.plan is None


_VALID = make_zip(
    {
        "dataset.json": dataset_json("files/a.txt", "files/b.bin"),
        "files/a.txt": b"hello " * 50,
        "files/b.bin": bytes(range(256)) * 4,
    }
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, len(_VALID) - 1), st.integers(0, 255)), min_size=1, max_size=8
    )
)
def test_a_damaged_real_zip_never_raises(edits: list[tuple[int, int]]) -> None:
    data = bytearray(_VALID)
    for at, value in edits:
        data[at] = value

    result = zip_format.check(bytes(data), "x.zip", options=OPTIONS)

    assert result.ok or result.problems


def test_utf8_names_zipped_without_the_utf8_flag_still_match_the_paths_tasks_name(
    tmp_path: Any,
) -> None:
    # What Info-ZIP's `zip` writes on Linux: UTF-8 bytes, flag bit 11 clear.
    name = "données/résumé.md"
    data = make_zip({"dataset.json": dataset_json(name), name: b"# R\xc3\xa9sum\xc3\xa9"})
    data = patch(data, name, flag_bits=0)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert name not in zf.namelist()  # zipfile alone reads the name as cp437

    result = check(data)

    assert result.ok, result.problems
    assert result.plan.tasks[0].input_files[0].path == name
    upload = tmp_path / "upload.zip"
    upload.write_bytes(data)
    with zip_format.open_member(str(upload), name) as stream:
        assert stream.read() == b"# R\xc3\xa9sum\xc3\xa9"
    assert [spec.path for spec, _ in zip_format.iter_attachments(upload, result.plan)] == [name]


def test_a_dataset_file_declared_over_50_mib_is_not_read() -> None:
    data = make_zip({"dataset.json": dataset_json()}, compression=zipfile.ZIP_STORED)
    data = patch(data, "dataset.json", file_size=60 * MiB, compress_size=60 * MiB)

    result = check(data)

    assert [(p.code, p.file) for p in result.problems] == [
        (zip_format.DATASET_FILE_TOO_LARGE.code, "dataset.json")
    ]
    assert result.problems[0].message == zip_format.DATASET_FILE_TOO_LARGE.format(
        size="60 MiB", limit="50 MiB"
    )


def overlapping_zip(inner: bytes = b"x,y\n1,2\n") -> bytes:
    """A zip whose first member's stored data is the whole of the second member, local
    header included: both read back fine, from the same bytes (CVE-2024-0450's trick, which
    bombs repeat thousands of times over one deflated kernel)."""
    when = (2024, 1, 1, 0, 0, 0)
    second = zipfile.ZipInfo("files/b.csv", date_time=when)
    second.compress_type = zipfile.ZIP_STORED
    second.file_size = second.compress_size = len(inner)
    second.CRC = zlib.crc32(inner)
    second_bytes = second.FileHeader() + inner
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("dataset.json", dataset_json("files/a.bin", "files/b.csv"))
        first = zipfile.ZipInfo("files/a.bin", date_time=when)
        zf.writestr(first, second_bytes)
        # The second member's entry points inside the first member's data.
        second.header_offset = zf.getinfo("files/a.bin").header_offset + len(first.FileHeader())
        zf.filelist.append(second)
        zf.NameToInfo[second.filename] = second
    return out.getvalue()


def test_overlapping_entries_are_refused_before_anything_is_inflated():
    data = overlapping_zip()
    # This Python's zipfile reads both members without complaint: the check must notice.
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.read("files/b.csv") == b"x,y\n1,2\n"
        assert zf.read("files/a.bin").endswith(b"x,y\n1,2\n")

    result = check(data)

    assert [(p.code, p.file) for p in result.problems] == [
        (zip_format.OVERLAPPING_MEMBERS.code, "files/a.bin")
    ]
    assert result.plan is None


def test_members_that_follow_one_another_do_not_overlap():
    data = make_zip({"dataset.json": dataset_json("a.csv"), "a.csv": b"x\n1\n", "b/": b""})

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert archive.overlapping_member(zf.fp, zf) is None
