"""Nothing a person saved is lost behind their back, in a real browser: an untouched Save
changes nothing (the browser's own line breaks included), Delete asks first without
JavaScript, Replace lists what it archives, and the export page says what a flat file
cannot hold."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

from datasets_app.models import Dataset, Task, TaskState
from datasets_app.services import datasets, imports
from tests.datasets import dataset_state

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCUMENT = {
    "format": "context-evals-dataset",
    "version": 1,
    "name": "Support",
    "criteria": [{"id": "polite", "criterion": "Is polite.", "weight": 2}],
    "tasks": [
        {
            "id": "refund",
            "prompt": "Write a refund email.\n\nKeep it short.\n",
            "expected": "Dear customer,\nyour refund is on its way.",
            "criteria": [{"id": "amount", "criterion": "States the amount.", "weight": 3}],
            "inputFiles": ["files/order.txt", "https://example.com/policy.pdf"],
        }
    ],
}


def imported(owner, document=DOCUMENT) -> Dataset:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("dataset.json", json.dumps(document))
        zf.writestr("files/order.txt", b"Order 4417, $120.")
    dataset = datasets.dataset_create(owner=owner, name=document["name"])
    upload = imports.upload_create(
        owner=owner,
        dataset=dataset,
        uploaded_file=SimpleUploadedFile("support.zip", out.getvalue()),
    )
    imports.upload_check(upload=upload)
    imports.import_run(upload=upload, mode="add")
    return dataset


def test_saving_a_task_untouched_in_a_browser_changes_nothing(logged_in, live_server):
    page = logged_in
    dataset = imported(get_user_model().objects.get(username="grace"))
    datasets.version_save(dataset=dataset, user=None)
    before = dataset_state(dataset)
    task = dataset.tasks.get()
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/tasks/{task.pk}/edit/")
    page.get_by_role("button", name="Save as draft").click()
    page.wait_for_url(f"{live_server.url}{task.get_absolute_url()}")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/settings/")
    page.get_by_role("button", name="Save settings").click()
    page.wait_for_url(f"{live_server.url}{dataset.get_absolute_url()}")
    assert dataset_state(dataset) == before
    expect(page.get_by_role("button", name="Save as v2")).to_have_count(0)


def test_delete_asks_first_without_javascript(browser, live_server, screenshot):
    get_user_model().objects.create_user(username="ada", password="pw-ada-12345")
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("User name").fill("ada")
    page.get_by_label("Password").fill("pw-ada-12345")
    page.get_by_role("button", name="Log in").click()
    dataset = imported(get_user_model().objects.get(username="ada"))
    draft = dataset.tasks.get()

    page.goto(f"{live_server.url}{draft.get_absolute_url()}")
    screenshot(page, "task-draft")
    page.get_by_role("link", name="Delete").click()
    expect(page.get_by_role("heading", name="Delete refund?")).to_be_visible()
    screenshot(page, "task-delete-confirmation")
    assert Task.objects.filter(pk=draft.pk).exists()
    page.get_by_role("button", name="Delete refund").click()
    page.wait_for_url(f"{live_server.url}{dataset.get_absolute_url()}")
    assert not Task.objects.filter(pk=draft.pk).exists()
    context.close()


def test_replace_lists_drafts_and_saved_tasks_before_import(
    logged_in, live_server, screenshot, tmp_path
):
    page = logged_in
    owner = get_user_model().objects.get(username="grace")
    dataset = imported(owner)
    datasets.version_save(dataset=dataset, user=owner)
    Task.objects.create(dataset=dataset, task_id="late-draft", prompt="p", expected_text="x")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tasks": [{"id": "new", "prompt": "p", "expected": "x"}]}))

    page.goto(f"{live_server.url}{dataset.get_absolute_url()}")
    page.get_by_role("button", name="Add tasks").click()
    page.get_by_role("menuitem", name="Import from a file").click()
    dialog = page.get_by_role("dialog", name="Import from a file")
    dialog.get_by_label("Choose the file").set_input_files(str(other))
    expect(dialog.get_by_role("button", name="Import 1 task")).to_be_enabled()
    dialog.get_by_label("Replace its tasks").check()
    expect(
        dialog.get_by_text("Replace archives 2 tasks and 1 criterion for every task")
    ).to_be_visible()
    expect(dialog.get_by_text("late-draft").first).to_be_visible()
    screenshot(page, "import-dialog-replace-lists-archives")
    dialog.get_by_role("button", name="Import 1 task").click()
    expect(page.get_by_text("Save as v2.")).to_be_visible()
    assert dataset.tasks.get(task_id="late-draft").state == TaskState.ARCHIVED


def test_the_export_page_offers_the_zip_for_stored_files(logged_in, live_server, screenshot):
    page = logged_in
    dataset = imported(get_user_model().objects.get(username="grace"))
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/export/")
    expect(page.get_by_text("cannot go in a .csv file").first).to_be_visible()
    expect(
        page.get_by_role("link", name="Download the ZIP with files (.zip) instead").first
    ).to_be_visible()
    screenshot(page, "export-stored-files")
