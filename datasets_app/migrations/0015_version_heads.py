"""A version keeps its head, not a copy of every task: saving costs what changed.

Until now a version's row held a snapshot of the whole dataset (every task, its criteria
and files, as the .json format writes them) beside its list of task rows
(`datasets_app_version_tasks`), so saving 10,000 tasks wrote 10,000 tasks again even when
one had changed. The task rows are what a version is: a row a version holds never changes
(the triggers of 0007 and 0014), an edit of one is a new row, and a row saved unchanged is
shared by every version that saved it. From here `Version.snapshot` keeps only the head
(name, description, settings, criteria for every task).

Versions saved the old way are converted here, the snapshot winning wherever the rows
disagree with it (a version saved before 0007 could have had a row edited in place by
the admin): each task whose row differs from what the snapshot holds, or has no row, gets
an archived row with the snapshot's content, and the version's list points at that row
instead; a row the snapshot does not hold leaves the list. Then the tasks leave the
snapshot. Backwards, the tasks are written into the snapshot again from the rows.

The held-row triggers refuse all of this, so they are dropped first and made again last
(the latest set, 0014's). Snapshots are read with the .json format's own reader
(`json_format.from_document`), which reads every document the app ever wrote.
"""

import importlib

from django.db import migrations

from datasets_app.importing import json_format
from datasets_app.importing.spec import CriterionSpec, DatasetSpec, FileSpec, TaskSpec, Verifier

held_rows = importlib.import_module("datasets_app.migrations.0014_task_metadata")

INPUT, EXPECTED = "input", "expected"


def _row_spec(task) -> TaskSpec:
    """A task row as the .json format's plan holds it (as `selectors.task_spec` made the
    snapshots' tasks when they were saved)."""
    files = sorted(task.files.all(), key=lambda f: (f.role, f.position, f.pk))

    def file_spec(f) -> FileSpec:
        if f.url:
            return FileSpec(name=f.name, url=f.url, size=f.size)
        return FileSpec(name=f.name, path=f.file.name, size=f.size, sha256=f.sha256 or None)

    criteria = sorted(task.criteria.all(), key=lambda c: (c.position, c.pk))
    return TaskSpec(
        id=task.task_id,
        name=task.name,
        prompt=task.prompt,
        expected_text=task.expected_text or None,
        expected_verifier=Verifier.from_json(task.expected_verifier),
        criteria=tuple(
            CriterionSpec(
                id=c.criterion_id,
                criterion=c.text,
                weight=c.weight,
                verifier=Verifier.from_json(c.verifier),
            )
            for c in criteria
        ),
        input_files=tuple(file_spec(f) for f in files if f.role == INPUT),
        expected_files=tuple(file_spec(f) for f in files if f.role == EXPECTED),
        evidence=task.evidence or {},
        metadata=task.metadata or {},
    )


def _document(spec: TaskSpec) -> dict:
    """A task as a snapshot holds it (the .json format's task: a file by its name and its
    path or link, without the size and SHA-256 that its row adds)."""
    return json_format.to_document(DatasetSpec(tasks=(spec,)))["tasks"][0]


def _stored(apps, path: str | None) -> tuple[int | None, str]:
    """The size and SHA-256 of a stored file, from a row that holds it (bytes are stored
    once, by content): what a snapshot did not keep."""
    TaskFile = apps.get_model("datasets_app", "TaskFile")
    found = TaskFile.objects.filter(file=path).exclude(file="").values_list("size", "sha256")
    return found.first() or (None, "")


def _archived_copy(apps, version, spec: TaskSpec, position: int):
    """A new archived row holding `spec` as `version` saved it."""
    Task = apps.get_model("datasets_app", "Task")
    Criterion = apps.get_model("datasets_app", "Criterion")
    TaskFile = apps.get_model("datasets_app", "TaskFile")
    task = Task.objects.create(
        dataset_id=version.dataset_id,
        task_id=spec.id,
        name=spec.name,
        prompt=spec.prompt,
        expected_text=spec.expected_text or "",
        expected_verifier=spec.expected_verifier.to_json() if spec.expected_verifier else None,
        evidence=dict(spec.evidence),
        metadata=dict(spec.metadata),
        position=position,
        state="archived",
    )
    Criterion.objects.bulk_create(
        Criterion(
            dataset_id=version.dataset_id,
            task=task,
            criterion_id=c.id,
            text=c.criterion,
            weight=c.weight,
            verifier=c.verifier.to_json() if c.verifier else None,
            position=index,
        )
        for index, c in enumerate(spec.criteria)
    )
    rows = []
    for role, files in ((INPUT, spec.input_files), (EXPECTED, spec.expected_files)):
        for index, f in enumerate(files):
            size, sha256 = _stored(apps, f.path) if f.path else (None, "")
            rows.append(
                TaskFile(
                    task=task,
                    role=role,
                    name=f.name,
                    file=f.path or "",
                    url=f.url or "",
                    size=size,
                    sha256=sha256,
                    position=index,
                )
            )
    TaskFile.objects.bulk_create(rows)
    return task


def _version_rows(apps, version) -> list:
    Task = apps.get_model("datasets_app", "Task")
    return list(
        Task.objects.filter(versions=version)
        .order_by("position", "pk")
        .prefetch_related("criteria", "files")
    )


def _hold_what_the_snapshot_holds(apps, version) -> None:
    """Point the version's list at rows that hold exactly its snapshot's tasks."""
    Version = apps.get_model("datasets_app", "Version")
    through = Version.tasks.through.objects.filter(version_id=version.pk)
    rows = {row.task_id: row for row in _version_rows(apps, version)}
    after = max((row.position for row in rows.values()), default=-1) + 1
    for index, spec in enumerate(json_format.from_document(version.snapshot).tasks):
        row = rows.pop(spec.id, None)
        if row is not None and _document(_row_spec(row)) == _document(spec):
            continue
        copy = _archived_copy(apps, version, spec, row.position if row else after + index)
        if row is not None:
            through.filter(task_id=row.pk).update(task_id=copy.pk)
        else:
            Version.tasks.through.objects.create(version_id=version.pk, task_id=copy.pk)
    through.filter(task_id__in=[row.pk for row in rows.values()]).delete()


def heads_only(apps, schema_editor) -> None:
    Version = apps.get_model("datasets_app", "Version")
    # One version at a time, each read on its own: never a cursor open on the table it writes.
    for pk in list(Version.objects.order_by("pk").values_list("pk", flat=True)):
        version = Version.objects.get(pk=pk)
        if "tasks" not in (version.snapshot or {}):
            continue
        _hold_what_the_snapshot_holds(apps, version)
        version.snapshot = {k: v for k, v in version.snapshot.items() if k != "tasks"}
        version.save(update_fields=["snapshot"])


def tasks_into_snapshots(apps, schema_editor) -> None:
    Version = apps.get_model("datasets_app", "Version")
    for pk in list(Version.objects.order_by("pk").values_list("pk", flat=True)):
        version = Version.objects.get(pk=pk)
        if "tasks" in (version.snapshot or {}):
            continue
        specs = tuple(_row_spec(row) for row in _version_rows(apps, version))
        tasks = json_format.to_document(DatasetSpec(tasks=specs))["tasks"]
        version.snapshot = {**version.snapshot, "tasks": tasks}
        version.save(update_fields=["snapshot"])


class Migration(migrations.Migration):
    dependencies = [
        ("datasets_app", "0014_task_metadata"),
    ]

    operations = [
        migrations.RunPython(held_rows.drop_triggers, held_rows.create_triggers, elidable=False),
        migrations.RunPython(heads_only, tasks_into_snapshots, elidable=False),
        migrations.RunPython(held_rows.create_triggers, held_rows.drop_triggers, elidable=False),
    ]
