"""The API's one error shape, `{"error": {"code", "message", "details"}}`, and the handlers
that give every failure that shape and its status.

A 404 is what a caller gets for anything they may not see, exactly as the pages do, so ids
cannot be probed.
"""

from __future__ import annotations

import logging
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError

from datasets_app import request_errors

logger = logging.getLogger(__name__)

NOT_FOUND = "There is nothing here that this token can see."
UNAUTHORIZED = (
    "Send a personal API token as 'Authorization: Bearer <token>'. Make one on your "
    "API tokens page."
)
INVALID = "The request is not valid; details lists each field at fault."
SERVER_ERROR = "Something went wrong on our side. Nothing was written; try again."

# Codes for the statuses ninja or Django raise on their own.
CODES = {
    400: "invalid",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    429: "rate_limited",
}


class ApiError(Exception):
    """An answer other than success: its status, a stable code, a message for people."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers or {}


def error_response(
    status: int, code: str, message: str, details: Any = None, headers: dict | None = None
) -> HttpResponse:
    body = {"error": {"code": code, "message": message, "details": details}}
    response = JsonResponse(body, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


def _field(loc: tuple | list) -> str:
    # ninja places a JSON body's fields under the view's parameter name, ("body", "payload",
    # "name"); each of our bodies is one object, so its fields read "body.name".
    parts = list(loc)
    if len(parts) >= 3 and parts[0] == "body":
        del parts[1]
    return ".".join(str(part) for part in parts)


def field_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pydantic's errors as `{"field": "body.name", "message": …}`, without echoing input."""
    return [
        {
            "field": _field(error.get("loc", ())),
            "message": error.get("msg", ""),
            "type": error.get("type", ""),
        }
        for error in errors
    ]


def install(api: NinjaAPI) -> None:
    """Give every failure the one error shape."""

    @api.exception_handler(ApiError)
    def api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
        return error_response(exc.status, exc.code, exc.message, exc.details, exc.headers)

    @api.exception_handler(ValidationError)
    def invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        return error_response(400, "invalid", INVALID, field_errors(exc.errors))

    @api.exception_handler(AuthenticationError)
    def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        return error_response(401, "unauthorized", UNAUTHORIZED)

    @api.exception_handler(Throttled)
    def throttled(request: HttpRequest, exc: Throttled) -> HttpResponse:
        headers = {"Retry-After": str(exc.wait)} if exc.wait else None
        return error_response(429, "rate_limited", exc.message, headers=headers)

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        return error_response(exc.status_code, CODES.get(exc.status_code, "error"), exc.message)

    @api.exception_handler(Http404)
    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return error_response(404, "not_found", NOT_FOUND)

    def refused(request: HttpRequest, exc: Exception) -> HttpResponse:
        # What Django raises reading a request (too many fields, a body too large, ...):
        # the 4xx the pages answer too, never the 500 below.
        answer = request_errors.describe(exc)
        return error_response(answer.status, answer.code, answer.message)

    for kind in request_errors.ERROR_CLASSES:
        api.add_exception_handler(kind, refused)  # type: ignore[arg-type]

    @api.exception_handler(Exception)
    def server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
        logger.exception("API request %s %s failed", request.method, request.path)
        return error_response(500, "server_error", SERVER_ERROR)
