"""What a person (or a pipeline) is told when Django refuses a request before any view
could answer it: too many form fields or files, a body too large, a Host we do not serve,
a body that is no valid form. One table, read by the pages' error handlers
(`error_pages`) and by the HTTP API's (`api.errors`), so both say the same thing with
the same 4xx status, never a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    DisallowedHost,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http.multipartparser import MultiPartParserError

TOO_MANY_FIELDS = (
    "This request sent more than {limit:,} form fields, the most one takes. Send fewer "
    "(each criterion of a task is a few)."
)
TOO_MANY_FILES = "This request sent more than {limit:,} files, the most one takes."
BODY_TOO_LARGE = "The request body is larger than this page or endpoint takes."
UNKNOWN_HOST = "This server does not answer for the host name the request named."
UNREADABLE = "The request could not be read: its body is not a valid form."
NOT_ALLOWED = "You may not do this."


@dataclass(frozen=True)
class RequestError:
    """A refused request as it is answered: its status, a stable code, a message."""

    status: int
    code: str
    message: str


def _too_many_fields() -> str:
    return TOO_MANY_FIELDS.format(limit=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS)


def _too_many_files() -> str:
    return TOO_MANY_FILES.format(limit=settings.DATA_UPLOAD_MAX_NUMBER_FILES)


# Most specific first: the others are all kinds of SuspiciousOperation. The limits are
# read when the error happens, so that settings (and tests) can change them.
REQUEST_ERRORS: tuple[tuple[type[Exception], int, str, str | Callable[[], str]], ...] = (
    (TooManyFieldsSent, 400, "too_many_fields", _too_many_fields),
    (TooManyFilesSent, 400, "too_many_files", _too_many_files),
    (RequestDataTooBig, 413, "too_large", BODY_TOO_LARGE),
    (DisallowedHost, 400, "unknown_host", UNKNOWN_HOST),
    (SuspiciousOperation, 400, "bad_request", UNREADABLE),
    (MultiPartParserError, 400, "bad_request", UNREADABLE),
    (BadRequest, 400, "bad_request", UNREADABLE),
    (PermissionDenied, 403, "forbidden", NOT_ALLOWED),
)
ERROR_CLASSES = tuple(kind for kind, *_rest in REQUEST_ERRORS)


def describe(exc: BaseException | None) -> RequestError:
    """The answer to a request Django refused with `exc` (a bad request when it is none
    of the table's)."""
    for kind, status, code, message in REQUEST_ERRORS:
        if isinstance(exc, kind):
            return RequestError(status, code, message() if callable(message) else str(message))
    return RequestError(400, "bad_request", UNREADABLE)
