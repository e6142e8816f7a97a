"""The task form in a real Chromium (issue 27, items 7 and 8): each verifier kind shows the
fields it reads and says what it does; a field holding a value stays whatever the kind;
without JavaScript every field shows and the form still saves."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from datasets_app import wording
from datasets_app.models import Task
from datasets_app.services import datasets
from tests.browser.helpers import axe_violations, clipped, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Which of a verifier's fields each kind shows (labels as the form writes them).
SHOWN = {
    "": set(),
    "exact_match": set(),
    "llm_judge": {"Output", "Instructions"},
    "agent_judge": {"Output"},
    "code_verifier": {"Python code"},
}


def new_task_page(page, live_server, django_user_model, *, prompt: str = ""):
    """A new dataset's New task page; with a prompt, the task's id (q1) and prompt typed."""
    owner = django_user_model.objects.get(username="grace")
    dataset = datasets.dataset_create(owner=owner, name="Finance QA")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/tasks/new/")
    if prompt:
        page.locator("#id_task_id").fill("q1")
        page.get_by_label("Prompt").fill(prompt)
    return dataset


def test_each_kind_shows_its_own_fields_and_says_what_it_does(
    logged_in, live_server, django_user_model, screenshot
):
    page = logged_in
    errors = watch_console(page)
    dataset = new_task_page(page, live_server, django_user_model, prompt="What is 2 + 2?")
    page.get_by_label("Expected answer").fill("4")
    answer = page.locator("details", has_text="How the expected answer is checked")
    answer.locator("summary").click()
    verifier = answer.locator("[data-verifier]")
    kind = verifier.get_by_label("Checked by")
    expect(verifier.locator("[data-kind-help]")).to_have_text(wording.ANSWER_LEFT_TO_DATASET)

    for value, shown in SHOWN.items():
        kind.select_option(value)
        for label in ("Output", "Instructions", "Python code"):
            field = verifier.get_by_label(label)
            if label in shown:
                expect(field).to_be_visible()
            else:
                expect(field).to_be_hidden()
        if value:
            expect(verifier.locator("[data-kind-help]")).to_have_text(
                wording.VERIFIER_KIND_HELP[value]
            )
        if value == "agent_judge":
            screenshot(page, "task-form-agent-judge")

    kind.select_option("llm_judge")
    verifier.get_by_label("Instructions").fill("Is it {{expected}}?")
    # Typed, then another kind chosen: the instructions stay in sight, and are saved.
    kind.select_option("exact_match")
    expect(verifier.get_by_label("Instructions")).to_be_visible()
    kind.select_option("llm_judge")
    verifier.get_by_label("Output").select_option("boolean")
    assert axe_violations(page, live_server.url) == []
    page.set_viewport_size({"width": 375, "height": 800})
    assert clipped(page) == []
    screenshot(page, "task-form-375")
    page.get_by_role("button", name="Save as draft").click()

    task = Task.objects.get(dataset=dataset, task_id="q1")
    assert task.expected_verifier == {
        "kind": "llm_judge",
        "outputType": "boolean",
        "instructions": "Is it {{expected}}?",
    }
    expect(page.get_by_text("Checked by: LLM judge · pass or fail")).to_be_visible()
    assert errors == []


def test_a_criterion_chooses_its_kind_the_same_way(logged_in, live_server, django_user_model):
    page = logged_in
    new_task_page(page, live_server, django_user_model)
    criterion = page.locator("fieldset.criterion").first
    criterion.locator("summary").click()
    verifier = criterion.locator("[data-verifier]")
    expect(verifier.locator("[data-kind-help]")).to_have_text(wording.CRITERION_LEFT_TO_DATASET)
    verifier.get_by_label("Checked by").select_option("code_verifier")
    expect(verifier.get_by_label("Python code")).to_be_visible()
    expect(verifier.get_by_label("Instructions")).to_be_hidden()


def test_without_javascript_every_field_shows_and_the_form_saves(
    browser, live_server, django_user_model, screenshot
):
    django_user_model.objects.create_user(username="grace", password="pw-grace-12345")
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("User name").fill("grace")
    page.get_by_label("Password").fill("pw-grace-12345")
    page.get_by_role("button", name="Log in").click()
    dataset = new_task_page(page, live_server, django_user_model)
    answer = page.locator("details", has_text="How the expected answer is checked")
    answer.locator("summary").click()
    for label in ("Output", "Instructions", "Python code"):
        expect(answer.get_by_label(label)).to_be_visible()
    page.locator("#id_task_id").fill("q1")
    page.get_by_label("Prompt").fill("Say hello.")
    page.get_by_label("Expected answer").fill("hello")
    answer.get_by_label("Checked by").select_option("exact_match")
    screenshot(page, "task-form-no-js")
    page.get_by_role("button", name="Save as draft").click()
    assert Task.objects.get(dataset=dataset).expected_verifier == {"kind": "exact_match"}
    context.close()


def test_several_criteria_are_added_in_place_and_saved_at_once(
    logged_in, live_server, django_user_model, screenshot
):
    page = logged_in
    errors = watch_console(page)
    prompt = "Summarise the refund policy."
    dataset = new_task_page(page, live_server, django_user_model, prompt=prompt)
    texts = ["Says refunds take 5 days", "Names the form to fill", "Is under 100 words"]
    page.get_by_label("Criterion:").fill(texts[0])
    for text in texts[1:]:
        page.get_by_role("button", name="Add another criterion").click()
        added = page.locator("fieldset.criterion").last
        expect(added.get_by_label("Criterion:")).to_be_focused()
        added.get_by_label("Criterion:").fill(text)
    page.locator("fieldset.criterion").last.get_by_label("Weight").fill("0.5")
    expect(page.locator("fieldset.criterion")).to_have_count(3)
    last = page.locator("fieldset.criterion").last
    last.locator("summary").click()
    last.get_by_label("Checked by").select_option("llm_judge")
    expect(last.get_by_label("Instructions")).to_be_visible()
    screenshot(page, "task-form-three-criteria")
    # Enter in a field saves (the form's first button), it does not add a criterion.
    page.locator("#id_task_id").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Saved q1 as a draft.")

    task = Task.objects.get(dataset=dataset)
    saved = task.criteria.order_by("position")
    assert [c.text for c in saved] == texts
    assert [c.weight for c in saved] == [1, 1, 0.5]
    assert saved.last().verifier == {"kind": "llm_judge"}
    assert errors == []


def test_files_are_attached_on_the_form(
    logged_in, live_server, django_user_model, screenshot, tmp_path
):
    page = logged_in
    errors = watch_console(page)
    dataset = new_task_page(page, live_server, django_user_model, prompt="Sum the table.")
    page.get_by_label("Expected answer").fill("10")
    table = tmp_path / "table.csv"
    table.write_text("q,rev\nQ1,10\n")
    key = tmp_path / "answer-key.md"
    key.write_text("10\n")
    page.get_by_label("Add input files").set_input_files(str(table))
    page.get_by_label("Add expected files").set_input_files(str(key))
    screenshot(page, "task-form-files")
    page.get_by_role("button", name="Save as draft").click()
    expect(page.get_by_role("link", name="table.csv")).to_be_visible()
    expect(page.get_by_role("link", name="answer-key.md")).to_be_visible()
    task = Task.objects.get(dataset=dataset)
    assert sorted(task.files.values_list("role", "name")) == [
        ("expected", "answer-key.md"),
        ("input", "table.csv"),
    ]
    page.get_by_role("link", name="Edit").click()
    expect(page.get_by_text("Input file: table.csv")).to_be_visible()
    page.get_by_label("Remove table.csv").check()
    screenshot(page, "task-form-files-listed")
    page.get_by_role("button", name="Save as draft").click()
    expect(page.get_by_role("link", name="answer-key.md")).to_be_visible()
    expect(page.get_by_role("link", name="table.csv")).to_have_count(0)
    assert list(task.files.values_list("name", flat=True)) == ["answer-key.md"]
    assert errors == []
