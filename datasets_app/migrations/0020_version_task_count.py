"""Version.task_count: how many tasks a version holds, written when it is saved, so that
the dataset page's list of versions and the version page never count a version's rows (at
100,000 tasks a count was 10 ms a version, on every view of the dataset page).

A version never changes, so neither does its count: the held-row triggers are made again so
that a version's count, once written, cannot change (as its number and head cannot). It is
written once, by the save itself, from the rows its list received (`version_save`): empty
until then, inside the save's transaction. Versions saved before this are counted from
their lists here.

On SQLite adding the column rebuilds the version table, which the triggers name, so they
are dropped first and made again after, as migration 0014 does.

This is now the latest set of triggers: a later migration that has to drop and make them
again uses `create_triggers` and `drop_triggers` from here.
"""

import importlib

from django.db import migrations, models

held_rows = importlib.import_module("datasets_app.migrations.0007_held_rows_immutable")
metadata = importlib.import_module("datasets_app.migrations.0014_task_metadata")

# Plain SQL that both databases read alike.
COUNT_WRITTEN_ONCE = (
    "(OLD.task_count IS NOT NULL AND (NEW.task_count IS NULL OR NEW.task_count <> OLD.task_count))"
)


def drop_triggers(apps, schema_editor) -> None:
    # The triggers' names are the same in every set.
    held_rows.drop_triggers(apps, schema_editor)


def create_triggers(apps, schema_editor) -> None:
    vendor = schema_editor.connection.vendor
    for forward, _reverse in held_rows._statements(
        vendor, metadata.TASK_CONTENT, COUNT_WRITTEN_ONCE
    ):
        held_rows._run(schema_editor, forward)


def count_tasks(apps, schema_editor) -> None:
    """Each version saved before this, counted from its list once (one statement)."""
    schema_editor.execute(
        "UPDATE datasets_app_version SET task_count = (SELECT COUNT(*) FROM "
        "datasets_app_version_tasks WHERE datasets_app_version_tasks.version_id = "
        "datasets_app_version.id)"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("datasets_app", "0019_upload_read_options"),
    ]

    operations = [
        migrations.RunPython(drop_triggers, metadata.create_triggers, elidable=False),
        migrations.AddField(
            model_name="version",
            name="task_count",
            field=models.PositiveIntegerField(editable=False, null=True),
        ),
        migrations.RunPython(count_tasks, migrations.RunPython.noop, elidable=False),
        migrations.RunPython(create_triggers, drop_triggers, elidable=False),
    ]
