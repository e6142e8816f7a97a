"""Tokens never reach an access log: gunicorn's (GUNICORN_ACCESSLOG) and the nginx front's
(NGINX_ACCESS_LOG), with real servers on 127.0.0.1, sent every wrong way a client sends
one: in the query string, as the user name of Basic auth, in a path, in a referrer."""

from __future__ import annotations

import base64
import shutil
import signal
import subprocess
import urllib.error
import urllib.request

import pytest

from contextevals import front
from datasets_app.redaction import REDACTED, redacted
from tests import deployed

pytestmark = pytest.mark.slow

SECRET = "cev_SeCrEtToKeNvAlUe0123456789abcdefABCDEF"
BASIC_NAME = "cev_BaSiCuSeRnAmE0123456789abcdefABCDEF"
PLAIN = "hunter2-not-prefixed-secret"


@pytest.fixture(scope="module")
def production(tmp_path_factory):
    folder = tmp_path_factory.mktemp("access-logs")
    env = deployed.production_env(folder)
    deployed.build(env)
    return folder, env


def _send_tokens_the_wrong_way(base: str) -> None:
    basic = base64.b64encode(f"{BASIC_NAME}:".encode()).decode()
    for path in (
        f"/api/v1/datasets?token={SECRET}&format=csv",
        f"/api/v1/datasets?api_key={PLAIN}",
        f"/api/v1/{SECRET}/",
    ):
        request = deployed.behind_tls(
            base + path, Authorization=f"Basic {basic}", Referer=f"{base}/?access_token={PLAIN}"
        )
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except urllib.error.HTTPError as refused:
            assert refused.code in (401, 404)


def _assert_no_secret(log: str) -> None:
    for secret in (SECRET, BASIC_NAME, PLAIN):
        assert secret not in log, log


def test_gunicorns_access_log_prints_no_token(production):
    folder, env = production
    log = folder / "gunicorn.log"
    with deployed.serving(env, front=False, log=log, GUNICORN_ACCESSLOG="-") as base:
        _send_tokens_the_wrong_way(base)
    text = log.read_text()
    _assert_no_secret(text)
    # Still a useful log: the path, the harmless parameters, the status.
    assert f"GET /api/v1/datasets?token={REDACTED}&format=csv HTTP/1.1" in text
    assert '" 401 ' in text


def test_the_fronts_access_log_prints_no_token(production, tmp_path, settings):
    nginx = shutil.which("nginx") or shutil.which("/usr/sbin/nginx")
    if nginx is None:
        pytest.fail("nginx is not installed; run `make test`, which installs it.")
    folder, env = production
    # The front's own configuration before a gunicorn on a port, its access log in a file
    # of its own (scripts/web.py sends it to stdout, where gunicorn's lines would mix in).
    with deployed.serving(env, front=False, log=folder / "upstream.log") as upstream:
        port = deployed.free_port()
        config = tmp_path / "nginx.conf"
        config.write_text(
            front.nginx_config(
                listen=f"127.0.0.1:{port}",
                upstream=upstream.removeprefix("http://"),
                prefix=str(tmp_path),
                access_log=str(tmp_path / "access.log"),
            )
        )
        command = [nginx, "-p", str(tmp_path), "-c", str(config), "-e", "stderr"]
        process = subprocess.Popen([*command, "-g", "daemon off;"], start_new_session=True)
        try:
            deployed.wait_until_up(process, f"http://127.0.0.1:{port}/accounts/login/", config)
            _send_tokens_the_wrong_way(f"http://127.0.0.1:{port}")
        finally:
            process.send_signal(signal.SIGQUIT)
            process.wait(timeout=20)
    text = (tmp_path / "access.log").read_text()
    assert '"GET /api/v1/datasets HTTP/1.1" 401' in text
    assert f'"GET /api/v1/cev_{REDACTED}/ HTTP/1.1" 404' in text
    _assert_no_secret(text)


def test_redaction_keeps_what_is_harmless():
    assert redacted("/x?version=2&format=csv") == "/x?version=2&format=csv"
    assert redacted(f"/x?Token={PLAIN}&a=1") == f"/x?Token={REDACTED}&a=1"
    assert redacted(f"/x?a=1;password={PLAIN}") == f"/x?a=1;password={REDACTED}"
    assert redacted(f"/tokens/{SECRET}/x") == f"/tokens/cev_{REDACTED}/x"


def test_an_error_report_to_sentry_carries_no_token():
    from datasets_app.redaction import sentry_event_redacted

    event = {
        "request": {
            "url": f"https://evals.example.com/api/v1/{SECRET}/",
            "query_string": f"token={PLAIN}&format=csv",
            "headers": {"Authorization": f"Bearer {SECRET}", "Accept": "*/*"},
        }
    }
    report = str(sentry_event_redacted(event))
    _assert_no_secret(report)
    assert "format=csv" in report and "*/*" in report
