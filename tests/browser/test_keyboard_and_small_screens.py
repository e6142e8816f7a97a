"""The screens from the keyboard and on small screens: the Add tasks menu button, focus on
a result when it arrives, one live region, Escape, and nothing cut off at 375 or 768 px."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.browser.helpers import clipped, dataset_with_everything, watch_console
from tests.conftest import FILES
from tests.runs import run_outputs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPECTED = FILES / "json" / "expected_answers_template.json"


def focused_text(page) -> str:
    return page.evaluate("document.activeElement.textContent.trim()")


def test_add_tasks_is_a_menu_button_from_the_keyboard(logged_in, live_server, screenshot):
    page = logged_in
    errors = watch_console(page)
    dataset = dataset_with_everything(get_user_model().objects.get(username="grace"))
    page.goto(f"{live_server.url}{dataset.get_absolute_url()}")
    button = page.get_by_role("button", name="Add tasks")
    expect(button).to_have_attribute("aria-haspopup", "menu")
    expect(button).to_have_attribute("aria-expanded", "false")
    menu = page.get_by_role("menu", name="Add tasks")
    expect(menu).to_be_hidden()

    # Tab reaches the button; Enter opens the menu on its first item.
    page.keyboard.press("Tab")
    for _ in range(10):
        if page.evaluate("document.activeElement.id") == "add-tasks-button":
            break
        page.keyboard.press("Tab")
    expect(button).to_be_focused()
    page.keyboard.press("Enter")
    expect(menu).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("menuitem", name="Import from a file")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("menuitem", name="New task")).to_be_focused()
    page.keyboard.press("ArrowDown")  # wraps round
    expect(page.get_by_role("menuitem", name="Import from a file")).to_be_focused()
    page.keyboard.press("End")
    expect(page.get_by_role("menuitem", name="New task")).to_be_focused()
    screenshot(page, "add-tasks-menu-1280", full_page=False)
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(button).to_be_focused()

    # Up opens it on its last item; Space opens it too; Enter on an item acts.
    page.keyboard.press("ArrowUp")
    expect(page.get_by_role("menuitem", name="New task")).to_be_focused()
    page.keyboard.press("Escape")
    page.keyboard.press(" ")
    expect(page.get_by_role("menuitem", name="Import from a file")).to_be_focused()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Import from a file")
    expect(dialog).to_be_visible()
    expect(menu).to_be_hidden()
    expect(dialog.get_by_label("Choose the file")).to_be_focused()
    assert errors == []


def test_focus_goes_to_the_result_and_one_live_region_announces(logged_in, live_server, screenshot):
    page = logged_in
    errors = watch_console(page)
    dataset = dataset_with_everything(get_user_model().objects.get(username="grace"))
    page.goto(f"{live_server.url}{dataset.get_absolute_url()}")
    page.get_by_role("button", name="Add tasks").click()
    page.get_by_role("menuitem", name="Import from a file").click()
    dialog = page.get_by_role("dialog", name="Import from a file")
    dialog.get_by_label("Choose the file").set_input_files(str(EXPECTED))

    heading = dialog.get_by_role("heading", name="Preview: 2 tasks")
    expect(heading).to_be_focused()
    assert page.evaluate("document.querySelectorAll('#import-result').length") == 1
    duplicates = page.evaluate(
        """() => {
            const ids = [...document.querySelectorAll('[id]')].map((el) => el.id);
            return ids.filter((id, i) => ids.indexOf(id) !== i);
        }"""
    )
    assert duplicates == []
    live = "[aria-live], [role=status], [role=alert], [role=log]"
    assert dialog.locator(live).count() == 1

    # Switching to Replace from the keyboard: the new preview's heading takes focus.
    dialog.get_by_label("Add to its tasks").focus()
    page.keyboard.press("ArrowDown")
    expect(dialog.get_by_label("Replace its tasks")).to_be_checked()
    expect(dialog.get_by_text("Removed (1)")).to_be_visible()
    expect(heading).to_be_focused()
    assert dialog.locator(live).count() == 1
    assert page.evaluate("document.querySelectorAll('#import-result').length") == 1
    screenshot(page, "import-dialog-replace-focused-1280")

    # Escape closes the dialog from wherever focus is in it.
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert errors == []


def test_a_swapped_in_file_input_does_not_carry_a_browser_added_style(logged_in, live_server):
    page = logged_in
    errors = watch_console(page)
    dataset = dataset_with_everything(get_user_model().objects.get(username="grace"))
    page.goto(f"{live_server.url}{dataset.get_absolute_url()}")
    for _ in range(2):
        page.get_by_role("button", name="Add tasks").click()
        page.get_by_role("menuitem", name="Import from a file").click()
        dialog = page.get_by_role("dialog", name="Import from a file")
        file_input = dialog.get_by_label("Choose the file")
        expect(file_input).to_be_focused()
        assert file_input.get_attribute("style") is None
        # What browser extensions leave on file inputs: an empty style attribute (made the
        # way the CSP allows a script to, through the CSSOM).
        file_input.evaluate("(el) => { el.style.color = 'red'; el.style.color = ''; }")
        assert file_input.get_attribute("style") == ""
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
    assert errors == []


@pytest.mark.parametrize("width", [375, 768])
def test_nothing_is_clipped_on_small_screens(logged_in, live_server, screenshot, tmp_path, width):
    page = logged_in
    page.set_viewport_size({"width": width, "height": 800})
    errors = watch_console(page)
    owner = get_user_model().objects.get(username="grace")
    dataset = dataset_with_everything(owner, name="Customer support answers, second quarter")
    task = dataset.tasks.live().get()
    draft = dataset.tasks.create(task_id="draft-1", prompt="A draft", expected_text="x")
    screens = {
        "datasets": "/",
        "new-dataset": "/datasets/new/",
        "dataset": dataset.get_absolute_url(),
        "settings": f"/datasets/{dataset.pk}/settings/",
        "task": task.get_absolute_url(),
        "task-edit": f"/datasets/{dataset.pk}/tasks/{task.pk}/edit/",
        "version": dataset.versions.get().get_absolute_url(),
        "help": "/help/dataset-files/",
        "api tokens": "/account/api-tokens/",
        "delete draft": f"/datasets/{dataset.pk}/tasks/{draft.pk}/delete/",
        "sharing-page": f"/datasets/{dataset.pk}/sharing/",
        "export": f"/datasets/{dataset.pk}/export/",
        "import-page": f"/datasets/{dataset.pk}/import/",
    }
    found = {}
    for name, path in screens.items():
        page.goto(f"{live_server.url}{path}")
        found[name] = clipped(page)
        if width == 375:
            screenshot(page, f"small-{name}-{width}")

    # The tasks table shows every field, Criteria and Total weight included.
    page.goto(f"{live_server.url}{dataset.get_absolute_url()}")
    row = page.locator("table.tasks tbody tr").first
    for label in ("Id", "Name", "State", "Scored by", "Criteria", "Total weight"):
        cell = row.locator(f'td[data-label="{label}"]')
        expect(cell).to_be_visible()
        assert cell.bounding_box()["x"] + cell.bounding_box()["width"] <= width
    expect(row.locator('td[data-label="Total weight"]')).to_have_text("83.5")

    page.get_by_role("button", name="Add tasks").click()
    menu = page.get_by_role("menu", name="Add tasks")
    expect(menu).to_be_visible()
    box = menu.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
    found["menu"] = clipped(page)
    screenshot(page, f"small-add-tasks-menu-{width}", full_page=False)

    page.get_by_role("menuitem", name="Import from a file").click()
    dialog = page.get_by_role("dialog", name="Import from a file")
    many = tmp_path / "many.json"
    tasks = [
        {"id": f"question-{i}", "name": f"A long task name number {i}", "prompt": "p",
         "criteria": [{"criterion": "c", "weight": 2.5}]}
        for i in range(30)
    ]  # fmt: skip
    many.write_text(json.dumps({"tasks": tasks}))
    dialog.get_by_label("Choose the file").set_input_files(str(many))
    expect(dialog.get_by_role("button", name="Import 30 tasks")).to_be_visible()
    found["dialog-preview"] = clipped(page)
    screenshot(page, f"small-dialog-preview-{width}", full_page=False)

    dialog.get_by_role("link", name="Choose another file").click()
    expect(dialog.get_by_label("Choose the file")).to_be_focused()  # swapped in and wired
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tasks": [{"id": "x" * 80, "prompt": "p", "expected": 5}]}))
    dialog.get_by_label("Choose the file").set_input_files(str(bad))
    expect(dialog.get_by_text("problem to fix")).to_be_visible()
    found["dialog-problems"] = clipped(page)
    screenshot(page, f"small-dialog-problems-{width}", full_page=False)

    dialog.get_by_role("link", name="Choose another file").click()
    expect(dialog.get_by_label("Choose the file")).to_be_focused()  # swapped in and wired
    unnamed = tmp_path / "topics.csv"
    unnamed.write_text(
        "topic,theme\n" + "A question long enough to wrap on a phone?,Its answer\n" * 3
    )
    dialog.get_by_label("Choose the file").set_input_files(str(unnamed))
    expect(dialog.get_by_role("heading", name="Which column is which?")).to_be_focused()
    found["dialog-mapping"] = clipped(page)
    screenshot(page, f"small-dialog-mapping-{width}", full_page=False)

    assert {name: f for name, f in found.items() if f} == {}
    assert errors == []


@pytest.mark.parametrize("width", [1280, 375])
def test_the_admin_for_reviewing_drafts(page, live_server, django_user_model, screenshot, width):
    from datasets_app.models import Criterion, Task

    django_user_model.objects.create_superuser(username="root", password="pw-root-12345")
    owner = django_user_model.objects.get(username="root")
    dataset = dataset_with_everything(owner)
    version = dataset.versions.get()
    run_outputs(version, owner, {"delayed-shipment": "The shipment is late."})
    draft = Task.objects.create(
        dataset=dataset, task_id="draft-1", prompt="A draft to review", expected_text="x"
    )
    task = dataset.tasks.get(task_id="delayed-shipment", state="saved")
    assert Criterion.objects.filter(task=task, verifier__kind="code_verifier").exists()
    errors = watch_console(page)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/admin/login/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill("pw-root-12345")
    page.get_by_role("button", name="Log in").click()
    screens = {
        "dataset": f"/admin/datasets_app/dataset/{dataset.pk}/change/",
        "task": f"/admin/datasets_app/task/{task.pk}/change/",
        "drafts": f"/admin/datasets_app/task/?state__exact=draft&dataset={dataset.pk}",
        "version": f"/admin/datasets_app/version/{version.pk}/change/",
        "datasets": "/admin/datasets_app/dataset/",
        "versions": "/admin/datasets_app/version/",
        "runs": "/admin/datasets_app/run/",
    }
    for name, path in screens.items():
        assert page.goto(f"{live_server.url}{path}").status == 200, name
        screenshot(page, f"admin-{name}-{width}")
        if width == 1280:
            # Nothing runs off the side: the criteria inline fits the page.
            assert page.evaluate("document.documentElement.scrollWidth") <= width, name
        else:
            # Django's own shared-with selector hides its buttons' text off-screen.
            found = [where for where in clipped(page) if "selector-" not in where]
            assert found == [], name
    page.goto(f"{live_server.url}{screens['task']}")
    boxes = page.locator("textarea.verifier-code").all()
    (code,) = [box for box in boxes if "def verify(task, output):\n" in box.input_value()]
    expect(code).to_be_visible()
    assert "monospace" in code.evaluate("(el) => getComputedStyle(el).fontFamily")
    assert draft.pk
    assert errors == []


@pytest.mark.parametrize("width", [1280, 375])
def test_choose_another_file_keeps_what_was_typed(logged_in, live_server, screenshot, width):
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    errors = watch_console(page)
    page.goto(f"{live_server.url}/datasets/new/")
    page.get_by_label("Name").fill("Typed name")
    page.get_by_label("Description").fill("Typed description,\nover two lines.")
    page.get_by_label("Import from a file (optional)").set_input_files(str(EXPECTED))
    expect(page.get_by_role("heading", name="Preview: 2 tasks")).to_be_focused()
    screenshot(page, f"new-dataset-checked-{width}")
    page.get_by_role("button", name="Choose another file").click()
    picker = page.get_by_label("Import from a file (optional)")
    expect(picker).to_be_focused()
    expect(page.get_by_label("Name")).to_have_value("Typed name")
    expect(page.get_by_label("Description")).to_have_value("Typed description,\nover two lines.")
    assert page.get_by_text("yoy-growth").count() == 0
    screenshot(page, f"new-dataset-choose-another-{width}")
    assert errors == []


TABBABLE = """(root) => [...(root || document).querySelectorAll(
  'a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), select, textarea, ' +
  'summary, [tabindex]:not([tabindex="-1"])')]
  .filter((el) => el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden'
          && !el.closest('[hidden], details:not([open]) > :not(summary)')
          // A radio group is one stop (arrows move within it): its checked radio.
          && !(el.type === 'radio' && !el.checked))
  .map((el, i) => { el.dataset.tabCheck = String(i); return i; })"""


def tab_through(page, root: str | None = None) -> set[str]:
    """Press Tab until focus comes round again; what was focused on the way."""
    expected = page.evaluate(TABBABLE, page.locator(root).element_handle() if root else None)
    reached: set[str] = set()
    for _ in range(len(expected) + 15):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("document.activeElement.dataset.tabCheck || ''"))
    return {str(i) for i in expected} - reached


def test_every_control_is_reachable_with_tab(logged_in, live_server):
    page = logged_in
    errors = watch_console(page)
    dataset = dataset_with_everything(get_user_model().objects.get(username="grace"))
    task = dataset.tasks.live().get()
    for path in (
        dataset.get_absolute_url(),
        task.get_absolute_url(),
        f"/datasets/{dataset.pk}/tasks/{task.pk}/edit/",
        f"/datasets/{dataset.pk}/settings/",
        "/datasets/new/",
    ):
        page.goto(f"{live_server.url}{path}")
        missed = tab_through(page)
        names = [
            page.evaluate(f"document.querySelector('[data-tab-check=\"{i}\"]').outerHTML")[:120]
            for i in missed
        ]
        assert names == [], path

    page.goto(f"{live_server.url}{dataset.get_absolute_url()}")
    page.get_by_role("button", name="Add tasks").click()
    page.get_by_role("menuitem", name="Import from a file").click()
    dialog = page.get_by_role("dialog", name="Import from a file")
    dialog.get_by_label("Choose the file").set_input_files(str(EXPECTED))
    expect(dialog.get_by_role("button", name="Import 2 tasks")).to_be_enabled()
    # In the open dialog, Tab goes round its own controls, Import included.
    assert tab_through(page, "#import-dialog") == set()
    assert errors == []


def test_enter_in_the_name_creates_the_dataset_with_its_file(logged_in, live_server):
    page = logged_in
    errors = watch_console(page)
    page.goto(f"{live_server.url}/datasets/new/")
    page.get_by_label("Import from a file (optional)").set_input_files(str(EXPECTED))
    expect(page.get_by_role("heading", name="Preview: 2 tasks")).to_be_focused()
    page.get_by_label("Name").fill("Typed name")
    page.get_by_label("Name").press("Enter")
    expect(page.get_by_role("heading", name="Typed name")).to_be_visible()
    expect(page.get_by_text("Imported 2 tasks as drafts.")).to_be_visible()
    assert errors == []


def test_stacked_rows_never_overlap_their_names(logged_in, live_server):
    page = logged_in
    page.set_viewport_size({"width": 375, "height": 800})
    dataset = dataset_with_everything(get_user_model().objects.get(username="grace"))
    page.goto(f"{live_server.url}{dataset.versions.get().get_absolute_url()}")
    # Each cell is at least as tall as its column's name, even a name on two lines: nothing
    # in it runs over the next one.
    overflowing = page.evaluate(
        """() => [...document.querySelectorAll('table.stack td')]
            .filter((td) => td.scrollHeight > td.clientHeight + 1)
            .map((td) => td.dataset.label)"""
    )
    assert overflowing == []
