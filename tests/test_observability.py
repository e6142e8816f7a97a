"""Errors reach someone: Sentry when SENTRY_DSN is set, JSON log lines otherwise (issue 15)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.conftest import REPO_ROOT

# A request whose view fails: the login page's GET raises, as any bug would.
FAILING_REQUEST = """
import django, sentry_sdk
django.setup()
from django.contrib.auth import views
from django.test import Client

def broken(*args, **kwargs):
    raise RuntimeError("the login page broke")

views.LoginView.get = broken
response = Client(raise_request_exception=False).get("/accounts/login/")
print("status", response.status_code)
client = sentry_sdk.get_client()
print("integrations", sorted(client.integrations) if client.is_active() else [])
sentry_sdk.flush(10)
"""


def _run(extra_env: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"SENTRY_DSN", "LOG_FORMAT"}}
    env.update(
        DEBUG="0",
        SECRET_KEY="a-production-secret-key-that-is-long-and-random-0123456789abcdef",
        ALLOWED_HOSTS="testserver",
        SECURE_SSL_REDIRECT="0",
        DJANGO_SETTINGS_MODULE="contextevals.settings",
        **extra_env,
    )
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return subprocess.run(
        [sys.executable, "-c", FAILING_REQUEST],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


class _Sink(BaseHTTPRequestHandler):
    received: list[bytes]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        self.received.append(body)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args) -> None:
        return None


def test_with_a_dsn_a_failing_request_reaches_sentry():
    received: list[bytes] = []
    handler = type("Sink", (_Sink,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        dsn = f"http://publickey@127.0.0.1:{server.server_address[1]}/1"
        result = _run({"SENTRY_DSN": dsn})
    finally:
        server.shutdown()
        server.server_close()
    assert "status 500" in result.stdout, result.stderr
    assert "'celery'" in result.stdout and "'django'" in result.stdout
    events = b"\n".join(received).decode()
    assert "the login page broke" in events
    assert '"transaction": "/accounts/login/"' in events or "/accounts/login/" in events


def test_without_a_dsn_the_error_is_one_json_line_with_its_traceback():
    result = _run({})
    assert "status 500" in result.stdout, result.stderr
    assert "integrations []" in result.stdout
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    errors = [line for line in lines if line["level"] == "ERROR"]
    assert errors, result.stderr
    error = errors[0]
    assert error["logger"] == "django.request"
    assert error["path"] == "/accounts/login/" and error["status"] == 500
    assert "RuntimeError: the login page broke" in error["exception"]
    assert error["time"].endswith("+00:00")
