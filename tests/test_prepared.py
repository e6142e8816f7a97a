"""Reads compiled once (`prepared`): the try's read of a task gives what the ORM gives, to
the same people, in the same three queries."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.http import Http404

from datasets_app import selectors
from datasets_app.models import Criterion, Dataset, Task, TaskFile
from datasets_app.prepared import Prepared

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded(make_dataset):
    dataset = make_dataset(name="Graded")
    dataset.settings = {"defaultVerifier": {"kind": "exact_match"}}
    dataset.save()
    task = Task.objects.create(
        dataset=dataset,
        task_id="q1",
        name="Question 1",
        prompt="What is it?",
        expected_text="It",
        expected_verifier={"kind": "exact_match"},
        metadata={"topic": "x"},
    )
    for position, (cid, on) in enumerate([("own", task), ("every", None), ("own-2", task)]):
        Criterion.objects.create(
            dataset=dataset,
            task=on,
            criterion_id=cid,
            text=f"Is {cid}",
            weight=position + 1,
            verifier={"kind": "llm_judge", "instructions": "{{output}}"},
            position=position,
        )
    TaskFile.objects.create(task=task, role=TaskFile.Role.INPUT, name="a.txt", url="https://x/a")
    return task


def test_a_try_reads_the_task_as_the_orm_does_in_three_queries(
    graded, user, django_assert_num_queries
):
    with django_assert_num_queries(3):
        task, dataset_spec, task_spec = selectors.task_to_grade(user, graded.dataset_id, graded.pk)

    assert (task.pk, task.task_id, task.metadata) == (graded.pk, "q1", {"topic": "x"})
    assert task.dataset.pk == graded.dataset_id and task.dataset.settings == graded.dataset.settings
    loaded = selectors.task_for(graded.dataset, graded.pk)
    assert task_spec == selectors.task_spec(loaded)
    assert dataset_spec == selectors.dataset_spec(dataset=graded.dataset, tasks=())
    assert [c.id for c in task_spec.criteria] == ["own", "own-2"]
    assert [c.id for c in dataset_spec.criteria] == ["every"]


def test_only_people_who_may_see_the_dataset_read_its_task(graded, other_user):
    with pytest.raises(Http404):
        selectors.task_to_grade(other_user, graded.dataset_id, graded.pk)
    graded.dataset.shared_with.add(other_user)
    assert selectors.task_to_grade(other_user, graded.dataset_id, graded.pk)[0].pk == graded.pk


def test_someone_who_sees_every_dataset_reads_any_task(graded, other_user):
    other_user.is_staff = True
    other_user.save()
    codename = selectors.EVERY_DATASET_PERMISSION.split(".")[1]
    other_user.user_permissions.add(Permission.objects.get(codename=codename))
    staff = type(other_user).objects.get(pk=other_user.pk)  # permissions read afresh

    assert selectors.task_to_grade(staff, graded.dataset_id, graded.pk)[0].pk == graded.pk


def test_a_task_of_another_dataset_is_not_found(graded, make_dataset):
    elsewhere = make_dataset(name="Elsewhere")
    with pytest.raises(Http404):
        selectors.task_to_grade(elsewhere.owner, elsewhere.pk, graded.pk)


def test_a_prepared_read_runs_with_each_calls_values(make_dataset):
    names = Prepared(
        lambda variant, *, dataset_id: Dataset.objects.filter(pk=dataset_id).values_list(
            "name", "settings"
        ),
        ("dataset_id",),
    )
    first = make_dataset(name="First")
    second = make_dataset(name="Second")
    second.settings = {"a": [1]}
    second.save()

    assert names.rows(dataset_id=first.pk) == [("First", first.settings)]
    assert names.rows(dataset_id=second.pk) == [("Second", {"a": [1]})]  # JSON decoded
    assert names.rows(dataset_id=10**9) == []
