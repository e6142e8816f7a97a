"""Clients of the HTTP API: a token of ada's, and one of bob's."""

from __future__ import annotations

import pytest
from django.test import Client

from datasets_app.services import tokens


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """The people these tests make never log in with a password (tokens, or force_login), so
    hashing theirs need not take the production hasher's second each. (Not suite-wide: tests
    that log in to a separate server process need the hash it can check.)"""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def bearer(secret: str) -> Client:
    return Client(headers={"authorization": f"Bearer {secret}"})


@pytest.fixture
def token(user):
    """ada's token: (row, secret)."""
    return tokens.api_token_create(user=user, name="CI")


@pytest.fixture
def api(token) -> Client:
    return bearer(token[1])


@pytest.fixture
def other_api(other_user) -> Client:
    return bearer(tokens.api_token_create(user=other_user, name="bob's CI")[1])


def error_of(response) -> dict:
    """The one error shape: {"error": {"code", "message", "details"}}."""
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return body["error"]
