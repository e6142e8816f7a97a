"""The way in: a dataset file's bytes and name in, a `CheckResult` (plan or problems) out.

`check_file` picks the reader from the extension, makes sure the content is what the
extension says, and runs the shared validator. `preview` and `result_to_json` are what the
import dialog and `check_dataset_file` show. Nothing here raises for anything a file holds.
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

from datasets_app.importing import evalset_format, shapes, zip_format
from datasets_app.importing.csv_format import looks_like_utf16
from datasets_app.importing.document import check_parsed
from datasets_app.importing.formats import READERS, WHOLE_CHECKS
from datasets_app.importing.spec import (
    MAX_FILE_BYTES,
    CheckOptions,
    CheckResult,
    Parsed,
    Problem,
    Read,
    Rule,
    TaskPreview,
    file_size,
)

UNSUPPORTED_EXTENSION = Rule(
    "unsupported_extension",
    "{extension} files cannot be imported. Choose a .json, .jsonl, .csv, .tsv, .xlsx or .zip file.",
)
EMPTY_FILE = Rule("empty_file", "The file is empty.")
FILE_TOO_BIG = Rule(
    "file_too_big",
    "The file is larger than {limit} MiB. Split it, or put its attachments in a .zip.",
)
WRONG_CONTENT = Rule(
    "wrong_content",
    "The file is named {extension} but holds {actual}. Save it as {extension} or rename it.",
)
BINARY_CONTENT = Rule(
    "binary_content",
    "The file is named {extension} but is not text. Save it as {extension} (UTF-8) and "
    "choose it again.",
)
GIT_LFS_POINTER = Rule(
    "git_lfs_pointer",
    "The file is a Git LFS pointer, not the data itself: the repository keeps the real file "
    "({size}) in Git LFS. Fetch it with git lfs pull (or download it from the repository's "
    "page) and choose it again.",
)
UNREADABLE_FILE = Rule("unreadable_file", "The file could not be read: {detail}.")
# Given by the web app when a check runs past its time limit (the checker itself has none).
CHECK_TOO_SLOW = Rule(
    "check_too_slow",
    "This file took too long to check (more than {seconds:,} seconds), so checking it was "
    "stopped. Split it into smaller files and import each.",
)

# What each extension means: a format of `formats.READERS`, or a .zip of one and its
# attachments. The page lists .csv, .json, .jsonl and .zip (and the import dialog accepts
# .xlsx); a .tsv is what spreadsheets and pandas write as tab-separated values, read like a
# tab-delimited .csv. .txt is not offered.
ZIP = "zip"
FORMATS: dict[str, str] = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".csv": "csv",
    ".tsv": "csv",
    ".xlsx": "xlsx",
    ".zip": ZIP,
}

# Leading bytes of files people pick by mistake, to say what the file really is.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a zip archive (or an Excel or Word file)"),
    (b"PK\x05\x06", "an empty zip archive"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old-style Office document (.xls or .doc)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
)
_TEXT_SNIFF_BYTES = 8192
# What a repository cloned without Git LFS holds in place of each large file (the LFS spec:
# this line, then `oid sha256:…` and `size N`): openai/evals keeps its samples this way.
_LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\n"
_LFS_SIZE = re.compile(rb"^size (\d+)$", re.MULTILINE)


def _read_capped(source: bytes | IO[bytes]) -> bytes:
    # One byte past the cap tells "exactly at the cap" from "over it" without reading more.
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source[: MAX_FILE_BYTES + 1])
    return source.read(MAX_FILE_BYTES + 1)


def _refused(file_name: str, fmt: str | None, problem: Problem, detected: str = "") -> CheckResult:
    return CheckResult(file_name=file_name, format=fmt, detected=detected, problems=(problem,))


def _content_problem(data: bytes, extension: str, file_name: str) -> Problem | None:
    """Whether the bytes are something other than the extension says, and what."""
    if not data.strip():
        return EMPTY_FILE.at(file_name)
    if data.startswith(_LFS_POINTER):
        size = _LFS_SIZE.search(data, 0, 1024)
        shown = file_size(int(size[1])) if size else "its size not given"
        return GIT_LFS_POINTER.at(file_name, line=1, size=shown)
    for signature, actual in _SIGNATURES:
        if data.startswith(signature):
            if extension == ".xlsx" and signature == b"PK\x03\x04":
                return None
            return WRONG_CONTENT.at(file_name, extension=extension, actual=actual)
    if extension == ".xlsx":
        return WRONG_CONTENT.at(file_name, extension=extension, actual="something else")
    head = data[:_TEXT_SNIFF_BYTES]
    # Text has no control bytes besides tab, newline and carriage return (form feed too,
    # rarely). UTF-16/32 files have NUL bytes, so they are let through only with a BOM; a
    # file that starts with the UTF-8 BOM says it is text (our own .csv export does, and
    # carries a prompt's control characters as they are, so it must import back).
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        return None
    control = sum(head.count(bytes([byte])) for byte in (*range(0, 8), *range(14, 27), 127))
    if extension in (".csv", ".tsv") and not looks_like_utf16(head):
        # A spreadsheet column of binary data has NUL bytes in text that is otherwise
        # fine; the CSV reader says which column, and refuses only when it is imported.
        control -= head.count(b"\x00")
    if control > len(head) // 100 + (1 if b"\x00" in head else 0):
        return BINARY_CONTENT.at(file_name, extension=extension)
    return None


def check_file(
    source: bytes | IO[bytes],
    file_name: str,
    *,
    options: CheckOptions | None = None,
    progress: Callable[[int, int], None] | None = None,
    measured: Mapping[str, tuple[int, str]] | None = None,
) -> CheckResult:
    """Check a dataset file: which format it is, and its plan or every problem in it.

    `source` is the file's bytes or a binary stream (read up to `MAX_FILE_BYTES` + 1, or
    handed to the zip reader as it is). The extension of `file_name` picks the format.
    `progress` and `measured` are the zip reader's (see `zip_format.check`); the other
    formats are read in one go and ignore them.
    """
    options = options or CheckOptions()
    extension = os.path.splitext(file_name)[1].lower()
    fmt = FORMATS.get(extension)
    if fmt is None:
        shown = extension or "Files without an extension"
        return _refused(file_name, None, UNSUPPORTED_EXTENSION.at(file_name, extension=shown))
    if fmt == ZIP:
        stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
        return zip_format.check(
            stream, file_name, options=options, progress=progress, measured=measured
        )
    return _check_unzipped(source, file_name, fmt, extension, options)


def _check_unzipped(
    source: bytes | IO[bytes], file_name: str, fmt: str, extension: str, options: CheckOptions
) -> CheckResult:
    """`check_file` for every format but zip."""
    try:
        data = _read_capped(source)
    except OSError as exc:
        return _refused(file_name, fmt, UNREADABLE_FILE.at(file_name, detail=exc.strerror or exc))
    if len(data) > MAX_FILE_BYTES:
        return _refused(file_name, fmt, FILE_TOO_BIG.at(file_name, limit=MAX_FILE_BYTES >> 20))
    problem = _content_problem(data, extension, file_name)
    if problem is not None:
        return _refused(file_name, fmt, problem)
    # contextgrid eval sets share .jsonl, .json and .csv with dataset files: the content
    # says which one this is (rules in evalset_format's docstring), before the format's
    # own reader sees it.
    evalset_kind = evalset_format.detect(data, fmt)
    whole = WHOLE_CHECKS.get(fmt)
    if evalset_kind is None and whole is not None:
        return whole(data, file_name, options=options)
    # The importer's stages (spec.py): read, shape, validate.
    read = _read(data, file_name, fmt, evalset_kind, options)
    parsed = shapes.shape(read, options=options)
    return check_parsed(parsed, options=options)


def _read(
    data: bytes, file_name: str, fmt: str, evalset_kind: str | None, options: CheckOptions
) -> Read:
    """The read stage: the format's reader, or the eval set's (`evalset_format.detect`)."""
    if evalset_kind is not None:
        return evalset_format.read(data, file_name, evalset_kind, options.encoding)
    return READERS[fmt](data, file_name, options)


def preview(result: CheckResult) -> list[TaskPreview]:
    """Each task of a checked file as the preview shows it (empty when it has problems)."""
    if result.plan is None:
        return []
    shared = result.plan.criteria
    shared_weight = math.fsum(criterion.weight for criterion in shared)
    previews = []
    for task in result.plan.tasks:
        count = len(task.criteria) + len(shared)
        previews.append(
            TaskPreview(
                id=task.id,
                name=task.name,
                scored_by="criteria" if count else "expected_answer",
                criteria=count,
                total_weight=math.fsum(c.weight for c in task.criteria) + shared_weight,
            )
        )
    return previews


def result_to_json(result: CheckResult) -> dict[str, Any]:
    """The check as `check_dataset_file --json` prints it."""
    return {
        "ok": result.ok,
        "format": result.format,
        "task_count": result.task_count,
        "detected": result.detected,
        "problems": [problem.to_json() for problem in result.problems],
        "warnings": [warning.to_json() for warning in result.warnings],
        "mapping": result.mapping.to_json() if result.mapping is not None else None,
        "tasks": [task.to_json() for task in preview(result)],
    }


def locate_tasks(
    source: bytes | IO[bytes],
    file_name: str,
    indexes: Iterable[int],
    options: CheckOptions | None = None,
) -> dict[int, tuple[str, int | None, int | None]]:
    """Where tasks of a checked file stand, by position: (file, row, line), the file being
    the dataset file inside a zip.

    For problems found outside the checker, such as ids the dataset already has. It reads
    the file again, but looks up only the tasks asked for; a file it cannot place (a BEIR
    zip, say) gives no places.
    """
    options = options or CheckOptions()
    extension = os.path.splitext(file_name)[1].lower()
    fmt = FORMATS.get(extension)
    parsed: Parsed | None = None
    if fmt == ZIP:
        parsed = zip_format.read_dataset_file(source, options)
    elif fmt is not None:
        data = _read_capped(source)
        read = _read(data, file_name, fmt, evalset_format.detect(data, fmt), options)
        parsed = shapes.shape(read, options=options)
    if parsed is None or parsed.document is None:
        return {}
    paths = [("tasks", index) for index in indexes]
    many = getattr(parsed.locate, "many", None)
    places = many(paths) if many else {path: parsed.locate(path) for path in paths}
    return {path[1]: (parsed.file_name, *places[path]) for path in paths}
