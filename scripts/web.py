"""The Procfile's web process: nginx in front of gunicorn, on $HOST:$PORT (0.0.0.0:8000).

nginx takes every request whole, however slowly it arrives, and refuses an oversized body
by the size its path takes before reading it (contextevals/front.py writes its
configuration from the settings and URLs); gunicorn (gunicorn.conf.py) listens on a Unix
socket only nginx reaches. If either stops, the other is stopped and this exits with its
status; SIGTERM or SIGINT stops both gracefully.

Needs the nginx binary (Debian: `apt-get install nginx`; `make test` installs it).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> int:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        print("scripts/web.py needs nginx (apt-get install nginx).", file=sys.stderr)
        return 1
    _setup_django()
    _collect_static_if_missing()
    prefix = Path(tempfile.mkdtemp(prefix="contextevals-web-"))
    prefix.chmod(0o755)  # nginx's workers (nobody, when started as root) reach the socket
    socket = prefix / "gunicorn.sock"
    config = _write_nginx_config(prefix, socket)
    gunicorn = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "--bind", f"unix:{socket}"], cwd=REPO
    )
    if not _socket_up(socket, gunicorn):
        return gunicorn.returncode
    front = subprocess.Popen(
        [nginx, "-p", str(prefix), "-c", str(config), "-e", "stderr", "-g", "daemon off;"]
    )
    return _supervise(front=front, gunicorn=gunicorn, prefix=prefix)


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")
    # nginx is the one proxy in front that appends to X-Forwarded-For (set 2 behind a
    # load balancer that appends too).
    os.environ.setdefault("TRUSTED_PROXY_COUNT", "1")
    import django

    django.setup()


def _collect_static_if_missing() -> None:
    from django.conf import settings
    from django.core.management import call_command

    if not settings.DEBUG and not (Path(settings.STATIC_ROOT) / "staticfiles.json").exists():
        # A build step should have collected them; without it every page would fail.
        call_command("collectstatic", interactive=False, verbosity=0)


def _write_nginx_config(prefix: Path, socket: Path) -> Path:
    """nginx's configuration, in `prefix`, listening on $HOST:$PORT in front of `socket`."""
    from contextevals.front import nginx_config

    listen = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"  # noqa: S104
    config = prefix / "nginx.conf"
    access_log = "/dev/stdout" if os.environ.get("NGINX_ACCESS_LOG") else "off"
    config.write_text(
        nginx_config(
            listen=listen, upstream=f"unix:{socket}", prefix=str(prefix), access_log=access_log
        )
    )
    return config


def _socket_up(socket: Path, gunicorn: subprocess.Popen[bytes]) -> bool:
    """Wait until gunicorn listens on `socket`: False if it ended first."""
    while not socket.exists():
        if gunicorn.poll() is not None:
            return False
        time.sleep(0.1)
    return True


def _stop_gracefully(front: subprocess.Popen[bytes], gunicorn: subprocess.Popen[bytes]) -> None:
    """Ask whichever of the two still runs to finish its requests and stop."""
    # nginx: SIGQUIT finishes the requests it has; gunicorn: SIGTERM does.
    for process, graceful in ((front, signal.SIGQUIT), (gunicorn, signal.SIGTERM)):
        if process.poll() is None:
            process.send_signal(graceful)


def _wait_or_kill(processes: list[subprocess.Popen[bytes]]) -> None:
    """Wait for each process to end, killing one that takes over 30 s."""
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _supervise(
    *, front: subprocess.Popen[bytes], gunicorn: subprocess.Popen[bytes], prefix: Path
) -> int:
    """Run until a signal stops both or one ends by itself (then stop the other); remove
    `prefix` after. The exit status of the web process."""
    processes = [gunicorn, front]
    asked_to_stop: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        asked_to_stop.append(signum)
        _stop_gracefully(front, gunicorn)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        while all(process.poll() is None for process in processes):
            time.sleep(0.5)
        first_to_end = next(process for process in processes if process.poll() is not None)
        if not asked_to_stop:
            _stop_gracefully(front, gunicorn)
        _wait_or_kill(processes)
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
    # Stopped on purpose: 0. One of them ended by itself: its status (1 at least).
    return 0 if asked_to_stop else (first_to_end.returncode or 1)


if __name__ == "__main__":
    sys.exit(main())
