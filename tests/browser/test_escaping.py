"""Everything a file brings is shown as text: nothing in it runs in the browser (issue 7)."""

from __future__ import annotations

import json
import zipfile

import pytest
from playwright.sync_api import expect

from datasets_app.models import Dataset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>window.__pwned = 'script'</script>"
IMG = '"><img src=x onerror="window.__pwned = \'img\'">'
HOSTILE_NAME = "<img src=x onerror=window.__pwned=1>.txt"


def hostile_zip(tmp_path):
    document = {
        "name": f"Evil {SCRIPT}",
        "description": IMG,
        "criteria": [{"id": "c-" + IMG, "criterion": SCRIPT, "weight": 2}],
        "tasks": [
            {
                "id": f"t{IMG}",
                "name": SCRIPT + IMG,
                "prompt": f"{SCRIPT}\n{IMG}",
                "expected": {"text": IMG},
                "criteria": [
                    {
                        "criterion": IMG,
                        "verifier": {
                            "kind": "code_verifier",
                            "code": f"# {SCRIPT}\ndef verify(task, output):\n    return True\n",
                        },
                    }
                ],
                "inputFiles": [HOSTILE_NAME],
                "expectedFiles": [{"url": "https://example.com/a.md", "name": IMG}],
            }
        ],
    }
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("dataset.json", json.dumps(document))
        archive.writestr(HOSTILE_NAME, "text")
        archive.writestr(f"unused {SCRIPT}.txt", "never used")
    return path


def assert_nothing_ran(page):
    assert page.evaluate("window.__pwned") is None


def test_a_file_full_of_markup_is_shown_as_text(logged_in, live_server, tmp_path, screenshot):
    page = logged_in
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    page.get_by_role("link", name="New dataset").click()
    page.get_by_label("Name").fill("Hostile")
    page.get_by_role("button", name="Create dataset").click()
    page.get_by_role("button", name="Add tasks").click()
    page.get_by_role("menuitem", name="Import from a file").click()
    dialog = page.get_by_role("dialog", name="Import from a file")
    dialog.get_by_label("Choose the file").set_input_files(str(hostile_zip(tmp_path)))
    expect(dialog.get_by_role("button", name="Import 1 task")).to_be_enabled()
    expect(dialog.get_by_text(f"unused {SCRIPT}.txt", exact=False).first).to_be_visible()
    assert_nothing_ran(page)
    screenshot(page, "escaping-preview")

    dialog.get_by_role("button", name="Import 1 task").click()
    expect(page.get_by_text("Imported 1 task")).to_be_visible()
    assert_nothing_ran(page)
    page.get_by_role("link", name=SCRIPT + IMG).click()
    expect(page.get_by_role("heading", name=SCRIPT + IMG)).to_be_visible()
    expect(page.get_by_text(HOSTILE_NAME)).to_be_visible()
    assert_nothing_ran(page)
    screenshot(page, "escaping-task")

    links = tmp_path / "links.json"
    links.write_text(
        json.dumps(
            {
                "tasks": [
                    {
                        "id": "x",
                        "prompt": "p",
                        "expected": "e",
                        "inputFiles": [{"url": "javascript:window.__pwned=1", "name": "click"}],
                    }
                ]
            }
        )
    )
    page.goto(Dataset.objects.get().get_absolute_url().join([live_server.url, ""]))
    page.get_by_role("button", name="Add tasks").click()
    page.get_by_role("menuitem", name="Import from a file").click()
    dialog = page.get_by_role("dialog", name="Import from a file")
    dialog.get_by_label("Choose the file").set_input_files(str(links))
    expect(dialog.get_by_text("links.json, line 1")).to_be_visible()
    assert dialog.locator("a[href^='javascript:']").count() == 0
    assert_nothing_ran(page)
    assert dialogs == []
