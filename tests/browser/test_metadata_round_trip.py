"""Task metadata through a real browser, as the tester met it (issue 27, item 4): a CSV with
a `category` column imported in the dialog, which says which keys become metadata, then
downloaded in every export format from the export page and each file imported into a new
dataset, its tasks' metadata as they were."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from datasets_app.models import Dataset
from datasets_app.services import datasets
from tests.browser.helpers import watch_console
from tests.browser.test_import_dialog import open_import_dialog

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHEET = (
    b"prompt,expected_answer,category,metadata.level,metadata.tags\n"
    b'What is 2+2?,4,math,3,"[""easy"", ""arithmetic""]"\n'
    b"Capital of France?,Paris,geography,,\n"
)
METADATA = [
    {"category": "math", "level": 3, "tags": ["easy", "arithmetic"]},
    {"category": "geography"},
]
# Each download link of the export page, by what it says.
FORMATS = (
    "JSON (.json)",
    "CSV (.csv)",
    "Excel (.xlsx)",
    "ZIP with files (.zip)",
    "contextgrid eval set (.jsonl)",
)


def import_in_dialog(page, path) -> None:
    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(path))
    dialog.get_by_role("button", name="Import 2 tasks").click()
    expect(page.get_by_text("Imported 2 tasks as drafts.")).to_be_visible()


def test_metadata_goes_out_in_every_format_and_comes_back_the_same(
    logged_in, live_server, django_user_model, screenshot, tmp_path
):
    page = logged_in
    errors = watch_console(page)
    owner = django_user_model.objects.get(username="grace")
    quiz = datasets.dataset_create(owner=owner, name="Quiz")
    sheet = tmp_path / "quiz.csv"
    sheet.write_bytes(SHEET)
    page.goto(live_server.url + quiz.get_absolute_url())
    dialog = open_import_dialog(page)
    dialog.get_by_label("Choose the file").set_input_files(str(sheet))
    expect(
        dialog.get_by_text("Kept as each task’s metadata: category, level, tags.")
    ).to_be_visible()
    screenshot(page, "import-preview-metadata", full_page=False)
    dialog.get_by_role("button", name="Import 2 tasks").click()
    expect(page.get_by_text("Imported 2 tasks as drafts.")).to_be_visible()
    assert [t.metadata for t in quiz.tasks.order_by("position")] == METADATA

    page.goto(f"{live_server.url}/datasets/{quiz.pk}/export/")
    files = []
    for label in FORMATS:
        with page.expect_download() as download:
            page.get_by_role("link", name=label, exact=True).click()
        path = tmp_path / download.value.suggested_filename
        download.value.save_as(path)
        files.append(path)
    # No .jsonl export of its own: the .json's tasks, a line each, are one.
    lines = tmp_path / "quiz-lines.jsonl"
    tasks = json.loads(files[0].read_text())["tasks"]
    lines.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    files.append(lines)
    assert len({path.name for path in files}) == 6, [p.name for p in files]

    for path in files:
        copy = datasets.dataset_create(owner=owner, name=f"Copy from {path.name}")
        page.goto(live_server.url + copy.get_absolute_url())
        import_in_dialog(page, path)
        got = [t.metadata for t in Dataset.objects.get(pk=copy.pk).tasks.order_by("position")]
        assert got == METADATA, path.name
    first = copy.tasks.order_by("position").first()
    page.goto(live_server.url + first.get_absolute_url())
    expect(page.get_by_role("heading", name="Metadata")).to_be_visible()
    screenshot(page, "task-metadata-after-round-trip")
    assert errors == []
