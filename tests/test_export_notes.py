"""The export page's warnings come from aggregate queries (`selectors.export_facts`), not
from every task loaded: they are exactly what the same tasks in memory make, for the
dataset and for a version, in a number of queries that does not grow with the tasks."""

from __future__ import annotations

import pytest
from django.urls import reverse

from datasets_app import exporting, selectors
from datasets_app.importing import evalset_format, xlsx_format
from datasets_app.models import Criterion, Task, TaskFile
from datasets_app.services import datasets

pytestmark = pytest.mark.django_db


def add_task(dataset, number: int, **fields) -> Task:
    values = {
        "task_id": f"t{number}",
        "name": f"Task {number}",
        "prompt": f"Prompt {number}",
        "position": number,
        **fields,
    }
    return Task.objects.create(dataset=dataset, **values)


@pytest.fixture
def dataset(make_dataset):
    """Tasks with everything some format cannot carry, some of it more than once."""
    dataset = make_dataset(tasks=0)
    dataset.description = "Described."
    dataset.settings = {"expectedAnswerVerifier": {"kind": "exact_match"}}
    dataset.save()
    Criterion.objects.create(dataset=dataset, criterion_id="all", text="Clear\r\nand short.")
    # Graded by criteria only, more of them than the warning names, between the others.
    for number in (1, 3, 5, 7, 9, 11, 13):
        task = add_task(dataset, number)
        Criterion.objects.create(dataset=dataset, task=task, criterion_id="c", text="Kind")
    # Evidence the eval set cannot read, and no answer: left out, at position 2.
    add_task(dataset, 2, evidence={"gold": "not a list"})
    # Evidence it reads, with an answer and criteria: kept for its answer only.
    retrieval = add_task(
        dataset,
        4,
        expected_text="yes",
        evidence={"qtype": "multi_hop", "meta": {"metadata": "a note"}},
        metadata={"split": "dev"},
    )
    Criterion.objects.create(dataset=dataset, task=retrieval, criterion_id="c", text="Polite")
    # Characters an .xlsx changes, in a text column, a JSON column and a criterion.
    add_task(dataset, 6, expected_text="a\rb", name="Bad \ufffe name")
    add_task(dataset, 8, expected_text="a", metadata={"note": "bell \x07", "lines": "x\ry"})
    verifier = {"kind": "llm_judge", "instructions": "Say yes.\r\nOr no.\x01"}
    add_task(dataset, 10, expected_text="a", expected_verifier=verifier)
    odd = add_task(dataset, 12, expected_text="a")
    Criterion.objects.create(dataset=dataset, task=odd, criterion_id="v", text="Tab\x0bbed")
    # A backslash before an r (no carriage return: a false lead the count sorts out).
    add_task(dataset, 14, expected_text="C:\\recent", metadata={"path": "C:\\recent"})
    # Stored files, more than the warning names, and a link (which every format keeps).
    for number in range(15, 27):
        task = add_task(dataset, number, expected_text="a")
        TaskFile.objects.create(
            task=task, role="input", name=f"f{number}.pdf", file=f"task-files/f{number}.pdf", size=1
        )
    linked = add_task(dataset, 27, expected_text="a")
    TaskFile.objects.create(task=linked, role="input", name="l.csv", url="https://e.com/l.csv")
    return dataset


def in_memory(spec) -> list[exporting.ExportNotes]:
    return exporting.export_notes(spec)


def test_the_dataset_s_warnings_are_those_of_its_tasks_in_memory(dataset):
    expected = in_memory(selectors.dataset_spec(dataset=dataset))
    assert selectors.dataset_export_notes(dataset) == expected
    by_format = {notes.format.slug: notes for notes in expected}
    # The fixture reaches what it means to: each kind of warning, with counts past one.
    evalset = by_format["evalset"].warnings
    assert (
        evalset_format.MSG_EXPORT_CRITERIA.format(
            tasks="8 tasks", ids="t1, t2, t3, t5, t7 and 3 more"
        )
        in evalset
    )
    assert by_format["xlsx"].warnings[-3:-1] == [
        xlsx_format.MSG_WRITE_CONTROL_CHARACTERS.format(cells="4 cells"),
        xlsx_format.MSG_WRITE_CARRIAGE_RETURNS.format(cells="4 cells"),
    ]
    assert "12 files" in by_format["csv"].warnings[-1]
    assert "and 2 more" in by_format["csv"].warnings[-1]


def test_a_version_s_warnings_are_those_of_its_tasks_in_memory(dataset, user):
    version = datasets.version_save(dataset=dataset, user=user)
    assert selectors.version_export_notes(version) == in_memory(selectors.version_spec(version))


def test_the_export_page_s_queries_do_not_grow_with_the_tasks(
    auth_client, dataset, django_assert_max_num_queries
):
    url = reverse("datasets_app:dataset_export_page", args=[dataset.pk])
    with django_assert_max_num_queries(30) as few:
        auth_client.get(url)
    for number in range(100, 160):
        task = add_task(dataset, number, evidence={"gold": "not a list"}, prompt="a\rb")
        Criterion.objects.create(dataset=dataset, task=task, criterion_id="c", text="\x01")
        TaskFile.objects.create(
            task=task, role="input", name="g.pdf", file="task-files/g.pdf", size=1
        )
    with django_assert_max_num_queries(len(few.captured_queries)):
        page = auth_client.get(url)
    assert "72 files" in page.content.decode()
