"""In a real browser: changing a password says beforehand how many API tokens it revokes,
and does; a dataset's owner deletes it from its Settings page after a confirmation."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from datasets_app.models import ApiToken, Dataset
from datasets_app.services import deletion, tokens
from tests.browser.helpers import dataset_with_everything, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_changing_the_password_revokes_the_tokens_it_said_it_would(logged_in, live_server):
    page = logged_in
    errors = watch_console(page)
    grace = get_user_model().objects.get(username="grace")
    for name in ("CI", "nightly"):
        tokens.api_token_create(user=grace, name=name)
    page.goto(f"{live_server.url}/account/api-tokens/")
    page.get_by_role("link", name="Change your password").click()
    expect(page.get_by_text("Changing your password revokes your 2 API tokens.")).to_be_visible()
    page.get_by_label("Current password").fill("pw-grace-12345")
    page.get_by_label("New password").fill("a-much-longer-secret-42")
    page.get_by_label("The same again").fill("a-much-longer-secret-42")
    page.get_by_role("button", name="Change the password").click()
    expect(page.get_by_role("heading", name="Password changed")).to_be_visible()
    expect(page.get_by_text("Your 2 API tokens were revoked")).to_be_visible()
    assert not ApiToken.objects.filter(user=grace).active().exists()
    assert errors == []


def test_the_owner_deletes_a_dataset_from_its_settings(logged_in, live_server):
    page = logged_in
    errors = watch_console(page)
    grace = get_user_model().objects.get(username="grace")
    dataset = dataset_with_everything(grace)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/settings/")
    page.get_by_role("link", name=f"Delete {dataset.name}…").click()
    expect(page.get_by_role("heading", name=f"Delete {dataset.name}?")).to_be_visible()
    described = deletion.dataset_contents(dataset).described
    expect(page.get_by_text(described)).to_be_visible()
    page.get_by_role("button", name=f"Delete {dataset.name}").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.get_by_text(f"Deleted {dataset.name}.")).to_be_visible()
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    assert errors == []
