"""Every screen in a real browser: it renders, breaks no CSP rule, and leaves a screenshot."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from datasets_app.importing import checker
from datasets_app.models import Dataset
from datasets_app.services import datasets, imports
from tests.conftest import FILES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def imported_dataset(owner) -> Dataset:
    from django.core.files.uploadedfile import SimpleUploadedFile

    dataset = datasets.dataset_create(owner=owner, name="Finance QA")
    data = (FILES / "json" / "rubric_template.json").read_bytes()
    upload = imports.upload_create(
        owner=owner, dataset=dataset, uploaded_file=SimpleUploadedFile("rubric.json", data)
    )
    imports.upload_check(upload=upload)
    imports.import_run(upload=upload, mode="add")
    datasets.version_save(dataset=dataset, user=owner)
    assert checker  # the checker module is what the upload went through
    return dataset


@pytest.mark.parametrize("width", [1280, 375])
def test_every_screen_renders_without_console_errors(logged_in, live_server, screenshot, width):
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    owner = get_user_model().objects.get(username="grace")
    dataset = imported_dataset(owner)
    task = dataset.tasks.first()
    version = dataset.versions.get()
    screens = {
        "datasets": "/",
        "new-dataset": "/datasets/new/",
        "dataset": dataset.get_absolute_url(),
        "settings": f"/datasets/{dataset.pk}/settings/",
        "sharing": f"/datasets/{dataset.pk}/sharing/",
        "export": f"/datasets/{dataset.pk}/export/",
        "import-page": f"/datasets/{dataset.pk}/import/",
        "task": task.get_absolute_url(),
        "task-edit": f"/datasets/{dataset.pk}/tasks/{task.pk}/edit/",
        "task-new": f"/datasets/{dataset.pk}/tasks/new/",
        "version": version.get_absolute_url(),
        "help": "/help/dataset-files/",
    }
    for name, path in screens.items():
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, name
        if width == 375:
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= 375 + 1, f"{name} scrolls sideways at 375 px ({scroll})"
        screenshot(page, f"page-{name}-{width}")
    assert errors == []


def test_the_admin_works_under_the_content_security_policy(page, live_server, django_user_model):
    django_user_model.objects.create_superuser(username="root", password="pw-root-12345")
    owner = django_user_model.objects.get(username="root")
    dataset = imported_dataset(owner)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/admin/login/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill("pw-root-12345")
    page.get_by_role("button", name="Log in").click()
    for path in (
        "/admin/",
        "/admin/datasets_app/dataset/",
        f"/admin/datasets_app/dataset/{dataset.pk}/change/",
        "/admin/datasets_app/task/?state__exact=saved",
        f"/admin/datasets_app/task/{dataset.tasks.first().pk}/change/",
        "/admin/datasets_app/sitesettings/1/change/",
    ):
        assert page.goto(f"{live_server.url}{path}").status == 200, path
    assert errors == []
