"""What stands in front of every request that brings a file or starts an import: the size
limit, the per-person rates of checks and imports, and each person's storage quota.

One rule, asked by the import dialog's views (through `guard_upload`) and by the HTTP API
alike, so a person's checks count once whichever way the file came in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django_ratelimit.core import get_usage

from datasets_app.forms import file_too_large_message
from datasets_app.services import imports

TOO_MANY_CHECKS = "You have chosen many files in a short time. Wait a minute, then try again."
TOO_MANY_IMPORTS = "You have imported many files in a short time. Wait a minute, then try again."
TOO_MANY_NEW_DATASETS = (
    "You have made many datasets in a short time. Wait a minute, then try again."
)
TOO_MANY_NEW_TOKENS = (
    "You have made many API tokens in a short time. Wait a minute, then try again."
)
TOO_MANY_TRIES = "You have tried many answers in a short time. Wait a minute, then try again."


@dataclass(frozen=True)
class Rate:
    """A per-person rate: its counter's name, the setting that holds it ("30/m"), and what
    a person is told past it."""

    group: str
    setting: str
    message: str


CHECKS = Rate(group="checks", setting="RATELIMIT_CHECKS", message=TOO_MANY_CHECKS)
IMPORTS = Rate(group="imports", setting="RATELIMIT_IMPORTS", message=TOO_MANY_IMPORTS)
DATASETS = Rate(group="datasets", setting="RATELIMIT_DATASETS", message=TOO_MANY_NEW_DATASETS)
TOKENS = Rate(group="tokens", setting="RATELIMIT_TOKENS", message=TOO_MANY_NEW_TOKENS)
TRIES = Rate(group="tries", setting="RATELIMIT_TRIES", message=TOO_MANY_TRIES)


@dataclass(frozen=True)
class Refusal:
    """Why a request was turned away: 413 (too large) or 429 (too many, for how long)."""

    status: int
    message: str
    retry_after: int | None = None


def declared_length(request: HttpRequest) -> int:
    """The body's size as its Content-Length says (0 without one); ValueError when the
    header is not a number."""
    declared = int(request.META.get("CONTENT_LENGTH") or 0)
    if declared < 0:
        raise ValueError(declared)
    return declared


def accepts_upload(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Mark a view (or the HTTP API's) as taking a file: BodyLimitMiddleware then lets its
    body reach MAX_UPLOAD_BYTES instead of DATA_UPLOAD_MAX_MEMORY_SIZE."""
    view.accepts_upload = True  # type: ignore[attr-defined]
    return view


def body_too_large(request: HttpRequest) -> bool:
    """Whether the request brings more than MAX_UPLOAD_BYTES.

    Refuses from its Content-Length, before Django reads the body (BodyLimitMiddleware has
    already refused it for a marked view, before CSRF reads it); a body longer than it said
    is cut off by LimitedUploadHandler, which sets `upload_too_large`.
    """
    try:
        declared = declared_length(request)
    except ValueError:
        declared = 0
    if declared > settings.MAX_UPLOAD_BYTES:
        return True
    request.FILES  # noqa: B018 - parse now, so the handler can say it stopped
    return getattr(request, "upload_too_large", False)


def refusal(
    request: HttpRequest, *, rate: Rate | None = None, check_size: bool = True, kept: bool = True
) -> Refusal | None:
    """Count this request against the person's `rate`, and refuse it past that or when its
    body is too large; None when it may go on. `kept`: the file is kept (an upload), so it
    counts against the person's storage quota; a check that keeps nothing (the API's) does
    not.

    The rate comes first, so that a flood of oversized bodies is counted too.
    """
    if rate is not None:
        usage = get_usage(
            request,
            group=rate.group,
            key="user",
            # Read at request time, so that settings (and tests) can change the rate.
            rate=getattr(settings, rate.setting),
            increment=True,
        )
        if usage is not None and usage["should_limit"]:
            return Refusal(429, rate.message, retry_after=max(1, int(usage["time_left"])))
    if check_size and body_too_large(request):
        return Refusal(413, file_too_large_message(settings.MAX_UPLOAD_BYTES))
    if check_size and kept and request.user.is_authenticated:
        over = imports.upload_over_quota(owner=request.user, size=_declared_or_zero(request))
        if over is not None:
            return Refusal(413, over)
    return None


def _declared_or_zero(request: HttpRequest) -> int:
    try:
        return declared_length(request)
    except ValueError:
        return 0


Refuse = Callable[..., HttpResponse]


def guard_upload(
    *, refuse: Refuse, rate: Rate | None = None, check_size: bool = True, kept: bool = True
):
    """View decorator: a POST past the person's `rate`, or too large, gets
    `refuse(request, message, *args, **kwargs)` instead of the view. `kept`: the body is a
    file kept as it is (an upload), counted against the person's quota before it is read;
    a form whose files the view stores itself (the task form) is counted there, not here.

    A rate refusal answers 429 with Retry-After. A body too large keeps the status `refuse`
    gives: the dialog shows the message in place, and htmx drops the body of an error status.
    """

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def guarded(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method == "POST":
                refused = refusal(request, rate=rate, check_size=check_size, kept=kept)
                if refused is not None:
                    response = refuse(request, refused.message, *args, **kwargs)
                    if refused.status == 429:
                        response.status_code = 429
                        response["Retry-After"] = str(refused.retry_after)
                    return response
            try:
                return view(request, *args, **kwargs)
            except imports.OverQuota as over:
                # Uploads sent at once: the quota is decided again as the file is kept,
                # and answered as the check above answers it.
                return refuse(request, str(over), *args, **kwargs)

        if check_size:
            # BodyLimitMiddleware answers an oversized body the way this view would.
            guarded.refuse_too_large = refuse  # type: ignore[attr-defined]
            accepts_upload(guarded)
        return guarded

    return decorate
