"""Logging in, in a real browser: the pause after too many wrong passwords (issue 15)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_ten_wrong_passwords_show_a_page_that_says_why_and_for_how_long(
    page, live_server, django_user_model, screenshot
):
    django_user_model.objects.create_user(username="grace", password="pw-grace-12345")
    for _ in range(10):
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("User name").fill("grace")
        page.get_by_label("Password").fill("not her password")
        page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Logging in is paused")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("paused for 15 minutes")
    screenshot(page, "login-paused")
    # The right password waits too, until the pause is over.
    page.get_by_role("link", name="log in").click()
    page.get_by_label("User name").fill("grace")
    page.get_by_label("Password").fill("pw-grace-12345")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Logging in is paused")).to_be_visible()
