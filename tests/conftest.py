"""Shared fixtures: people, logged-in clients and small datasets."""

from __future__ import annotations

from pathlib import Path

import hypothesis
import pytest
from django.contrib.auth import get_user_model

from datasets_app.models import Criterion, Dataset, Task, TaskState

REPO_ROOT = Path(__file__).resolve().parent.parent
FILES = Path(__file__).resolve().parent / "files"
# ../shared beside the repo: the reference pages and real third-party files.
SHARED = REPO_ROOT.parent / "shared"

# Properties are about what the code does, never how fast: Hypothesis' per-example deadline
# (200 ms) and its too-slow health check are timings, and failed CI on a busy machine (a
# template rendered in 0.05 ms took 299 ms once). Speed goals live in `make bench`.
hypothesis.settings.register_profile(
    "suite", deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow]
)
hypothesis.settings.load_profile("suite")


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Every test's people get cheap password hashes that any process can still check
    (tests/hashers.py); a test of the production hasher sets its own."""
    settings.PASSWORD_HASHERS = ["tests.hashers.OneIterationPBKDF2"]


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user(username="ada", password="pw-ada-12345")


@pytest.fixture
def other_user(db):
    return get_user_model().objects.create_user(username="bob", password="pw-bob-12345")


@pytest.fixture
def admin_user(db):
    return get_user_model().objects.create_superuser(username="root", password="pw-root-12345")


@pytest.fixture
def auth_client(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def make_dataset(user):
    def make(
        *, owner=None, name: str = "Finance QA", tasks: int = 0, state: str = TaskState.DRAFT
    ) -> Dataset:
        dataset = Dataset.objects.create(owner=owner or user, name=name)
        for index in range(tasks):
            task = Task.objects.create(
                dataset=dataset,
                task_id=f"t{index + 1}",
                name=f"Task {index + 1}",
                prompt=f"Prompt {index + 1}",
                expected_text=f"Answer {index + 1}",
                position=index,
                state=state,
            )
            if index % 2:
                Criterion.objects.create(
                    dataset=dataset, task=task, criterion_id="c1", text="Is right", weight=2
                )
        return dataset

    return make


@pytest.fixture(autouse=True)
def on_commit_runs_at_once(monkeypatch):
    """Views enqueue Celery tasks with transaction.on_commit. Outside tests a request runs in
    autocommit, so the callback runs at once; inside a test's wrapping transaction it would
    never run. Run it at once here too, as production does."""
    monkeypatch.setattr(
        "django.db.transaction.on_commit", lambda func, using=None, robust=False: func()
    )


@pytest.fixture(autouse=True)
def media_in_tmp(settings, tmp_path):
    """Uploads and task files go to a temporary folder, never the developer's media/."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    }


@pytest.fixture(autouse=True)
def fresh_cache():
    """Rate-limit counts live in the cache; each test starts with none."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def password_reset(settings):
    """Serve the URLs as they are with PASSWORD_RESET_ENABLED set (they read it once)."""
    import importlib

    from django.urls import clear_url_caches

    import contextevals.urls

    def served(enabled: bool) -> None:
        settings.PASSWORD_RESET_ENABLED = enabled
        importlib.reload(contextevals.urls)
        clear_url_caches()

    original = settings.PASSWORD_RESET_ENABLED
    yield served
    served(original)
