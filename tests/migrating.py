"""Taking the database back to an earlier migration and forward again, for the tests of a
migration: fill the tables as they were (`migrate(BEFORE)` gives that state's models),
then `migrate_to_latest()` and look at what the migration made of them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

Target = list[tuple[str, str]]


def migrate(target: Target) -> Apps:
    """The database migrated to `target`; the models as they were there."""
    MigrationExecutor(connection).migrate(target)
    return MigrationExecutor(connection).loader.project_state(target).apps


def migrate_to_latest() -> None:
    """Forward through every migration the app has."""
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes("datasets_app"))


@contextmanager
def tables_at(target: Target) -> Iterator[Apps]:
    """The tables as they were at `target`; back to the latest migration afterwards."""
    try:
        yield migrate(target)
    finally:
        migrate_to_latest()
