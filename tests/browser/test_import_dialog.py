"""The import dialog in a real browser: the reference page's steps, one after another."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from datasets_app.models import Dataset, TaskState
from tests.conftest import FILES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RUBRIC = FILES / "json" / "rubric_template.json"
EXPECTED = FILES / "json" / "expected_answers_template.json"


def open_import_dialog(page):
    page.get_by_role("button", name="Add tasks").click()
    page.get_by_role("menuitem", name="Import from a file").click()
    dialog = page.get_by_role("dialog", name="Import from a file")
    expect(dialog).to_be_visible()
    return dialog


def test_import_a_rubric_save_it_then_replace_it(logged_in, live_server, screenshot, tmp_path):
    page = logged_in
    page.get_by_role("link", name="New dataset").click()
    page.get_by_label("Name").fill("Support rubric")
    page.get_by_role("button", name="Create dataset").click()
    expect(page.get_by_role("heading", name="Support rubric")).to_be_visible()

    dialog = open_import_dialog(page)
    expect(dialog.get_by_label("Choose the file")).to_be_focused()
    dialog.get_by_label("Choose the file").set_input_files(str(RUBRIC))
    expect(dialog.get_by_text("delayed-shipment", exact=True)).to_be_visible()
    button = dialog.get_by_role("button", name="Import 1 task")
    expect(button).to_be_enabled()
    expect(dialog.get_by_text("Python checks")).to_be_visible()
    screenshot(page, "import-dialog-preview")

    button.click()
    page.wait_for_url(f"{live_server.url}/datasets/*/")
    expect(
        page.get_by_text("Imported 1 task as a draft. Check it, then Save as v1.")
    ).to_be_visible()
    expect(page.get_by_role("cell", name="Draft")).to_be_visible()
    screenshot(page, "dataset-with-drafts")

    page.get_by_role("button", name="Save as v1").click()
    expect(page.get_by_text("as v1.")).to_be_visible()
    expect(page.get_by_role("cell", name="Saved", exact=True)).to_be_visible()

    bad = tmp_path / "broken.jsonl"
    bad.write_text(
        json.dumps({"id": "a", "prompt": "Fine", "expected": "ok"})
        + "\n"
        + json.dumps({"id": "b", "expected": "no prompt"})
        + "\n"
        + json.dumps({"id": "c", "prompt": "x", "criteria": [{"criterion": "y", "weight": -2}]})
        + "\n"
    )
    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(bad))
    expect(dialog.get_by_text("broken.jsonl, line 2")).to_be_visible()
    expect(dialog.get_by_text("broken.jsonl, line 3")).to_be_visible()
    expect(dialog.get_by_role("button", name="Import tasks")).to_be_disabled()
    expect(dialog.get_by_role("link", name="Download the problems")).to_be_visible()
    screenshot(page, "import-dialog-problems")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(EXPECTED))
    expect(dialog.get_by_role("button", name="Import 2 tasks")).to_be_enabled()
    dialog.get_by_label("Replace its tasks").check()
    expect(dialog.get_by_text("Removed (1)")).to_be_visible()
    expect(dialog.get_by_text("Added (2)")).to_be_visible()
    screenshot(page, "import-dialog-replace")
    dialog.get_by_role("button", name="Import 2 tasks").click()
    expect(page.get_by_text("Save as v2.")).to_be_visible()

    dataset = Dataset.objects.get(name="Support rubric")
    assert [t.task_id for t in dataset.tasks.live()] == ["yoy-growth", "q3-end-date"]
    assert dataset.tasks.get(task_id="delayed-shipment").state == TaskState.ARCHIVED


def test_the_pages_are_readable_on_a_small_screen(logged_in, live_server, screenshot, browser):
    page = logged_in
    page.set_viewport_size({"width": 375, "height": 800})
    page.get_by_role("link", name="New dataset").click()
    page.get_by_label("Name").fill("Phone")
    page.get_by_role("button", name="Create dataset").click()
    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(EXPECTED))
    expect(dialog.get_by_role("button", name="Import 2 tasks")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, "nothing forces sideways scrolling at 375 px"
    screenshot(page, "import-dialog-375px")


def test_a_new_dataset_from_a_file(logged_in, live_server, screenshot):
    page = logged_in
    page.get_by_role("link", name="New dataset").click()
    page.get_by_label("Import from a file (optional)").set_input_files(str(EXPECTED))
    expect(page.get_by_text("yoy-growth")).to_be_visible()
    expect(page.get_by_text("Detected: JSON dataset")).to_be_visible()
    screenshot(page, "new-dataset-with-file")
    page.get_by_role("button", name="Create dataset and import 2 tasks").click()
    expect(page.get_by_role("heading", name="Finance QA (expected answers)")).to_be_visible()
    expect(
        page.get_by_text("Imported 2 tasks as drafts. Check them, then Save as v1.")
    ).to_be_visible()
    assert Dataset.objects.get().tasks.count() == 2


def test_the_mapping_step_asks_which_column_is_which(logged_in, live_server, screenshot):
    page = logged_in
    page.get_by_role("link", name="New dataset").click()
    page.get_by_label("Name").fill("Support triage")
    page.get_by_role("button", name="Create dataset").click()

    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(
        str(FILES / "real" / "ragas" / "support_triage.csv")
    )
    expect(dialog.get_by_role("heading", name="Which column is which?")).to_be_visible()
    expect(dialog.get_by_label("Prompt")).to_have_value("text")
    expect(dialog.get_by_label("Expected answer")).to_have_value("labels")
    expect(dialog.get_by_text("Billing;RefundCancel").first).to_be_visible()
    expect(dialog.get_by_role("button", name="Import tasks")).to_be_disabled()
    screenshot(page, "import-dialog-mapping")

    dialog.get_by_label("Expected answer").select_option("priority")
    dialog.get_by_role("button", name="Use these columns").click()
    button = dialog.get_by_role("button", name="Import 20 tasks")
    expect(button).to_be_enabled()
    expect(dialog.get_by_text("These columns are not imported: labels.")).to_be_visible()
    screenshot(page, "import-dialog-mapped")
    button.click()
    page.wait_for_url(f"{live_server.url}/datasets/*/")
    expect(page.get_by_text("Imported 20 tasks as drafts.")).to_be_visible()


def test_new_dataset_with_a_file_that_needs_mapping(logged_in, live_server, screenshot, tmp_path):
    # Headers no alias list knows, in German: the person says which column is which.
    sheet = tmp_path / "kundenfragen.csv"
    rows = [f"Frage Nummer {n}?,Antwort {n}" for n in range(1, 11)]
    sheet.write_text("Kundenfrage,Teamantwort\n" + "\n".join(rows) + "\n", encoding="utf-8")
    page = logged_in
    page.get_by_role("link", name="New dataset").click()
    page.get_by_label("Name").fill("Kundenfragen")
    page.get_by_label("Import from a file (optional)").set_input_files(str(sheet))
    expect(page.get_by_role("heading", name="Which column is which?")).to_be_visible()
    page.get_by_label("Prompt").select_option("Kundenfrage")
    page.get_by_label("Expected answer").select_option("Teamantwort")
    screenshot(page, "new-dataset-mapping")

    page.get_by_role("button", name="Use these columns").click()
    button = page.get_by_role("button", name="Create dataset and import 10 tasks")
    expect(button).to_be_enabled()
    button.click()
    page.wait_for_url(f"{live_server.url}/datasets/*/")
    expect(page.get_by_text("Imported 10 tasks as drafts.")).to_be_visible()
