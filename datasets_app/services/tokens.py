"""Personal API tokens: made, revoked, and noted as used."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from datasets_app.models import ApiToken
from datasets_app.redaction import API_TOKEN_PREFIX
from datasets_app.services import limits

# How often a token's last-used time is written: often enough to tell a person which token
# a pipeline still uses, rarely enough that a busy pipeline costs no write per request.
LAST_USED_EVERY = timedelta(minutes=1)


@transaction.atomic
def api_token_create(
    *, user: User, name: str, expires_days: int | None = None
) -> tuple[ApiToken, str]:
    """A new personal API token for `user`: the row, and the token itself, which is shown
    to its owner once and never stored. LimitReached past MAX_API_TOKENS_PER_PERSON."""
    limits.tokens_check(user=user)
    secret = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        user=user,
        name=name.strip(),
        prefix=secret[: len(API_TOKEN_PREFIX) + 6],
        digest=ApiToken.digest_of(secret),
        expires_at=timezone.now() + timedelta(days=expires_days) if expires_days else None,
    )
    token.full_clean()
    token.save()
    return token, secret


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    """Stop a token from opening the API (kept, revoked, so its owner sees what it was)."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_tokens_revoke_all(*, user: User) -> int:
    """Revoke every token of `user` that still opens the API (their password changed);
    returns how many."""
    return ApiToken.objects.filter(user=user).active().update(revoked_at=timezone.now())


def api_token_used(*, token: ApiToken) -> None:
    """Note that the token was just used, at most once every LAST_USED_EVERY."""
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
