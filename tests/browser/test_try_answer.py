"""Try an answer in a real Chromium, on the reference page's two templates: an exact match
that passes and one that fails; the `length` Python check with 149 and 151 words, with
Python checks on and off (the real sandbox); the same without JavaScript."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

from context_verifiers.judges import JudgeConfig
from datasets_app.importing import starters
from datasets_app.models import Dataset, SiteSettings, Task
from datasets_app.services import datasets, imports
from tests.browser.helpers import axe_violations, clipped, watch_console
from tests.verifiers.conftest import judge_server  # noqa: F401 - the library's fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_judge(settings):
    settings.JUDGE = JudgeConfig()


def starter_task(owner, slug: str, task_id: str) -> Task:
    """A dataset imported from one of the page's templates, and one of its tasks."""
    starter = starters.starter(slug)
    assert starter is not None
    dataset: Dataset = datasets.dataset_create(owner=owner, name=starter.title)
    upload = imports.upload_create(
        owner=owner,
        dataset=dataset,
        uploaded_file=SimpleUploadedFile(starter.file_name, starter.build()),
    )
    imports.upload_check(upload=upload)
    imports.import_run(upload=upload, mode="add")
    return dataset.tasks.get(task_id=task_id)


def grace(django_user_model):
    return django_user_model.objects.get(username="grace")


def try_answer(page, answer: str, criterion: str | None = None) -> None:
    page.get_by_label("Answer:", exact=True).fill(answer)
    if criterion:
        page.get_by_label("Grade by:").select_option(criterion)
    page.get_by_role("button", name="Try it").click()


def test_an_exact_match_passes_and_fails(logged_in, live_server, django_user_model, screenshot):
    page = logged_in
    errors = watch_console(page)
    task = starter_task(grace(django_user_model), "expected-answers", "q3-end-date")
    page.goto(live_server.url + task.get_absolute_url())
    result = page.locator("#try-result")
    try_answer(page, "2025-09-30")
    expect(result.locator(".badge")).to_have_text(["Passed"])
    expect(result).to_contain_text("The answer is the expected answer exactly.")
    expect(result).to_contain_text("Weighted total: 1.00 · coverage 100%")
    for size, name in (((1280, 900), "try-answer-1280"), ((375, 800), "try-answer-375")):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        assert clipped(page) == []
        screenshot(page, name)
    assert axe_violations(page, live_server.url) == []
    page.set_viewport_size({"width": 1280, "height": 900})
    try_answer(page, "2025-9-30")
    expect(result.locator(".badge")).to_have_text(["Failed"])
    expect(result).to_contain_text("differs from the expected answer from character 6 on")
    expect(result).to_contain_text("Weighted total: 0.00")
    assert errors == []


def test_the_length_check_with_python_checks_on_and_off(
    logged_in, live_server, django_user_model, screenshot
):
    page = logged_in
    errors = watch_console(page)
    task = starter_task(grace(django_user_model), "rubric-criteria", "delayed-shipment")
    result = page.locator("#try-result")
    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": True})
    page.goto(live_server.url + task.get_absolute_url())
    for words, badge in ((149, "Passed"), (151, "Failed")):
        try_answer(page, " ".join(["word"] * words), "length")
        expect(result.locator(".badge")).to_have_text([badge])
        expect(result).to_contain_text(f"{words} words")
    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": False})
    try_answer(page, " ".join(["word"] * 149), "length")
    expect(result.locator(".badge")).to_have_text(["Skipped"])
    expect(result).to_contain_text("An administrator turns them on in the admin")
    # Every criterion: the judges are skipped too, and the page says how to configure one.
    page.get_by_label("Grade by:").select_option("")
    page.get_by_role("button", name="Try it").click()
    expect(result.locator(".badge")).to_have_count(6)
    expect(result).to_contain_text("set JUDGE_BASE_URL")
    page.set_viewport_size({"width": 375, "height": 800})
    assert clipped(page) == []
    screenshot(page, "try-answer-rubric-375")
    assert errors == []


def test_a_judge_criterion_with_its_reply_and_its_prompt(
    logged_in,
    live_server,
    django_user_model,
    settings,
    judge_server,  # noqa: F811 - the fixture imported above
    screenshot,
):
    settings.JUDGE = JudgeConfig(base_url=judge_server.base_url, model="local-judge", seed=7)
    page = logged_in
    errors = watch_console(page)
    task = starter_task(grace(django_user_model), "rubric-criteria", "delayed-shipment")
    page.goto(live_server.url + task.get_absolute_url())
    result = page.locator("#try-result")
    try_answer(page, "A correct, plain email.", "tone")
    expect(result.locator(".badge")).to_have_text(["Passed"])
    page.get_by_text("Raw reply, tokens and latency").click()
    expect(result.locator(".reply")).to_contain_text("chatcmpl-local")
    expect(result).to_contain_text("100 in, 20 out")
    screenshot(page, "try-answer-judge-1280")
    page.get_by_role("button", name="Show the prompt").click()
    expect(result).to_contain_text("What the judges would be sent")
    expect(result).to_contain_text("Fail the response if it contains any internal codes")
    assert len(judge_server.requests) == 1
    assert errors == []


def test_without_javascript_a_try_is_a_page_of_its_own(browser, live_server, django_user_model):
    owner = django_user_model.objects.create_user(username="lin", password="pw-lin-12345")
    task = starter_task(owner, "expected-answers", "q3-end-date")
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("User name").fill("lin")
    page.get_by_label("Password").fill("pw-lin-12345")
    page.get_by_role("button", name="Log in").click()
    page.goto(live_server.url + task.get_absolute_url())
    try_answer(page, "2025-09-30")
    expect(page.get_by_role("heading", level=1)).to_have_text("Try an answer: Quarter end date")
    expect(page.locator("#try-result .badge")).to_have_text(["Passed"])
    context.close()


def test_the_edit_page_tries_the_edits_then_saves_them(logged_in, live_server, django_user_model):
    page = logged_in
    errors = watch_console(page)
    task = starter_task(grace(django_user_model), "expected-answers", "q3-end-date")
    page.goto(f"{live_server.url}{task.get_absolute_url()}edit/")
    page.get_by_label("Expected answer:", exact=True).fill("30 September 2025")
    try_answer(page, "30 September 2025")
    expect(page.locator("#try-result .badge")).to_have_text(["Passed"])
    task.refresh_from_db()
    assert task.expected_text == "2025-09-30"  # tried, not saved
    page.get_by_role("button", name="Save as draft").click()
    page.wait_for_url(live_server.url + task.get_absolute_url())
    task.refresh_from_db()
    assert task.expected_text == "30 September 2025"
    assert errors == []
