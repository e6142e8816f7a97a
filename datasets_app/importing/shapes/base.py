"""What every shape shares: the records a file holds, a `Shape`, and the messages."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from datasets_app.importing.aliases import FIELDS_BY_KEY, field_for, normalize
from datasets_app.importing.document import TASK_KEYS
from datasets_app.importing.spec import (
    DocPath,
    Rule,
)

NEEDS_MAPPING = Rule(
    "needs_mapping",
    "The {kind} do not say which one is the {missing}. Found: {found}. {basis}: {guess}. "
    "Confirm or change it in the import dialog, or with {flags}.",
)
BEST_GUESS = "Best guess"
REMEMBERED = "As you mapped this dataset's last file with these {kind}"
NOTHING_TO_GUESS = Rule(
    "nothing_to_map",
    "The {kind} do not say which one is the prompt and which the expected answer, and there "
    "are not two {kind} of text to choose from. Found: {found}.",
)
UNKNOWN_SOURCE = Rule(
    "unknown_map_source",
    "The mapping names {source} for the {label}, but the file has no such {kind}. Found: {found}.",
)
IGNORED_KEYS = Rule("ignored_keys", "These {kind} are not imported: {names}.")
NOT_TEXT_VALUE = Rule(
    "value_not_text", "{source} holds {kind}, which cannot be the {label}: it must be text."
)


UNANSWERABLE_LEFT_OUT = Rule(
    "unanswerable_left_out",
    "{count} questions marked unanswerable have no answer to grade by and were left out.",
)
FOLLOW_UPS_LEFT_OUT = Rule(
    "follow_up_turns_left_out",
    "{count} tasks ask only their first turn: the turns after it follow the model's own "
    "answer to the one before, which one prompt cannot hold, and were left out.",
)
JUDGED_BY_TOOL = Rule(
    "judged_by_tool",
    "{count} tasks give no reference answer; each is graded instead by the one criterion the "
    "file's tool judges such a task by: {criterion}",
)


NOT_A_DATASET = Rule("not_a_dataset", "This looks like {what}. {advice}")
CELLS_CUT = Rule(
    "cells_truncated",
    "The Hugging Face dataset viewer cut {cells} short in this row (its truncated_cells): only "
    "the start of the text is in the file. Download the dataset's own files instead.",
)
NO_RECORDS = Rule(
    "no_records",
    "The file holds {what}, not a list of records. A .json dataset is an object with "
    '"tasks", or a list of records such as [{{"question": ..., "answer": ...}}].',
)

# What the fields are called in messages.
LABELS: dict[str, str] = {
    "id": "id",
    "name": "name",
    "prompt": "prompt",
    "expected": "expected answer",
    "criterion": "criterion",
    "weight": "weight",
}


# Keys under which a JSON object holds its list of records, most usual first.
CONTAINER_KEYS = (
    "tasks",
    "data",
    "examples",
    "goldens",
    "test_cases",
    "testcases",
    "items",
    "samples",
    "records",
    "rows",
    "questions",
    "entries",
    "dataset",
    "tests",
    "cases",
)
# Our own task keys: a record made only of these (with a text prompt) is already canonical.
CANONICAL_TASK_KEYS = TASK_KEYS
# How many records the guessing and the mapping step's sample look at.
SAMPLE_RECORDS = 50
SAMPLE_SHOWN = 3
# How much of each text, and how many criteria, the sample keeps: more than the step shows.
SAMPLE_CHARS = 1_000
SAMPLE_CRITERIA = 10


class ValueProblem(Exception):
    """A value that cannot fill its field; carries the rule and its parameters."""

    def __init__(self, rule: Rule, **params: Any) -> None:
        super().__init__(rule.code)
        self.rule = rule
        self.params = params


@dataclass
class Record:
    """One record of the file, flattened one level (`inputs.question`), and where it is."""

    values: dict[str, Any]
    # The record's path in the file's JSON (for its line) or its row in a spreadsheet.
    path: DocPath = ()
    row: int | None = None
    line: int | None = None
    # Values the tool that wrote the file cut short (the dataset viewer's truncated_cells).
    cut: tuple[str, ...] = ()
    # The record as the file holds it, for a mapping that names a path into it.
    raw: dict[str, Any] | None = None


@dataclass
class Records:
    """The records a file holds, and what held them (for the Detected line)."""

    records: list[Record]
    container: str = ""
    # What each record came wrapped in (`_WRAPPERS`), as the Detected line names it.
    wrapper: str = ""
    left_out: int = 0
    # How many records the file holds: past the most a file may hold, only the first ones
    # are read (a hostile list of millions costs no more than a long one).
    total: int = 0


def _no_fields(keys: set[str], first: dict[str, Any]) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Shape:
    """A tool's record shape: how to know it, and which of its keys fill which field.

    `fields` may name several sources for the prompt (joined with a blank line) as
    "a + b". Sources a shape does not name are matched by `aliases`. Its decisions are
    written once, here: `help` is what docs/field-names.md and the help page say about it
    (`code` in backticks, **bold**), and `taught_by` the real file under tests/files/real/
    it was built on.
    """

    # What the Detected line calls the file (the tool, and the keys that tell it apart).
    name: str
    # How it recognises the records: by the keys of all, and the first record's values.
    matches: Callable[[set[str], dict[str, Any]], bool]
    # Which key fills which field (`prompt`, `expected`, `criterion`, `id`, ...).
    fields: Callable[[set[str], dict[str, Any]], dict[str, str]] = _no_fields
    help: str = ""
    taught_by: str = ""
    # A record's values as the shape reads them, before they are flattened (MT-Bench's
    # `turns` as chat turns): every record goes through every shape's `prepare`, which
    # leaves a record that is not the shape's as it is.
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # The criterion the tool's own judge grades a record by when the record gives no
    # answer (MT-Bench's questions with no reference): such a task gets it as its criterion.
    judged_by: str = ""
    # How it names a task: the key whose text names it when its prompt opens with the same
    # wording in every record (HelloBench's `raw_text`, the question its instruction wraps).
    # A shape with none is named as every task is (`spec.name_from_prompt`).
    named_by: str = ""
    # The key its `prepare` puts the turns it leaves out under (MT-Bench's second turns):
    # the tasks with any are counted in a warning (`FOLLOW_UPS_LEFT_OUT`).
    follow_ups: str = ""

    @property
    def keys_read(self) -> set[str]:
        """Keys the shape reads besides its fields: they are not "not imported"."""
        return {key for key in (self.named_by, self.follow_ups) if key}


# A record's system prompt, which a shape names as the first part of the prompt.
SYSTEM_PROMPT_KEYS = frozenset({"system_prompt"})


def _keys_shape(
    shape_name: str, fields: Mapping[str, str], *, help: str = "", taught_by: str = ""
) -> Shape:
    """A shape known by having every key its fields name (`prompt="instruction + input"`)."""
    needed = {part.strip() for source in fields.values() for part in source.split(" + ")}
    given = dict(fields)
    return Shape(
        shape_name,
        lambda keys, first: needed <= keys,
        lambda keys, first: dict(given),
        help=help,
        taught_by=taught_by,
    )


# Azure AI and Prompt flow evaluation data joins what the app under test returned as
# `__outputs.<name>` keys: `__outputs.answer` is the app's answer, never a field by its name.
_RUN_OUTPUTS = "__outputs."


def _alias_fields(sources: Sequence[str], taken: Iterable[str]) -> dict[str, str]:
    """Fields matched by name: a top-level key before a nested one, then the list's order."""
    used: set[str] = set()
    for source in taken:
        used.update(part.strip() for part in source.split(" + "))
    best: dict[str, tuple[tuple[int, int], str]] = {}
    for source in sources:
        if source in used or source.startswith(_RUN_OUTPUTS):
            continue
        leaf = source.rsplit(".", 1)[-1]
        key = field_for(leaf)
        if key is None:
            continue
        spellings = [normalize(s) for s in FIELDS_BY_KEY[key].spellings]
        normal = normalize(leaf)
        position = spellings.index(normal) if normal in spellings else len(spellings)
        rank = ("." in source, position)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, source)
    return {key: source for key, (_, source) in best.items()}


def _parts(source: str) -> list[str]:
    return [part.strip() for part in source.split(" + ")]
