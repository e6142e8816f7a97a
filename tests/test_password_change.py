"""A changed password revokes the person's API tokens, whichever way it changed; the
password change page says so beforehand, with a count."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from datasets_app import passwords
from datasets_app.services import tokens
from tests.api.conftest import error_of


def api_answers(secret: str) -> int:
    return Client(headers={"authorization": f"Bearer {secret}"}).get("/api/v1/datasets").status_code


@pytest.fixture
def three_tokens(user) -> list[str]:
    return [tokens.api_token_create(user=user, name=f"CI {n}")[1] for n in range(3)]


@pytest.mark.django_db
def test_the_page_says_how_many_tokens_it_revokes_and_does(client, user, three_tokens):
    client.force_login(user)
    page = client.get(reverse("password_change")).content.decode()
    assert "Changing your password revokes your 3 API tokens." in page
    assert api_answers(three_tokens[0]) == 200
    response = client.post(
        reverse("password_change"),
        {
            "old_password": "pw-ada-12345",
            "new_password1": "a-new-long-secret-9",
            "new_password2": "a-new-long-secret-9",
        },
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse("password_change_done")
    assert passwords._plural(passwords.REVOKED, 3) in response.content.decode()
    assert [api_answers(secret) for secret in three_tokens] == [401, 401, 401]
    answer = Client(headers={"authorization": f"Bearer {three_tokens[0]}"}).get("/api/v1/datasets")
    assert error_of(answer)["code"] == "token_revoked"


@pytest.mark.django_db
def test_the_page_says_nothing_of_tokens_to_someone_without_any(auth_client):
    page = auth_client.get(reverse("password_change")).content.decode()
    assert "Change your password" in page and "API token" not in page.split("<main")[1]


@pytest.mark.django_db
def test_a_wrong_current_password_revokes_nothing(client, user, three_tokens):
    client.force_login(user)
    client.post(
        reverse("password_change"),
        {
            "old_password": "wrong",
            "new_password1": "x-9-long-secret",
            "new_password2": "x-9-long-secret",
        },
    )
    assert api_answers(three_tokens[0]) == 200


@pytest.mark.django_db
def test_a_password_set_in_the_admin_or_a_shell_revokes_the_tokens(
    client, admin_user, user, three_tokens
):
    client.force_login(admin_user)
    url = reverse("admin:auth_user_password_change", args=[user.pk])
    response = client.post(
        url,
        {
            "password1": "b-new-long-secret-9",
            "password2": "b-new-long-secret-9",
            "usable_password": "true",
        },
    )
    assert response.status_code == 302
    assert api_answers(three_tokens[0]) == 401
    fresh = tokens.api_token_create(user=user, name="after")[1]
    person = get_user_model().objects.get(pk=user.pk)
    person.set_password("c-new-long-secret-9")
    person.save()
    assert api_answers(fresh) == 401


@pytest.mark.django_db
def test_saving_a_person_without_a_new_password_keeps_their_tokens(user, three_tokens):
    user.first_name = "Ada"
    user.save()
    assert api_answers(three_tokens[0]) == 200
