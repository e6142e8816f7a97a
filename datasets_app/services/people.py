"""The people who may sign in: an administrator adds them from the app's People page or
with `manage.py add_person`, without the admin site."""

from __future__ import annotations

import secrets

from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode


@transaction.atomic
def person_add(*, username: str, email: str = "", is_staff: bool = False) -> tuple[User, str]:
    """A new person with a generated password: the row, and the password, which is shown
    once to whoever added them (to pass on) and never kept in clear."""
    password = secrets.token_urlsafe(12)
    person = User(username=username.strip(), email=email.strip(), is_staff=is_staff)
    person.set_password(password)
    person.full_clean()
    person.save()
    return person, password


@transaction.atomic
def person_invite(*, username: str, email: str = "", is_staff: bool = False) -> tuple[User, str]:
    """A new person with no password yet, and the path of the link that lets them choose
    one: Django's password reset token, so the link works once (choosing a password ends
    it) and for PASSWORD_RESET_TIMEOUT, and nothing secret is kept."""
    person = User(username=username.strip(), email=email.strip(), is_staff=is_staff)
    person.set_unusable_password()
    person.full_clean()
    person.save()
    path = reverse(
        "invite",
        kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(person.pk)),
            "token": default_token_generator.make_token(person),
        },
    )
    return person, path
