"""Request bodies are refused by the size they declare, before anything reads them.

CsrfViewMiddleware reads a POST body to find its token, and Django spools a multipart body's
file parts to disk whatever the view would make of them: without this, a 600 MiB POST to any
page, the login page included, is read in full before anything refuses it. Views that take
a file (marked by `guards.accepts_upload`, as `guards.guard_upload` does) may receive up to
MAX_UPLOAD_BYTES, from someone logged in; every other body, DATA_UPLOAD_MAX_MEMORY_SIZE.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat

from datasets_app import guards
from datasets_app.forms import file_too_large_message

LENGTH_REQUIRED = (
    "This request sent its body in chunks without saying its length. Send it with a "
    "Content-Length header."
)
BAD_LENGTH = "This request's Content-Length header is not a size in bytes."
BODY_TOO_LARGE = "This request is larger than {limit}, the most a form here takes."


class BodyLimitMiddleware:
    """Answers 411 (chunked, no length), 400 (a length that is no number) or 413 (too large)
    before any middleware or view reads the body. Place it before CsrfViewMiddleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        if (
            "CONTENT_LENGTH" not in request.META
            and "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
        ):
            # Django would read such a body as empty, and the form would fail for no reason
            # a person could see. (A buffering proxy in front sends the length itself.)
            return _refused(request, 411, LENGTH_REQUIRED, view_func)
        try:
            declared = guards.declared_length(request)
        except ValueError:
            return _refused(request, 400, BAD_LENGTH, view_func)
        if getattr(view_func, "accepts_upload", False) and _may_upload(request, view_func):
            if declared <= settings.MAX_UPLOAD_BYTES:
                return None
            message = file_too_large_message(settings.MAX_UPLOAD_BYTES)
            refuse = getattr(view_func, "refuse_too_large", None)
            if refuse is not None:
                # The view's own answer: the dialog shows the message where the file was.
                return refuse(request, message, *view_args, **view_kwargs)
            return _refused(request, 413, message, view_func)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and declared > limit:
            message = BODY_TOO_LARGE.format(limit=filesizeformat(limit))
            return _refused(request, 413, message, view_func)
        return None


def _may_upload(request: HttpRequest, view_func) -> bool:
    """Whether the request may bring a file: the person is logged in, or the view answers
    for itself who may call it (the API, by token). Someone not logged in gets the login
    page there anyway, so a large body from them would be read (CSRF reads it) for nothing."""
    return request.user.is_authenticated or not getattr(view_func, "login_required", True)


def _refused(request: HttpRequest, status: int, message: str, view_func=None) -> HttpResponse:
    # A view may answer refusals in its own shape (the HTTP API's JSON errors).
    answer = getattr(view_func, "answer_refusal", None)
    if answer is not None:
        return answer(status, message)
    return render(request, "refused.html", {"message": message}, status=status)
