"""The admin, where an administrator reviews drafts."""

import pytest
from django.urls import reverse

from datasets_app.models import SiteSettings, Task, TaskState

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(client, admin_user):
    client.force_login(admin_user)
    return client


def test_every_admin_page_loads(admin_client_, make_dataset, user):
    from datasets_app import services

    dataset = make_dataset(tasks=2)
    version = services.version_save(dataset=dataset, user=user)
    run = services.run_create(version=version, user=user, scores={"t1": 1})
    task = Task.objects.first()
    SiteSettings.load()
    urls = [
        reverse("admin:index"),
        reverse("admin:datasets_app_dataset_changelist"),
        reverse("admin:datasets_app_dataset_change", args=[dataset.pk]),
        reverse("admin:datasets_app_task_changelist") + "?state__exact=draft",
        reverse("admin:datasets_app_task_changelist") + "?q=Prompt",
        reverse("admin:datasets_app_task_change", args=[task.pk]),
        reverse("admin:datasets_app_version_changelist"),
        reverse("admin:datasets_app_version_change", args=[version.pk]),
        reverse("admin:datasets_app_run_changelist"),
        reverse("admin:datasets_app_run_change", args=[run.pk]),
        reverse("admin:datasets_app_sitesettings_change", args=[1]),
        reverse("admin:datasets_app_upload_changelist"),
    ]
    for url in urls:
        assert admin_client_.get(url).status_code == 200, url


def test_the_admin_action_saves_selected_datasets_as_their_next_version(
    admin_client_, make_dataset
):
    dataset = make_dataset(tasks=2)
    response = admin_client_.post(
        reverse("admin:datasets_app_dataset_changelist"),
        {"action": "save_as_next_version", "_selected_action": [dataset.pk]},
        follow=True,
    )
    assert "saved as v1" in response.content.decode()
    assert dataset.versions.get().number == 1
    assert not dataset.tasks.filter(state=TaskState.DRAFT).exists()


def test_versions_and_runs_are_read_only_in_the_admin(admin_client_):
    assert admin_client_.get(reverse("admin:datasets_app_version_add")).status_code == 403
    assert admin_client_.get(reverse("admin:datasets_app_run_add")).status_code == 403


def test_an_administrator_turns_python_checks_on(admin_client_):
    SiteSettings.load()
    admin_client_.post(
        reverse("admin:datasets_app_sitesettings_change", args=[1]),
        {"python_checks_enabled": "on"},
    )
    assert SiteSettings.load().python_checks_enabled is True
