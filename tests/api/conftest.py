"""Clients of the HTTP API: a token of ada's, and one of bob's."""

from __future__ import annotations

import pytest
from django.test import Client

from datasets_app.services import tokens


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
