"""Login throttling (django-axes): who is knocking, and what a locked-out person reads.

Failed logins are counted per client address, on /accounts/login/ and /admin/login/ alike
(axes wraps `authenticate`). See LOGIN_* in settings for the numbers and why.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def client_ip(request: HttpRequest) -> str | None:
    """The client's address: REMOTE_ADDR, or, behind TRUSTED_PROXY_COUNT proxies that each
    append to X-Forwarded-For, the address the outermost of them saw (a client can put
    anything in the header, but not after what our proxies append)."""
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [address for address in forwarded if address]
    if proxies and len(forwarded) >= proxies:
        return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR")


def _duration(cool_off: timedelta) -> str:
    minutes = round(cool_off.total_seconds() / 60)
    if minutes < 60:
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    hours = round(minutes / 60)
    return f"{hours} hour{'s' if hours != 1 else ''}"


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponse:
    """429 with a page that says what happened, for how long, and what to do."""
    context = {
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "wait": _duration(settings.AXES_COOLOFF_TIME),
    }
    return render(request, "registration/locked_out.html", context, status=429)
