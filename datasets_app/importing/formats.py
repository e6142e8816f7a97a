"""The dataset file formats, in one table each: what reads a format, what writes it.

The rest of the importer asks these tables and never chooses by a format's name itself:
`checker` reads an upload (and a .zip's `zip_format` its dataset file) with `READERS`,
exports and a .zip's dataset file are written with `WRITERS`. A new format registers here
(see docs/architecture.md). A .zip is not in them: it is a container of a file of one of
these formats and its attachments, checked by `zip_format.check` as a stream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import IO, Protocol

from datasets_app.importing import csv_format, json_format, jsonl_format, xlsx_format
from datasets_app.importing.spec import CheckOptions, CheckResult, DatasetSpec, Read

# The read stage: bytes and a file name in, what the file holds (or its problems) out.
Reader = Callable[[bytes, str, CheckOptions | None], Read]
# A plan written to a binary stream, as the format's file.
Writer = Callable[[DatasetSpec, IO[bytes]], object]


class WholeCheck(Protocol):
    """A format's own read-and-validate in one pass, used instead of its reader when
    checking (JSON's: pydantic-core parses and validates at once, `json_format.check`)."""

    def __call__(self, data: bytes, file_name: str, *, options: CheckOptions) -> CheckResult: ...


READERS: Mapping[str, Reader] = {
    "json": json_format.read,
    "jsonl": jsonl_format.read,
    "csv": csv_format.read,
    "xlsx": xlsx_format.read,
}
WRITERS: Mapping[str, Writer] = {
    "json": json_format.write_to,
    "csv": csv_format.write_to,
    "xlsx": xlsx_format.write_to,
}
# Formats whose check is faster done whole than read, then validated.
WHOLE_CHECKS: Mapping[str, WholeCheck] = {"json": json_format.check}
