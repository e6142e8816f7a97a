"""Read options in the import dialog, in a browser: a GBK file whose text reads as several
encodings shows each reading; choosing GBK reads it again and imports what it says. Ids that
repeat are numbered; a workbook's header row is said when the check cannot find it."""

from __future__ import annotations

import pytest
from openpyxl import Workbook
from playwright.sync_api import expect

from datasets_app.models import Dataset
from datasets_app.services import datasets
from tests.browser.helpers import axe_violations, clipped, watch_console
from tests.browser.test_import_dialog import open_import_dialog

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GBK_ENGLISH = (
    "id,prompt,expected\n1,Maxwell’s equations — what’s “curl”?,Ampere’s law\n"
    "2,It’s “quoted” here,the answer’s fine\n"
).encode("gbk")


def file_chosen(page, live_server, django_user_model, name: str, path):
    """The import dialog of a new dataset of grace's, named `name`, with `path` chosen."""
    owner = django_user_model.objects.get(username="grace")
    dataset = datasets.dataset_create(owner=owner, name=name)
    page.goto(live_server.url + dataset.get_absolute_url())
    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(path))
    return dialog


def test_an_encoding_the_check_cannot_tell_is_chosen_and_the_file_imports(
    logged_in, live_server, django_user_model, screenshot, tmp_path
):
    page = logged_in
    errors = watch_console(page)
    path = tmp_path / "physics.csv"
    path.write_bytes(GBK_ENGLISH)

    dialog = file_chosen(page, live_server, django_user_model, "Physics", path)
    expect(dialog.get_by_text("reads equally well in 4 encodings")).to_be_visible()
    encoding = dialog.get_by_label("Encoding")
    expect(encoding).to_be_visible()
    assert clipped(page) == []
    assert axe_violations(page, live_server.url) == []
    encoding.scroll_into_view_if_needed()
    screenshot(page, "import-read-options", full_page=False)

    encoding.select_option("gb18030")
    dialog.get_by_role("button", name="Read the file again").click()
    button = dialog.get_by_role("button", name="Import 2 tasks")
    expect(button).to_be_enabled()
    expect(dialog.get_by_text("Maxwell’s equations — what’s “curl”?").first).to_be_visible()
    button.click()
    page.wait_for_url(f"{live_server.url}/datasets/*/")
    expect(page.get_by_text("Imported 2 tasks as drafts.")).to_be_visible()
    prompts = set(Dataset.objects.get().tasks.values_list("prompt", flat=True))
    assert prompts == {"Maxwell’s equations — what’s “curl”?", "It’s “quoted” here"}
    assert errors == []


def test_ids_that_repeat_are_numbered_from_read_options(
    logged_in, live_server, django_user_model, screenshot, tmp_path
):
    page = logged_in
    errors = watch_console(page)
    path = tmp_path / "generated.jsonl"
    path.write_text(
        '{"id": "q1", "prompt": "What is 2+2?", "expected": "4"}\n'
        '{"id": "q1", "prompt": "Capital of France?", "expected": "Paris"}\n'
    )
    dialog = file_chosen(page, live_server, django_user_model, "Generated", path)
    expect(dialog.get_by_text('Task id "q1" is already used by task 1')).to_be_visible()
    dialog.get_by_label("Number the tasks").check()
    dialog.get_by_role("button", name="Read the file again").click()
    button = dialog.get_by_role("button", name="Import 2 tasks")
    expect(button).to_be_enabled()
    expect(dialog.get_by_text("The tasks are numbered task-1 to task-2")).to_be_visible()
    assert axe_violations(page, live_server.url) == []
    screenshot(page, "import-numbered", full_page=False)
    button.click()
    expect(page.get_by_text("Imported 2 tasks as drafts.")).to_be_visible()
    ids = sorted(Dataset.objects.get().tasks.values_list("task_id", flat=True))
    assert ids == ["task-1", "task-2"]
    assert errors == []


def test_a_workbooks_header_row_is_said_in_read_options_and_the_sheet_imports(
    logged_in, live_server, django_user_model, screenshot, tmp_path
):
    page = logged_in
    errors = watch_console(page)
    book = Workbook()
    for row in (
        ("Quarterly eval", "team-a"),
        ("id", "prompt", "expected"),
        ("q1", "What is 2+2?", "4"),
        ("q2", "Capital of France?", "Paris"),
    ):
        book.active.append(row)
    path = tmp_path / "quarterly.xlsx"
    book.save(path)

    dialog = file_chosen(page, live_server, django_user_model, "Quarterly", path)
    expect(dialog.get_by_text("Which column is which?")).to_be_visible()
    dialog.get_by_text("Read options").click()
    expect(dialog.get_by_label("Encoding")).to_have_count(0)
    dialog.get_by_label("Header row").fill("2")
    dialog.get_by_role("button", name="Read the file again").click()
    button = dialog.get_by_role("button", name="Import 2 tasks")
    expect(button).to_be_enabled()
    expect(dialog.get_by_text("Capital of France?").first).to_be_visible()
    assert clipped(page) == []
    assert axe_violations(page, live_server.url) == []
    screenshot(page, "import-xlsx-header-row", full_page=False)
    button.click()
    expect(page.get_by_text("Imported 2 tasks as drafts.")).to_be_visible()
    assert errors == []
