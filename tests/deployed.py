"""The app as deployed, on 127.0.0.1: DEBUG=0, its own SQLite database and static files,
served by the Procfile's web process (nginx in front of gunicorn) or by gunicorn alone.

Used by the deploy tests, and by the scripts that measure what they assert (slow_clients.py,
login_guesses.py) or load the server (load.py).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
USERNAME, PASSWORD = "grace", "pw-grace-12345"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def production_env(folder: Path, **extra: str) -> dict[str, str]:
    """DEBUG=0 settings for a server whose database, media and static files are in `folder`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"CELERY_BROKER_URL", "CACHE_URL", "STORAGE_BUCKET", "SENTRY_DSN"}
        and key != "DJANGO_ALLOW_ASYNC_UNSAFE"
    }
    env.update(
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}",
        MEDIA_ROOT=str(folder / "media"),
        STATIC_ROOT=str(folder / "static"),
        DJANGO_SETTINGS_MODULE="contextevals.settings",
        LOG_LEVEL="WARNING",
    )
    env.update(extra)
    return env


def build(env: dict[str, str]) -> None:
    """What a release does: migrate the database and collect the static files."""
    for command in (["migrate"], ["collectstatic"]):
        subprocess.run(
            [sys.executable, "manage.py", *command, "--no-input", "-v", "0"],
            cwd=REPO,
            env=env,
            check=True,
        )


def prepare(env: dict[str, str]) -> None:
    """Build, and create the user grace (a superuser)."""
    build(env)
    script = (
        "import django; django.setup()\n"
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.create_superuser({USERNAME!r}, password={PASSWORD!r})\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, check=True)


@contextmanager
def serving(env: dict[str, str], *, front: bool, log: Path, **settings: str) -> Iterator[str]:
    """Start the web process on a free loopback port; yield its base URL; stop it.

    front=True runs what the Procfile's `web` runs (scripts/web.py: nginx, then gunicorn);
    front=False runs gunicorn alone, with gunicorn.conf.py as the Procfile would.
    """
    port = free_port()
    # A browser here talks plain http to a server that thinks it is behind TLS (see
    # behind_tls): its forms' Origin is http://, which CSRF must be told to trust.
    origin = f"http://127.0.0.1:{port}"
    env = {**env, "PORT": str(port), "HOST": "127.0.0.1", "CSRF_TRUSTED_ORIGINS": origin}
    env.update(settings)
    if front:
        command = [sys.executable, "scripts/web.py"]
    else:
        gunicorn = str(Path(sys.executable).with_name("gunicorn"))
        command = [gunicorn, "--bind", f"127.0.0.1:{port}"]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(process, f"{base}/accounts/login/", log)
        yield base
    finally:
        stop(process)


def behind_tls(url: str, **headers: str) -> urllib.request.Request:
    """A request as the TLS proxy in front of a deployment passes it on (else the app's
    answer is its redirect to https)."""
    return urllib.request.Request(url, headers={"X-Forwarded-Proto": "https", **headers})


def wait_until_up(process: subprocess.Popen, url: str, log: Path) -> None:
    """Wait until `url` answers 200 (RuntimeError with the server's log if it never does)."""
    started = time.monotonic()
    while time.monotonic() - started < 60:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(behind_tls(url), timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within 60 s:\n{log.read_text()}")


def stop(process: subprocess.Popen) -> None:
    """Stop the server's process group: SIGTERM, and SIGKILL after 20 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
