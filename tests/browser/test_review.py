"""The review page in a real browser, from the keyboard: j and k walk the drafts, r marks
one reviewed and goes on, e opens its edit page and d its delete page; a key typed in a
field stays there. Then the dataset page says what is left, and the page fits 375 px."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from datasets_app.models import Criterion, Task
from datasets_app.services import datasets
from tests.browser.helpers import axe_violations, clipped, dataset_with_everything, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def drafts(owner):
    dataset = datasets.dataset_create(owner=owner, name="Finance QA")
    tasks = Task.objects.bulk_create(
        Task(
            dataset=dataset,
            task_id=f"fin-{n}",
            name=f"Quarter {n} revenue",
            prompt=f"What was the revenue in quarter {n}?",
            expected_text=f"{n * 1000:,} dollars",
            position=n,
        )
        for n in range(1, 5)
    )
    Criterion.objects.create(
        dataset=dataset, task=tasks[1], criterion_id="units", text="Gives the units", weight=2.5
    )
    return dataset


def test_the_review_page_from_the_keyboard(logged_in, live_server, screenshot):
    page = logged_in
    errors = watch_console(page)
    dataset = drafts(get_user_model().objects.get(username="grace"))
    page.goto(live_server.url + dataset.get_absolute_url())
    expect(page.locator("#unreviewed-note")).to_have_text("None of its 4 drafts is reviewed yet.")
    screenshot(page, "dataset-unreviewed", full_page=False)
    page.get_by_role("link", name="Review drafts").click()
    title = page.get_by_role("heading", level=1)
    expect(title).to_have_text("Quarter 1 revenue")
    expect(page.locator(".review-place")).to_have_text("Draft 1 of 4 not reviewed yet")
    screenshot(page, "review-1280")

    page.keyboard.press("j")
    expect(title).to_have_text("Quarter 2 revenue")
    expect(page.get_by_role("cell", name="Gives the units")).to_be_visible()
    page.keyboard.press("k")
    expect(title).to_have_text("Quarter 1 revenue")
    page.keyboard.press("j")
    expect(title).to_have_text("Quarter 2 revenue")
    page.keyboard.press("r")
    expect(title).to_have_text("Quarter 3 revenue")
    expect(page.get_by_text("Marked fin-2 reviewed.")).to_be_visible()
    expect(page.locator(".review-place")).to_have_text("Draft 2 of 3 not reviewed yet")
    assert Task.objects.get(task_id="fin-2").is_reviewed

    page.keyboard.press("e")
    expect(page).to_have_url(re.compile(r"/edit/\?next="))
    # Typed in a field, the keys are letters, not actions.
    prompt = page.get_by_label("Prompt")
    prompt.fill("")
    prompt.press_sequentially("jkr")
    expect(prompt).to_have_value("jkr")
    page.get_by_role("button", name="Save as draft").click()
    expect(title).to_have_text("Quarter 3 revenue")
    expect(page.locator("pre.prompt")).to_have_text("jkr")

    page.keyboard.press("d")
    expect(title).to_have_text("Delete fin-3?")
    page.get_by_role("button", name="Delete fin-3").click()
    expect(title).to_have_text("Quarter 4 revenue")
    page.keyboard.press("r")
    # fin-1 is still to review: the walk starts again from it.
    expect(title).to_have_text("Quarter 1 revenue")
    page.keyboard.press("r")
    expect(page.get_by_text("Every draft is reviewed.")).to_be_visible()
    screenshot(page, "review-done")

    page.goto(live_server.url + dataset.get_absolute_url())
    expect(page.locator("#unreviewed-note")).to_have_count(0)
    expect(page.get_by_role("cell", name="Reviewed")).to_have_count(3)
    assert errors == []


@pytest.mark.parametrize("width", [1280, 375])
def test_the_review_page_fits_the_screen_and_passes_axe(logged_in, live_server, screenshot, width):
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    owner = get_user_model().objects.get(username="grace")
    dataset = dataset_with_everything(owner)
    # An edit to come: the version keeps its copy, and the task is a draft again.
    datasets.task_keep_saved_copy(task=dataset.tasks.live().get())
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/review/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Delayed shipment email")
    screenshot(page, f"review-everything-{width}")
    assert clipped(page) == []
    assert axe_violations(page, live_server.url) == []
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/settings/")
    required = page.get_by_label("Require every draft reviewed before saving")
    required.check()
    required.scroll_into_view_if_needed()
    screenshot(page, f"settings-require-review-{width}", full_page=False)
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#unreviewed-note")).to_contain_text(
        "This dataset saves only once every draft is reviewed."
    )
    page.get_by_role("button", name="Save as v2").click()
    expect(page.get_by_text("requires every draft reviewed before it is saved")).to_be_visible()
    assert clipped(page) == []


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_an_answer_tried_on_the_edit_page_then_saved_goes_back_to_the_review(
    browser, live_server, django_user_model, screenshot, javascript
):
    django_user_model.objects.create_user(username="grace", password="pw-grace-12345")
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, java_script_enabled=javascript
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("User name").fill("grace")
    page.get_by_label("Password").fill("pw-grace-12345")
    page.get_by_role("button", name="Log in").click()
    dataset = drafts(django_user_model.objects.get(username="grace"))
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/review/")
    page.get_by_role("link", name="Edit").click()
    page.get_by_label("Expected answer:", exact=True).fill("1,000 US dollars")
    page.get_by_label("Answer:", exact=True).fill("1,000 US dollars")
    page.get_by_role("button", name="Try it").click()
    # No judge here: the answer's verdict is Skipped, and says so; what matters is where
    # Save as draft goes after it.
    expect(page.locator("#try-result .badge")).to_have_text(["Skipped"])
    screenshot(page, f"review-edit-tried-{'js' if javascript else 'no-js'}", full_page=False)
    page.get_by_role("button", name="Save as draft").last.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Quarter 1 revenue")
    expect(page.locator(".review-place")).to_have_text("Draft 1 of 4 not reviewed yet")
    expect(page.get_by_text("1,000 US dollars")).to_be_visible()
    context.close()
