"""Password guesses against the login pages of the web process, on 127.0.0.1: how many
reach the password check in a minute from one address, and what the rest get.

    .venv/bin/python scripts/login_guesses.py                # as configured (django-axes)
    .venv/bin/python scripts/login_guesses.py --no-throttle  # as before it, for comparison

For /accounts/login/ and then /admin/login/ (the pause is lifted in between), one client
sends wrong passwords for the user grace as fast as answers come, for --seconds (60). Runs
the Procfile's web process (nginx + gunicorn) with DEBUG=0 on a throwaway SQLite database.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests import deployed  # noqa: E402


def guess_for(base: str, path: str, seconds: float) -> Counter:
    """Answers to wrong passwords sent one after another for `seconds`, by status."""
    opener = urllib.request.build_opener(_NoRedirect)
    page = opener.open(deployed.behind_tls(base + path), timeout=30)
    cookie = re.search(r"csrftoken=([^;]+)", page.headers["Set-Cookie"]).group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
    body = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token.group(1), "username": deployed.USERNAME, "password": "x"}
    ).encode()
    headers = {"Cookie": f"csrftoken={cookie}", "Origin": base}
    answers: Counter = Counter()
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        request = deployed.behind_tls(base + path, **headers)
        try:
            with opener.open(request, data=body, timeout=30) as response:
                answers[response.status] += 1
        except urllib.error.HTTPError as error:
            answers[error.code] += 1
    return answers


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--no-throttle", action="store_true", help="no lockout, to compare")
    args = parser.parse_args()
    settings = {"LOGIN_FAILURE_LIMIT": "1000000"} if args.no_throttle else {}
    name = "without throttling" if args.no_throttle else "with django-axes"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = deployed.production_env(folder, **settings)
        deployed.prepare(env)
        with deployed.serving(env, front=True, log=folder / "web.log") as base:
            for path in ("/accounts/login/", "/admin/login/"):
                answers = guess_for(base, path, args.seconds)
                checked = answers.pop(200, 0)
                paused = answers.pop(429, 0)
                other = ", ".join(f"{n} answered {status}" for status, n in answers.items())
                print(
                    f"login_guesses {path} {name}: {checked} wrong passwords checked in "
                    f"{args.seconds:.0f} s, {paused} tries answered 429 (paused)"
                    + (f", {other}" if other else "")
                )
                subprocess.run(  # lift the pause before the next page
                    [sys.executable, "manage.py", "axes_reset"],
                    cwd=REPO, env=env, check=True, capture_output=True,
                )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
