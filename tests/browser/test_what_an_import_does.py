"""What an import does, seen in the dialog as a person meets it: files without ids added in
turn, what the preview says an import will change, and metadata kept on the way in and out."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from datasets_app.models import Dataset
from tests.browser.test_import_dialog import EXPECTED, RUBRIC, open_import_dialog

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def new_dataset(page, name: str) -> None:
    page.get_by_role("link", name="New dataset").click()
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Create dataset").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()


def test_two_files_without_ids_are_added_in_turn(logged_in, live_server, screenshot, tmp_path):
    page = logged_in
    new_dataset(page, "Arithmetic")
    first = tmp_path / "first.csv"
    first.write_text("prompt,expected_answer\nWhat is 2+2?,4\nWhat is 3+3?,6\n")
    second = tmp_path / "second.csv"
    second.write_text("prompt,expected_answer\nWhat is 4+4?,8\nWhat is 5+5?,10\n")

    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(first))
    expect(dialog.get_by_text("task-1", exact=True)).to_be_visible()
    dialog.get_by_role("button", name="Import 2 tasks").click()
    expect(page.get_by_text("Imported 2 tasks as drafts.")).to_be_visible()

    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(second))
    expect(dialog.get_by_text("task-3", exact=True)).to_be_visible()
    expect(dialog.get_by_text("already one of this dataset")).to_have_count(0)
    screenshot(page, "import-second-file-without-ids")
    dialog.get_by_role("button", name="Import 2 tasks").click()
    expect(page.get_by_role("row", name="Choose task-4")).to_be_visible()

    dataset = Dataset.objects.get(name="Arithmetic")
    assert [(t.task_id, t.expected_text) for t in dataset.tasks.live()] == [
        ("task-1", "4"),
        ("task-2", "6"),
        ("task-3", "8"),
        ("task-4", "10"),
    ]


def test_the_rubric_template_added_to_answer_tasks_says_what_it_does(
    logged_in, live_server, screenshot
):
    page = logged_in
    new_dataset(page, "Finance")
    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(EXPECTED))
    dialog.get_by_role("button", name="Import 2 tasks").click()
    expect(page.get_by_role("row", name="Choose q3-end-date")).to_be_visible()

    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(RUBRIC))
    effects = dialog.get_by_role("region", name="What this import does")
    expect(effects).to_contain_text("Adds 1 task as drafts.")
    expect(effects).to_contain_text("will also grade the dataset’s 2 tasks already there")
    expect(effects).to_contain_text("the expected answer will count for 5% of their score")
    # The task's prompt, shortened; the rest one click away.
    prompt = dialog.get_by_text("Draft an email to a customer whose order #4417", exact=False)
    expect(prompt.first).to_be_visible()
    expect(dialog.get_by_text("Offer free shipping on their next order.")).to_be_hidden()
    dialog.locator("details.text summary").first.click()
    expect(dialog.get_by_text("Offer free shipping on their next order.")).to_be_visible()
    screenshot(page, "import-effects-rubric-into-answers")

    dialog.get_by_role("button", name="Import 1 task").click()
    expect(page.get_by_role("row", name="Choose delayed-shipment")).to_be_visible()
    dataset = Dataset.objects.get(name="Finance")
    task = dataset.tasks.get(task_id="yoy-growth")
    assert [c.weight for c in task.criteria.all()] == [1.0]


def test_metadata_through_a_csv_with_category_and_back_out(
    logged_in, live_server, screenshot, tmp_path
):
    page = logged_in
    new_dataset(page, "Quiz")
    sheet = tmp_path / "quiz.csv"
    sheet.write_text(
        "prompt,expected_answer,category,difficulty\n"
        "What is 2+2?,4,arithmetic,1\nCapital of France?,Paris,geography,2\n"
    )
    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(sheet))
    effects = dialog.get_by_role("region", name="What this import does")
    expect(effects).to_contain_text("Kept as each task’s metadata: category, difficulty.")
    dialog.get_by_role("button", name="Import 2 tasks").click()
    expect(page.get_by_role("row", name="Choose task-2")).to_be_visible()

    page.get_by_label("Metadata").fill("category=geography")
    page.get_by_label("Metadata").press("Enter")
    expect(page.get_by_role("row", name="Choose task-1")).to_have_count(0)
    expect(page.get_by_role("row", name="Choose task-2")).to_be_visible()
    screenshot(page, "dataset-filtered-by-metadata")

    page.get_by_role("link", name="Capital of France?").first.click()
    expect(page.get_by_role("heading", name="Metadata")).to_be_visible()
    expect(page.get_by_text("geography")).to_be_visible()
    screenshot(page, "task-with-metadata")
    page.get_by_role("link", name="Edit").click()
    field = page.get_by_label("Metadata")
    expect(field).to_have_value('{\n  "category": "geography",\n  "difficulty": 2\n}')
    field.fill('{"category": "geography", "difficulty": 2, "split": "test"}')
    screenshot(page, "task-form-metadata")
    page.get_by_role("button", name="Save as draft").click()
    expect(page.get_by_text("split")).to_be_visible()

    dataset = Dataset.objects.get(name="Quiz")
    response = page.request.get(f"{live_server.url}/datasets/{dataset.pk}/export/csv/")
    exported = response.body().decode("utf-8-sig").splitlines()
    assert exported[0].endswith("metadata.category,metadata.difficulty,metadata.split")
    assert exported[2].endswith("geography,2,test")
