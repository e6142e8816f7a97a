"""Who is calling: a personal API token sent as `Authorization: Bearer <token>`.

Only a token opens the API; a session cookie does not (so CSRF does not apply here), and a
token opens no page. The token's owner becomes `request.user`, so everything after this
(which datasets they see, their rate limits) is the same rule the pages follow.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.utils import formats
from ninja.security import HttpBearer

from datasets_app import selectors
from datasets_app.api.errors import UNAUTHORIZED, ApiError, error_response
from datasets_app.models import ApiToken
from datasets_app.services import tokens

REVOKED = "This API token was revoked. Make a new one on your API tokens page."
EXPIRED = "This API token expired on {date}. Make a new one on your API tokens page."
UNKNOWN = "This API token is not one we know. Check it was copied whole."


def _refusal(secret: str) -> tuple[ApiToken | None, ApiError | None]:
    """The token a secret names, or why it opens nothing. A blank one (`Bearer` and no
    more) was never sent: the caller is told how to send one, not that it is unknown."""
    if not secret:
        return None, ApiError(401, "unauthorized", UNAUTHORIZED)
    token = selectors.api_token_for(secret)
    return token, _token_refusal(token)


def _token_refusal(token: ApiToken | None) -> ApiError | None:
    if token is None:
        return ApiError(401, "unauthorized", UNKNOWN)
    if token.revoked_at is not None:
        return ApiError(401, "token_revoked", REVOKED)
    if token.expires_at is not None and token.is_expired:
        date = formats.date_format(token.expires_at, "DATETIME_FORMAT")
        return ApiError(401, "token_expired", EXPIRED.format(date=date))
    return None


class TokenAuth(HttpBearer):
    """Bearer tokens: the owner of an active token is the request's user."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found, refusal = _refusal(token.strip())
        if refusal is not None:
            raise refusal
        assert found is not None  # for the type checker: _token_refusal refused None
        tokens.api_token_used(token=found)
        request.user = found.user
        return found.user


def signed_in_or_token(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The schema and the docs page: for a signed-in person (the docs page reads the schema
    with its session) or a valid token (a pipeline validating the schema)."""

    @wraps(view)
    def guarded(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        header = request.headers.get("Authorization", "")
        if header.lower().startswith("bearer ") or header.lower() == "bearer":
            _found, refusal = _refusal(header[7:].strip())
            if refusal is not None:
                return error_response(refusal.status, refusal.code, refusal.message)
        elif not request.user.is_authenticated:
            if request.path.endswith(".json"):
                # No token was sent at all: say how to send one, as every endpoint does.
                return error_response(401, "unauthorized", UNAUTHORIZED)
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return guarded
