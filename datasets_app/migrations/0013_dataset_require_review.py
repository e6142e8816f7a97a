"""Dataset.require_review: saving a version waits until every draft is reviewed.

On SQLite, adding a column with a default rebuilds the dataset table, and the held-row
triggers of migration 0007 name that table in their bodies, so SQLite refuses the rebuild
while they exist: they are dropped just before and made again, the same ones, just after.
PostgreSQL adds the column in place and keeps its triggers as they are.
"""

import importlib

from django.db import migrations, models

held_rows = importlib.import_module("datasets_app.migrations.0007_held_rows_immutable")


def drop_on_sqlite(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "sqlite":
        held_rows.drop_triggers(apps, schema_editor)


def create_on_sqlite(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "sqlite":
        held_rows.create_triggers(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("datasets_app", "0012_runs"),
    ]

    operations = [
        migrations.RunPython(drop_on_sqlite, create_on_sqlite, elidable=False),
        migrations.AddField(
            model_name="dataset",
            name="require_review",
            field=models.BooleanField(
                default=False,
                help_text=(
                    "Save as vN is refused while a draft is not reviewed since it last "
                    "changed (Review drafts)."
                ),
                verbose_name="require every draft reviewed before saving",
            ),
        ),
        migrations.RunPython(create_on_sqlite, drop_on_sqlite, elidable=False),
    ]
