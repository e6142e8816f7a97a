"""Sharing a dataset with other people, by its owner."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from datasets_app import selectors
from datasets_app.models import Dataset


class ShareRefused(Exception):
    """The share list could not be changed as asked; the message says why."""


NO_SUCH_USER = "There is nobody with the user name {username!r}."
ONLY_THE_OWNER = "Only the dataset's owner can change who it is shared with."


def dataset_share(*, dataset: Dataset, by: User, username: str) -> User:
    """Share the dataset with another person (its owner, or someone who manages every
    dataset, may)."""
    if not can_manage_sharing(dataset, by):
        raise ShareRefused(ONLY_THE_OWNER)
    person = get_user_model().objects.filter(username=username.strip()).first()
    if person is None:
        raise ShareRefused(NO_SUCH_USER.format(username=username.strip()))
    if person.pk != dataset.owner_id:
        dataset.shared_with.add(person)
    return person


def dataset_unshare(*, dataset: Dataset, by: User, user_id: int) -> None:
    if not can_manage_sharing(dataset, by):
        raise ShareRefused(ONLY_THE_OWNER)
    dataset.shared_with.remove(user_id)


def can_manage_sharing(dataset: Dataset, user: User) -> bool:
    return dataset.owner_id == user.pk or selectors.manages_every_dataset(user)
