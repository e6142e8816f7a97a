"""What `POST /api/v1/check` costs next to the check itself.

The valid 1,000-task .json file of bench_checker_json (5 criteria a task, about 1.7 MB),
posted as a pipeline posts it (multipart, with a token) to the app's WSGI handler, as
gunicorn hands it a request: every middleware, the token, the rate limit, reading the
multipart body, the check, and the JSON answer. Against the check as `check_dataset_file
--json` makes it: read the file, `checker.check_file`, `result_to_json`, `json.dumps`.
Goal: at most 1.3x. The body is encoded once beforehand, so the figure is the server's work,
not a client's.
The ratio is the median of rounds in alternating turns (`timing.median_ratio`).
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")
for name in ("CELERY_BROKER_URL", "STORAGE_BUCKET", "CACHE_URL", "DATABASE_URL"):
    os.environ.pop(name, None)
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from bench_checker_json import dataset as bench_file  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.handlers.wsgi import WSGIHandler  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import override_settings  # noqa: E402
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from timing import median_ratio, verdict  # noqa: E402

from datasets_app import selectors  # noqa: E402
from datasets_app.importing import checker  # noqa: E402
from datasets_app.services import tokens  # noqa: E402

ROUNDS = 21
GOAL = 1.3


class _File:
    """A file part for encode_multipart: a name and bytes."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self._data = name, data

    def read(self) -> bytes:
        return self._data


def main() -> None:
    setup_test_environment()
    connection.creation.create_test_db(verbosity=0)  # in memory, on SQLite
    person = get_user_model().objects.create_user(username="bench-api", password=None)
    _token, secret = tokens.api_token_create(user=person, name="bench")
    data = bench_file(broken_last_task=False)
    body = encode_multipart(BOUNDARY, {"file": _File("bench.json", data)})
    options = selectors.checker_options()
    app = WSGIHandler()

    def through_the_api() -> None:
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/api/v1/check",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "HTTP_HOST": "127.0.0.1",
            "HTTP_AUTHORIZATION": f"Bearer {secret}",
            "CONTENT_TYPE": MULTIPART_CONTENT,
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
            "wsgi.url_scheme": "http",
        }
        statuses = []
        answer = b"".join(app(environ, lambda status, headers: statuses.append(status)))
        assert statuses == ["200 OK"], (statuses, answer[:300])

    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as kept:
        kept.write(data)

    def the_check() -> None:
        # What `check_dataset_file --json` does: read the file, check it, write the JSON.
        with open(kept.name, "rb") as source:
            result = checker.check_file(source, "bench.json", options=options)
        json.dumps(checker.result_to_json(result))

    with override_settings(RATELIMIT_CHECKS="100000/m"):
        # Warm up both (URL resolving, the schema's models, the token's row) before timing.
        for _ in range(3):
            through_the_api()
            the_check()
        # In CPU time (timing.py): both run wholly in this process (SQLite in memory, an
        # in-memory body), so the other work of a shared machine moves neither.
        ratio = median_ratio(through_the_api, the_check, rounds=ROUNDS)
    os.unlink(kept.name)
    print(f"bench api_check: {ratio:.2f}x the check (goal {GOAL}x) {verdict(ratio <= GOAL)}")


if __name__ == "__main__":
    main()
