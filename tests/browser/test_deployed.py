"""Deployable as the README says (issue 15): DEBUG=0 on 127.0.0.1, as the Procfile runs it.

gunicorn alone serves the app's pages and the admin with their stylesheets (whitenoise,
compressed files under hashed names) and every security header, in a real Chromium. The
Procfile's web process (nginx in front of gunicorn) keeps serving while slow clients
trickle their headers, and refuses a body too large for its path before reading it. These
start real servers, so they run once, with the browser tests.
"""

from __future__ import annotations

import re
import shutil
import socket
import urllib.request

import pytest

from scripts.slow_clients import measure
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


@pytest.fixture(scope="module")
def procfile_web(production):
    if not (shutil.which("nginx") or shutil.which("/usr/sbin/nginx")):
        pytest.fail("nginx is not installed; run `make test`, which installs it.")
    folder, env = production
    with deployed.serving(env, front=True, log=folder / "web.log") as base:
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


def _raw(base: str, request: bytes) -> bytes:
    """Send `request` as it is and return the answer's first line and headers."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


def _post_headers(path: str, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "X-Forwarded-Proto: https"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_chunked_body_without_a_length_is_refused_with_411_by_gunicorn_alone(gunicorn_alone):
    request = _post_headers("/accounts/login/", Transfer_Encoding="chunked")
    answer = _raw(gunicorn_alone, request + b"5\r\nab=cd\r\n0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 411 "), answer[:200]
    assert b"frame-ancestors 'none'" in answer


def test_a_large_body_is_refused_before_it_is_read(gunicorn_alone, procfile_web):
    # Only the headers are sent: the answer comes without waiting for 600 MiB.
    big = str(600 * 1024 * 1024)
    for base in (gunicorn_alone, procfile_web):
        answer = _raw(base, _post_headers("/accounts/login/", Content_Length=big))
        assert answer.startswith(b"HTTP/1.1 413 "), (base, answer[:200])
    # Behind the front, a form's path takes far less than an upload's: nginx itself refuses
    # 11 MiB on the login page, and passes it on where a file is chosen, to the app (its
    # answers carry a CSP), which holds someone not logged in to the form cap too.
    body = b"x" * (11 * 1024 * 1024)
    length = str(len(body))
    answer = _raw(procfile_web, _post_headers("/accounts/login/", Content_Length=length) + body)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"Content-Security-Policy" not in answer
    upload = _post_headers("/datasets/new/check/", Content_Length=length) + body
    answer = _raw(procfile_web, upload)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"Content-Security-Policy" in answer


def test_slow_clients_hold_gunicorn_alone_which_is_why_the_procfile_puts_nginx_first(
    gunicorn_alone,
):
    # The hazard, reproduced: while 32 connections trickle their headers for 12 s, gunicorn's
    # 2 workers x 4 threads are all reading them, and a GET gets no answer within 6 s.
    took, connected = measure(gunicorn_alone, clients=32, hold=12, timeout=6)
    assert connected == 32
    assert took is None, f"gunicorn alone answered in {took:.2f} s: is the front still needed?"


def test_slow_clients_do_not_hold_the_procfile_web_process(procfile_web):
    # 32 connections send their headers a byte every half second for 30 s. With gunicorn
    # alone (2 workers x 4 threads) a GET then waits about 28 s for them
    # (scripts/slow_clients.py --gunicorn); nginx takes the slow ones itself.
    took, connected = measure(procfile_web, clients=32, hold=30, timeout=15)
    assert connected == 32
    assert took is not None, "a GET got no answer while slow clients trickled"
