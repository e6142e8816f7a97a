"""The people who may sign in: an administrator adds them from the app's People page or
with `manage.py add_person`, without the admin site."""

from __future__ import annotations

import secrets

from django.contrib.auth.models import User
from django.db import transaction


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
