"""Writing many new rows of one model at once, as fast as the database takes them: COPY on
PostgreSQL (psycopg 3's `cursor.copy`), one `bulk_create` on SQLite.

The one bulk writer of the app: an import's tasks, criteria and files, and a run's rows,
go through `insert_rows` (instances, given their keys) or `insert_values` (plain values,
for rows nobody reads back: a run's outcomes), both through the same COPY (a version's
list of tasks is written by the database itself, `services.datasets.version_link_live_tasks`).
It runs in the caller's transaction, so a failure at any row leaves nothing behind once
the transaction rolls back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models
from django.db.backends.utils import CursorWrapper
from django.db.models.fields.files import FieldFile
from django.utils import timezone

M = TypeVar("M", bound=models.Model)


def insert_rows(model: type[M], rows: Sequence[M]) -> Sequence[M]:
    """Insert `rows` (new, unsaved instances of `model`) and give each its primary key.

    A fixed number of queries whatever the number of rows: on PostgreSQL one to reserve
    the keys from the table's sequence and one COPY; on SQLite one `bulk_create`, which
    Django splits only where SQLite's limit on a statement's parameters says it must.
    `auto_now` and `auto_now_add` fields take the same moment for every row.
    """
    if not rows:
        return rows
    if connection.vendor != "postgresql":
        return model._default_manager.bulk_create(rows)
    _copy(model, rows)
    return rows


def insert_values(model: type[M], fields: Sequence[str], rows: Sequence[Sequence[Any]]) -> int:
    """Insert rows of `model` given as the values of `fields` (attribute names, every
    column but the key's), when nobody needs them back: no instance is made (building
    thousands took longer than the COPY), and the table's own sequence gives the keys.
    A JSON field's value is the data it holds. How many rows it inserted.

    On PostgreSQL one COPY; on SQLite, instances made of the values and one `bulk_create`.
    """
    if not rows:
        return 0
    if connection.vendor != "postgresql":
        made = [model(**dict(zip(fields, row, strict=True))) for row in rows]
        return len(model._default_manager.bulk_create(made))
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    encoders = [_json_encoder(field) for field in columns]
    values = (
        [
            value if encode is None else encode(value)
            for encode, value in zip(encoders, row, strict=True)
        ]
        for row in rows
    )
    with connection.cursor() as cursor:
        _copy_rows(cursor, model, cast(Sequence[models.Field], columns), values, len(rows))
    return len(rows)


def _json_encoder(field: Any) -> Callable[[Any], str | None] | None:
    """How a value of `field` is written by COPY when it is not written as it is."""
    if not isinstance(field, models.JSONField):
        return None
    encoder = field.encoder

    def encode(value: Any) -> str | None:
        if value is None:
            return None
        # Most JSON fields of most rows are empty (a run's outcomes: no warnings, no calls).
        return "[]" if value == [] else json.dumps(value, cls=encoder)

    return encode


def _copy(model: type[M], rows: Sequence[M]) -> None:
    meta = model._meta
    fields = [field for field in meta.concrete_fields if not field.generated]
    with connection.cursor() as cursor:
        _reserve_keys(cursor, model, rows)
        converters = [_converter(field) for field in fields]
        values = ([convert(row) for convert in converters] for row in rows)
        _copy_rows(cursor, model, fields, values, len(rows))
    alias = connection.alias
    for row in rows:
        row._state.adding = False
        row._state.db = alias


def _reserve_keys(cursor: CursorWrapper, model: type[M], rows: Sequence[M]) -> None:
    """Give the rows without a primary key one from the table's sequence, in one query."""
    meta = model._meta
    pk = meta.pk
    assert pk is not None
    keyless = [row for row in rows if getattr(row, pk.attname) is None]
    if not keyless:
        return
    cursor.execute(
        "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
        [meta.db_table, pk.column, len(keyless)],
    )
    for row, (key,) in zip(keyless, cursor.fetchall(), strict=True):
        setattr(row, pk.attname, key)


def _copy_rows(
    cursor: CursorWrapper,
    model: type[M],
    fields: Sequence[models.Field],
    values: Iterable[Sequence[Any]],
    count: int,
) -> None:
    """One COPY of `fields` of `count` rows (`values`: each row's, as COPY writes them),
    logged as Django logs its queries."""
    names = [connection.ops.quote_name(field.column or field.attname) for field in fields]
    columns = ", ".join(names)
    table = connection.ops.quote_name(model._meta.db_table)
    sql = f"COPY {table} ({columns}) FROM STDIN"
    started = time.monotonic()
    # Django's own error classes (IntegrityError, ...) for what the database refuses, as
    # for any query made through its cursor.
    with connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
        for row in values:
            copy.write_row(row)
    if connection.queries_logged:
        # COPY does not pass through Django's cursor wrapper: logged here, so that the
        # queries an import makes count it (django_assert_num_queries, the benches).
        elapsed = time.monotonic() - started
        logged = {"sql": f"{sql} -- {count:,} rows", "time": f"{elapsed:.3f}"}
        connection.queries_log.append(logged)


def _converter(field: models.Field) -> Any:
    """A function from a row to the value COPY writes for `field` (its text form for JSON,
    the moment of the insert for `auto_now` fields, the name of a stored file)."""
    attname = field.attname
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        now = timezone.now()

        def stamped(row: models.Model) -> Any:
            value = getattr(row, attname)
            if value is None or getattr(field, "auto_now", False):
                setattr(row, attname, now)
                return now
            return value

        return stamped
    encode = _json_encoder(field)
    if encode is not None:
        return lambda row: encode(getattr(row, attname))
    if isinstance(field, models.FileField):

        def file_name(row: models.Model) -> str:
            value = getattr(row, attname)
            return value.name or "" if isinstance(value, FieldFile) else str(value or "")

        return file_name
    return lambda row: getattr(row, attname)


# SQLite's limit on a statement's parameters (SQLITE_MAX_VARIABLE_NUMBER is 32,766 since
# 3.32, and 999 before it): an update of many rows is cut into statements below the older.
SQLITE_MAX_PARAMETERS = 999


def update_rows(model: type[M], rows: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> int:
    """Write `fields` of rows of `model` back, each row its own values: `rows` are mappings
    of a row's `pk` and each of `fields` to its value (no model instance is made: building
    thousands took longer than the update).

    One `UPDATE ... FROM` a table of the rows' values, where Django's `bulk_update` builds a
    CASE of every row for every field and takes seconds for a few thousand: on PostgreSQL
    the table is `jsonb_to_recordset` of one JSON document of the rows (one parameter
    whatever the number of rows, made by the json module's C encoder where values quoted
    one by one into arrays took longer than the update itself); on SQLite a VALUES list,
    cut to its limit on parameters. Runs in the caller's transaction.
    """
    if not rows:
        return 0
    meta = model._meta
    pk = meta.pk
    assert pk is not None
    columns = [cast(models.Field, meta.get_field(name)) for name in fields]
    quote = connection.ops.quote_name
    names = ["pk", *(f"f{i}" for i in range(len(columns)))]
    sets = ", ".join(
        f"{quote(str(field.column))} = v.{name}"
        for field, name in zip(columns, names[1:], strict=True)
    )
    table, key = quote(meta.db_table), quote(str(pk.column))
    # Only the model's own quoted names are put in the statement; every value is a parameter.
    update = f"UPDATE {table} SET {sets} FROM {{source}} WHERE {table}.{key} = v.pk"  # noqa: S608
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            record = ", ".join(
                f"{name} {field.db_type(connection)}"
                for name, field in zip(names, [pk, *columns], strict=True)
            )
            source = f"jsonb_to_recordset(%s::jsonb) AS v({record})"
            keys = ["pk", *fields]
            cursor.execute(update.format(source=source), [_records(rows, keys, [pk, *columns])])
            return cursor.rowcount
        per_statement = max(1, SQLITE_MAX_PARAMETERS // len(names))
        cell = "(" + ", ".join(["%s"] * len(names)) + ")"
        updated = 0
        for start in range(0, len(rows), per_statement):
            batch = rows[start : start + per_statement]
            params = [
                field.get_db_prep_save(row[key], connection)
                for row in batch
                for key, field in zip(["pk", *fields], (pk, *columns), strict=True)
            ]
            values = ", ".join([cell] * len(batch))
            sql = f"WITH v ({', '.join(names)}) AS (VALUES {values}) " + update.format(source="v")
            cursor.execute(sql, params)
            updated += cursor.rowcount
        return updated


# Values JSON holds as they are (a JSON field's value is JSON already).
PLAIN = (str, int, float, bool, type(None))


def _records(
    rows: Sequence[Mapping[str, Any]], keys: Sequence[str], fields: Sequence[models.Field]
) -> str:
    """The rows as one JSON list, an object a row, `f0`, `f1`... a field (`pk` the key):
    datetimes and the like as the database's own values, in ISO text, which PostgreSQL
    reads back. NaN and infinities are refused: JSON cannot hold them."""
    names = ["pk", *(f"f{i}" for i in range(len(keys) - 1))]
    prepared = [
        (name, key, isinstance(field, models.JSONField), field)
        for name, key, field in zip(names, keys, fields, strict=True)
    ]
    records = []
    for row in rows:
        record = {}
        for name, key, as_is, field in prepared:
            value = row[key]
            if not (as_is or type(value) in PLAIN):
                value = field.get_db_prep_save(value, connection)
            record[name] = value
        records.append(record)
    return json.dumps(records, cls=DjangoJSONEncoder, allow_nan=False)
