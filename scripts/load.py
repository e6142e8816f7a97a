"""Load test of the import dialog: people checking and importing 1,000-task files at once.

`make load` runs 20 simulated people for 60 s against gunicorn (2 workers) on PostgreSQL,
all on the loopback interface. Each person logs in once, then loops: create a dataset, choose
a 1,000-task .json file (5 criteria a task) in its import dialog, import it. Afterwards the
script checks in the database that every dataset holds exactly the tasks imported into it,
prints requests per second, p50/p95/p99 latency per kind of request and the errors, and exits
non-zero when a goal is missed (no errors; p95 of a check at most 1 s).

    .venv/bin/python scripts/load.py                        # the issue's figures
    .venv/bin/python scripts/load.py --seconds 10 --users 5 # a quick try
    .venv/bin/python scripts/load.py --front                # through nginx, as the Procfile

It works in a throwaway database (`contextevals_load`, dropped and created again) on the
PostgreSQL server at 127.0.0.1:5432 and a temporary media folder; nothing else is touched.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from http.cookiejar import Cookie, CookieJar, DefaultCookiePolicy
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_checker_json import dataset as bench_dataset_file  # noqa: E402

from datasets_app.importing.checker import check_file  # noqa: E402
from tests import deployed  # noqa: E402

PG_SERVER = "postgres://postgres@127.0.0.1:5432"
LOAD_DB = "contextevals_load"
PASSWORD = "load-test-" + secrets.token_hex(8)
TASKS_PER_FILE = 1_000
CHECK_P95_GOAL = 1.0
# A request that takes longer than this counts as an error (gunicorn's own timeout is 60 s).
REQUEST_TIMEOUT = 60.0
UPLOAD_KEY = re.compile(r"/import/([0-9a-f-]{36})/import/")
DATASET_URL = re.compile(r"^/datasets/(\d+)/$")


# --- The browser-like client ----------------------------------------------------------------


class LoopbackCookiePolicy(DefaultCookiePolicy):
    """Send Secure cookies over plain http too: with DEBUG=0 the app marks its session and
    CSRF cookies Secure, and this test talks to gunicorn directly on 127.0.0.1, where a TLS
    proxy would otherwise sit."""

    def return_ok_secure(self, cookie: Cookie, request: urllib.request.Request) -> bool:
        return True


class NoRedirect(urllib.request.HTTPRedirectHandler):
    # Each request is timed on its own; a redirect is an answer, not something to follow.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: str


class Browser:
    """One person's session: a cookie jar and the CSRF token the app handed out."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = CookieJar(policy=LoopbackCookiePolicy())
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), NoRedirect()
        )

    def csrf_token(self) -> str:
        return next((c.value for c in self.jar if c.name == "csrftoken"), "")

    def request(
        self,
        method: str,
        path: str,
        *,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        # The base is always http://127.0.0.1:<port>, never a scheme from outside.
        req = urllib.request.Request(self.base + path, data=data, method=method)  # noqa: S310
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        if method == "POST":
            req.add_header("X-CSRFToken", self.csrf_token())
        try:
            with self.opener.open(req, timeout=REQUEST_TIMEOUT) as resp:
                return Response(resp.status, dict(resp.headers), resp.read().decode())
        except urllib.error.HTTPError as exc:
            return Response(exc.code, dict(exc.headers), exc.read().decode(errors="replace"))

    def post_form(self, path: str, fields: dict[str, str], **headers: str) -> Response:
        body = urllib.parse.urlencode(fields).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        return self.request("POST", path, data=body, headers=headers)

    def post_file(self, path: str, name: str, data: bytes, **headers: str) -> Response:
        boundary = "----load" + secrets.token_hex(12)
        body = b"".join(
            [
                f"--{boundary}\r\n".encode(),
                f'Content-Disposition: form-data; name="file"; filename="{name}"\r\n'.encode(),
                b"Content-Type: application/json\r\n\r\n",
                data,
                f"\r\n--{boundary}--\r\n".encode(),
            ]
        )
        headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
        return self.request("POST", path, data=body, headers=headers)


# --- The simulated people -------------------------------------------------------------------


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    # dataset pk -> tasks the person saw imported into it (0 when the cycle stopped early).
    imported: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, kind: str, call, *args, **kwargs) -> Response:
        start = time.perf_counter()
        try:
            response = call(*args, **kwargs)
        finally:
            elapsed = time.perf_counter() - start
            with self.lock:
                self.latencies[kind].append(elapsed)
        return response

    def error(self, message: str) -> None:
        with self.lock:
            self.errors.append(message)


class Failed(Exception):
    """A request answered something other than what a working app answers."""


def expect(ok: bool, kind: str, response: Response) -> None:
    if not ok:
        snippet = re.sub(r"\s+", " ", response.body)[:160]
        raise Failed(f"{kind}: HTTP {response.status}: {snippet}")


HTMX = {"HX-Request": "true"}


def person(
    base: str,
    username: str,
    data: bytes,
    deadline: float,
    think: float,
    stats: Stats,
    arrive_after: float = 0.0,
) -> None:
    # People arrive over the ramp-up, not all in the same millisecond: twenty password
    # hashes at once (PBKDF2, ~0.6 s of CPU each) would otherwise be the whole first seconds.
    time.sleep(arrive_after)
    browser = Browser(base)
    try:
        page = stats.timed("login_page", browser.request, "GET", "/accounts/login/")
        expect(page.status == 200, "login_page", page)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.body)
        expect(token is not None, "login_page", page)
        login = stats.timed(
            "login",
            browser.post_form,
            "/accounts/login/",
            {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)},
        )
        expect(login.status == 302, "login", login)
    except (Failed, OSError) as exc:
        stats.error(f"{username}: {exc}")
        return
    cycle = 0
    while time.monotonic() < deadline:
        cycle += 1
        try:
            import_one(browser, f"{username} set {cycle}", data, think, stats)
        except (Failed, OSError) as exc:
            stats.error(f"{username}: {exc}")


def import_one(browser: Browser, name: str, data: bytes, think: float, stats: Stats) -> None:
    created = stats.timed("create", browser.post_form, "/datasets/new/", {"name": name})
    location = created.headers.get("Location", "")
    match = DATASET_URL.match(urllib.parse.urlsplit(location).path)
    expect(created.status == 302 and match is not None, "create", created)
    pk = int(match.group(1))
    with stats.lock:
        stats.imported[pk] = 0

    checked = stats.timed(
        "check", browser.post_file, f"/datasets/{pk}/import/check/", "set.json", data, **HTMX
    )
    key = UPLOAD_KEY.search(checked.body)
    expect(checked.status == 200 and key is not None, "check", checked)
    status_url = f"/datasets/{pk}/import/{key.group(1)}/"
    # With a broker the check runs on a worker and the dialog polls; eager, it is done here.
    while "Checking…" in checked.body:
        time.sleep(0.5)
        checked = stats.timed("status", browser.request, "GET", status_url, headers=HTMX)
        expect(checked.status == 200, "status", checked)
    expect(f"Import {TASKS_PER_FILE:,} tasks" in checked.body, "check", checked)
    time.sleep(think)  # reading the preview before pressing Import

    imported = stats.timed(
        "import", browser.post_form, status_url + "import/", {"mode": "add"}, **HTMX
    )
    while imported.status == 200 and "Importing…" in imported.body:
        time.sleep(0.5)
        imported = stats.timed("status", browser.request, "GET", status_url, headers=HTMX)
    redirect = imported.headers.get("HX-Redirect", "")
    expect(imported.status == 200 and redirect == f"/datasets/{pk}/", "import", imported)
    with stats.lock:
        stats.imported[pk] = TASKS_PER_FILE


# --- The server and its database ------------------------------------------------------------


def recreate_database() -> str:
    import psycopg

    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True, connect_timeout=3) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{LOAD_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{LOAD_DB}"')
    return f"{PG_SERVER}/{LOAD_DB}"


def server_environment(database_url: str, media_root: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        # Eager checks and imports in the web process, a local cache: one machine, no broker.
        if key not in {"CELERY_BROKER_URL", "CACHE_URL", "STORAGE_BUCKET"}
    }
    env.update(
        DATABASE_URL=database_url,
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        MEDIA_ROOT=str(media_root),
        STATIC_ROOT=str(media_root.parent / "static"),
        DJANGO_SETTINGS_MODULE="contextevals.settings",
        LOG_LEVEL="WARNING",
        # The per-person limits guard against one person flooding the server; 20 simulated
        # people looping without a pause would trip them and measure nothing else.
        RATELIMIT_CHECKS="100000/m",
        RATELIMIT_IMPORTS="100000/m",
    )
    return env


def prepare_database(env: dict[str, str], usernames: list[str]) -> None:
    deployed.build(env)  # migrate; collectstatic, since DEBUG=0 serves hashed static files
    # One password hash for everyone: hashing it once keeps set-up to a second.
    script = (
        "import sys\n"
        "from django.contrib.auth import get_user_model\n"
        "from django.contrib.auth.hashers import make_password\n"
        "User = get_user_model()\n"
        "hashed = make_password(sys.argv[1])\n"
        "User.objects.bulk_create(User(username=n, password=hashed) for n in sys.argv[2:])\n"
    )
    subprocess.run(
        [sys.executable, "-c", f"import django; django.setup()\n{script}", PASSWORD, *usernames],
        cwd=REPO,
        env=env,
        check=True,
    )


# Run in a child process with the server's settings: per dataset, its live tasks, how many
# distinct positions and ids they have, how many carry the file's ids, and their criteria.
VERIFY_SCRIPT = """
import json, sys
import django
django.setup()
from django.db.models import Count, Max, Min, Q
from datasets_app.models import Criterion, Dataset, Task, TaskState

file_ids = json.load(sys.stdin)
rows = {pk: {"tasks": 0, "positions": 0, "ids": 0, "file_ids": 0, "criteria": 0,
             "first": None, "last": None}
        for pk in Dataset.objects.values_list("pk", flat=True)}
live = Task.objects.exclude(state=TaskState.ARCHIVED).values("dataset").annotate(
    tasks=Count("pk"), positions=Count("position", distinct=True),
    ids=Count("task_id", distinct=True), file_ids=Count("pk", filter=Q(task_id__in=file_ids)),
    first=Min("position"), last=Max("position"))
for row in live:
    rows[row.pop("dataset")].update(row)
criteria = Criterion.objects.filter(task__isnull=False).values("dataset").annotate(n=Count("pk"))
for row in criteria:
    rows[row["dataset"]]["criteria"] = row["n"]
json.dump(rows, sys.stdout)
"""


def verify(
    env: dict[str, str], imported: dict[int, int], task_ids: list[str], criteria_per_task: int
) -> list[str]:
    """Compare every dataset in the database with what its person saw imported into it:
    that many tasks, positions 0..n-1 each once, the file's ids, and the criteria the checker
    planned for each task (the file's 5 plus "Matches the expected answer")."""
    out = subprocess.run(
        [sys.executable, "-c", VERIFY_SCRIPT],
        cwd=REPO,
        env=env,
        input=json.dumps(task_ids),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = {int(pk): row for pk, row in json.loads(out).items()}
    problems = []
    if set(found) != set(imported):
        problems.append(
            f"datasets {sorted(set(found) ^ set(imported))}: in the database or created by "
            "the people, not both"
        )
    for pk, expected in sorted(imported.items()):
        if pk not in found:
            continue
        want = {
            "tasks": expected,
            "positions": expected,
            "ids": expected,
            "file_ids": expected,
            "criteria": expected * criteria_per_task,
            "first": 0 if expected else None,
            "last": expected - 1 if expected else None,
        }
        got = {name: found[pk][name] for name in want}
        if got != want:
            problems.append(f"dataset {pk}: expected {want}, found {got}")
    return problems


# --- The report -----------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile: the smallest value with at least `fraction` of them below."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


# The kinds of request the report lists, in the order a person makes them.
REQUEST_KINDS = ("login_page", "login", "create", "check", "status", "import")


def print_latencies(stats: Stats, elapsed: float) -> None:
    """Requests per second, and each kind's count and p50/p95/p99/max latency."""
    total = sum(len(v) for v in stats.latencies.values())
    print(f"load requests: {total} in {elapsed:.1f} s = {total / elapsed:.1f} requests/s")
    print(f"{'kind':<11} {'count':>6} {'p50 s':>7} {'p95 s':>7} {'p99 s':>7} {'max s':>7}")
    for kind in REQUEST_KINDS:
        values = stats.latencies.get(kind)
        if not values:
            continue
        cells = [percentile(values, f) for f in (0.5, 0.95, 0.99)] + [max(values)]
        print(f"{kind:<11} {len(values):>6} " + " ".join(f"{c:>7.2f}" for c in cells))


def verdicts(stats: Stats, problems: list[str]) -> list[tuple[str, bool]]:
    """Each goal's line and whether it was met: a check's p95, no errors, every dataset
    holding what was imported into it."""
    checks = stats.latencies.get("check", [])
    p95 = percentile(checks, 0.95) if checks else float("inf")
    bad = {p.split(":")[0] for p in problems}
    datasets_ok = sum(1 for pk in stats.imported if f"dataset {pk}" not in bad)
    return [
        (
            f"load check_p95: {p95:.2f} s (goal {CHECK_P95_GOAL:g} s)",
            p95 <= CHECK_P95_GOAL,
        ),
        (f"load errors: {len(stats.errors)} (goal 0)", not stats.errors),
        (
            f"load datasets_consistent: {datasets_ok} of {len(stats.imported)}",
            not problems and bool(stats.imported),
        ),
    ]


def report(stats: Stats, elapsed: float, problems: list[str]) -> bool:
    print_latencies(stats, elapsed)
    for message in stats.errors[:10]:
        print(f"  error: {message}")
    goals = verdicts(stats, problems)
    for problem in problems[:10]:
        print(f"  inconsistent: {problem}")
    for line, ok in goals:
        print(f"{line} {'ok' if ok else 'FAIL'}")
    return all(ok for _, ok in goals)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="how long people keep going")
    parser.add_argument("--users", type=int, default=20, help="people at once")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument(
        "--front",
        action="store_true",
        help="through the Procfile's web process (nginx in front of gunicorn)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=5.0,
        help=(
            "seconds a person reads the preview before importing (default 5; 0 sends the next "
            "request at once, which asks more of 2 cores than they have: see "
            "docs/reliability.md)"
        ),
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=10.0,
        help="seconds over which the people arrive (default 10; 0: all at once)",
    )
    args = parser.parse_args()

    data = bench_dataset_file(broken_last_task=False)
    plan = check_file(data, "set.json").plan
    task_ids = [task.id for task in plan.tasks]
    criteria_per_task = len(plan.tasks[0].criteria)
    usernames = [f"load{number:02d}" for number in range(1, args.users + 1)]
    with tempfile.TemporaryDirectory(prefix="contextevals-load-") as tmp:
        env = server_environment(recreate_database(), Path(tmp) / "media")
        prepare_database(env, usernames)
        log = Path(tmp) / "server.log"
        stats = Stats()
        serving = deployed.serving(
            env, front=args.front, log=log, WEB_CONCURRENCY=str(args.workers)
        )
        with serving as base:
            started = time.monotonic()
            deadline = started + args.seconds
            people = [
                threading.Thread(
                    target=person,
                    args=(
                        base,
                        name,
                        data,
                        deadline,
                        args.think,
                        stats,
                        args.ramp * index / max(len(usernames), 1),
                    ),
                    daemon=True,
                )
                for index, name in enumerate(usernames)
            ]
            for thread in people:
                thread.start()
            # Hard bound: a cycle started just before the deadline has three requests left,
            # each bounded by REQUEST_TIMEOUT.
            hard_deadline = deadline + 3 * REQUEST_TIMEOUT + args.think + 5
            for thread in people:
                thread.join(max(0.0, hard_deadline - time.monotonic()))
            elapsed = time.monotonic() - started
            stuck = sum(thread.is_alive() for thread in people)
            if stuck:
                stats.error(f"{stuck} people still waiting at the hard deadline")
        server_log = log.read_text(errors="replace")
        if "Traceback" in server_log or "[CRITICAL]" in server_log:
            stats.error("the server logged an error; its log follows")
            print(server_log[-3000:])
        problems = verify(env, stats.imported, task_ids, criteria_per_task)
    ok = report(stats, elapsed, problems)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
