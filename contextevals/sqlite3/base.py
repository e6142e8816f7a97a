"""Django's SQLite backend, flushing the way PostgreSQL does.

The database refuses to delete the rows a saved version holds, except those of a dataset
marked `deleting` (migration 0007 of datasets_app). PostgreSQL flushes with TRUNCATE, which
no row trigger sees; SQLite flushes with a DELETE per table, so its flush first marks every
dataset as being deleted, as `dataset_delete` does for one. Flushing is what the test
runner and `manage.py flush` do: wipe every table.
"""

from __future__ import annotations

from django.db.backends.sqlite3 import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        sql = super().sql_flush(
            style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        if "datasets_app_dataset" in tables:
            sql.insert(0, 'UPDATE "datasets_app_dataset" SET "deleting" = 1;')
        return sql


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
