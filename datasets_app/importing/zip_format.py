"""The .zip dataset file: one .csv, .json, .jsonl or .xlsx dataset file plus the files its
tasks attach, checked without unpacking it (`check`), written for export (`write`), and
the "Files in and out" template (`files_in_and_out_template`).

Paths a task names resolve from the dataset file's folder first, then from the zip's root:
with `my-set/dataset.json`, both `inputs/a.csv` and `my-set/inputs/a.csv` mean the member
`my-set/inputs/a.csv`. In the checked plan every FileSpec.path is the member's full name in
the zip, with the size and SHA-256 measured while streaming it, so that the web app can
store it with `iter_attachments` (or `open_member`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import posixpath
import re
import shutil
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Literal

from datasets_app.importing import archive, evalset_format, shapes
from datasets_app.importing.archive import ArchiveError
from datasets_app.importing.columns import spreadsheet_warnings
from datasets_app.importing.document import check_parsed, validate_document
from datasets_app.importing.formats import READERS, WRITERS
from datasets_app.importing.spec import (
    MAX_ATTACHED_FILE_BYTES,
    MAX_FILE_BYTES,
    CheckOptions,
    CheckResult,
    CriterionSpec,
    DatasetSpec,
    FileSpec,
    MappedTasks,
    Parsed,
    Problem,
    Rule,
    TaskSpec,
    Verifier,
    counted,
    field_path,
    file_size,
)

__all__ = [
    "ArchiveError",
    "check",
    "files_in_and_out_template",
    "iter_attachments",
    "open_member",
    "write",
]

# The dataset file kinds a zip may carry, and what the preview calls them.
DATASET_SUFFIXES: dict[str, str] = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".xlsx": "xlsx",
}
# When a zip holds several candidates (say dataset.json next to an input file revenue.csv),
# the one named like this is the dataset file and the others are attachments.
PREFERRED_STEM = "dataset"
# What macOS Finder, Windows Explorer and desktop tools add to a zip on their own; never a
# dataset file and never worth a warning.
_JUNK_FOLDERS = frozenset({"__MACOSX"})
_JUNK_NAMES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
# Past this many unused files, one warning counts the rest instead of naming each.
MAX_UNUSED_WARNINGS = 20

# What a person reads, each with its stable code for programs.
NOT_A_ZIP = Rule(
    "zip_not_a_zip",
    "This file is not a zip archive, or it was cut short while copying. Zip the dataset "
    "folder again and choose the new file.",
)
CORRUPT = Rule(
    "zip_corrupt",
    "The zip is damaged and cannot be read ({detail}). Zip the dataset again.",
)
TOO_MANY_MEMBERS = Rule(
    "zip_too_many_members",
    "The zip holds more than {limit:,} entries, more than any dataset can attach "
    "(1,000 tasks with up to 20 files each).",
)
UNSAFE_PATH = Rule(
    "zip_unsafe_path",
    "This name has {reason}, so unzipping it could write outside the dataset's folder. "
    "Zip the dataset again from its own folder.",
)
SYMLINK = Rule(
    "zip_symlink",
    "This entry is a symbolic link, not a file. Put the file itself in the zip.",
)
DUPLICATE_MEMBER = Rule(
    "zip_duplicate_member",
    "The zip holds {count} entries with this name; keep one.",
)
OVERLAPPING_MEMBERS = Rule(
    "zip_overlapping_members",
    "This entry's data overlaps another entry of the zip, which only zip bombs do (they "
    "make a small zip unpack to gigabytes), so the zip is refused. Zip the dataset again.",
)
ENCRYPTED = Rule(
    "zip_encrypted",
    "This file is password-protected, so it cannot be read. Zip the dataset again without "
    "a password.",
)
UNSUPPORTED_COMPRESSION = Rule(
    "zip_unsupported_compression",
    "This file is compressed in a way we can't read (method {method}). Zip the dataset "
    "again with your computer's built-in zip tool.",
)
TOO_LARGE_UNZIPPED = Rule(
    "zip_too_large_unzipped",
    "The zip expands to more than {limit} when unzipped. Split the dataset into several imports.",
)
NO_DATASET_FILE = Rule(
    "zip_no_dataset_file",
    "The zip has no dataset file: put one .csv, .json, .jsonl or .xlsx file at its top "
    "level, next to the files its tasks attach. It holds: {found}.",
)
SEVERAL_DATASET_FILES = Rule(
    "zip_several_dataset_files",
    "The zip has {count} dataset files at its top level ({found}). Keep one, or name the "
    "one to import dataset.json (or dataset.csv) and the others are attached files.",
)
DATASET_FILE_TOO_LARGE = Rule(
    "zip_dataset_file_too_large",
    "The dataset file is {size} unzipped; the limit is {limit}.",
)
MEMBER_TOO_LARGE = Rule(
    "zip_member_too_large",
    "This file is more than {limit} once unzipped, the most a task's attached file can be.",
)
MEMBER_CORRUPT = Rule(
    "zip_member_corrupt",
    "This file in the zip is damaged and cannot be read ({detail}).",
)
UNUSED_MEMBER = Rule("zip_unused_member", "No task uses this file, so it will not be imported.")
NESTED_ZIP = Rule(
    "zip_no_dataset_file",
    "The zip has no dataset file, only another zip ({found}). Zips inside a zip are not "
    "opened: put the dataset file and its files in one zip.",
)
MORE_UNUSED = Rule(
    "zip_unused_member",
    "{count:,} more files in the zip are not used by any task either.",
)


# Called as (tasks done, tasks in all) while a check streams the attached files.
Progress = Callable[[int, int], None]
# {member name: (size, sha256)} measured by an earlier check of the very same bytes.
Measured = Mapping[str, tuple[int, str]]


def check(
    source: IO[bytes] | bytes,
    file_name: str,
    *,
    options: CheckOptions,
    progress: Progress | None = None,
    measured: Measured | None = None,
) -> CheckResult:
    """Check an uploaded dataset .zip and plan its import; bad input becomes Problems.

    Reads the zip's directory, refuses hostile archives (bombs, paths out of the folder,
    links, duplicates, encryption, odd compression) before inflating anything, reads the
    dataset file (at most 50 MiB) with its format's reader, checks it with the shared
    validator against the zip's members, then streams each attached member once (at most
    10 MiB each, 2 GiB in all, counted as they come out) for its size and SHA-256. Files no
    task uses are warnings. Nothing is ever unpacked to disk.

    `progress`, if given, hears how many tasks have all their files read so far.
    `measured` lets a caller that has proven the bytes unchanged (by the whole file's
    SHA-256) skip streaming those members again; whoever stores them still verifies each one.
    """
    fp = _seekable(source)
    try:
        extent = archive.directory_extent(fp)
    except archive.READ_ERRORS:
        extent = None
    if extent is None:
        return _refused(file_name, NOT_A_ZIP.at(file_name))
    entries, directory_bytes = extent
    if entries > archive.MAX_MEMBERS or directory_bytes > archive.MAX_CENTRAL_DIRECTORY_BYTES:
        problem = TOO_MANY_MEMBERS.at(file_name, limit=archive.MAX_MEMBERS)
        return _refused(file_name, problem)
    try:
        zf = archive.open_archive(fp)
    except archive.READ_ERRORS as exc:
        return _refused(file_name, CORRUPT.at(file_name, detail=_detail(exc)))
    with zf:
        return _check_archive(zf, file_name, options, progress, measured)


def _check_archive(
    zf: zipfile.ZipFile,
    zip_name: str,
    options: CheckOptions,
    progress: Progress | None = None,
    measured: Measured | None = None,
) -> CheckResult:
    """Check an opened zip: refused whole if hostile, else its BEIR pair or its dataset file."""
    infos = zf.infolist()
    problems = archive_problems(infos, zip_name)
    if not problems:
        problems = overlap_problems(zf, zip_name)
    if problems:
        # Nothing is inflated from an archive that is hostile or unreadable as a whole.
        return _refused(zip_name, *problems)

    files = [info for info in infos if not info.is_dir() and not is_junk(info.filename)]
    names = [info.filename for info in files]
    folder = _dataset_folder(names)
    # A BEIR benchmark zipped as published (queries.jsonl beside qrels/test.tsv) has no
    # dataset file: it is a contextgrid eval set (rule in find_beir_members).
    beir = evalset_format.find_beir_members(names, folder)
    if beir is not None:
        return _check_beir(zf, zip_name, beir, options)
    dataset_info, problem = _find_dataset_file(files, folder, zip_name)
    if dataset_info is None:
        assert problem is not None
        return _refused(
            zip_name, problem, detected=f"ZIP archive with {counted(len(files), 'file')}"
        )

    data, problem = _read_dataset_file(zf, dataset_info)
    if data is None:
        assert problem is not None
        return _refused(zip_name, problem)
    return _check_dataset_file(
        zf,
        zip_name,
        data,
        dataset_info.filename,
        files=files,
        folder=folder,
        options=options,
        progress=progress,
        measured=measured,
    )


def _check_dataset_file(
    zf: zipfile.ZipFile,
    zip_name: str,
    data: bytes,
    dataset_name: str,
    *,
    files: list[zipfile.ZipInfo],
    folder: str,
    options: CheckOptions,
    progress: Progress | None,
    measured: Measured | None,
) -> CheckResult:
    """The zip's dataset file read and checked, with the members its tasks attach."""
    parsed = _read_dataset(data, dataset_name, options)
    problems = list(parsed.problems)
    warnings = list(parsed.warnings)
    detected = f"ZIP archive with {posixpath.basename(dataset_name)} ({parsed.detected})"
    if parsed.document is None:
        return CheckResult(
            zip_name, "zip", detected, tuple(problems), tuple(warnings), mapping=parsed.mapping
        )

    by_key = _members_by_task_path(files, folder, dataset_name)
    spec, found, cautions = validate_document(
        parsed.document,
        file_name=dataset_name,
        locate=parsed.locate,
        options=options,
        zip_members={key: info.file_size for key, info in by_key.items()},
        field_label=parsed.field_label or field_path,
        only_known_keys=parsed.only_known_keys,
    )
    problems.extend(found)
    warnings.extend(cautions)
    if spec is None:
        return CheckResult(
            zip_name,
            "zip",
            detected,
            tuple(problems),
            tuple(warnings),
            notes=tuple(parsed.notes),
            mapping=parsed.mapping,
        )

    used = _used_members(spec, by_key)
    sizes, streaming_problems = _stream_members(
        zf, used, known=measured or {}, on_member=_task_progress(spec, by_key, progress)
    )
    problems.extend(streaming_problems)
    spec = _with_members(spec, by_key, sizes)
    warnings.extend(_unused_warnings(files, dataset_name, used))
    detected += f" and {counted(len(used), 'attached file')}"
    return CheckResult(
        zip_name,
        "zip",
        detected,
        tuple(problems),
        tuple(warnings),
        plan=None if problems else spec,
        notes=tuple(parsed.notes),
        mapping=parsed.mapping,
    )


def _check_beir(
    zf: zipfile.ZipFile, zip_name: str, beir: evalset_format.BeirMembers, options: CheckOptions
) -> CheckResult:
    """Read the BEIR pair (each member bounded like a dataset file) and check it."""
    if beir.qrels is None:
        return _refused(zip_name, evalset_format.several_qrels_problem(beir, zip_name))
    texts = []
    for name in (beir.queries, beir.qrels):
        data, problem = _read_dataset_file(zf, zf.getinfo(name))
        if data is None:
            assert problem is not None
            return _refused(zip_name, problem)
        texts.append(data)
    read = evalset_format.read_beir(
        texts[0], beir.queries, texts[1], beir.qrels, not_read=beir.not_read
    )
    parsed = shapes.shape(read, options=options)
    result = check_parsed(parsed, options=options)
    return dataclasses.replace(
        result, file_name=zip_name, format="zip", detected=f"ZIP archive with {parsed.detected}"
    )


def archive_problems(infos: list[zipfile.ZipInfo], zip_name: str) -> list[Problem]:
    """Everything wrong with the archive that its directory alone shows."""
    if len(infos) > archive.MAX_MEMBERS:
        # The end record undercounted; the directory's size cap kept this cheap to learn.
        return [TOO_MANY_MEMBERS.at(zip_name, limit=archive.MAX_MEMBERS)]
    problems: list[Problem] = []
    for info in infos:
        name = info.filename
        reason = archive.unsafe_path_reason(name)
        if reason is not None:
            problems.append(UNSAFE_PATH.at(_shown(name, zip_name), reason=reason))
            if not name:
                continue  # nothing more to learn, and ZipInfo.is_dir() fails on ""
        if archive.is_symlink(info):
            problems.append(SYMLINK.at(_shown(name, zip_name)))
        if info.is_dir():
            continue
        if info.flag_bits & archive.ENCRYPTED_FLAGS:
            problems.append(ENCRYPTED.at(_shown(name, zip_name)))
        elif info.compress_type not in archive.SUPPORTED_METHODS:
            problems.append(
                UNSUPPORTED_COMPRESSION.at(_shown(name, zip_name), method=info.compress_type)
            )
    for name, count in Counter(info.filename for info in infos).items():
        if count > 1:
            problems.append(DUPLICATE_MEMBER.at(_shown(name, zip_name), count=count))
    if sum(info.file_size for info in infos) > archive.MAX_TOTAL_UNCOMPRESSED_BYTES:
        problems.append(
            TOO_LARGE_UNZIPPED.at(zip_name, limit=file_size(archive.MAX_TOTAL_UNCOMPRESSED_BYTES))
        )
    return problems


def overlap_problems(zf: zipfile.ZipFile, zip_name: str) -> list[Problem]:
    """An entry whose bytes overlap another's (see `archive.overlapping_member`), as one
    problem: the zip is refused as a whole, and one such entry is enough to show why."""
    assert zf.fp is not None
    try:
        overlapping = archive.overlapping_member(zf.fp, zf)
    except archive.READ_ERRORS as exc:
        return [CORRUPT.at(zip_name, detail=_detail(exc))]
    if overlapping is None:
        return []
    shown = _shown(overlapping.filename, zip_name)
    return [OVERLAPPING_MEMBERS.at(shown)]


def is_junk(name: str) -> bool:
    parts = name.split("/")
    base = parts[-1]
    return (
        any(part in _JUNK_FOLDERS for part in parts[:-1])
        or base in _JUNK_NAMES
        or base.startswith("._")  # macOS resource forks ("AppleDouble" files)
    )


def _dataset_folder(names: list[str]) -> str:
    """The folder the dataset lives in: the zip's root, or the single folder everything
    is in (what zipping a folder on macOS or Windows gives), as a prefix like `my-set/`."""
    folder = ""
    while names and all("/" in name[len(folder) :] for name in names):
        tops = {name[len(folder) :].split("/", 1)[0] for name in names}
        if len(tops) != 1:
            break
        folder += tops.pop() + "/"
    return folder


def _find_dataset_file(
    files: list[zipfile.ZipInfo], folder: str, zip_name: str
) -> tuple[zipfile.ZipInfo | None, Problem | None]:
    top = [info for info in files if "/" not in info.filename[len(folder) :]]
    candidates = [info for info in top if _suffix(info.filename) in DATASET_SUFFIXES]
    if len(candidates) == 1:
        return candidates[0], None
    if not candidates:
        nested = [info.filename for info in top if _suffix(info.filename) == ".zip"]
        if nested:
            return None, NESTED_ZIP.at(zip_name, found=_listing(nested))
        return None, NO_DATASET_FILE.at(zip_name, found=_top_level_listing(files, folder))
    preferred = [
        info
        for info in candidates
        if posixpath.splitext(posixpath.basename(info.filename))[0].lower() == PREFERRED_STEM
    ]
    if len(preferred) == 1:
        return preferred[0], None
    return None, SEVERAL_DATASET_FILES.at(
        zip_name, count=len(candidates), found=_listing([info.filename for info in candidates])
    )


def _read_dataset_file(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo
) -> tuple[bytes | None, Problem | None]:
    """The dataset file's bytes: the one member read whole, so it is bounded first by its
    declared size and then by what actually comes out."""
    too_large = DATASET_FILE_TOO_LARGE.at(
        info.filename, size=file_size(info.file_size), limit=file_size(MAX_FILE_BYTES)
    )
    if info.file_size > MAX_FILE_BYTES:
        return None, too_large
    buffer = bytearray()
    try:
        for chunk in archive.iter_chunks(zf, info, max_bytes=MAX_FILE_BYTES):
            buffer += chunk
    except ArchiveError:
        return None, too_large
    except archive.READ_ERRORS as exc:
        return None, MEMBER_CORRUPT.at(info.filename, detail=_detail(exc))
    return bytes(buffer), None


def _read_dataset(data: bytes, name: str, options: CheckOptions | None = None) -> Parsed:
    """The dataset file read by its own format's reader (`formats.READERS`) and shaped, for
    the validator. `options` bring the person's mapping of its columns, if any."""
    read = READERS[DATASET_SUFFIXES[_suffix(name)]](data, name, options)
    return shapes.shape(read, options=options)


def _members_by_task_path(
    files: list[zipfile.ZipInfo], folder: str, dataset_name: str
) -> dict[str, zipfile.ZipInfo]:
    """Each path a task may name for a member -> that member.

    A member of the dataset's folder can be named from the folder or from the zip's root;
    when both readings of a path name a member, the folder's wins (it is what a person
    sees next to the dataset file).
    """
    by_key: dict[str, zipfile.ZipInfo] = {}
    prefix = folder
    for info in files:
        if info.filename != dataset_name:
            by_key.setdefault(info.filename, info)
    for info in files:
        if info.filename != dataset_name and prefix and info.filename.startswith(prefix):
            by_key[info.filename[len(prefix) :]] = info
    return by_key


def _task_files(spec: DatasetSpec) -> Iterator[FileSpec]:
    for task in spec.tasks:
        yield from task.input_files
        yield from task.expected_files


def _used_members(
    spec: DatasetSpec, by_key: Mapping[str, zipfile.ZipInfo]
) -> list[zipfile.ZipInfo]:
    """The members some task attaches, each once, in the order they lie in the archive."""
    used: dict[str, zipfile.ZipInfo] = {}
    for attached in _task_files(spec):
        info = _resolve(attached.path, by_key)
        if info is not None:
            used[info.filename] = info
    return sorted(used.values(), key=lambda info: info.header_offset)


def _resolve(path: str | None, by_key: Mapping[str, zipfile.ZipInfo]) -> zipfile.ZipInfo | None:
    if path is None:
        return None
    return by_key.get(path) or by_key.get(path.removeprefix("./"))


def _task_progress(
    spec: DatasetSpec, by_key: Mapping[str, zipfile.ZipInfo], progress: Progress | None
) -> Callable[[str], None] | None:
    """A callback for each member streamed that reports the tasks with all files read."""
    if progress is None:
        return None
    waiting: dict[str, list[int]] = {}
    remaining: list[int] = []
    for index, task in enumerate(spec.tasks):
        names = {
            info.filename
            for attached in (*task.input_files, *task.expected_files)
            if (info := _resolve(attached.path, by_key)) is not None
        }
        remaining.append(len(names))
        for name in names:
            waiting.setdefault(name, []).append(index)
    total = len(remaining)
    done = remaining.count(0)
    progress(done, total)

    def member_read(name: str) -> None:
        nonlocal done
        for index in waiting.pop(name, ()):
            remaining[index] -= 1
            done += remaining[index] == 0
        progress(done, total)

    return member_read


def _stream_members(
    zf: zipfile.ZipFile,
    members: list[zipfile.ZipInfo],
    *,
    known: Measured | None = None,
    on_member: Callable[[str], None] | None = None,
) -> tuple[dict[str, tuple[int, str]], list[Problem]]:
    """{member name: (size, sha256)} for each member, read once, and the problems met.

    Each member is counted as it inflates: the sizes in the directory are the sender's
    word, so the limits hold on the bytes that actually come out.
    """
    measured: dict[str, tuple[int, str]] = {}
    problems: list[Problem] = []
    total = 0
    for info in members:
        if on_member is not None:
            # Counted as it starts: progress a person watches, not an exact tally.
            on_member(info.filename)
        if known and known.get(info.filename, (None,))[0] == info.file_size:
            measured[info.filename] = known[info.filename]
            total += info.file_size
            continue
        digest = hashlib.sha256()
        size = 0
        try:
            for chunk in archive.iter_chunks(zf, info, max_bytes=MAX_ATTACHED_FILE_BYTES):
                digest.update(chunk)
                size += len(chunk)
        except ArchiveError:
            problems.append(
                MEMBER_TOO_LARGE.at(info.filename, limit=file_size(MAX_ATTACHED_FILE_BYTES))
            )
            continue
        except archive.READ_ERRORS as exc:
            problems.append(MEMBER_CORRUPT.at(info.filename, detail=_detail(exc)))
            continue
        total += size
        if total > archive.MAX_TOTAL_UNCOMPRESSED_BYTES:
            problems.append(
                TOO_LARGE_UNZIPPED.at(
                    info.filename, limit=file_size(archive.MAX_TOTAL_UNCOMPRESSED_BYTES)
                )
            )
            break
        measured[info.filename] = (size, digest.hexdigest())
    return measured, problems


def _with_members(
    spec: DatasetSpec,
    by_key: Mapping[str, zipfile.ZipInfo],
    measured: Mapping[str, tuple[int, str]],
) -> DatasetSpec:
    """The plan with each attached file's path made the member's full name in the zip and
    its measured size and SHA-256 filled in."""

    def measure(attached: FileSpec) -> FileSpec:
        info = _resolve(attached.path, by_key)
        if info is None:
            return attached
        size, sha256 = measured.get(info.filename, (attached.size, attached.sha256))
        return dataclasses.replace(attached, path=info.filename, size=size, sha256=sha256)

    tasks = tuple(
        dataclasses.replace(
            task,
            input_files=tuple(measure(attached) for attached in task.input_files),
            expected_files=tuple(measure(attached) for attached in task.expected_files),
        )
        for task in spec.tasks
    )
    return dataclasses.replace(spec, tasks=tasks)


def _unused_warnings(
    files: list[zipfile.ZipInfo], dataset_name: str, used: list[zipfile.ZipInfo]
) -> list[Problem]:
    used_names = {info.filename for info in used}
    unused = [
        info.filename
        for info in files
        if info.filename != dataset_name and info.filename not in used_names
    ]
    warnings = [UNUSED_MEMBER.at(name) for name in unused[:MAX_UNUSED_WARNINGS]]
    if len(unused) > MAX_UNUSED_WARNINGS:
        warnings.append(MORE_UNUSED.at(dataset_name, count=len(unused) - MAX_UNUSED_WARNINGS))
    return warnings


# Storing the checked files ------------------------------------------------------------------


def open_member(
    source: archive.ZipSource,
    member_name: str,
    *,
    max_bytes: int = MAX_ATTACHED_FILE_BYTES,
) -> IO[bytes]:
    """A streaming file object for one member (`FileSpec.path` of a checked plan).

    Raises ArchiveError if the member is missing, damaged or larger than `max_bytes`.
    Close it when done (`with open_member(path, spec.path) as stream: ...`).
    """
    return archive.open_member(source, member_name, max_bytes=max_bytes)


def iter_attachments(
    source: archive.ZipSource, plan: DatasetSpec
) -> Iterator[tuple[FileSpec, IO[bytes]]]:
    """Each file of a checked plan stored in the zip, once, with a stream of its bytes.

    For the web app to store the files after the import is confirmed: read (or
    `shutil.copyfileobj`) each stream before asking for the next one; it is closed when the
    iteration moves on. Links are not yielded. The stream raises ArchiveError if the bytes
    differ from the size and SHA-256 the check measured (the zip changed since) or the
    archive is damaged.
    """
    seen: set[str] = set()
    try:
        zf = archive.open_archive(source)
    except archive.READ_ERRORS as exc:
        raise ArchiveError(f"the zip could not be opened: {_detail(exc)}") from exc
    with zf:
        by_name = {info.filename: info for info in zf.infolist()}
        for attached in _task_files(plan):
            if attached.path is None or attached.path in seen:
                continue
            seen.add(attached.path)
            info = by_name.get(attached.path)
            if info is None:
                raise ArchiveError(f"the zip has no member {attached.path!r}")
            try:
                member = zf.open(info)
            except archive.OPEN_ERRORS as exc:
                raise ArchiveError(f"{attached.path} could not be opened: {exc}") from exc
            stream = archive.VerifiedMember(
                member,
                attached.path,
                max_bytes=MAX_ATTACHED_FILE_BYTES,
                size=attached.size,
                sha256=attached.sha256,
            )
            with io.BufferedReader(stream, archive.CHUNK_BYTES) as reader:
                yield attached, reader


# Export -------------------------------------------------------------------------------------

OpenFile = Callable[[FileSpec], IO[bytes] | None]
FILES_FOLDER = "files"
_UNSAFE_SEGMENT = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
_MAX_SEGMENT = 100
# The dataset file is spooled in memory up to this size, then on disk, until it goes in.
_SPOOL_BYTES = 8 * 1024 * 1024
# Zip timestamps start in 1980; the template uses the first one so its bytes never change.
_FIXED_DATE = (1980, 1, 1, 0, 0, 0)

FILE_UNAVAILABLE_WARNING = (
    "Task {task}: the file {name} could not be found in storage, so the export leaves it out."
)
FILE_WITHOUT_SOURCE_WARNING = (
    "Task {task}: the file {name} has neither a path nor a link, so the export leaves it out."
)


def write(
    spec: DatasetSpec,
    out: IO[bytes],
    *,
    open_file: OpenFile,
    inner: Literal["json", "csv"] = "json",
) -> list[str]:
    """Export a dataset as a .zip that `check` reads back as the same tasks and files.

    Writes each task's stored files (`open_file(file_spec)` gives a binary stream, or None
    when it is gone) under `files/<task id>/input/<name>` and `files/<task id>/expected/
    <name>`, streaming them in; a file attached more than once (same SHA-256 and name) is
    written once and every task points at it. Links stay links. Then the dataset file,
    `dataset.json` (or `dataset.csv` with inner="csv"), names the files by those paths.
    Returns warnings for a person (files left out, what a CSV cannot hold).
    """
    return _write_zip(spec, out, open_file=open_file, inner=inner, date_time=None)


def _write_zip(
    spec: DatasetSpec,
    out: IO[bytes],
    *,
    open_file: OpenFile,
    inner: str,
    date_time: tuple[int, int, int, int, int, int] | None,
) -> list[str]:
    if inner not in ("json", "csv"):
        raise ValueError(f"inner must be 'json' or 'csv', not {inner!r}")
    stamp = date_time or time.localtime(time.time())[:6]
    warnings: list[str] = []
    written: dict[tuple[str, str], str] = {}
    taken: set[str] = set()

    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:

        def store(task: TaskSpec, kind: str, attached: FileSpec) -> FileSpec | None:
            if attached.path is None:
                if attached.url is not None:
                    return attached
                warnings.append(
                    FILE_WITHOUT_SOURCE_WARNING.format(task=task.id, name=attached.name)
                )
                return None
            if attached.sha256 is not None and (attached.sha256, attached.name) in written:
                path = written[(attached.sha256, attached.name)]
                return dataclasses.replace(attached, path=path)
            stream = open_file(attached)
            if stream is None:
                warnings.append(FILE_UNAVAILABLE_WARNING.format(task=task.id, name=attached.name))
                return None
            folder = f"{FILES_FOLDER}/{_segment(task.id, 'task')}/{kind}"
            path = _free_path(folder, _segment(attached.name, "file"), taken)
            with stream, zf.open(_member_info(path, stamp), "w") as member:
                shutil.copyfileobj(stream, member, archive.CHUNK_BYTES)
            if attached.sha256 is not None:
                written[(attached.sha256, attached.name)] = path
            return dataclasses.replace(attached, path=path)

        def with_paths(_index: int, task: TaskSpec) -> TaskSpec:
            if not (task.input_files or task.expected_files):
                return task
            inputs = [store(task, "input", attached) for attached in task.input_files]
            expected = [store(task, "expected", attached) for attached in task.expected_files]
            return dataclasses.replace(
                task,
                input_files=tuple(f for f in inputs if f is not None),
                expected_files=tuple(f for f in expected if f is not None),
            )

        # One pass over the tasks (`spec.tasks` may be read from the database as it is
        # written): the dataset file's writer reads each task once, as its stored files go
        # into the zip, and writes into a spool; the dataset file follows the files it
        # names, copied in from the spool.
        exported = dataclasses.replace(spec, tasks=MappedTasks(spec.tasks, with_paths))
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as dataset_file:
            WRITERS[inner](exported, dataset_file)
            dataset_file.seek(0)
            with zf.open(_member_info(f"dataset.{inner}", stamp), "w") as member:
                shutil.copyfileobj(dataset_file, member, archive.CHUNK_BYTES)
        if inner == "csv":
            # Of the dataset, not of its files: read from `spec`, not the files again.
            warnings.extend(spreadsheet_warnings(spec))
    return warnings


def _member_info(path: str, stamp: tuple[int, int, int, int, int, int]) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=stamp)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16  # an ordinary readable file once unzipped
    return info


def _segment(value: str, fallback: str) -> str:
    """`value` as one safe path segment: no separators, control or reserved characters."""
    segment = _UNSAFE_SEGMENT.sub("_", value).strip(" .")
    if len(segment) > _MAX_SEGMENT:
        stem, suffix = posixpath.splitext(segment)
        segment = stem[: _MAX_SEGMENT - len(suffix)] + suffix
    return segment or fallback


def _free_path(folder: str, name: str, taken: set[str]) -> str:
    """`folder/name`, or `folder/name (2).ext` and so on when a file already took it."""
    stem, suffix = posixpath.splitext(name)
    path = f"{folder}/{name}"
    number = 2
    while path in taken:
        path = f"{folder}/{stem} ({number}){suffix}"
        number += 1
    taken.add(path)
    return path


# The "Files in and out" template ----------------------------------------------------------

TEMPLATE_DESCRIPTION = (
    "Tasks that take files in and give files out. Attach a file to a task as a path inside "
    "this zip, relative to dataset.json (like files/quarterly-summary/input/revenue.csv), or "
    "as an https:// link. A task can have up to 10 input files and 10 expected files, each "
    "up to 10 MiB. Input files go to the agent with the prompt; expected files show what a "
    "right answer holds."
)
_TEMPLATE_REVENUE_CSV = (
    b"quarter,revenue_usd_millions\n2025-Q1,120\n2025-Q2,130\n2025-Q3,145\n2025-Q4,165\n"
)
_TEMPLATE_SUMMARY_MD = b"""# Revenue summary, fiscal 2025

Total revenue: **$560M**. Best quarter: **Q4** ($165M).

| Quarter | Revenue ($M) | Growth on previous quarter |
|---------|-------------:|---------------------------:|
| Q1      |          120 |                          - |
| Q2      |          130 |                      +8.3% |
| Q3      |          145 |                     +11.5% |
| Q4      |          165 |                     +13.8% |
"""
_TEMPLATE_LINKED_CSV = (
    "https://raw.githubusercontent.com/datasets/s-and-p-500-companies/main/data/constituents.csv"
)


def _template_spec() -> DatasetSpec:
    revenue = FileSpec(name="revenue.csv", path="revenue.csv")
    summary = FileSpec(name="summary.md", path="summary.md")
    return DatasetSpec(
        name="Files in and out",
        description=TEMPLATE_DESCRIPTION,
        settings={"expectedAnswerVerifier": {"kind": "agent_judge", "outputType": "float"}},
        tasks=(
            TaskSpec(
                id="quarterly-summary",
                name="Quarterly revenue summary",
                prompt=(
                    "revenue.csv holds our revenue for each quarter of fiscal 2025. Write "
                    "summary.md: the year's total, the best quarter, and a Markdown table "
                    "of each quarter's revenue and its growth on the quarter before."
                ),
                expected_text=(
                    "Total $560M; best quarter Q4 ($165M); growth +8.3%, +11.5% and +13.8% "
                    "quarter on quarter, as in summary.md."
                ),
                input_files=(revenue,),
                expected_files=(summary,),
            ),
            TaskSpec(
                id="companies-by-sector",
                name="Companies by sector (linked input)",
                prompt=(
                    "The attached constituents.csv lists the S&P 500 companies. Write "
                    "sectors.csv with the columns sector and companies: how many companies "
                    "each sector has, largest first."
                ),
                criteria=(
                    CriterionSpec(
                        id="columns",
                        criterion="Gives a CSV file with exactly the columns sector and companies.",
                        weight=1.0,
                    ),
                    CriterionSpec(
                        id="every-sector",
                        criterion="Lists every sector in constituents.csv exactly once.",
                        weight=2.0,
                    ),
                    CriterionSpec(
                        id="order",
                        criterion="Orders the sectors by number of companies, largest first.",
                        weight=1.0,
                        verifier=Verifier(kind="llm_judge", output_type="boolean"),
                    ),
                ),
                input_files=(FileSpec(name="constituents.csv", url=_TEMPLATE_LINKED_CSV),),
            ),
        ),
    )


def files_in_and_out_template() -> bytes:
    """The "Files in and out" starter .zip: a dataset.json whose description explains how
    to attach files, one task with a real input CSV and expected Markdown summary in the
    zip, and one task whose input is an https:// link. Always the same bytes."""
    contents = {"revenue.csv": _TEMPLATE_REVENUE_CSV, "summary.md": _TEMPLATE_SUMMARY_MD}
    out = io.BytesIO()
    _write_zip(
        _template_spec(),
        out,
        open_file=lambda attached: io.BytesIO(contents[attached.path or ""]),
        inner="json",
        date_time=_FIXED_DATE,
    )
    return out.getvalue()


# Small helpers ------------------------------------------------------------------------------


def _seekable(source: IO[bytes] | bytes) -> IO[bytes]:
    """zipfile needs to seek; an unseekable stream is spooled first (to disk past 8 MiB)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(source)
    if source.seekable():
        return source
    spool = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)  # noqa: SIM115
    shutil.copyfileobj(source, spool, archive.CHUNK_BYTES)
    spool.seek(0)
    return spool


def _refused(zip_name: str, *problems: Problem, detected: str = "ZIP archive") -> CheckResult:
    return CheckResult(zip_name, "zip", detected, problems=tuple(problems))


def _shown(member_name: str, zip_name: str) -> str:
    """A member's name as problems show it (the zip's own name if the member has none)."""
    return member_name or zip_name


def _suffix(name: str) -> str:
    return posixpath.splitext(name)[1].lower()


def _detail(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _listing(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


def _top_level_listing(files: list[zipfile.ZipInfo], folder: str) -> str:
    tops: dict[str, None] = {}
    for info in files:
        head, slash, _ = info.filename[len(folder) :].partition("/")
        tops.setdefault(f"{folder}{head}{slash}", None)
    return _listing(list(tops)) if tops else "nothing"


def read_dataset_file(
    source: IO[bytes] | bytes, options: CheckOptions | None = None
) -> Parsed | None:
    """The zip's dataset file, read by its format's reader (not validated), or None when the
    zip has no single dataset file (or is a BEIR pair, or cannot be read).

    For finding where a task stands after the check; `check` is what decides the zip is fine.
    """
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    try:
        with zipfile.ZipFile(stream) as zf:
            files = [i for i in zf.infolist() if not i.is_dir() and not is_junk(i.filename)]
            folder = _dataset_folder([info.filename for info in files])
            dataset_info, _ = _find_dataset_file(files, folder, "")
            if dataset_info is None:
                return None
            data, _ = _read_dataset_file(zf, dataset_info)
    except archive.READ_ERRORS:
        return None
    return None if data is None else _read_dataset(data, dataset_info.filename, options)
