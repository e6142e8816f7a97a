"""Indexes for the dataset and version pages' task lists: a page in order, a dataset's
criteria for every task, and (on PostgreSQL) trigram indexes for the search box.

The search (`selectors.tasks_searched`) is a substring match in any case (`icontains`),
which Django writes on PostgreSQL as `UPPER(column::text) LIKE UPPER('%word%')`; a pg_trgm
GIN index on that same expression answers it without reading every row, for words, parts
of words and ids alike. SQLite has no such index: there the search reads the rows, and the
trigram step does nothing.

The trigram indexes live only in the database (Django's model state knows nothing of them),
since they exist on one backend only. Creating the extension needs a role allowed to (the owner
of the database, on PostgreSQL 13 and later, as pg_trgm is a trusted extension).
"""

from django.db import migrations, models

# (index, table, column): what the search box looks in.
INDEXES = (
    ("task_search_task_id_trgm", "datasets_app_task", "task_id"),
    ("task_search_name_trgm", "datasets_app_task", "name"),
    ("task_search_prompt_trgm", "datasets_app_task", "prompt"),
    ("task_search_expected_trgm", "datasets_app_task", "expected_text"),
    ("criterion_search_text_trgm", "datasets_app_criterion", "text"),
)


def create_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, table, column in INDEXES:
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" '
            f'USING gin ((UPPER("{column}"::text)) gin_trgm_ops)'
        )


def drop_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _table, _column in INDEXES:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


class Migration(migrations.Migration):
    dependencies = [("datasets_app", "0009_upload_heartbeat_at")]

    operations = [
        migrations.AddIndex(
            model_name="task",
            index=models.Index(
                fields=["dataset", "position", "id"], name="task_dataset_position"
            ),
        ),
        migrations.AddIndex(
            model_name="criterion",
            index=models.Index(fields=["dataset", "task"], name="criterion_dataset_task"),
        ),
        migrations.RunPython(create_indexes, drop_indexes),
    ]
