"""The dataset page's task list in a real browser: search for a word and open the task;
go to page 2 and come back with the browser's Back button. The list is swapped in place
(htmx), and the address bar follows it."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from datasets_app.models import Criterion, Dataset, Task
from datasets_app.services import datasets
from tests.browser.helpers import axe_violations, clipped, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def big_dataset(owner) -> Dataset:
    dataset = datasets.dataset_create(owner=owner, name="Finance QA")
    tasks = Task.objects.bulk_create(
        Task(
            dataset=dataset,
            task_id=f"fin-{n:03}",
            name=f"Quarterly question {n}",
            prompt=f"What was the revenue in quarter {n}?",
            expected_text=f"{n * 1000:,} dollars",
            position=n,
        )
        for n in range(1, 121)
    )
    Task.objects.filter(task_id="fin-087").update(prompt="How many penguins live on the ledger?")
    Criterion.objects.bulk_create(
        Criterion(dataset=dataset, task=task, criterion_id="c1", text="States the figure")
        for task in tasks[::2]
    )
    return dataset


def first_id(page) -> str:
    return page.locator('#task-list td[data-label="Id"] code').first.inner_text()


def test_search_for_a_word_open_the_task_then_page_2_and_back(logged_in, live_server, screenshot):
    page = logged_in
    errors = watch_console(page)
    dataset = big_dataset(get_user_model().objects.get(username="grace"))
    url = f"{live_server.url}{dataset.get_absolute_url()}"
    page.goto(url)
    expect(page.locator(".list-summary")).to_contain_text("Showing 1–50 of 120.")

    page.get_by_role("searchbox", name="Search").fill("penguins")
    summary = page.locator(".list-summary")
    expect(summary).to_contain_text("1 of 120 tasks matches “penguins”.")
    expect(page).to_have_url(re.compile(r"\?q=penguins$"))
    expect(page.locator("#task-list mark").first).to_have_text("penguins")
    screenshot(page, "task-list-search")
    page.get_by_role("link", name="Quarterly question 87").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Quarterly question 87")
    page.go_back()
    expect(page).to_have_url(re.compile(r"\?q=penguins$"))
    expect(summary).to_contain_text("1 of 120 tasks matches")

    page.goto(url)
    page.get_by_role("navigation", name="Pages of tasks").get_by_role("link", name="Page 2").click()
    expect(page).to_have_url(re.compile(r"\?page=2$"))
    expect(summary).to_contain_text("Showing 51–100 of 120.")
    assert first_id(page) == "fin-051"
    page.go_back()
    expect(page).to_have_url(url)
    expect(summary).to_contain_text("Showing 1–50 of 120.")
    assert first_id(page) == "fin-001"
    assert errors == []


@pytest.mark.parametrize("width", [1280, 375])
def test_the_task_lists_fit_the_screen_and_pass_axe(logged_in, live_server, screenshot, width):
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    owner = get_user_model().objects.get(username="grace")
    dataset = big_dataset(owner)
    version = datasets.version_save(dataset=dataset, user=owner)
    for name, path in (
        ("dataset-paged", f"{dataset.get_absolute_url()}?q=quarter+1&per_page=25"),
        ("version-paged", f"{version.get_absolute_url()}?page=2"),
    ):
        page.goto(live_server.url + path)
        expect(page.locator(".pager")).to_be_visible()
        screenshot(page, f"{name}-{width}")
        screenshot(page, f"{name}-{width}-top", full_page=False)
        page.locator(".pager").scroll_into_view_if_needed()
        screenshot(page, f"{name}-{width}-pager", full_page=False)
        assert clipped(page) == [], name
        assert axe_violations(page, live_server.url) == [], name
