"""JSON and JSON Lines records: where a document holds its records (a list, a key such
as `data`, an object keyed by id, SQuAD's nesting, pandas' orientations, one record),
the envelopes tools wrap them in, and the records into the page's document.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from datasets_app.importing.aliases import field_for
from datasets_app.importing.document import TOO_MANY_TASKS
from datasets_app.importing.shapes.azure import HISTORY_KEYS
from datasets_app.importing.shapes.base import (
    CANONICAL_TASK_KEYS,
    CONTAINER_KEYS,
    IGNORED_KEYS,
    LABELS,
    UNKNOWN_SOURCE,
    Record,
    Records,
    _parts,
)
from datasets_app.importing.shapes.build import (
    Built,
    build_tasks,
    ignored_sources,
    metadata_sources,
    record_metadata,
    sample_of,
)
from datasets_app.importing.shapes.mapping import (
    _described,
    _missing_sources,
    add_path_values,
    mapping_problems,
)
from datasets_app.importing.shapes.recognise import Recognised, recognise
from datasets_app.importing.shapes.refusals import Evidence, refusal_problem
from datasets_app.importing.shapes.registry import PREPARES
from datasets_app.importing.shapes.rubrics import STATEMENTS_KEY, is_requirement_tree, score_levels
from datasets_app.importing.shapes.values import _kind, is_chat
from datasets_app.importing.spec import (
    MAX_TASKS,
    CheckOptions,
    DocPath,
    FieldMap,
    Problem,
    shorten,
)

# Values kept whole rather than flattened: they are one field's value.
_WHOLE_KEYS = frozenset(
    {
        "expected",
        "answers",
        "answer",
        "ideal",
        "criteria",
        "rubrics",
        "choices",
        "options",
        "target_scores",
        # Checks by name (`named_checks`): Prompt flow's `statements`.
        STATEMENTS_KEY,
    }
)


_SHAREGPT_ROLES = {"human": "user", "gpt": "assistant", "system": "system", "user": "user"}


def _as_messages(value: Any) -> Any:
    """ShareGPT's turns ({"from": "human", "value": ...}) as chat messages; else as given."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(turn, dict) and "from" in turn and "value" in turn for turn in value)
    ):
        return [
            {
                "role": _SHAREGPT_ROLES.get(str(turn["from"]), str(turn["from"])),
                "content": turn["value"],
            }
            for turn in value
        ]
    return value


def _flatten(record: dict[str, Any]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for prepare in PREPARES:
        record = prepare(record)
    for key, value in record.items():
        value = _as_messages(value)
        if isinstance(value, dict) and value and key not in _WHOLE_KEYS and not score_levels(value):
            for child, inner in value.items():
                flat[f"{key}.{child}"] = inner
        else:
            flat[key] = value
    return flat


# The viewer cuts a long cell short to keep its page small, and names it here.
TRUNCATED_CELLS = "truncated_cells"
# Envelopes a tool puts around each record: the key holding the record, the keys allowed
# beside it, and what the Detected line calls such records. The record inside is read as
# if the file held it bare, so every shape and name applies to it unchanged.
_WRAPPERS: tuple[tuple[str, frozenset[str], str], ...] = (
    # The OpenAI Evals API's data source lines.
    ("item", frozenset({"item", "sample"}), 'OpenAI Evals API items ({"item": …})'),
    # What the Hugging Face dataset viewer's /rows endpoint (and its download) gives.
    (
        "row",
        frozenset({"row", "row_idx", TRUNCATED_CELLS}),
        'Hugging Face dataset viewer rows ({"row": …})',
    ),
)


def _unwrap(record: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The record inside a tool's envelope (`_WRAPPERS`) and what wrapped it, or the
    record itself and ""."""
    for key, allowed, wrapper in _WRAPPERS:
        inner = record.get(key)
        if isinstance(inner, dict) and set(record) <= allowed:
            return inner, wrapper
    return record, ""


def records_of(
    values: Sequence[tuple[dict[str, Any], DocPath, int | None]], *, limit: int = MAX_TASKS
) -> Records:
    """Records from (object, JSON path, line) triples, unwrapped and flattened; past
    `limit`, only counted."""
    found = Records([], total=len(values))
    for value, path, line in itertools.islice(values, limit + 1):
        record, wrapper = _unwrap(value)
        found.wrapper = found.wrapper or wrapper
        cut = value.get(TRUNCATED_CELLS) if wrapper else None
        cells = tuple(str(cell) for cell in cut) if isinstance(cut, list) else ()
        found.records.append(Record(_flatten(record), path=path, line=line, cut=cells, raw=record))
    return found


def _squad(document: dict[str, Any]) -> Records | None:
    """SQuAD's nesting: data → paragraphs → qas, each question with its paragraph."""
    data = document.get("data")
    if not (isinstance(data, list) and data and isinstance(data[0], dict)):
        return None
    if "paragraphs" not in data[0]:
        return None
    found = Records([], container="SQuAD")
    for i, article in enumerate(data):
        for j, paragraph in enumerate(article.get("paragraphs") or []):
            if not isinstance(paragraph, dict):
                continue
            for k, qa in enumerate(paragraph.get("qas") or []):
                if not isinstance(qa, dict):
                    continue
                values = {"context": paragraph.get("context"), **qa}
                found.records.append(
                    Record(
                        _flatten(values), path=("data", i, "paragraphs", j, "qas", k), raw=values
                    )
                )
    return found


# Containers that are no key of the file, as the Detected line says them.
_DESCRIBED_CONTAINERS = {
    "SQuAD": "nested by article and paragraph",
    "keyed by id": "keyed by id",
    "one record": "one record",
    "pandas columns": "pandas to_json() by column",
    "pandas split": "pandas to_json(orient='split')",
    "columns as lists": "one list per column",
    "objects by id": "one object per field, keyed by id",
}


# A reader of one way a document may hold its records: the records, or None when the
# document does not hold them so.
_TableReader = Callable[[dict[str, Any]], Records | None]


def _first_table(readers: Iterable[_TableReader], document: dict[str, Any]) -> Records | None:
    """The records the first of `readers` finds in the document, or None."""
    for reader in readers:
        table = reader(document)
        if table is not None:
            return table
    return None


def _is_list_of(value: Any, kind: type[Any]) -> TypeGuard[list[Any]]:
    """Whether a value is a non-empty list of `kind` (objects: records; lists: rows)."""
    return isinstance(value, list) and bool(value) and all(isinstance(item, kind) for item in value)


def _two_or_more(inner: list[Any], kind: type[Any]) -> bool:
    """Whether there are two or more values, each a non-empty `kind` (an object or a list)."""
    return len(inner) >= 2 and all(isinstance(value, kind) and value for value in inner)


def _pandas_split(document: dict[str, Any]) -> Records | None:
    """pandas' "split" orientation: {"columns", "index", "data"}, a row a list."""
    columns = document.get("columns")
    data = document.get("data")
    if not isinstance(columns, list) or not _is_list_of(data, list):
        return None
    names = [str(name) for name in columns]
    values = [
        (dict(zip(names, row, strict=False)), ("data", i), None) for i, row in enumerate(data)
    ]
    found = records_of(values)
    found.container = "pandas split"
    return found


def _pandas_columns(document: dict[str, Any]) -> Records | None:
    """pandas' "columns" orientation (`to_json()`'s default): {column: {index: value}}."""
    inner = list(document.values())
    if not _two_or_more(inner, dict):
        return None
    index = list(inner[0])
    if not all(str(key).isdigit() for key in index) or any(list(v) != index for v in inner):
        return None
    if all(str(key).isdigit() for key in document):
        return None  # keyed by number both ways: records keyed by id
    rows = [({column: document[column][key] for column in document}, (key,), None) for key in index]
    found = records_of(rows)
    found.container = "pandas columns"
    return found


def _columns_as_lists(document: dict[str, Any]) -> Records | None:
    """Two or more columns, each a list of values (no records) of the same length: row i
    is each column's i-th value."""
    inner = list(document.values())
    if not _two_or_more(inner, list):
        return None
    if len({len(value) for value in inner}) != 1:
        return None
    if any(isinstance(item, dict) for value in inner for item in value):
        return None
    names = [str(name) for name in document]
    rows = [
        ({name: document[name][i] for name in names}, (names[0], i), None)
        for i in range(len(inner[0]))
    ]
    found = records_of(rows)
    found.container = "columns as lists"
    return found


def _pandas_table(document: dict[str, Any]) -> Records | None:
    """pandas' `to_json()` orientations other than records: "columns" (the default,
    {column: {index: value}}), "split" ({"columns", "index", "data"}) and one list per
    column ({"questions": [...], "ground_truths": [...]}, as `to_dict(orient="list")` and
    hand-written benchmarks hold them)."""
    return _first_table((_pandas_split, _columns_as_lists, _pandas_columns), document)


def _shared_ids(inner: list[Any]) -> list[str]:
    """The ids two or more objects all map to a value that is no object, else []."""
    if not _two_or_more(inner, dict):
        return []
    ids = list(inner[0])
    if any(set(value) != set(ids) for value in inner[1:]):
        return []
    if any(isinstance(value[i], dict) for value in inner for i in ids):
        return []
    return [str(i) for i in ids]


def _objects_by_id(document: dict[str, Any]) -> Records | None:
    """Two or more objects side by side, each mapping the same ids to a value
    (LlamaIndex's `QueryResponseDataset`: `{"queries": {id: question}, "responses": {id:
    answer}}`): record i is each object's value for id i, with the id. Known from records
    keyed by id by its names: the objects' keys name fields (`queries`), their ids do not."""
    ids = _shared_ids(list(document.values()))
    if not ids or field_for(next(iter(document))) is None or any(field_for(i) for i in ids):
        return None
    names = [str(name) for name in document]
    rows = [
        ({"id": i, **{name: document[name][i] for name in names}}, (names[0], i), None) for i in ids
    ]
    found = records_of(rows)
    found.container = "objects by id"
    return found


class _ListItems(Sequence[tuple[dict[str, Any], DocPath, None]]):
    """A list's items as `records_of` takes them, each with its path, made only when read:
    a list of millions costs its length, not millions of triples (only the first ones past
    the most a file may hold are read)."""

    def __init__(self, items: list[Any], path: DocPath) -> None:
        self.items = items
        self.path = path

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self.items[index], (*self.path, index), None


def _records_under(key: str, items: list[Any]) -> Records:
    found = records_of(_ListItems(items, (key,)))
    found.container = key
    return found


def _keyed_by_id(document: dict[str, Any]) -> Records:
    """An object keyed by id: each key is its record's id."""
    found = records_of([(value, (key,), None) for key, value in document.items()])
    for record, key in zip(found.records, document.keys(), strict=True):
        record.values.setdefault("id", key)
    found.container = "keyed by id"
    return found


def _records_in_object(document: dict[str, Any]) -> Records | None:
    """The records under a key of the document (a container key such as `data`, else its
    only list of objects), the document keyed by id, or the document as one record."""
    lists = {key: value for key, value in document.items() if _is_list_of(value, dict)}
    known = next((key for key in CONTAINER_KEYS if key in lists), None)
    if known is not None:
        return _records_under(known, lists[known])
    # An object of objects has no lists: keyed by id, never one record.
    if document and all(isinstance(value, dict) for value in document.values()):
        return _keyed_by_id(document)
    # Before its only list: one record's chat turns or rubric items are no records.
    single = _one_record(document)
    if single is not None:
        return single
    if len(lists) == 1:
        only = next(iter(lists))
        return _records_under(only, lists[only])
    return None


def find_records(document: Any) -> Records | str:
    """The records a parsed .json holds, or what it holds instead (for the message)."""
    if isinstance(document, list):
        if _is_list_of(document, dict):
            return records_of(_ListItems(document, ()))
        return "a list of " + ("values" if document else "nothing")
    if not isinstance(document, dict):
        return _kind(document)
    table = _first_table((_squad, _pandas_table, _objects_by_id, _records_in_object), document)
    if table is not None:
        return table
    return "an object with " + (", ".join(list(document)[:8]) or "no keys")


def _one_record(document: dict[str, Any]) -> Records | None:
    """A .json file that is itself one record (one HealthBench example, one OpenAI evals
    sample saved on its own): a shape knows it, or its keys name a prompt and what grades
    it. Its lists (the chat turns, the rubric items) are its values, not records."""
    found = records_of([(document, (), None)])
    values = found.records[0].values
    named = recognise(found.records).named
    prompt = values.get(_parts(named.get("prompt", ""))[0])
    if not (isinstance(prompt, str) or is_chat(prompt)):
        return None  # a list of questions is columns, not one record's question
    if not named.keys() & {"expected", "criterion"}:
        return None
    found.container = "one record"
    return found


# Keys other tools' records have that say the record is theirs, besides `aliases`' names.
_FOREIGN_KEYS = frozenset(
    {"item", "vars", "assert", "inputs", "outputs", "rubrics", "answers", "messages", "turns"}
)
_FOREIGN_FIELDS = frozenset({"id", "name", "prompt", "expected", "criterion"})


def is_canonical(records: Iterable[dict[str, Any]]) -> bool:
    """Whether records are our own tasks: the page's keys, held to the page's rules.

    A record made only of the page's keys is ours whatever its values hold, so that the
    validator names a wrong type (`"prompt": 5`) as it does in any container, instead of a
    shape converting it quietly; only a chat prompt (a list of turns) is another tool's.
    A task of ours with a key we do not know (a typo, a note) is still ours: the
    validator warns about the key. A record with a key another tool uses for a field
    (`question`, `ideal`, `inputs`, ...) or with no prompt is another tool's.
    """
    for record in records:
        prompt = record.get("prompt")
        if is_chat(prompt):
            return False
        if record.keys() <= CANONICAL_TASK_KEYS:
            continue
        if prompt is not None and not isinstance(prompt, str):
            return False
        if prompt is None:
            return False
        for key in record.keys() - CANONICAL_TASK_KEYS:
            if key in _FOREIGN_KEYS or field_for(key) in _FOREIGN_FIELDS:
                return False
    return True


@dataclass
class Shaped:
    """What the records of a file make: the canonical document (or None) and its story."""

    document: dict[str, Any] | None
    mapping: FieldMap | None
    detected: str
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    places: list[Record] = field(default_factory=list)
    # The record of each of `problems` that is on one (None for the file's own).
    problem_records: list[Record | None] = field(default_factory=list)


def _keep_metadata(built: Built, ignored: Sequence[str], *, chat: bool) -> list[str]:
    """Give each task the metadata its record keeps (`metadata_sources`); returns the keys
    still not imported."""
    kept = metadata_sources(ignored, built.places, chat=chat)
    for task, record in zip(built.tasks, built.places, strict=True):
        metadata = record_metadata(record, kept)
        if metadata:
            task["metadata"] = metadata
    return [source for source in ignored if source not in kept]


def _is_chat_prompt(records: Sequence[Record], fields: Mapping[str, str]) -> bool:
    """Whether the records' prompt is a chat's messages (its other keys are metadata)."""
    source = fields.get("prompt")
    return bool(records and source and is_chat(records[0].values.get(source)))


def _detected(found: Records, recognised: Recognised) -> str:
    """The Detected line: the shape (or the fields read), then what wrapped and what held
    the records."""
    shape = recognised.shape or _described(recognised.fields, "records")
    if found.wrapper:
        shape = f"{found.wrapper}, {shape}"
    if found.container in _DESCRIBED_CONTAINERS:
        return f"{shape}, {_DESCRIBED_CONTAINERS[found.container]}"
    if found.container and found.container != "tasks":
        return f"{shape} under {found.container!r}"
    return shape


def _unknown_sources(recognised: Recognised, file_name: str) -> list[Problem]:
    """A problem for each key of the person's mapping that no record has ([] for a
    mapping not given)."""
    if recognised.how != "given":
        return []
    missing = _missing_sources(recognised.fields, recognised.sources)
    shown = ", ".join(recognised.sources) or "nothing"
    return [
        UNKNOWN_SOURCE.at(
            file_name, source=shorten(part), label=LABELS[key], kind="key", found=shown
        )
        for key, part in missing
    ]


def _not_read(
    found: Records, recognised: Recognised, file_name: str, max_tasks: int
) -> Problem | None:
    """Why no record is read: another tool's file this one does not import (unless the
    person mapped it), or more tasks than a file may hold."""
    if recognised.how != "given":
        seen = Evidence(
            recognised.sources, recognised.named, "keys", found.records, recognised.fields
        )
        refused = refusal_problem(seen, file_name)
        if refused is not None:
            return refused
    total = max(found.total, len(found.records))
    if total > max_tasks:
        # The validator's own words for the canonical document's `tasks`.
        return TOO_MANY_TASKS.at(file_name, count=total, limit=max_tasks)
    return None


def _field_map(recognised: Recognised, built: Built) -> FieldMap:
    """The mapping the records are read with, as the mapping step shows it."""
    matched = recognised.matched
    return FieldMap(
        fields=dict(recognised.fields),
        how=recognised.how,
        sources=tuple(recognised.sources),
        shape=recognised.shape,
        sample=sample_of(built.tasks),
        graded=bool({"assert", "criteria"} & set(recognised.sources))
        or bool(matched and matched.judged_by),
    )


def _handled_sources(recognised: Recognised, built: Built, records: Sequence[Record]) -> set[str]:
    """The keys read other than as a field, which are not reported as left out."""
    sources, fields = recognised.sources, recognised.fields
    handled = {"assert"} if "assert" in sources else set()
    handled |= {"is_impossible"} if built.left_out else set()
    if "prompt" in fields:
        handled |= set(HISTORY_KEYS) & set(sources)
    if "criteria" in sources and "criterion" not in fields:
        handled.add("criteria")
    if recognised.matched:
        handled |= recognised.matched.keys_read  # it names the tasks, or counts what it left
    if records and is_requirement_tree(records[0].values.get(fields.get("criterion", ""))):
        handled.add("weight")  # the root's, alone at the top of its tree: all of the score
    return handled


def _read_tasks(
    shaped: Shaped, built: Built, recognised: Recognised, records: Sequence[Record], file_name: str
) -> None:
    """Fill `shaped` with the built tasks, their problems and warnings, the metadata they
    keep and a warning naming the keys not imported."""
    fields = recognised.fields
    shaped.problems = built.problems
    shaped.problem_records = list(built.problem_records)
    shaped.warnings = built.warnings
    handled = _handled_sources(recognised, built, records)
    ignored = ignored_sources(recognised.sources, fields, handled=handled)
    ignored = _keep_metadata(built, ignored, chat=_is_chat_prompt(records, fields))
    if ignored:
        shaped.warnings.append(IGNORED_KEYS.at(file_name, kind="keys", names=", ".join(ignored)))
    # Every record refused: their problems say why, where "the file has no tasks" would not.
    if built.tasks or not built.problems:
        shaped.document = {"tasks": built.tasks}
    shaped.places = built.places


def read_records(found: Records, *, file_name: str, options: CheckOptions | None) -> Shaped:
    """The canonical document of a .json or .jsonl file of records (not yet validated).

    `options` brings the person's mapping, the dataset's remembered ones and the task limit.
    """
    given = options.mapping if options else None
    remembered = options.remembered_mappings if options else None
    max_tasks = options.max_tasks if options else MAX_TASKS
    records = found.records
    add_path_values(records, given)
    recognised = recognise(records, given=given, remembered=remembered)
    shaped = Shaped(None, None, _detected(found, recognised))
    unknown = _unknown_sources(recognised, file_name)
    if unknown:
        shaped.mapping = FieldMap(dict(recognised.fields), "given", tuple(recognised.sources))
        shaped.problems = unknown
        return shaped
    not_read = _not_read(found, recognised, file_name, max_tasks)
    if not_read is not None:
        shaped.problems = [not_read]
        return shaped
    built = build_tasks(records, recognised.fields, file_name=file_name, shape=recognised.matched)
    shaped.mapping = _field_map(recognised, built)
    if shaped.mapping.needs_confirmation:
        shaped.problems = mapping_problems(recognised, file_name=file_name, kind="keys")
        return shaped
    _read_tasks(shaped, built, recognised, records, file_name)
    return shaped
