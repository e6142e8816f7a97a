"""A saved version never changes: the database itself refuses to change or delete the rows a
version holds, whoever asks (a page, the admin, the API, the shell, raw SQL through the
app's role).

A task is *held* once a version lists it (`datasets_app_version_tasks`). Of a held task only
its place in the live dataset may move: `state` between saved and archived (never back to
draft), and the review marks and `updated_at`. Its content (id, name, prompt, expected
answer and verifier, evidence, dataset, position), its criteria and its files can be neither
updated nor deleted. A dataset-wide criterion, once archived, is what earlier versions were
graded by, and is held the same way. A version's own row (number, snapshot) never changes,
and the list of tasks it holds may only point at an identical copy of a task (the
copy-on-write of `task_keep_saved_copy`).

The one exception is deleting a whole dataset: `dataset_delete` marks the dataset
`deleting` first, in its transaction, and the rows of a dataset so marked (or already gone)
may go. Flushing every table (tests, `manage.py flush`) is TRUNCATE on PostgreSQL, which row
triggers do not see, and on SQLite marks every dataset first (contextevals/sqlite3).

Written here once for both databases: PostgreSQL (plpgsql functions) and SQLite (triggers
with RAISE), the same rules column for column. The SQL is spelled out in this migration, not
imported from the app, so that the migration stays what it was when it ran.

Later migrations make the same triggers over more of a task's content, with
`_statements(vendor, task_content=...)`: 0014 adds `metadata`. A migration that has to drop
and make them again (SQLite rebuilding a table they name) uses the latest set's functions,
0014's `create_triggers` and `drop_triggers`, never these.
"""

import re

from django.db import migrations, models

HELD = "A saved version holds this {what}: its content cannot change."

TASK_CONTENT = (
    "dataset_id",
    "task_id",
    "name",
    "prompt",
    "expected_text",
    "expected_verifier",
    "evidence",
    "position",
)
CRITERION_CONTENT = (
    "dataset_id",
    "task_id",
    "criterion_id",
    "text",
    "weight",
    "verifier",
    "position",
    "archived",
)
FILE_CONTENT = ("task_id", "role", "name", "file", "url", "size", "sha256", "position")
VERSION_CONTENT = ("dataset_id", "number", "snapshot")


def _task_held(column: str) -> str:
    return f"EXISTS (SELECT 1 FROM datasets_app_version_tasks WHERE task_id = {column})"


def _deleting(dataset_column: str) -> str:
    # A dataset already gone is being deleted too (a flush may take its row first).
    return (
        f"COALESCE((SELECT deleting FROM datasets_app_dataset WHERE id = {dataset_column}), TRUE)"
    )


def _file_dataset() -> str:
    return "(SELECT dataset_id FROM datasets_app_task WHERE id = OLD.task_id)"


# Per table: when a row is held, what it may not change, which dataset it belongs to, and
# the message. Each rule is turned into SQL for both databases below.
RULES = {
    "task": {
        "table": "datasets_app_task",
        "held": _task_held("OLD.id"),
        "content": TASK_CONTENT,
        "also_refused": "NEW.state = 'draft'",
        "dataset": "OLD.dataset_id",
        "what": "task",
    },
    "criterion": {
        "table": "datasets_app_criterion",
        "held": f"({_task_held('OLD.task_id')} OR (OLD.task_id IS NULL AND OLD.archived))",
        "content": CRITERION_CONTENT,
        "also_refused": None,
        "dataset": "OLD.dataset_id",
        "what": "criterion",
    },
    "taskfile": {
        "table": "datasets_app_taskfile",
        "held": _task_held("OLD.task_id"),
        "content": FILE_CONTENT,
        "also_refused": None,
        "dataset": _file_dataset(),
        "what": "file",
    },
    "version": {
        "table": "datasets_app_version",
        "held": "TRUE",
        "content": VERSION_CONTENT,
        "also_refused": None,
        "dataset": "OLD.dataset_id",
        "what": "version",
    },
}

# A version's list of tasks may be repointed only to a task of identical content.
def _same_task(content: tuple[str, ...], *, sqlite: bool) -> str:
    op = "IS" if sqlite else "IS NOT DISTINCT FROM"
    return " AND ".join(f"a.{column} {op} b.{column}" for column in content)


SAME_TASK = _same_task(TASK_CONTENT, sqlite=False)
SAME_TASK_SQLITE = _same_task(TASK_CONTENT, sqlite=True)
REPOINTED_TO_A_COPY = (
    "EXISTS (SELECT 1 FROM datasets_app_task a, datasets_app_task b "
    "WHERE a.id = OLD.task_id AND b.id = NEW.task_id AND {same})"
)
VERSION_DATASET = "(SELECT dataset_id FROM datasets_app_version WHERE id = OLD.version_id)"


def _changed(content: tuple[str, ...], *, sqlite: bool) -> str:
    op = "IS NOT" if sqlite else "IS DISTINCT FROM"
    return " OR ".join(f"NEW.{column} {op} OLD.{column}" for column in content)


def _postgresql(name: str, rule: dict) -> tuple[str, str]:
    changed = _changed(rule["content"], sqlite=False)
    if rule["also_refused"]:
        changed = f"{changed} OR {rule['also_refused']}"
    message = HELD.format(what=rule["what"])
    function = f"datasets_app_{name}_held"
    forward = f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ({rule["held"]}) THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' THEN
    IF {_deleting(rule["dataset"])} THEN RETURN OLD; END IF;
    RAISE EXCEPTION '{message}' USING ERRCODE = 'restrict_violation';
  END IF;
  IF {changed} THEN
    RAISE EXCEPTION '{message}' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER {function} BEFORE UPDATE OR DELETE ON {rule["table"]}
  FOR EACH ROW EXECUTE FUNCTION {function}();
"""
    reverse = f"DROP TRIGGER IF EXISTS {function} ON {rule['table']}; DROP FUNCTION IF EXISTS {function}();"
    return forward, reverse


def _sqlite(name: str, rule: dict) -> tuple[str, str]:
    changed = _changed(rule["content"], sqlite=True)
    if rule["also_refused"]:
        changed = f"{changed} OR {rule['also_refused']}"
    message = HELD.format(what=rule["what"])
    trigger = f"datasets_app_{name}_held"
    forward = f"""
CREATE TRIGGER {trigger}_update BEFORE UPDATE ON {rule["table"]}
  FOR EACH ROW WHEN ({rule["held"]}) AND ({changed})
  BEGIN SELECT RAISE(ABORT, '{message}'); END;
CREATE TRIGGER {trigger}_delete BEFORE DELETE ON {rule["table"]}
  FOR EACH ROW WHEN ({rule["held"]}) AND NOT {_deleting(rule["dataset"])}
  BEGIN SELECT RAISE(ABORT, '{message}'); END;
"""
    reverse = f"DROP TRIGGER IF EXISTS {trigger}_update; DROP TRIGGER IF EXISTS {trigger}_delete;"
    return forward, reverse


LIST_MESSAGE = HELD.format(what="list of tasks")


def _list_postgresql(same: str = SAME_TASK) -> tuple[str, str]:
    forward = f"""
CREATE OR REPLACE FUNCTION datasets_app_version_tasks_held() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF {_deleting(VERSION_DATASET)} THEN RETURN OLD; END IF;
    RAISE EXCEPTION '{LIST_MESSAGE}' USING ERRCODE = 'restrict_violation';
  END IF;
  IF NEW.version_id <> OLD.version_id
     OR NOT {REPOINTED_TO_A_COPY.format(same=same)} THEN
    RAISE EXCEPTION '{LIST_MESSAGE}' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER datasets_app_version_tasks_held BEFORE UPDATE OR DELETE
  ON datasets_app_version_tasks FOR EACH ROW EXECUTE FUNCTION datasets_app_version_tasks_held();
"""
    reverse = (
        "DROP TRIGGER IF EXISTS datasets_app_version_tasks_held ON datasets_app_version_tasks;"
        " DROP FUNCTION IF EXISTS datasets_app_version_tasks_held();"
    )
    return forward, reverse


def _list_sqlite(same: str = SAME_TASK_SQLITE) -> tuple[str, str]:
    forward = f"""
CREATE TRIGGER datasets_app_version_tasks_held_update BEFORE UPDATE ON datasets_app_version_tasks
  FOR EACH ROW WHEN NEW.version_id IS NOT OLD.version_id
    OR NOT {REPOINTED_TO_A_COPY.format(same=same)}
  BEGIN SELECT RAISE(ABORT, '{LIST_MESSAGE}'); END;
CREATE TRIGGER datasets_app_version_tasks_held_delete BEFORE DELETE ON datasets_app_version_tasks
  FOR EACH ROW WHEN NOT {_deleting(VERSION_DATASET)}
  BEGIN SELECT RAISE(ABORT, '{LIST_MESSAGE}'); END;
"""
    reverse = (
        "DROP TRIGGER IF EXISTS datasets_app_version_tasks_held_update;"
        " DROP TRIGGER IF EXISTS datasets_app_version_tasks_held_delete;"
    )
    return forward, reverse


def _statements(
    vendor: str,
    task_content: tuple[str, ...] = TASK_CONTENT,
    version_also_refused: str | None = None,
) -> list[tuple[str, str]]:
    """(forward, reverse) SQL of every trigger, a task's content being `task_content`, and
    a change of a version refused also when `version_also_refused` holds (later migrations
    add to both)."""
    rules = {
        **RULES,
        "task": {**RULES["task"], "content": task_content},
        "version": {**RULES["version"], "also_refused": version_also_refused},
    }
    if vendor == "postgresql":
        same = _same_task(task_content, sqlite=False)
        return [_postgresql(name, rule) for name, rule in rules.items()] + [_list_postgresql(same)]
    if vendor == "sqlite":
        same = _same_task(task_content, sqlite=True)
        return [_sqlite(name, rule) for name, rule in rules.items()] + [_list_sqlite(same)]
    raise NotImplementedError(f"No held-row triggers for the {vendor} database.")


def _run(schema_editor, sql: str) -> None:
    # sqlite3 runs one statement per execute(): each CREATE TRIGGER (its body's ';'
    # included) and each DROP goes on its own; PostgreSQL takes the text as it is.
    if schema_editor.connection.vendor == "sqlite":
        for statement in re.split(r"(?<=END;)|(?<=;)(?= DROP)", sql):
            if statement.strip():
                schema_editor.execute(statement.strip())
    else:
        schema_editor.execute(sql)


def create_triggers(apps, schema_editor) -> None:
    for forward, _reverse in _statements(schema_editor.connection.vendor):
        _run(schema_editor, forward)


def drop_triggers(apps, schema_editor) -> None:
    for _forward, reverse in _statements(schema_editor.connection.vendor):
        _run(schema_editor, reverse)


class Migration(migrations.Migration):
    dependencies = [
        ("datasets_app", "0006_task_reviewed"),
    ]

    operations = [
        migrations.AddField(
            model_name="dataset",
            name="deleting",
            field=models.BooleanField(default=False, editable=False),
        ),
        migrations.AddField(
            model_name="upload",
            name="archives_listed",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.RunPython(create_triggers, drop_triggers, elidable=False),
    ]
