"""Task and criterion ids are trimmed the same way on every import path (spec.trimmed_id,
in the one validator every format and the task form go through), so that export ->
import -> export is identical for ids a file gave with whitespace around them.

Why trim rather than keep: whitespace around an id is never meant (a spreadsheet cell's
stray space), reads the same on screen as the id without it, and a CSV cell could not
carry it back anyway, since the CSV and XLSX readers strip every cell that is not text."""

from __future__ import annotations

import io
import json

import openpyxl
import pytest
from django.contrib.auth import get_user_model

from datasets_app.importing import checker
from datasets_app.importing.document import DUPLICATE_TASK_ID
from datasets_app.models import Dataset
from tests.datasets import import_file
from tests.test_export_roundtrip import comparable, download, new_dataset_from

IDS = ["  t1", "t2\t", " t 3 "]
TRIMMED = ["t1", "t2", "t 3"]


def json_file() -> bytes:
    tasks = [
        {
            "id": task_id,
            "prompt": f"P{n}",
            "expected": f"A{n}",
            "criteria": [{"id": " c1 ", "criterion": "Right"}],
        }
        for n, task_id in enumerate(IDS)
    ]
    return json.dumps({"tasks": tasks}).encode()


def jsonl_file() -> bytes:
    lines = [
        json.dumps({"id": task_id, "prompt": f"P{n}", "expected": f"A{n}"})
        for n, task_id in enumerate(IDS)
    ]
    return "\n".join(lines).encode()


def csv_file() -> bytes:
    rows = [
        "id,prompt,expected answer",
        *(f'"{task_id}",P{n},A{n}' for n, task_id in enumerate(IDS)),
    ]
    return "\n".join(rows).encode()


def xlsx_file() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["id", "prompt", "expected answer"])
    for n, task_id in enumerate(IDS):
        sheet.append([task_id, f"P{n}", f"A{n}"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "build"),
    [("a.json", json_file), ("a.jsonl", jsonl_file), ("a.csv", csv_file), ("a.xlsx", xlsx_file)],
)
def test_every_format_trims_ids_the_same_way(name, build):
    result = checker.check_file(build(), name)
    assert result.ok, result.problems
    assert [task.id for task in result.plan.tasks] == TRIMMED


def test_the_same_id_with_and_without_spaces_is_a_duplicate():
    doc = {
        "tasks": [
            {"id": "t1", "prompt": "P", "expected": "A"},
            {"id": " t1", "prompt": "Q", "expected": "B"},
        ]
    }
    result = checker.check_file(json.dumps(doc).encode(), "a.json")
    assert DUPLICATE_TASK_ID.code in {problem.code for problem in result.problems}


@pytest.mark.django_db
@pytest.mark.parametrize("slug", ["csv", "json", "xlsx", "zip", "evalset"])
def test_ids_with_whitespace_export_and_import_back_identically(client, slug):
    owner = get_user_model().objects.create_user(username="owner")
    client.force_login(owner)
    dataset = Dataset.objects.create(owner=owner, name="Spaced")
    import_file(client, dataset, "spaced.json", json_file())
    assert sorted(dataset.tasks.values_list("task_id", flat=True)) == sorted(TRIMMED)
    name, first = download(client, dataset, slug)
    copy = new_dataset_from(client, name, first)
    assert sorted(copy.tasks.values_list("task_id", flat=True)) == sorted(TRIMMED)
    _name, again = download(client, copy, slug)
    assert comparable(slug, again) == comparable(slug, first)
