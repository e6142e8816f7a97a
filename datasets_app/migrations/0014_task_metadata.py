"""Task.metadata: what a dataset cannot otherwise hold (category, difficulty, source, split,
context, tags), kept frozen in a saved version like the rest of a task's content.

The held-row triggers of migration 0007 are made again over a task's content with
`metadata` added: a held task's metadata cannot change, and a version's list of tasks may
be repointed only to a copy with the same metadata. On SQLite, adding the column rebuilds
the task table, which the triggers name, so they are dropped first on both databases and
the new set made after the column is there.

This is now the latest set: a later migration that has to drop and make the triggers again
uses `create_triggers` and `drop_triggers` from here.
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
    ]
