"""Upper bounds on what one person can make: API tokens and datasets per person, tasks per
dataset (settings MAX_*, from the environment, generous by default). A bound is checked
under a lock on the row whose count it bounds (the person, or the dataset), so that
requests at the same moment cannot all pass it."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from datasets_app.models import ApiToken, Dataset


class LimitReached(Exception):
    """Making one more would pass a bound; the message says which, for the person."""


TOO_MANY_TOKENS = (
    "You have {count:,} active API tokens, the most one person can have. Revoke one you no "
    "longer use, then make the new one."
)
TOO_MANY_DATASETS = (
    "You own {count:,} datasets, the most one person can. Delete one you no longer need, or "
    "ask an administrator to raise the limit."
)
TOO_MANY_TASKS = (
    "This dataset has {count:,} tasks, the most one dataset can hold. Remove some, or put "
    "the new ones in another dataset."
)


def _lock_person(user: User) -> None:
    # Inside the caller's transaction: a second request by the same person waits here
    # until the first has made (and counted) its row.
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()


def tokens_check(*, user: User) -> None:
    """Refuse a new API token past MAX_API_TOKENS_PER_PERSON active ones (revoked and
    expired tokens do not count: they open nothing)."""
    _lock_person(user)
    count = ApiToken.objects.filter(user=user).active().count()
    if count >= settings.MAX_API_TOKENS_PER_PERSON:
        raise LimitReached(TOO_MANY_TOKENS.format(count=count))


def datasets_check(*, owner: User) -> None:
    """Refuse a new dataset past MAX_DATASETS_PER_PERSON owned by `owner`."""
    _lock_person(owner)
    count = Dataset.objects.filter(owner=owner).count()
    if count >= settings.MAX_DATASETS_PER_PERSON:
        raise LimitReached(TOO_MANY_DATASETS.format(count=count))


def tasks_check(*, dataset: Dataset, adding: int = 1) -> None:
    """Refuse `adding` more live tasks past MAX_TASKS_PER_DATASET. The caller holds the
    dataset's row locked (every write of its tasks takes that lock)."""
    count = dataset.tasks.live().count()
    if count + adding > settings.MAX_TASKS_PER_DATASET:
        raise LimitReached(TOO_MANY_TASKS.format(count=count))
