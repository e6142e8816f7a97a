"""The shape stage: what a reader found in a file (`spec.Read`) as the page's document
(`spec.Parsed`), for the validator.

A document of the page's own keys goes on as it is. Another tool's records are recognised
and built into tasks (`records.read_records`), each task placed on its record's line; a
sheet's rows go through its shape and its columns (`spreadsheets.read_table`). Whatever the
container, the same records make the same tasks.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import zip_longest
from pathlib import PurePath

from datasets_app.importing.shapes.records import Shaped, read_records
from datasets_app.importing.shapes.spreadsheets import read_table
from datasets_app.importing.spec import CheckOptions, Parsed, Problem, Read, RecordsLayout


def shape(read: Read, *, options: CheckOptions | None) -> Parsed:
    """The page's document of what `read` holds (None when it holds nothing that makes
    one), with every problem and warning so far, and the mapping that made it."""
    if read.records is not None and read.layout is not None:
        return _from_records(read, read.layout, options)
    if read.table is not None:
        return _from_table(read, options)
    return Parsed(
        read.format,
        read.detected,
        read.file_name,
        read.document,
        read.locate,
        problems=read.problems,
        warnings=read.warnings,
        notes=read.notes,
        field_label=read.field_label,
    )


def _from_records(read: Read, layout: RecordsLayout, options: CheckOptions | None) -> Parsed:
    assert read.records is not None
    shaped = read_records(read.records, file_name=read.file_name, options=options)
    document = shaped.document
    if document is not None:
        document = layout.around(document)
    return Parsed(
        read.format,
        layout.detected(shaped.detected),
        read.file_name,
        document,
        layout.locate(shaped.places),
        problems=[*read.problems, *_on_their_lines(shaped, layout)],
        warnings=[*read.warnings, *shaped.warnings],
        notes=read.notes,
        field_label=layout.field_label,
        mapping=shaped.mapping,
    )


def _on_their_lines(shaped: Shaped, layout: RecordsLayout) -> list[Problem]:
    """The problems the records' reader found, each one on a record put on its line."""
    on_records = [record for record in shaped.problem_records if record is not None]
    lines = iter(layout.lines(on_records) if on_records else [])
    return [
        problem if record is None else replace(problem, line=next(lines))
        for problem, record in zip_longest(shaped.problems, shaped.problem_records)
    ]


def _from_table(read: Read, options: CheckOptions | None) -> Parsed:
    assert read.table is not None
    built, shaped = read_table(
        read.table,
        file_name=read.file_name,
        dataset_name=PurePath(read.file_name).stem,
        options=options,
    )
    return Parsed(
        read.format,
        f"{read.detected}, {shaped.shape}" if shaped.shape else read.detected,
        read.file_name,
        built.document,
        built.locate,
        problems=[*read.problems, *shaped.problems, *built.problems],
        warnings=[*read.warnings, *shaped.warnings, *built.warnings],
        notes=read.notes,
        field_label=built.label,
        mapping=shaped.mapping,
        only_known_keys=True,
    )
