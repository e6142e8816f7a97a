"""Migration 0015: versions saved the old way (a snapshot of every task beside the list of
rows) keep exactly what their snapshot held, read now from rows, on SQLite and PostgreSQL.

The database is taken back to 0014, filled as the old `version_save` filled it, and
migrated forward; every version's export is then what its snapshot held, whatever the
rows said, and the database still refuses to change what a version holds.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.db import IntegrityError, transaction

from datasets_app import selectors
from datasets_app.importing import json_format
from datasets_app.importing.spec import CriterionSpec, DatasetSpec, FileSpec, TaskSpec
from datasets_app.models import Task, Version
from tests.migrating import migrate, migrate_to_latest, tables_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("datasets_app", "0014_task_metadata")]


@pytest.fixture
def old_apps():
    """The app's tables as they were at 0014; back to the latest migration afterwards."""
    with tables_at(BEFORE) as apps:
        yield apps


ANSWER = TaskSpec(id="t1", name="Sum", prompt="2 + 2?", expected_text="4", metadata={"level": 1})
RUBRIC = TaskSpec(
    id="t2",
    name="Letter",
    prompt="Write a refund letter.",
    criteria=(CriterionSpec(id="c1", criterion="States the amount.", weight=2),),
    input_files=(FileSpec(name="policy.pdf", url="https://example.com/policy.pdf", size=10),),
)
STORED = FileSpec(name="notes.txt", path="task-files/2026/01/notes.txt", size=5, sha256="ab" * 32)
EXTRA = TaskSpec(
    id="t3", name="", prompt="Only in the snapshot.", expected_text="yes", expected_files=(STORED,)
)


def _row(apps, dataset, spec: TaskSpec, position: int, state: str = "saved"):
    Task = apps.get_model("datasets_app", "Task")
    Criterion = apps.get_model("datasets_app", "Criterion")
    TaskFile = apps.get_model("datasets_app", "TaskFile")
    task = Task.objects.create(
        dataset=dataset,
        task_id=spec.id,
        name=spec.name,
        prompt=spec.prompt,
        expected_text=spec.expected_text or "",
        metadata=spec.metadata,
        position=position,
        state=state,
    )
    for index, c in enumerate(spec.criteria):
        Criterion.objects.create(
            dataset=dataset, task=task, criterion_id=c.id, text=c.criterion, weight=c.weight,
            position=index,
        )  # fmt: skip
    for role, files in (("input", spec.input_files), ("expected", spec.expected_files)):
        for index, f in enumerate(files):
            TaskFile.objects.create(
                task=task, role=role, name=f.name, url=f.url or "", file=f.path or "",
                size=f.size, sha256=f.sha256 or "", position=index,
            )  # fmt: skip
    return task


def _old_version(apps, dataset, number: int, rows, snapshot_tasks):
    """A version as the old `version_save` wrote it: the snapshot of every task and the
    list of rows."""
    Version = apps.get_model("datasets_app", "Version")
    shared = (CriterionSpec(id="polite", criterion="Is polite.", weight=1),)
    spec = DatasetSpec(name=dataset.name, settings={"x": 1}, criteria=shared, tasks=snapshot_tasks)
    version = Version.objects.create(
        dataset=dataset, number=number, snapshot=json_format.to_document(spec)
    )
    version.tasks.set(rows)
    return version.snapshot


def test_old_versions_keep_what_their_snapshots_held(old_apps):
    apps = old_apps
    owner = apps.get_model("auth", "User").objects.create(username="old")
    dataset = apps.get_model("datasets_app", "Dataset").objects.create(owner=owner, name="Old")
    t1 = _row(apps, dataset, ANSWER, 0)
    # The admin once edited t2 in place after v1 was saved (before 0007 refused it): its row
    # says what v2 saved, v1's snapshot what v1 saved.
    t2 = _row(apps, dataset, replace(RUBRIC, prompt="Write a refund email."), 1)
    # A task of v1 not in its list, and one in its list not in its snapshot (which holds
    # the same stored file as the one missing: its size and SHA-256 are found there).
    stray = _row(
        apps, dataset, TaskSpec(id="t4", name="", prompt="v2", expected_files=(STORED,)), 2
    )
    v1 = _old_version(apps, dataset, 1, [t1, t2, stray], (ANSWER, RUBRIC, EXTRA))
    v2_tasks = (ANSWER, replace(RUBRIC, prompt="Write a refund email."))
    v2 = _old_version(apps, dataset, 2, [t1, t2], v2_tasks)

    migrate_to_latest()

    for number, snapshot in ((1, v1), (2, v2)):
        version = Version.objects.get(dataset_id=dataset.pk, number=number)
        assert "tasks" not in version.snapshot
        assert json_format.to_document(selectors.version_spec(version)) == snapshot
    held = {
        number: list(selectors.version_tasks(Version.objects.get(number=number)))
        for number in (1, 2)
    }
    assert [t.pk for t in held[2]] == [t1.pk, t2.pk], "rows that agreed are kept"
    assert held[1][0].pk == t1.pk, "a row saved unchanged is shared by both versions"
    copies = held[1][1:]
    assert [(t.task_id, t.state) for t in copies] == [("t2", "archived"), ("t3", "archived")]
    assert Task.objects.get(pk=t2.pk).prompt == "Write a refund email.", "the live task stays"
    stored = copies[1].files.get()
    assert (stored.file.name, stored.size, stored.sha256) == (STORED.path, 5, STORED.sha256)
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.filter(pk=copies[0].pk).update(prompt="Edited")


def test_backwards_the_snapshots_hold_the_tasks_again(old_apps):
    apps = old_apps
    owner = apps.get_model("auth", "User").objects.create(username="old")
    dataset = apps.get_model("datasets_app", "Dataset").objects.create(owner=owner, name="Old")
    rows = [_row(apps, dataset, ANSWER, 0), _row(apps, dataset, RUBRIC, 1)]
    snapshot = _old_version(apps, dataset, 1, rows, (ANSWER, RUBRIC))

    migrate_to_latest()
    apps = migrate(BEFORE)

    assert apps.get_model("datasets_app", "Version").objects.get().snapshot == snapshot
