"""System checks of the deployment (`manage.py check --deploy`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register

# Caches that live in one process's memory, or nowhere: a count kept there is that
# process's own.
PER_PROCESS_CACHES = {
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
}
RATE_LIMITS_PER_PROCESS = Warning(
    "Rate limits are counted per process: the cache is each process's own memory (no "
    "CACHE_URL is set).",
    hint=(
        "gunicorn runs several processes (WEB_CONCURRENCY, 2 by default), so each person "
        "gets every limit (checks, imports, new datasets and tokens) once per process. Set "
        "CACHE_URL to a Redis all web processes share, e.g. redis://127.0.0.1:6379/1."
    ),
    id="datasets_app.W001",
)


@register(Tags.security, deploy=True)
def rate_limits_shared(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """Warn when the rate limits' cache is per process (django-ratelimit's own check,
    E003, is silenced without CACHE_URL so that a local run starts)."""
    backend = settings.CACHES[getattr(settings, "RATELIMIT_USE_CACHE", "default")]["BACKEND"]
    return [RATE_LIMITS_PER_PROCESS] if backend in PER_PROCESS_CACHES else []
