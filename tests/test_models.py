"""Constraints the database itself keeps."""

import pytest
from django.db import IntegrityError, transaction

from datasets_app.models import Criterion, SiteSettings, Task, TaskState, Version

pytestmark = pytest.mark.django_db


def test_python_checks_are_off_until_an_administrator_turns_them_on():
    assert SiteSettings.load().python_checks_enabled is False


def test_a_live_task_id_is_unique_within_its_dataset_but_archived_ones_may_repeat(make_dataset):
    dataset = make_dataset(tasks=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.create(dataset=dataset, task_id="t1", prompt="again")
    Task.objects.filter(dataset=dataset).update(state=TaskState.ARCHIVED)
    Task.objects.create(dataset=dataset, task_id="t1", prompt="again")
    assert dataset.tasks.live().count() == 1
    assert dataset.tasks.count() == 2


def test_a_criterion_weight_must_be_positive(make_dataset):
    dataset = make_dataset()
    with pytest.raises(IntegrityError), transaction.atomic():
        Criterion.objects.create(dataset=dataset, criterion_id="c", text="x", weight=0)


def test_a_version_number_is_unique_per_dataset(make_dataset):
    dataset = make_dataset()
    Version.objects.create(dataset=dataset, number=1, snapshot={})
    with pytest.raises(IntegrityError), transaction.atomic():
        Version.objects.create(dataset=dataset, number=1, snapshot={})
    other = make_dataset(name="Other")
    Version.objects.create(dataset=other, number=1, snapshot={})
