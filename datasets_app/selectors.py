"""Reads that pages, commands and tasks share, each with the queries it needs and no more."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Prefetch, Q, QuerySet, Sum
from django.shortcuts import get_object_or_404

from datasets_app.importing.spec import CheckOptions
from datasets_app.models import Criterion, Dataset, Run, SiteSettings, Task, Version


def checker_options() -> CheckOptions:
    """The checker's options as the administrator has set them."""
    return CheckOptions(python_checks_enabled=SiteSettings.load().python_checks_enabled)


def datasets_for(user: AbstractBaseUser) -> QuerySet[Dataset]:
    """The datasets a person may see: their own, those shared with them; staff see all."""
    datasets = Dataset.objects.all()
    if not user.is_staff:
        datasets = datasets.filter(Q(owner=user) | Q(shared_with=user)).distinct()
    return datasets


def dataset_for(user: AbstractBaseUser, pk: int) -> Dataset:
    """The dataset, or 404 when it does not exist *or* the person may not see it."""
    return get_object_or_404(datasets_for(user).select_related("owner"), pk=pk)


@dataclass(frozen=True)
class TaskRow:
    task: Task
    criteria: int
    total_weight: float

    @property
    def scored_by(self) -> str:
        return "criteria" if self.criteria else "expected answer"


def dataset_criteria(dataset: Dataset) -> QuerySet[Criterion]:
    """The dataset's criteria for every task (not archived)."""
    return dataset.criteria.filter(task__isnull=True, archived=False)


def task_rows(dataset: Dataset) -> list[TaskRow]:
    """The dataset's live tasks with how each is scored, in two queries."""
    shared = dataset_criteria(dataset).aggregate(n=Count("pk"), w=Sum("weight"))
    shared_count, shared_weight = shared["n"] or 0, shared["w"] or 0.0
    tasks = dataset.tasks.live().annotate(
        own_criteria=Count("criteria"), own_weight=Sum("criteria__weight")
    )
    return [
        TaskRow(
            task=task,
            criteria=task.own_criteria + shared_count,
            total_weight=(task.own_weight or 0.0) + shared_weight,
        )
        for task in tasks
    ]


def versions_of(dataset: Dataset) -> QuerySet[Version]:
    return dataset.versions.select_related("created_by").annotate(task_count=Count("tasks"))


def runs_of(dataset: Dataset) -> QuerySet[Run]:
    return (
        Run.objects.filter(version__dataset=dataset)
        .select_related("version", "created_by")
        .annotate(result_count=Count("results"))
    )


def task_for(dataset: Dataset, pk: int) -> Task:
    files = Prefetch("files")
    return get_object_or_404(dataset.tasks.prefetch_related("criteria", files), pk=pk)


def version_for(dataset: Dataset, number: int) -> Version:
    return get_object_or_404(dataset.versions.select_related("created_by"), number=number)
