"""Password reset in a real browser, where email is configured (issue 15)."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_forgotten_password_is_set_again_through_the_mailed_link(
    page, live_server, django_user_model, password_reset, screenshot
):
    password_reset(True)
    django_user_model.objects.create_user(
        username="grace", email="grace@example.com", password="pw-grace-12345"
    )
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_role("link", name="Forgotten your password?").click()
    page.get_by_label("Email address").fill("grace@example.com")
    screenshot(page, "password-reset-form")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    screenshot(page, "password-reset-done")

    (message,) = mail.outbox
    link = re.search(r"http://\S+/accounts/reset/\S+/", message.body).group(0)
    page.goto(link)
    page.get_by_label("New password").fill("a-new-long-password-42")
    page.get_by_label("The same again").fill("a-new-long-password-42")
    screenshot(page, "password-reset-confirm")
    page.get_by_role("button", name="Set the password").click()
    expect(page.get_by_role("heading", name="Your new password is set")).to_be_visible()

    page.get_by_role("link", name="Log in").click()
    page.get_by_label("User name").fill("grace")
    page.get_by_label("Password").fill("a-new-long-password-42")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
