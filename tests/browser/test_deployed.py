"""Deployable as the README says (issue 15): DEBUG=0 on 127.0.0.1, as the Procfile runs it.

gunicorn alone serves the app's pages and the admin with their stylesheets (whitenoise,
compressed files under hashed names) and every security header, in a real Chromium.
"""

from __future__ import annotations

import re
import urllib.request

import pytest

from tests import deployed

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "strict-transport-security": "max-age=31536000; includeSubDomains; preload",
    "cross-origin-opener-policy": "same-origin",
}


@pytest.fixture(scope="module")
def production(tmp_path_factory):
    folder = tmp_path_factory.mktemp("deployed")
    env = deployed.production_env(folder)
    deployed.prepare(env)
    return folder, env


@pytest.fixture(scope="module")
def gunicorn_alone(production):
    folder, env = production
    with deployed.serving(env, front=False, log=folder / "gunicorn.log") as base:
        yield base


@pytest.fixture
def behind_tls(browser):
    # As behind the TLS proxy a deployment has: the app sees https, sends HSTS and keeps
    # its Secure cookies (Chromium treats 127.0.0.1 as a secure origin).
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, extra_http_headers={"X-Forwarded-Proto": "https"}
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status} {r.url}"))
    yield page, problems
    context.close()


def _assert_security_headers(response) -> None:
    headers = response.all_headers()
    for name, value in SECURITY_HEADERS.items():
        assert value in headers.get(name, ""), (name, headers.get(name))


def _stylesheets(page) -> list[str]:
    return page.eval_on_selector_all("link[rel=stylesheet]", "links => links.map(l => l.href)")


def test_pages_and_the_admin_come_with_their_css_and_every_header(
    gunicorn_alone, behind_tls, screenshot
):
    page, problems = behind_tls
    response = page.goto(f"{gunicorn_alone}/accounts/login/")
    _assert_security_headers(response)
    page.get_by_label("User name").fill(deployed.USERNAME)
    page.get_by_label("Password").fill(deployed.PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{gunicorn_alone}/")
    response = page.reload()
    _assert_security_headers(response)
    # The app's stylesheet, by its hashed name, applied.
    (app_css,) = _stylesheets(page)
    assert re.search(r"/static/css/app\.[0-9a-f]{12}\.css$", app_css), app_css
    assert page.eval_on_selector(".topbar", "e => getComputedStyle(e).display") == "flex"
    screenshot(page, "deployed-datasets")

    response = page.goto(f"{gunicorn_alone}/admin/")
    _assert_security_headers(response)
    admin_css = r"/static/admin/css/base\.[0-9a-f]{12}\.css$"
    assert any(re.search(admin_css, sheet) for sheet in _stylesheets(page))
    header_colour = page.eval_on_selector("#header", "e => getComputedStyle(e).backgroundColor")
    assert header_colour not in ("rgba(0, 0, 0, 0)", "transparent")
    screenshot(page, "deployed-admin")
    assert problems == []


def test_static_files_are_compressed_and_cached_for_a_year(gunicorn_alone):
    login = deployed.behind_tls(f"{gunicorn_alone}/accounts/login/")
    with urllib.request.urlopen(login) as response:
        page = response.read().decode()
    (css,) = re.findall(r'href="(/static/css/app\.[0-9a-f]{12}\.css)"', page)
    request = deployed.behind_tls(gunicorn_alone + css, **{"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        assert "max-age=315360000" in response.headers["Cache-Control"]
        assert "immutable" in response.headers["Cache-Control"]
