"""The mapping a person gives (`--map FIELD=SOURCE`, the dialog's step) and the
messages that ask for one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from datasets_app.importing.aliases import FIELD_KEYS
from datasets_app.importing.shapes.base import (
    BEST_GUESS,
    LABELS,
    NEEDS_MAPPING,
    NOTHING_TO_GUESS,
    REMEMBERED,
    SAMPLE_RECORDS,
    Record,
    _parts,
)
from datasets_app.importing.shapes.recognise import Recognised
from datasets_app.importing.spec import (
    Problem,
    shorten,
)

MAP_NOT_FIELD_EQUALS_SOURCE = "--map {value}: write it as FIELD=SOURCE, e.g. prompt=question."
MAP_NOT_A_FIELD = "--map {value}: {key} is not a field; use one of {fields}."
MAP_FIELD_TWICE = "--map maps {key} twice, to {first} and to {second}; map each field once."


def parse_map_options(values: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """`--map FIELD=SOURCE` values: (mapping, errors in words). A field mapped twice is an
    error naming both sources; what a message echoes is cut short (`spec.shorten`)."""
    mapping: dict[str, str] = {}
    errors = []
    for value in values:
        key, sep, source = value.partition("=")
        key = key.strip().lower()
        if key in ("expected_answer", "answer"):
            key = "expected"
        if key == "task_id":
            key = "id"
        source = source.strip()
        if not sep or not source:
            errors.append(MAP_NOT_FIELD_EQUALS_SOURCE.format(value=shorten(value)))
        elif key not in FIELD_KEYS:
            fields = ", ".join(FIELD_KEYS)
            errors.append(
                MAP_NOT_A_FIELD.format(value=shorten(value), key=shorten(key), fields=fields)
            )
        elif mapping.get(key, source) != source:
            errors.append(
                MAP_FIELD_TWICE.format(key=key, first=shorten(mapping[key]), second=shorten(source))
            )
        else:
            mapping[key] = source
    return mapping, errors


_INDEX = re.compile(r"\[(\d+)\]")
_MISSING = object()


def _at_path(value: Any, path: str) -> Any:
    """What a dotted path names in a record as the file holds it: `a.b` a key one level
    down, `a.0.b` (or `a[0].b`) the first item of a list; `_MISSING` where it leads nowhere."""
    for step in _INDEX.sub(r".\1", path).split("."):
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return _MISSING
    return value


def add_path_values(records: Sequence[Record], given: Mapping[str, str] | None) -> None:
    """Give each record the value of every path a person's mapping names that the
    flattened keys do not hold (`score_rubric.criteria` inside a rubric a shape keeps
    whole, `conversationTurns.0.prompt.content.0.text` through lists): a mapping reads
    the file's keys, whichever shape recognised it. A path no record has is left for the
    mapping's own message."""
    for source in {part for named in (given or {}).values() for part in _parts(named)}:
        if any(source in record.values for record in records[:SAMPLE_RECORDS]):
            continue
        found = [_at_path(record.raw, source) for record in records]
        if all(value is _MISSING for value in found):
            continue
        for record, value in zip(records, found, strict=True):
            record.values[source] = None if value is _MISSING else value


def _described(fields: Mapping[str, str], what: str) -> str:
    """`records with question → prompt, answer → expected answer`, for the Detected line."""
    shown = [
        f"{fields[key]} → {LABELS[key]}"
        for key in ("prompt", "expected", "criterion")
        if key in fields
    ]
    return f"{what} with {', '.join(shown)}" if shown else what


def _missing_sources(fields: Mapping[str, str], sources: Sequence[str]) -> list[tuple[str, str]]:
    have = set(sources)
    return [
        (key, part) for key, source in fields.items() for part in _parts(source) if part not in have
    ]


def _map_flags(fields: Mapping[str, str], named: Mapping[str, str]) -> str:
    return " ".join(
        f"--map {key}={source}"
        for key, source in fields.items()
        if " + " not in source and named.get(key) != source
    )


def _guess_words(fields: Mapping[str, str], named: Mapping[str, str]) -> str:
    shown = [
        f"{LABELS[key]} = {fields[key]}"
        for key in FIELD_KEYS
        if key in fields and named.get(key) != fields[key]
    ]
    return ", ".join(shown) or "nothing"


def _missing_words(named: Mapping[str, str], sources: Sequence[str]) -> str:
    graded = {"expected", "criterion"} & named.keys() or "assert" in sources
    if "prompt" in named:
        return "expected answer"
    return "prompt" if graded else "prompt and which the expected answer"


def mapping_problems(recognised: Recognised, *, file_name: str, kind: str) -> list[Problem]:
    """Why a file whose mapping was guessed (or remembered) is not imported as it stands."""
    found = ", ".join(recognised.sources) or "nothing"
    fields = recognised.fields
    graded = {"expected", "criterion"} & fields.keys() or "assert" in recognised.sources
    if "prompt" not in fields or not graded:
        return [NOTHING_TO_GUESS.at(file_name, kind=kind, found=found)]
    basis = BEST_GUESS if recognised.how == "guessed" else REMEMBERED.format(kind=kind)
    return [
        NEEDS_MAPPING.at(
            file_name,
            kind=kind,
            found=found,
            missing=_missing_words(recognised.named, recognised.sources),
            basis=basis,
            guess=_guess_words(fields, recognised.named),
            flags=_map_flags(fields, recognised.named),
        )
    ]
