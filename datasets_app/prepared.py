"""Reads asked for so often that the ORM's compiling of them costs more than the query:
written with the ORM as usual, compiled to SQL once per process, then run with new values.

"Try an answer" reads a task, its criteria and its files at each pause in typing. Each of
those three querysets cost this process about 0.5 ms to build and compile and 0.05 ms to
run: most of a try's cost beside the verifiers. A `Prepared` read keeps the queryset as the
one definition (the access rule stays `selectors.datasets_for`): it builds it once with
stand-in values, keeps the SQL, its parameters and the columns' converters, and swaps the
stand-ins for the values of each call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import QuerySet

# Stand-ins for the values of a call: integers no primary key ever has, one per name, so
# that each is found among the compiled parameters and no constant of the query is taken
# for one.
_FIRST_STAND_IN = -(2**62)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    # For each parameter: the name of the value to put there, or None to keep it.
    slots: tuple[str | None, ...]
    # {column index: (converters, expression)}, as the ORM's compiler makes them.
    converters: dict[int, tuple[list[Any], Any]]


class Prepared:
    """A read of `values_list` rows: `build(variant, **values)` returns the queryset. It is
    called once per database and `variant` (what changes the SQL beyond the values, such as
    whether the person sees every dataset), with integer stand-ins for the `names`; each
    `rows(**values)` then runs that SQL with its own values."""

    def __init__(self, build: Callable[..., QuerySet[Any]], names: Sequence[str]) -> None:
        self.build = build
        self.names = tuple(names)
        self._compiled: dict[tuple[str, Hashable], _Compiled] = {}
        self._lock = threading.Lock()

    def _compile(self, using: str, variant: Hashable) -> _Compiled:
        stand_ins = {_FIRST_STAND_IN - index: name for index, name in enumerate(self.names)}
        queryset = self.build(variant, **{name: value for value, name in stand_ins.items()})
        compiler = queryset.query.get_compiler(using=using)
        sql, params = compiler.as_sql()
        # A variant may leave a value out (who sees every dataset needs no person's key).
        slots = tuple(stand_ins.get(param) if isinstance(param, int) else None for param in params)
        columns = [column for column, _, _ in compiler.select]
        return _Compiled(
            sql=sql,
            params=tuple(params),
            slots=slots,
            converters=compiler.get_converters(columns),
        )

    def rows(
        self, *, variant: Hashable = None, using: str = "default", **values: int
    ) -> list[tuple[Any, ...]]:
        """The rows (tuples, as `values_list` gives them) for these values."""
        key = (using, variant)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(key) or self._compile(using, variant)
                self._compiled[key] = compiled
        params = [
            param if slot is None else values[slot]
            for param, slot in zip(compiled.params, compiled.slots, strict=True)
        ]
        connection = connections[using]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        if not compiled.converters:
            return [tuple(row) for row in rows]
        return [_converted(row, compiled.converters, connection) for row in rows]


def _converted(
    row: Sequence[Any], converters: dict[int, tuple[list[Any], Any]], connection: Any
) -> tuple[Any, ...]:
    # As the compiler's own apply_converters does, with this thread's connection.
    values = list(row)
    for index, (functions, expression) in converters.items():
        value = values[index]
        for function in functions:
            value = function(value, expression, connection)
        values[index] = value
    return tuple(values)
