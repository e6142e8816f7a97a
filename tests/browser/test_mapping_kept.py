"""The import dialog's column mapping on a phone-sized screen (issue 27, item 9): its
selects fit 375 px, and a mapping changed but not used yet is kept when the dialog is
closed and opened again, and when the page is reloaded."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from datasets_app.models import Dataset
from datasets_app.services import datasets
from tests.browser.helpers import axe_violations, clipped, watch_console
from tests.browser.test_import_dialog import open_import_dialog
from tests.conftest import FILES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TRIAGE = FILES / "real" / "ragas" / "support_triage.csv"


def test_a_mapping_is_kept_across_closing_the_dialog_and_a_reload_at_375px(
    logged_in, live_server, django_user_model, screenshot
):
    page = logged_in
    errors = watch_console(page)
    owner = django_user_model.objects.get(username="grace")
    dataset = datasets.dataset_create(owner=owner, name="Support triage")
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(live_server.url + dataset.get_absolute_url())

    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(TRIAGE))
    expect(dialog.get_by_role("heading", name="Which column is which?")).to_be_visible()
    answer = dialog.get_by_label("Expected answer", exact=True)
    answer.select_option("priority")
    # Every select is whole on the screen, wide enough to read what it says.
    for select in dialog.locator(".mapping-fields select").all():
        box = select.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 375
        assert box["width"] >= 200, "a select too narrow to read"
    assert clipped(page) == []
    assert axe_violations(page, live_server.url) == []
    answer.scroll_into_view_if_needed()
    screenshot(page, "import-mapping-375", full_page=False)

    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    open_import_dialog(page)
    expect(answer).to_have_value("priority")
    # And across a reload of the page: the dialog comes back to the file, as it was left.
    page.reload()
    dialog = open_import_dialog(page)
    expect(dialog.get_by_role("heading", name="Which column is which?")).to_be_visible()
    answer = dialog.get_by_label("Expected answer", exact=True)
    expect(answer).to_have_value("priority")
    dialog.get_by_role("button", name="Use these columns").click()
    button = dialog.get_by_role("button", name="Import 20 tasks")
    expect(button).to_be_enabled()
    # Closed again after the mapping was used: the preview is still there.
    dialog.get_by_role("button", name="Close").click()
    open_import_dialog(page)
    expect(button).to_be_enabled()
    button.click()
    page.wait_for_url(f"{live_server.url}/datasets/*/")
    expect(page.get_by_text("Imported 20 tasks as drafts.")).to_be_visible()
    assert Dataset.objects.get().tasks.count() == 20
    assert errors == []
