"""Personal API tokens: made and revoked on the person's own page (shown once, stored as a
fingerprint), by the command, revoked in the admin; they open the API and nothing else."""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from datasets_app.api import auth, errors
from datasets_app.models import ApiToken
from datasets_app.services import tokens
from tests.api.conftest import bearer, error_of

DATASETS = "/api/v1/datasets"


@pytest.mark.django_db
def test_a_token_opens_the_api_as_its_owner(api, make_dataset, other_user):
    mine = make_dataset(name="Mine")
    make_dataset(owner=other_user, name="Theirs")
    response = api.get(DATASETS)
    assert response.status_code == 200
    assert [d["id"] for d in response.json()] == [mine.pk]


@pytest.mark.django_db
def test_no_token_is_a_401_in_the_error_shape(client):
    response = client.get(DATASETS)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert error_of(response)["code"] == "unauthorized"


@pytest.mark.django_db
@pytest.mark.parametrize("path", [DATASETS, "/api/v1/openapi.json"])
@pytest.mark.parametrize("header", [None, "Bearer", "Bearer  ", "Token abc", "Basic abc"])
def test_a_request_without_a_token_is_told_how_to_send_one(path, header):
    """No token, a blank one or another scheme: the answer says how to send one, never that
    the token is unknown (issue 27, item 10)."""
    client = Client(headers={} if header is None else {"authorization": header})
    error = error_of(response := client.get(path))
    assert response.status_code == 401
    assert error["message"] == errors.UNAUTHORIZED
    assert "Authorization: Bearer <token>" in error["message"]


@pytest.mark.django_db
def test_a_session_cookie_does_not_open_the_api(auth_client):
    response = auth_client.get(DATASETS)
    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthorized"


@pytest.mark.django_db
def test_a_token_does_not_open_the_pages(api, make_dataset):
    dataset = make_dataset()
    response = api.get(dataset.get_absolute_url())
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


@pytest.mark.django_db
def test_a_revoked_token_is_a_401_that_says_so(token):
    row, secret = token
    tokens.api_token_revoke(token=row)
    error = error_of(response := bearer(secret).get(DATASETS))
    assert response.status_code == 401
    assert error["code"] == "token_revoked" and error["message"] == auth.REVOKED


@pytest.mark.django_db
def test_an_expired_token_is_a_401_that_says_so(user):
    row, secret = tokens.api_token_create(user=user, name="old", expires_days=1)
    ApiToken.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = bearer(secret).get(DATASETS)
    assert response.status_code == 401
    assert error_of(response)["code"] == "token_expired"


@pytest.mark.django_db
def test_an_unknown_token_is_a_401(db):
    response = bearer("cev_not-a-token").get(DATASETS)
    assert response.status_code == 401
    assert error_of(response)["message"] == auth.UNKNOWN


@pytest.mark.django_db
def test_an_inactive_owners_token_no_longer_works(token, user):
    user.is_active = False
    user.save()
    assert bearer(token[1]).get(DATASETS).status_code == 401


@pytest.mark.django_db
def test_a_token_posts_without_csrf(token):
    client = Client(enforce_csrf_checks=True, headers={"authorization": f"Bearer {token[1]}"})
    response = client.post(DATASETS, {"name": "From CI"}, content_type="application/json")
    assert response.status_code == 201


@pytest.mark.django_db
def test_using_a_token_notes_when(api, token):
    assert token[0].last_used_at is None
    api.get(DATASETS)
    token[0].refresh_from_db()
    assert token[0].last_used_at is not None


@pytest.mark.django_db
def test_the_tokens_page_shows_a_new_token_once_and_keeps_only_its_fingerprint(auth_client, user):
    page = reverse("datasets_app:api_tokens")
    response = auth_client.post(page, {"name": "nightly CI", "expires_days": "30"})
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    row = ApiToken.objects.get(user=user)
    secret = response.context["secret"]
    assert secret in response.content.decode()
    assert row.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {row.name, row.prefix, row.digest}
    assert (row.expires_at - timezone.now()).days in (29, 30)
    assert bearer(secret).get(DATASETS).status_code == 200

    again = auth_client.get(page).content.decode()
    assert secret not in again and "nightly CI" in again and row.prefix in again


@pytest.mark.django_db
def test_the_tokens_page_needs_a_name(auth_client):
    response = auth_client.post(reverse("datasets_app:api_tokens"), {"name": ""})
    assert response.status_code == 200 and not ApiToken.objects.exists()
    assert "This field is required." in response.content.decode()


@pytest.mark.django_db
def test_a_person_revokes_their_own_token_and_no_one_elses(auth_client, token, other_user):
    theirs, _ = tokens.api_token_create(user=other_user, name="bob's")
    revoke = reverse("datasets_app:api_token_revoke", args=[theirs.pk])
    assert auth_client.post(revoke).status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None

    row, secret = token
    response = auth_client.post(reverse("datasets_app:api_token_revoke", args=[row.pk]))
    assert response.status_code == 302
    assert bearer(secret).get(DATASETS).status_code == 401
    page = auth_client.get(reverse("datasets_app:api_tokens")).content.decode()
    assert "Revoked" in page


@pytest.mark.django_db
def test_the_tokens_page_lists_only_the_persons_own(auth_client, other_user):
    tokens.api_token_create(user=other_user, name="bob's secret pipeline")
    page = auth_client.get(reverse("datasets_app:api_tokens")).content.decode()
    assert "bob's secret pipeline" not in page and "You have no API tokens yet." in page


@pytest.mark.django_db
def test_the_admin_can_revoke_anyones_token(client, admin_user, token):
    client.force_login(admin_user)
    row, secret = token
    listed = client.get(reverse("admin:datasets_app_apitoken_changelist")).content.decode()
    assert row.name in listed and row.prefix in listed and row.digest not in listed
    response = client.post(
        reverse("admin:datasets_app_apitoken_changelist"),
        {"action": "revoke_tokens", "_selected_action": [row.pk]},
    )
    assert response.status_code == 302
    assert bearer(secret).get(DATASETS).status_code == 401


@pytest.mark.django_db
def test_the_command_prints_a_working_token_once(user):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "create_api_token", "ada", "--name", "ci", "--expires-days", "7", stdout=out, stderr=err
    )
    secret = out.getvalue().strip()
    assert bearer(secret).get(DATASETS).status_code == 200
    row = ApiToken.objects.get(name="ci")
    assert row.user == user and (row.expires_at - timezone.now()).days in (6, 7)
    assert "shown once" in err.getvalue()


@pytest.mark.django_db
def test_the_command_refuses_an_unknown_user_and_a_bad_expiry(user):
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("create_api_token", "nobody")
    with pytest.raises(CommandError, match="1 or more"):
        call_command("create_api_token", "ada", "--expires-days", "0")
    with pytest.raises(CommandError, match="at most 100 characters"):
        call_command("create_api_token", "ada", "--name", "x" * 101)
    assert not ApiToken.objects.exists()
