"""Django as the benches run it: in-process, eager Celery, local media, quiet logs, and on
PostgreSQL when one answers on 127.0.0.1:5432 (DATABASE_URL, if set, wins).

A bench calls `setup(database=...)` before importing anything of Django's; the database
named is the server-side one `create_test_db` makes its `test_` copy beside and drops at the
end, so benches running at once never share one.
"""

from __future__ import annotations

import os
import socket

import django

# What would send work elsewhere: a broker, object storage, a shared cache.
ELSEWHERE = ("CELERY_BROKER_URL", "STORAGE_BUCKET", "CACHE_URL")
# A judge, for benches whose tasks must not call one.
JUDGE = ("JUDGE_BASE_URL", "JUDGE_MODEL")


def postgres_answers() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 5432), 1).close()
    except OSError:
        return False
    return True


def setup(*, database: str, without: tuple[str, ...] = ()) -> None:
    """Configure and start Django for a bench; `without`: more variables to clear."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")
    for name in (*ELSEWHERE, *without):
        os.environ.pop(name, None)
    # Celery logs each eager task at INFO; the figures are what the bench prints.
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    if not os.environ.get("DATABASE_URL") and postgres_answers():
        os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{database}"
    django.setup()
