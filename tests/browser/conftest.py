"""A real Chromium (Debian's, driven by Playwright) against a live server the test starts.

Playwright's own browser download does not work on machines without internet, so the tests
drive /usr/bin/chromium; `make test` installs it with apt when it is missing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Screenshots of each screen land here, for a person to look at.
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"

# Playwright's sync API runs an event loop; Django refuses ORM calls from a thread that
# has one unless told this is deliberate (the calls are the test's own set-up).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}; run `make test`, which installs it.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def screenshot():
    OUTPUT.mkdir(parents=True, exist_ok=True)

    def take(page, name: str, *, full_page: bool = True) -> Path:
        path = OUTPUT / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return take


@pytest.fixture
def logged_in(page, live_server, django_user_model):
    """A person logged in through the real login form."""
    django_user_model.objects.create_user(username="grace", password="pw-grace-12345")
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("User name").fill("grace")
    page.get_by_label("Password").fill("pw-grace-12345")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    return page
