"""An unchanged save changes nothing, on every form that writes.

Each test loads a form, posts it back exactly as a browser sends what the page shows, and
compares everything the dataset holds before and after: tasks, criteria, weights,
verifiers, files, settings, states, versions.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasets_app.importing.spec import DatasetSpec
from datasets_app.models import Dataset, TaskState
from tests.as_rendered import form_data
from tests.datasets import dataset_state, import_file, spec_zip
from tests.importing.strategies import dataset_specs

pytestmark = pytest.mark.django_db

RUBRIC_AND_ANSWER = {
    "format": "context-evals-dataset",
    "version": 1,
    "name": "Support",
    "criteria": [{"id": "polite", "criterion": "Is polite.", "weight": 2}],
    "tasks": [
        {
            "id": "refund",
            "prompt": "Write a refund email.\n\nKeep it short.\n",
            "expected": {"text": "Dear customer,\r\nyour refund is on its way."},
            "criteria": [
                {"id": "amount", "criterion": "States the amount.", "weight": 3},
                {"id": "date", "criterion": "  States the date.  ", "weight": 0.5},
            ],
        },
        {
            "id": "rubric-only",
            "prompt": "Summarise the call.",
            "criteria": [{"id": "short", "criterion": "Under 100 words.", "weight": 10}],
        },
    ],
}


def post_back(client, url: str, **kwargs) -> None:
    """Load the form at `url` and submit it untouched."""
    page = client.get(url)
    assert page.status_code == 200
    data = form_data(page.content.decode(), **kwargs)
    response = client.post(url, data)
    assert response.status_code in (200, 302), response.status_code


@pytest.fixture
def imported(auth_client, user):
    dataset = Dataset.objects.create(owner=user, name="Support")
    import_file(auth_client, dataset, "support.json", json.dumps(RUBRIC_AND_ANSWER).encode())
    return dataset


def test_saving_a_task_unchanged_keeps_its_criteria(auth_client, imported):
    # The defect: the criteria formset kept only forms that had changed, so an untouched
    # Save as draft deleted every criterion.
    before = dataset_state(imported)
    task = imported.tasks.get(task_id="refund")
    assert task.criteria.count() == 3  # "Matches the expected answer", amount, date
    post_back(auth_client, reverse("datasets_app:task_edit", args=[imported.pk, task.pk]))
    assert dataset_state(imported) == before


def test_a_criteria_only_task_saves_unchanged(auth_client, imported):
    # The defect: with its criteria dropped, it had "no expected answer and no criteria".
    before = dataset_state(imported)
    task = imported.tasks.get(task_id="rubric-only")
    url = reverse("datasets_app:task_edit", args=[imported.pk, task.pk])
    page = auth_client.post(url, form_data(auth_client.get(url).content.decode()))
    assert page.status_code == 302, page.content.decode()
    assert dataset_state(imported) == before


def test_saving_settings_unchanged_keeps_the_criteria_for_every_task(auth_client, imported):
    before = dataset_state(imported)
    post_back(auth_client, reverse("datasets_app:dataset_settings", args=[imported.pk]))
    assert dataset_state(imported) == before


def test_an_edit_still_saves(auth_client, imported):
    task = imported.tasks.get(task_id="refund")
    url = reverse("datasets_app:task_edit", args=[imported.pk, task.pk])
    data = form_data(auth_client.get(url).content.decode())
    data["criteria-1-weight"] = ["7"]
    auth_client.post(url, data)
    weights = [c.weight for c in imported.tasks.get(task_id="refund").criteria.all()]
    assert weights == [1.0, 7.0, 0.5]


def forms_that_write(dataset: Dataset) -> list[tuple[str, dict]]:
    """Every app form that writes to the dataset, with how to find it on its page."""
    urls = [
        (reverse("datasets_app:task_edit", args=[dataset.pk, task.pk]), {})
        for task in dataset.tasks.live()
    ]
    return [
        *urls,
        (reverse("datasets_app:task_create", args=[dataset.pk]), {}),
        (reverse("datasets_app:dataset_settings", args=[dataset.pk]), {}),
        (reverse("datasets_app:dataset_sharing", args=[dataset.pk]), {"having": "username"}),
    ]


def admin_forms(dataset: Dataset) -> list[str]:
    return [
        reverse("admin:datasets_app_dataset_change", args=[dataset.pk]),
        *(
            reverse("admin:datasets_app_task_change", args=[task.pk])
            for task in dataset.tasks.live()
        ),
    ]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=dataset_specs(with_paths=True, max_tasks=3), saved=st.booleans())
def test_every_form_posted_back_as_rendered_changes_nothing(
    client, admin_user, spec: DatasetSpec, saved: bool
) -> None:
    owner = get_user_model().objects.get_or_create(username="owner")[0]
    client.force_login(owner)
    dataset = Dataset.objects.create(owner=owner, name="Generated")
    import_file(client, dataset, "generated.zip", spec_zip(spec))
    if saved:
        client.post(reverse("datasets_app:version_save", args=[dataset.pk]))
        assert not dataset.tasks.filter(state=TaskState.DRAFT).exists()
    before = dataset_state(dataset)

    for url, where in forms_that_write(dataset):
        post_back(client, url, **where)
        assert dataset_state(dataset) == before, url

    client.force_login(admin_user)
    for url in admin_forms(dataset):
        post_back(client, url)
        assert dataset_state(dataset) == before, url
