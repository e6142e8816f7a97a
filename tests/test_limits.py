"""Upper bounds on what one person makes (tokens, datasets, tasks per dataset) and the
rates of making datasets and tokens, through the pages, the API and the commands."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from datasets_app import guards, selectors
from datasets_app.models import ApiToken, Dataset
from datasets_app.services import limits, tokens
from tests.api.conftest import bearer, error_of
from tests.conftest import FILES
from tests.test_task_views import task_form

# Two tasks, q3-end-date and yoy-growth.
TWO_TASKS = (FILES / "json" / "expected_answers_template.json").read_bytes()


def api_of(user) -> Client:
    return bearer(tokens.api_token_create(user=user, name="CI")[1])


@pytest.mark.django_db
def test_past_the_token_bound_the_tokens_page_refuses_and_says_why(auth_client, user, settings):
    settings.MAX_API_TOKENS_PER_PERSON = 2
    for name in ("a", "b"):
        tokens.api_token_create(user=user, name=name)
    page = auth_client.post(reverse("datasets_app:api_tokens"), {"name": "c"})
    assert page.status_code == 200
    assert limits.TOO_MANY_TOKENS.format(count=2) in page.content.decode()
    assert ApiToken.objects.filter(user=user).count() == 2
    # A revoked token opens nothing, so it makes room.
    tokens.api_token_revoke(token=ApiToken.objects.get(name="a"))
    auth_client.post(reverse("datasets_app:api_tokens"), {"name": "c"})
    assert ApiToken.objects.filter(user=user).active().count() == 2


@pytest.mark.django_db
def test_past_the_token_bound_the_command_refuses(user, settings):
    settings.MAX_API_TOKENS_PER_PERSON = 1
    tokens.api_token_create(user=user, name="a")
    with pytest.raises(CommandError, match="the most one person can have"):
        call_command("create_api_token", "ada")


@pytest.mark.django_db
def test_making_tokens_is_rate_limited(auth_client, settings):
    settings.RATELIMIT_TOKENS = "2/m"
    url = reverse("datasets_app:api_tokens")
    for name in ("a", "b"):
        assert "Your new token" in auth_client.post(url, {"name": name}).content.decode()
    refused = auth_client.post(url, {"name": "c"})
    assert refused.status_code == 429 and refused["Retry-After"]
    assert guards.TOO_MANY_NEW_TOKENS in refused.content.decode()
    assert ApiToken.objects.count() == 2


@pytest.mark.django_db
def test_past_the_dataset_bound_the_new_dataset_page_and_the_api_refuse(
    auth_client, user, make_dataset, settings
):
    settings.MAX_DATASETS_PER_PERSON = 1
    make_dataset()
    page = auth_client.post(reverse("datasets_app:dataset_create"), {"name": "Second"})
    assert page.status_code == 200
    assert limits.TOO_MANY_DATASETS.format(count=1) in page.content.decode()
    response = api_of(user).post(
        "/api/v1/datasets", {"name": "Third"}, content_type="application/json"
    )
    assert response.status_code == 400 and error_of(response)["code"] == "limit_reached"
    assert Dataset.objects.count() == 1


@pytest.mark.django_db
def test_making_datasets_is_rate_limited_on_the_page_and_the_api(auth_client, user, settings):
    settings.RATELIMIT_DATASETS = "1/m"
    url = reverse("datasets_app:dataset_create")
    assert auth_client.post(url, {"name": "One"}).status_code == 302
    refused = auth_client.post(url, {"name": "Two"})
    assert refused.status_code == 429
    assert guards.TOO_MANY_NEW_DATASETS in refused.content.decode()
    # The API counts in the same rate.
    response = api_of(user).post(
        "/api/v1/datasets", {"name": "Three"}, content_type="application/json"
    )
    assert response.status_code == 429 and error_of(response)["code"] == "rate_limited"
    assert list(Dataset.objects.values_list("name", flat=True)) == ["One"]


@pytest.mark.django_db
def test_past_the_task_bound_the_task_form_refuses(auth_client, make_dataset, settings):
    settings.MAX_TASKS_PER_DATASET = 2
    dataset = make_dataset(tasks=2)
    url = reverse("datasets_app:task_create", args=[dataset.pk])
    page = auth_client.post(url, task_form(expected_text="4", prompt="Typed, kept"))
    assert page.status_code == 200
    text = page.content.decode()
    assert limits.TOO_MANY_TASKS.format(count=2) in text
    assert "Typed, kept" in text, "the form comes back as typed"
    assert dataset.tasks.count() == 2


@pytest.mark.django_db
def test_an_import_past_the_task_bound_is_a_problem_and_writes_nothing(
    user, make_dataset, settings
):
    settings.MAX_TASKS_PER_DATASET = 3
    dataset = make_dataset(tasks=2)
    body = (
        api_of(user)
        .post(
            f"/api/v1/datasets/{dataset.pk}/imports",
            {"file": SimpleUploadedFile("qa.json", TWO_TASKS)},
        )
        .json()
    )
    assert body["state"] == "failed"
    message = selectors.TOO_MANY_TASKS.format(count=2, adding=2, limit=3)
    assert [(p["code"], p["message"]) for p in body["problems"]] == [
        (selectors.TOO_MANY_TASKS.code, message)
    ]
    assert "2 tasks and the file adds 2: more than the 3" in message
    assert dataset.tasks.count() == 2


@pytest.mark.django_db
def test_the_import_dialog_shows_the_task_bound_before_importing(
    auth_client, make_dataset, settings
):
    settings.MAX_TASKS_PER_DATASET = 3
    dataset = make_dataset(tasks=2)
    page = auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("qa.json", TWO_TASKS), "mode": "add"},
    ).content.decode()
    assert "more than the 3 one dataset can hold" in page
