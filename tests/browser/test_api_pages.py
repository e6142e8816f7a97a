"""The API's pages in a real browser: the docs page (served from our static files, under our
CSP) and the person's API tokens page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.helpers import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_page_works_under_our_csp(logged_in, live_server, screenshot):
    page = logged_in
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    page.on("pageerror", lambda e: problems.append(str(e)))
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(f"{live_server.url}/api/v1/docs")
    page.get_by_role("heading", name="Context Evals API").wait_for()
    page.get_by_text("/api/v1/check").first.wait_for()
    screenshot(page, "api-docs")
    assert problems == [], problems
    assert all(url.startswith(live_server.url) for url in requested), requested


def test_a_token_is_made_shown_once_and_revoked_on_the_tokens_page(
    logged_in, live_server, screenshot
):
    page = logged_in
    page.get_by_role("link", name="API tokens").click()
    page.get_by_label("Name").fill("nightly CI")
    page.get_by_label("Expires after (days)").fill("90")
    page.get_by_role("button", name="Create token").click()
    secret = page.get_by_label("Token").input_value()
    assert secret.startswith("cev_")
    screenshot(page, "api-tokens-new")
    assert axe_violations(page, live_server.url) == []
    page.set_viewport_size({"width": 375, "height": 900})
    screenshot(page, "api-tokens-new-375")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375, "no sideways scroll"
    assert axe_violations(page, live_server.url) == []
    page.set_viewport_size({"width": 1280, "height": 900})

    page.goto(f"{live_server.url}/account/api-tokens/")
    assert secret not in page.content()
    page.get_by_role("button", name="Revoke nightly CI").click()
    page.get_by_text("It no longer opens the API.").wait_for()
    expect(page.get_by_role("cell", name="Revoked")).to_be_visible()
    screenshot(page, "api-tokens-revoked")
