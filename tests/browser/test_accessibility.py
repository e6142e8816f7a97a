"""Each screen, and each state of the import dialog, through axe-core (our vendored copy,
served from our static files): no serious or critical violation, no console error."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from datasets_app.models import Upload
from tests.browser.helpers import axe_violations, dataset_with_everything, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_vendored_axe_is_served_from_our_static_files_and_finds_violations(
    logged_in, live_server
):
    response = logged_in.request.get(f"{live_server.url}/static/vendor/axe-core/axe.min.js")
    assert response.status == 200
    assert response.text().startswith("/*! axe v4.14.1")
    assert axe_violations(logged_in, live_server.url) == []
    # A field with no label is what axe calls critical: the check does see it.
    logged_in.evaluate("document.querySelector('main').append(document.createElement('input'))")
    (violation,) = axe_violations(logged_in, live_server.url)
    assert violation.startswith("critical label:")


@pytest.mark.parametrize("width", [1280, 375])
def test_every_screen_passes_axe(logged_in, live_server, width):
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    errors = watch_console(page)
    owner = get_user_model().objects.get(username="grace")
    dataset = dataset_with_everything(owner)
    task = dataset.tasks.live().get()
    draft = dataset.tasks.create(task_id="draft-1", prompt="A draft", expected_text="x")
    screens = {
        "datasets": "/",
        "new dataset": "/datasets/new/",
        "dataset": dataset.get_absolute_url(),
        "settings": f"/datasets/{dataset.pk}/settings/",
        "sharing": f"/datasets/{dataset.pk}/sharing/",
        "export": f"/datasets/{dataset.pk}/export/",
        "import page": f"/datasets/{dataset.pk}/import/",
        "task": task.get_absolute_url(),
        "task edit": f"/datasets/{dataset.pk}/tasks/{task.pk}/edit/",
        "new task": f"/datasets/{dataset.pk}/tasks/new/",
        "version": dataset.versions.get().get_absolute_url(),
        "help": "/help/dataset-files/",
        "api tokens": "/account/api-tokens/",
        "delete draft": f"/datasets/{dataset.pk}/tasks/{draft.pk}/delete/",
        "delete dataset": f"/datasets/{dataset.pk}/delete/",
        "change password": "/accounts/password_change/",
        "password changed": "/accounts/password_change/done/",
    }
    found = {}
    for name, path in screens.items():
        assert page.goto(f"{live_server.url}{path}").status == 200, name
        found[name] = axe_violations(page, live_server.url)
    assert {name: v for name, v in found.items() if v} == {}
    assert errors == []


def test_every_state_of_the_import_dialog_passes_axe(logged_in, live_server, tmp_path):
    page = logged_in
    errors = watch_console(page)
    owner = get_user_model().objects.get(username="grace")
    dataset = dataset_with_everything(owner)
    page.goto(f"{live_server.url}{dataset.get_absolute_url()}")
    found = {}

    page.get_by_role("button", name="Add tasks").click()
    found["menu open"] = axe_violations(page, live_server.url)
    page.get_by_role("menuitem", name="Import from a file").click()
    dialog = page.get_by_role("dialog", name="Import from a file")
    expect(dialog.get_by_label("Choose the file")).to_be_focused()
    found["dialog"] = axe_violations(page, live_server.url)

    good = tmp_path / "more.json"
    good.write_text(json.dumps({"tasks": [{"id": "n1", "prompt": "p", "expected": "e"}]}))
    dialog.get_by_label("Choose the file").set_input_files(str(good))
    expect(dialog.get_by_role("button", name="Import 1 task")).to_be_enabled()
    found["preview"] = axe_violations(page, live_server.url)
    dialog.get_by_label("Replace its tasks").check()
    expect(dialog.get_by_text("Replace archives 1 task")).to_be_visible()
    found["replace"] = axe_violations(page, live_server.url)

    dialog.get_by_role("link", name="Choose another file").click()
    expect(dialog.get_by_label("Choose the file")).to_be_focused()  # swapped in and wired
    bad = tmp_path / "bad.csv"
    bad.write_text("task_id,prompt,criterion,weight\na,p,c,-1\nb,,,\n")
    dialog.get_by_label("Choose the file").set_input_files(str(bad))
    expect(dialog.get_by_text("problems to fix")).to_be_visible()
    found["problems"] = axe_violations(page, live_server.url)

    dialog.get_by_role("link", name="Choose another file").click()
    expect(dialog.get_by_label("Choose the file")).to_be_focused()  # swapped in and wired
    unnamed = tmp_path / "topics.csv"
    unnamed.write_text("topic,theme\nWhat is 2 + 2?,4\nCapital of France?,Paris\n")
    dialog.get_by_label("Choose the file").set_input_files(str(unnamed))
    expect(dialog.get_by_role("heading", name="Which column is which?")).to_be_focused()
    found["mapping step"] = axe_violations(page, live_server.url)

    page.goto(f"{live_server.url}/datasets/new/")
    page.get_by_label("Import from a file (optional)").set_input_files(str(bad))
    expect(page.get_by_text("problems to fix")).to_be_visible()
    found["new dataset with problems"] = axe_violations(page, live_server.url)

    assert {name: v for name, v in found.items() if v} == {}
    assert errors == []
    assert Upload.objects.count() == 5  # the dataset's own file and the four chosen here
