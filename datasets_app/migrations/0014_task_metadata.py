"""Task.metadata: what a dataset cannot otherwise hold (category, difficulty, source, split,
context, tags), kept frozen in a saved version like the rest of a task's content.

The held-row triggers of migration 0007 are made again over a task's content with
`metadata` added: a held task's metadata cannot change, and a version's list of tasks may
be repointed only to a copy with the same metadata. On SQLite, adding the column rebuilds
the task table, which the triggers name, so they are dropped first on both databases and
the new set made after the column is there.

The search box looks in metadata too: on PostgreSQL through a trigram index like those of
migration 0010.

Migration 0020 made the set after this one (a version's task_count written once): a
later migration that has to drop and make the triggers again uses 0020's.
"""

import importlib

from django.db import migrations, models

held_rows = importlib.import_module("datasets_app.migrations.0007_held_rows_immutable")

TASK_CONTENT = (*held_rows.TASK_CONTENT, "metadata")


def drop_triggers(apps, schema_editor) -> None:
    # The triggers' names are the same in every set.
    held_rows.drop_triggers(apps, schema_editor)


def create_triggers(apps, schema_editor) -> None:
    for forward, _reverse in held_rows._statements(schema_editor.connection.vendor, TASK_CONTENT):
        held_rows._run(schema_editor, forward)


SEARCH_INDEX = "task_search_metadata_trgm"


def create_search_index(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{SEARCH_INDEX}" ON "datasets_app_task" '
            'USING gin ((UPPER("metadata"::text)) gin_trgm_ops)'
        )


def drop_search_index(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f'DROP INDEX IF EXISTS "{SEARCH_INDEX}"')


class Migration(migrations.Migration):
    dependencies = [
        ("datasets_app", "0013_dataset_require_review"),
    ]

    operations = [
        migrations.RunPython(drop_triggers, held_rows.create_triggers, elidable=False),
        migrations.AddField(
            model_name="task",
            name="metadata",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(create_triggers, drop_triggers, elidable=False),
        migrations.RunPython(create_search_index, drop_search_index),
    ]
