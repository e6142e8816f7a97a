"""`manage.py check --deploy` says when rate limits would be counted per process."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from datasets_app import checks


@pytest.fixture(autouse=True)
def async_safety_as_deployed(monkeypatch):
    # The browser tests set DJANGO_ALLOW_ASYNC_UNSAFE in this process (Playwright's sync
    # API runs an event loop); deployed, it is never set, and --deploy errors when it is.
    monkeypatch.delenv("DJANGO_ALLOW_ASYNC_UNSAFE", raising=False)


def deploy_check() -> str:
    out = io.StringIO()
    call_command("check", "--deploy", stdout=out, stderr=out)
    return out.getvalue()


def test_check_deploy_warns_when_each_process_has_its_own_cache(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    said = deploy_check()
    assert checks.RATE_LIMITS_PER_PROCESS.id in said
    assert "Rate limits are counted per process" in said and "CACHE_URL" in said


def test_check_deploy_says_nothing_of_it_with_a_shared_cache(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/1",
        }
    }
    assert checks.RATE_LIMITS_PER_PROCESS.id not in deploy_check()


def test_a_plain_check_says_nothing_of_it(settings):
    out = io.StringIO()
    call_command("check", stdout=out, stderr=out)
    assert checks.RATE_LIMITS_PER_PROCESS.id not in out.getvalue()
