"""Slow clients against the web process, on 127.0.0.1: how long a normal GET waits while
CLIENTS connections send their headers a byte at a time.

    .venv/bin/python scripts/slow_clients.py            # the Procfile's web: nginx + gunicorn
    .venv/bin/python scripts/slow_clients.py --gunicorn # gunicorn alone, as before the front

Prints `slow_clients <server>: a GET answered in N s while M slow clients were connected`
(or that it waited the whole --timeout). DEBUG=0 on a throwaway SQLite database.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests import deployed  # noqa: E402


def trickle(base: str, seconds: float, stop: threading.Event, opened: list) -> None:
    """One slow client: a request line, then a header byte every half second."""
    host, port = base.removeprefix("http://").split(":")
    try:
        sock = socket.create_connection((host, int(port)), timeout=5)
    except OSError:
        return
    opened.append(sock)
    try:
        sock.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        ends = time.monotonic() + seconds
        while not stop.is_set() and time.monotonic() < ends:
            sock.sendall(b"a")
            stop.wait(0.5)
    except OSError:
        pass  # the server closed it: that is what a front does
    finally:
        sock.close()


def measure(base: str, clients: int, hold: float, timeout: float) -> tuple[float | None, int]:
    """Seconds a GET took while `clients` slow clients trickled (None: not within `timeout`),
    and how many of them were still connected when it was sent."""
    stop = threading.Event()
    opened: list[socket.socket] = []
    threads = [
        threading.Thread(target=trickle, args=(base, hold, stop, opened), daemon=True)
        for _ in range(clients)
    ]
    for thread in threads:
        # One after another, as they would arrive: each gunicorn worker accepts its share.
        thread.start()
        time.sleep(0.05)
    time.sleep(2)  # every slow client has connected and started its headers
    connected = sum(1 for sock in opened if sock.fileno() != -1)
    started = time.monotonic()
    try:
        request = deployed.behind_tls(f"{base}/accounts/login/")
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            response.read()
            took: float | None = time.monotonic() - started
    except OSError:
        took = None
    stop.set()
    for thread in threads:
        thread.join(timeout=5)
    return took, connected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gunicorn", action="store_true", help="gunicorn alone, no front")
    parser.add_argument("--clients", type=int, default=32, help="slow clients (32)")
    parser.add_argument("--hold", type=float, default=30, help="seconds each trickles (30)")
    parser.add_argument("--timeout", type=float, default=40, help="the GET's time-out (40)")
    args = parser.parse_args()
    name = "gunicorn alone" if args.gunicorn else "nginx + gunicorn (Procfile web)"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = deployed.production_env(folder)
        deployed.prepare(env)
        log = folder / "server.log"
        with deployed.serving(env, front=not args.gunicorn, log=log) as base:
            took, connected = measure(base, args.clients, args.hold, args.timeout)
    if took is None:
        print(f"slow_clients {name}: a GET got no answer within {args.timeout:.0f} s "
              f"while {connected} slow clients were connected")  # fmt: skip
        return 1
    print(f"slow_clients {name}: a GET answered in {took:.2f} s "
          f"while {connected} slow clients were connected")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
