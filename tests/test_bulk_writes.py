"""The one bulk writer (`services.bulk.insert_rows`): COPY on PostgreSQL, bulk_create on
SQLite. An import written with it makes as many queries for 200 tasks as for 2, and a
failure at its last rows leaves nothing of the import behind."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from datasets_app.models import Criterion, Task, TaskFile, Upload
from datasets_app.services import bulk, imports

pytestmark = pytest.mark.django_db


def document(tasks: int) -> bytes:
    return json.dumps(
        {
            "criteria": [{"id": "clear", "criterion": "Is clear.", "weight": 1}],
            "tasks": [
                {
                    "id": f"q{n}",
                    "name": f"Question {n}",
                    "prompt": f"What is {n} + {n}?\nSay it in words, “exactly”.",
                    "expected": {"text": f"{n + n}"},
                    "criteria": [
                        {"id": "shows", "criterion": f"Shows {n} + {n}.", "weight": 2.5},
                        {"id": "tab", "criterion": "Keeps\ttabs and \\ slashes.", "weight": 1},
                    ],
                    "inputFiles": [{"name": "sheet.csv", "url": f"https://example.com/{n}.csv"}],
                    "evidence": {"anchors": [{"id": n}]},
                }
                for n in range(tasks)
            ],
        }
    ).encode()


def checked(user, dataset, data: bytes) -> Upload:
    upload = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=SimpleUploadedFile("tasks.json", data)
    )
    return imports.upload_check(upload=upload)


def test_rows_written_read_back_as_given_with_their_keys(make_dataset):
    dataset = make_dataset()
    tasks = [
        Task(
            dataset=dataset,
            task_id=f"t{n}",
            prompt=f"Line one\nline\ttwo \\ {n}",
            expected_verifier={"kind": "exact_match"} if n else None,
            evidence={"spans": ["a", "b"]},
            position=n,
        )
        for n in range(3)
    ]
    bulk.insert_rows(Task, tasks)
    bulk.insert_rows(
        Criterion,
        [Criterion(dataset=dataset, task=task, criterion_id="c", text="Ok.") for task in tasks],
    )

    stored = list(Task.objects.filter(dataset=dataset).order_by("position"))
    assert [t.pk for t in stored] == [t.pk for t in tasks]
    assert stored[1].prompt == "Line one\nline\ttwo \\ 1"
    assert (stored[0].expected_verifier, stored[1].expected_verifier) == (
        None,
        {"kind": "exact_match"},
    )
    assert stored[2].evidence == {"spans": ["a", "b"]}
    assert stored[0].created_at is not None and stored[0].updated_at is not None
    assert sorted(Criterion.objects.values_list("task_id", flat=True)) == [t.pk for t in tasks]


@pytest.mark.postgres
def test_an_import_makes_as_many_queries_for_200_tasks_as_for_2(user, make_dataset):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's bulk_create splits at its limit on a statement's parameters")
    counts = []
    for size in (2, 200):
        upload = checked(user, make_dataset(name=f"{size} tasks"), document(size))
        with CaptureQueriesContext(connection) as queries:
            imports.import_run(upload=upload, mode="add")
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]
    assert counts[1] <= 25


def test_imported_rows_are_what_the_file_says(user, make_dataset):
    dataset = make_dataset()
    imports.import_run(upload=checked(user, dataset, document(3)), mode="add")

    task = Task.objects.get(dataset=dataset, task_id="q2")
    assert task.prompt == "What is 2 + 2?\nSay it in words, “exactly”."
    assert task.evidence == {"anchors": [{"id": 2}]}
    assert [(c.criterion_id, c.text, c.weight) for c in task.criteria.all()] == [
        ("matches-expected-answer", "Matches the expected answer", 1.0),
        ("shows", "Shows 2 + 2.", 2.5),
        ("tab", "Keeps\ttabs and \\ slashes.", 1.0),
    ]
    assert [(f.name, f.url) for f in task.files.all()] == [
        ("sheet.csv", "https://example.com/2.csv")
    ]
    assert dataset.criteria.filter(task__isnull=True).get().text == "Is clear."


@pytest.mark.postgres
def test_a_copy_refused_at_the_last_rows_leaves_nothing_of_the_import(
    user, make_dataset, monkeypatch
):
    """The files go last: the database refuses them (a file row neither stored nor
    linked breaks its check constraint) after the tasks and criteria were copied."""
    if connection.vendor != "postgresql":
        pytest.skip("COPY is PostgreSQL's; this runs in the PostgreSQL pass of make test")
    dataset = make_dataset(tasks=1)
    upload = checked(user, dataset, document(50))
    written = bulk.insert_rows

    def insert_broken_files(model, rows):
        if model is TaskFile:
            rows[-1].url = ""
        return written(model, rows)

    monkeypatch.setattr(bulk, "insert_rows", insert_broken_files)
    with pytest.raises(IntegrityError):
        imports.import_run(upload=upload, mode="add")

    assert [t.task_id for t in Task.objects.filter(dataset=dataset)] == ["t1"]
    assert not Criterion.objects.filter(task__task_id__startswith="q").exists()
    assert not dataset.criteria.filter(task__isnull=True).exists()
    assert TaskFile.objects.count() == 0
    assert Upload.objects.get(pk=upload.pk).state == Upload.State.CHECKED


def test_rows_some_with_a_key_of_their_own_keep_it_and_the_others_get_one(make_dataset):
    dataset = make_dataset()
    own_key = 10**9
    tasks = [
        Task(dataset=dataset, task_id=f"t{n}", prompt="Q?", expected_text="A", position=n)
        for n in range(3)
    ]
    tasks[1].pk = own_key

    bulk.insert_rows(Task, tasks)

    stored = dict(Task.objects.filter(dataset=dataset).values_list("task_id", "pk"))
    assert stored["t1"] == own_key
    assert len(set(stored.values())) == 3
    assert {t.task_id: t.pk for t in tasks} == stored


def test_an_empty_list_writes_nothing():
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert list(bulk.insert_rows(Task, [])) == []
    assert len(queries.captured_queries) == 0
