"""An agent's outputs as a .zip: the outputs file (`.jsonl` or `.csv`) at its top level and
each task's output files under `files/<task id>/`, for criteria that check what it wrote.

The zip is screened as an import's is (`zip_format.archive_problems`: no path out of its
folder, no links, no duplicates, no encryption, no bombs) before anything is inflated; each
output file is bounded and read through once (counted as it comes out) so that a file that
cannot be read is a problem now, not an error mid-run. Problems are named by the member's
path in the archive. Pure Python, like the rest of `importing`.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import IO, Any

from datasets_app.importing import archive, outputs, zip_format
from datasets_app.importing.spec import (
    MAX_ATTACHED_FILE_BYTES,
    MAX_FILE_BYTES,
    MAX_FILES_PER_KIND,
    Problem,
    Rule,
    file_size,
)

# Where each task's files lie: files/<task id>/<name>, the layout of a dataset zip's own
# files folder. A task id holding a "/" cannot be a folder name: its files cannot come so.
FILES_FOLDER = "files"
OUTPUTS_SUFFIXES = frozenset({".jsonl", ".ndjson", ".csv"})
PREFERRED_STEM = "outputs"
# A task's output may hold as many files as it may expect, each as large as an attached
# file: a criterion compares them with those.
MAX_FILES_PER_TASK = MAX_FILES_PER_KIND
MAX_OUTPUT_FILE_BYTES = MAX_ATTACHED_FILE_BYTES
# Every output file is inflated once while the page waits (to prove it can be read); 512
# MiB is some seconds of it. A grader sees at most 1 MiB of each file (MAX_FILE_VIEW_BYTES),
# so a run needing more is better split than waited on.
MAX_OUTPUT_FILES_BYTES = 512 * 1024 * 1024

NO_OUTPUTS_FILE = Rule(
    "zip_no_outputs_file",
    "The zip has no outputs file: put one outputs.jsonl or outputs.csv at its top level, "
    "beside a files folder with a folder per task. It holds: {found}.",
)
SEVERAL_OUTPUTS_FILES = Rule(
    "zip_several_outputs_files",
    "The zip has {count} outputs files at its top level ({found}). Keep one, or name the "
    "one to grade outputs.jsonl (or outputs.csv).",
)
STRAY_MEMBER = Rule(
    "zip_stray_member",
    "This file is neither the outputs file nor in a task's folder (files/<task id>/), so "
    "nothing would grade it. Move it into its task's folder or leave it out.",
)
TOO_MANY_FILES = Rule(
    "zip_too_many_output_files",
    "Task {task} has {count} output files; a task's output holds at most {limit}.",
)
FILE_TOO_LARGE = Rule(
    "zip_member_too_large",
    "This file is more than {limit} once unzipped, the most an output file can be.",
)
FILES_TOO_LARGE = Rule(
    "zip_too_large_unzipped",
    "The output files expand to more than {limit} when unzipped. Grade fewer tasks at a time.",
)


def _found(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit]) or "nothing"
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


def _outputs_member(
    files: list[zipfile.ZipInfo], zip_name: str
) -> tuple[zipfile.ZipInfo | None, Problem | None]:
    """The outputs file: the one .jsonl or .csv at the top level (outputs.* among several)."""
    top = [i for i in files if "/" not in i.filename]
    found = [i for i in top if posixpath.splitext(i.filename)[1].lower() in OUTPUTS_SUFFIXES]
    preferred = [i for i in found if posixpath.splitext(i.filename)[0] == PREFERRED_STEM]
    if len(found) == 1 or len(preferred) == 1:
        return (preferred or found)[0], None
    if not found:
        listing = sorted(
            {i.filename.split("/")[0] + ("/" if "/" in i.filename else "") for i in files}
        )
        return None, NO_OUTPUTS_FILE.at(zip_name, found=_found(listing))
    names = [i.filename for i in found]
    return None, SEVERAL_OUTPUTS_FILES.at(zip_name, count=len(found), found=_found(names))


def _read_outputs_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo
) -> tuple[bytes | None, Problem | None]:
    """The outputs file's bytes (bounded as an outputs file is, counted as they come out),
    or the problem that stopped them."""
    try:
        return b"".join(archive.iter_chunks(zf, info, max_bytes=MAX_FILE_BYTES)), None
    except archive.MemberTooLarge:
        return None, outputs.OUTPUTS_TOO_BIG.at(info.filename, limit=MAX_FILE_BYTES >> 20)
    except archive.OPEN_ERRORS as exc:
        detail = str(exc) or type(exc).__name__
        return None, zip_format.MEMBER_CORRUPT.at(info.filename, detail=detail)


def _problem(rule: Rule, member: str, task_id: str | None = None, **params: Any) -> Problem:
    """A problem of `member`, about the task `task_id` (kept with it, as the reader does)."""
    return replace(rule.at(member, **params), task=task_id)


class _Files:
    """The output files of each task, and every problem with them."""

    def __init__(self, known: Collection[str]) -> None:
        self.known = known
        self.by_task: dict[str, list[outputs.OutputFile]] = {}
        self.problems: list[Problem] = []
        self.total = 0

    def add(self, info: zipfile.ZipInfo) -> None:
        member = info.filename
        task, _, name = member[len(FILES_FOLDER) + 1 :].partition("/")
        if not member.startswith(FILES_FOLDER + "/") or not task or not name:
            self.problems.append(_problem(STRAY_MEMBER, member))
        elif task not in self.known:
            self.problems.append(
                _problem(outputs.UNKNOWN_TASK, member, task, task=outputs.quoted(task))
            )
        elif info.file_size > MAX_OUTPUT_FILE_BYTES:
            limit = file_size(MAX_OUTPUT_FILE_BYTES)
            self.problems.append(_problem(FILE_TOO_LARGE, member, task, limit=limit))
        else:
            self.total += info.file_size
            self.by_task.setdefault(task, []).append(
                outputs.OutputFile(name, member, info.file_size)
            )

    def bounded(self, zip_name: str) -> bool:
        """Whether the files are within the counts and sizes (else each excess is a problem)."""
        for task, files in self.by_task.items():
            if len(files) > MAX_FILES_PER_TASK:
                where = f"{FILES_FOLDER}/{task}/"
                problem = _problem(
                    TOO_MANY_FILES,
                    where,
                    task,
                    task=outputs.quoted(task),
                    count=len(files),
                    limit=MAX_FILES_PER_TASK,
                )
                self.problems.append(problem)
        if self.total > MAX_OUTPUT_FILES_BYTES:
            limit = file_size(MAX_OUTPUT_FILES_BYTES)
            self.problems.append(FILES_TOO_LARGE.at(zip_name, limit=limit))
        return not self.problems

    def read_through(self, zf: zipfile.ZipFile) -> None:
        """Inflate each file once: one that is damaged, or larger than its header says, is a
        problem now rather than an error while grading."""
        for task, files in self.by_task.items():
            for file in files:
                try:
                    for _chunk in archive.iter_chunks(
                        zf, zf.getinfo(file.member), max_bytes=MAX_OUTPUT_FILE_BYTES
                    ):
                        pass
                except archive.MemberTooLarge:
                    limit = file_size(MAX_OUTPUT_FILE_BYTES)
                    self.problems.append(_problem(FILE_TOO_LARGE, file.member, task, limit=limit))
                except archive.OPEN_ERRORS as exc:
                    detail = str(exc) or type(exc).__name__
                    problem = _problem(zip_format.MEMBER_CORRUPT, file.member, task, detail=detail)
                    self.problems.append(problem)


def _with_files(read: outputs.OutputsFile, found: _Files) -> None:
    """Each task's files on its output (a task with files and no line answers with them),
    and their problems after the outputs file's."""
    for task, files in found.by_task.items():
        given = read.outputs.get(task) or outputs.AgentOutput(task=task, output="")
        read.outputs[task] = replace(given, files=tuple(files))
    if found.by_task:  # files are outputs: the outputs file alone need not hold any
        read.problems = [p for p in read.problems if p.code != outputs.NO_OUTPUTS.code]
    read.problems.extend(found.problems)


def read_outputs_file(
    data: bytes,
    name: str,
    task_ids: Collection[str],
    *,
    mapping: Mapping[str, str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> outputs.OutputsFile:
    """Any outputs file: a `.zip` read here (its outputs file with `outputs.read_outputs`),
    a `.jsonl` or `.csv` by `outputs.read_outputs` itself. Every reader of outputs (a run,
    the command-line grader) comes through this one door."""
    if PurePath(name).suffix.lower() != ".zip":
        return outputs.read_outputs(data, name, task_ids, mapping=mapping, max_bytes=max_bytes)
    if len(data) > max_bytes:
        too_big = outputs.OUTPUTS_TOO_BIG.at(name, limit=max_bytes >> 20)
        return outputs.OutputsFile(format="zip", problems=[too_big])
    return read_zip(data, name, task_ids, mapping=mapping)


def read_zip(
    data: bytes,
    zip_name: str,
    task_ids: Collection[str],
    *,
    mapping: Mapping[str, str] | None = None,
) -> outputs.OutputsFile:
    """The outputs in a zip's outputs file with each task's files, and every problem."""
    known = task_ids if isinstance(task_ids, set | frozenset) else set(task_ids)
    refused = outputs.OutputsFile(format="zip")
    fp: IO[bytes] = io.BytesIO(data)
    try:
        extent = archive.directory_extent(fp)
    except archive.READ_ERRORS:
        extent = None
    if extent is None:
        refused.problems.append(zip_format.NOT_A_ZIP.at(zip_name))
        return refused
    if extent[0] > archive.MAX_MEMBERS or extent[1] > archive.MAX_CENTRAL_DIRECTORY_BYTES:
        refused.problems.append(zip_format.TOO_MANY_MEMBERS.at(zip_name, limit=archive.MAX_MEMBERS))
        return refused
    try:
        zf = archive.open_archive(fp)
    except archive.READ_ERRORS as exc:
        refused.problems.append(zip_format.CORRUPT.at(zip_name, detail=str(exc) or "unreadable"))
        return refused
    with zf:
        return _read_archive(zf, zip_name, known, mapping, refused)


def _read_archive(
    zf: zipfile.ZipFile,
    zip_name: str,
    known: Collection[str],
    mapping: Mapping[str, str] | None,
    refused: outputs.OutputsFile,
) -> outputs.OutputsFile:
    infos = zf.infolist()
    hostile = zip_format.archive_problems(infos, zip_name) or zip_format.overlap_problems(
        zf, zip_name
    )
    if hostile:  # nothing is inflated from an archive that is hostile as a whole
        refused.problems.extend(hostile)
        return refused
    files = [i for i in infos if not i.is_dir() and not zip_format.is_junk(i.filename)]
    inner, problem = _outputs_member(files, zip_name)
    if inner is None:
        assert problem is not None
        refused.problems.append(problem)
        return refused
    text, problem = _read_outputs_member(zf, inner)
    if text is None:
        assert problem is not None
        refused.problems.append(problem)
        return refused
    read = outputs.read_outputs(text, inner.filename, known, mapping=mapping)
    found = _Files(known)
    for info in files:
        if info is not inner:
            found.add(info)
    if found.bounded(zip_name):
        found.read_through(zf)
    _with_files(read, found)
    read.format = "zip"
    return read


def file_starts(
    zf: zipfile.ZipFile, files: Sequence[outputs.OutputFile], *, limit: int
) -> list[bytes]:
    """The first `limit` bytes of each output file of a checked zip (what a verifier is
    given of it): the run's workers and the command-line grader read them so."""
    starts = []
    for file in files:
        info = archive.find_member(zf, file.member)
        if info is None:  # the zip is the one checked: it has every member
            raise archive.ArchiveError(f"the zip has no member {file.member!r}")
        with zf.open(info) as member:
            starts.append(member.read(limit))
    return starts
