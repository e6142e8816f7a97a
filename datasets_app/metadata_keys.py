"""The metadata keys of a task list, and their most common values: what the dataset and
version pages' Metadata filter offers to choose from.

One query for the lot: the database unnests each task's metadata (PostgreSQL's
`jsonb_each`, SQLite's `json_each`), counts each key and each (key, value) pair, and sends
back only the MAX_KEYS most common keys and, for each, its MAX_VALUES most common values,
whatever the number of tasks. A scan of 100,000 tasks' metadata still takes a noticeable
moment, so the answer is cached: for a version forever (its tasks never change), for a
dataset's live tasks under the count of writes of them (`DatasetTasksChange`, one row), which
every import, edit, removal and Replace moves in its own transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import QuerySet

from datasets_app.importing import columns
from datasets_app.models import Dataset, DatasetTasksChange, Task, Version

# Enough keys for any real dataset's filter (a task has at most 50); values per key: the
# common ones, which is what a person picks from (a key with a value per task, such as a
# source URL, is offered as the key alone, with how many values it has).
MAX_KEYS = 100
MAX_VALUES = 20
# A longer value is no filter anyone types: it is counted, not offered.
MAX_VALUE_CHARS = 80


@dataclass(frozen=True)
class KeyChoices:
    """One key: how many tasks have it, how many values it takes (scalars short enough to
    offer), and the most common of them, each as the filter writes it (`key=value`)."""

    key: str
    tasks: int
    distinct: int
    values: tuple[tuple[str, int], ...]

    @property
    def more_values(self) -> int:
        return max(self.distinct - len(self.values), 0)

    @property
    def filters(self) -> list[tuple[str, str, int]]:
        """Each value offered: the filter that finds it (`category=billing`), the value as
        written, and how many tasks have it."""
        return [(f"{self.key}={value}", value, times) for value, times in self.values]


# Per vendor, how each (key, value) pair is unnested, and the value's JSON text
# (`"billing"`, `3`, `true`, `[1, 2]`), which tells every value apart (`"3"` from 3).
_UNNEST = {
    "postgresql": ("jsonb_each(t.metadata) e", "e.value::text"),
    "sqlite": (
        "json_each(t.metadata) e",
        "CASE e.type WHEN 'text' THEN json_quote(e.value) WHEN 'true' THEN 'true' "
        "WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' ELSE CAST(e.value AS TEXT) END",
    ),
}

# One pass over the pairs: a group per (key, value text) gives both each key's task count
# and number of values (its groups) and each value's count, with no second scan and no
# DISTINCT. What is offered is decided per group, not per pair, from the text alone: a
# scalar (not a list, an object or null) short enough to type.
_QUERY = """
WITH counted AS (
    SELECT e.key AS key, {raw} AS raw, COUNT(*) AS n
    FROM ({tasks}) t, {unnest} GROUP BY 1, 2
),
keys AS (
    SELECT key, SUM(n) AS tasks, COUNT(*) AS distinct_values
    FROM counted GROUP BY key ORDER BY SUM(n) DESC, key LIMIT %s
),
ranked AS (
    SELECT key, raw AS value, n, ROW_NUMBER() OVER (PARTITION BY key ORDER BY n DESC, raw) AS r
    FROM counted WHERE substr(raw, 1, 1) NOT IN ('[', '{{', 'n') AND length(raw) <= %s
)
SELECT keys.key, keys.tasks, keys.distinct_values, ranked.value, ranked.n
FROM keys LEFT JOIN ranked ON ranked.key = keys.key AND ranked.r <= %s
ORDER BY keys.tasks DESC, keys.key, ranked.n DESC, ranked.value
"""


def _read(tasks: QuerySet[Task]) -> list[KeyChoices]:
    sql, params = tasks.values("metadata").order_by().query.sql_with_params()
    postgresql = connection.vendor == "postgresql"
    unnest, raw = _UNNEST["postgresql" if postgresql else "sqlite"]
    query = _QUERY.format(tasks=sql, unnest=unnest, raw=raw)
    with transaction.atomic(), connection.cursor() as cursor:
        if postgresql:
            # Its estimate of the pairs is far off (100 a task), which makes it compile
            # the query (JIT) for longer than the query takes.
            cursor.execute("SET LOCAL jit = off")
        cursor.execute(query, [*params, MAX_KEYS, MAX_VALUE_CHARS, MAX_VALUES])
        rows = cursor.fetchall()
    found: dict[str, tuple[int, int, list[tuple[Any, int]]]] = {}
    for key, count, distinct, value, times in rows:
        _count, _distinct, values = found.setdefault(key, (count, distinct, []))
        if value is not None:
            values.append((json.loads(value), times))
    return [
        KeyChoices(key=key, tasks=count, distinct=distinct, values=_as_filtered(values))
        for key, (count, distinct, values) in found.items()
    ]


def _same(a: Any, b: Any) -> bool:
    # As JSON compares them: true is not 1, and "3" is not 3.
    return type(a) is type(b) or (
        isinstance(a, int | float) and isinstance(b, int | float) and bool not in (type(a), type(b))
    )


def _as_filtered(values: list[tuple[Any, int]]) -> tuple[tuple[str, int], ...]:
    """Each value as the filter is typed (`metadata_cell`), with how many tasks that filter
    finds: `difficulty=3` finds 3 and "3" alike (`selectors._with_metadata`)."""
    shown: dict[str, int] = {}
    for value, _times in values:
        typed = columns.metadata_cell(value)
        if typed in shown:
            continue
        wanted = [typed, columns.metadata_value(typed)]
        shown[typed] = sum(
            times for other, times in values if any(_same(other, w) and other == w for w in wanted)
        )
    return tuple(sorted(shown.items(), key=lambda item: -item[1]))


def _stamp(dataset: Dataset) -> int:
    """What moves whenever the dataset's tasks are written: one row (`DatasetTasksChange`)."""
    changes = DatasetTasksChange.objects.filter(dataset_id=dataset.pk).values_list(
        "changes", flat=True
    )
    return changes.first() or 0


def dataset_metadata_keys(dataset: Dataset) -> list[KeyChoices]:
    """The keys of the dataset's live tasks, most common first, with their common values."""
    key = f"metadata-keys:dataset:{dataset.pk}:{_stamp(dataset)}"
    found: list[KeyChoices] | None = cache.get(key)
    if found is None:
        found = _read(Task.objects.filter(dataset=dataset).live().exclude(metadata={}))
        cache.set(key, found, timeout=24 * 3600)
    return found


def version_metadata_keys(version: Version) -> list[KeyChoices]:
    """The keys of a version's tasks (its rows never change: worked out once)."""
    key = f"metadata-keys:version:{version.pk}"
    found: list[KeyChoices] | None = cache.get(key)
    if found is None:
        tasks = Task.objects.filter(dataset_id=version.dataset_id, versions=version)
        found = _read(tasks.exclude(metadata={}))
        cache.set(key, found, timeout=None)
    return found
