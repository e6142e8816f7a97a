"""The first hour, in a real browser (issue 27, item 10): the administrator `make run`
printed signs in, adds a person on the People page, and that person signs in with the
password shown once."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from tests.browser.helpers import axe_violations, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, url: str, username: str, password: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_the_first_administrator_adds_a_person_who_then_signs_in(page, live_server, screenshot):
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    admin_password = re.search(r"password:\s+(\S+)", out.getvalue())[1]
    errors = watch_console(page)

    page.goto(f"{live_server.url}/accounts/login/")
    expect(page.get_by_text("ask one of its administrators to add you")).to_be_visible()
    screenshot(page, "first-hour-login")
    sign_in(page, live_server.url, "admin", admin_password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="People").click()
    expect(page.get_by_role("heading", name="People", exact=True)).to_be_visible()
    page.get_by_label("User name").fill("grace")
    page.get_by_label("Email (optional)").fill("grace@example.com")
    page.get_by_role("button", name="Add person").click()

    expect(page.get_by_role("status")).to_contain_text("Added grace.")
    password = page.get_by_label("Password", exact=True).input_value()
    expect(page.get_by_role("cell", name="grace@example.com")).to_be_visible()
    screenshot(page, "first-hour-person-added")
    assert axe_violations(page, live_server.url) == []
    page.get_by_role("button", name="Log out admin").click()

    sign_in(page, live_server.url, "grace", password)
    expect(page.get_by_role("button", name="Log out grace")).to_be_visible()
    expect(page.get_by_role("link", name="People")).to_have_count(0)
    assert errors == []


def test_an_invited_person_chooses_a_password_and_is_signed_in(
    page, live_server, admin_user, screenshot
):
    admin_user.set_password("pw-admin-12345")
    admin_user.save()
    sign_in(page, live_server.url, admin_user.username, "pw-admin-12345")
    page.goto(f"{live_server.url}/people/")
    page.get_by_label("User name").fill("ada")
    page.get_by_label("An invite link").check()
    page.get_by_role("button", name="Add person").click()
    expect(page.get_by_role("status")).to_contain_text("Invited ada.")
    link = page.get_by_role("textbox", name="Invite link").input_value()
    screenshot(page, "first-hour-invited")
    page.get_by_role("button", name=f"Log out {admin_user.username}").click()

    page.goto(link)
    expect(page.get_by_role("heading", name="Choose your password")).to_be_visible()
    page.get_by_label("Password", exact=True).fill("ada-chose-this-9")
    page.get_by_label("The same again").fill("ada-chose-this-9")
    screenshot(page, "first-hour-invite-page")
    assert axe_violations(page, live_server.url) == []
    page.get_by_role("button", name="Set the password and sign in").click()
    expect(page.get_by_text("Welcome, ada: you are signed in.")).to_be_visible()
    expect(page.get_by_role("button", name="Log out ada")).to_be_visible()
