"""New run in a real Chromium with a CSV whose two columns could each be the output: the
page asks which, the person chooses, the preview says what it will read, then Grade; the
run page and a task's page show what the agent's runs cost."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from context_verifiers.judges import JudgeConfig
from tests.browser.helpers import axe_violations, watch_console
from tests.runs.conftest import saved_version

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# `response` is the likelier name of an output, but here the agent's answer is `answer`.
OUTPUTS = (
    "id,response,answer,duration_ms,total_tokens,cost_usd,model_name,trace_url\n"
    "t1,thinking...,Answer 1,1200,350,0.75,gpt-x,https://traces.example/t1\n"
    "t2,thinking...,Answer 2,800,150,0.48,gpt-y,\n"
    "t3,thinking...,no idea,,,,,\n"
)


def test_the_person_chooses_the_output_column_then_grades(
    logged_in, live_server, django_user_model, screenshot, settings, tmp_path
):
    settings.JUDGE = JudgeConfig()
    page = logged_in
    errors = watch_console(page)
    version = saved_version(django_user_model.objects.get(username="grace"), tasks=3)
    path = tmp_path / "outputs.csv"
    path.write_text(OUTPUTS)

    page.goto(live_server.url + version.dataset.get_absolute_url())
    page.get_by_role("link", name="New run").click()
    page.get_by_label("Outputs file").set_input_files(str(path))
    page.get_by_role("button", name="Check the outputs").click()

    expect(page.get_by_role("heading", name="Which column is which?")).to_be_visible()
    expect(page.locator(".run-columns")).to_contain_text(
        "The columns 'response', 'answer' could each be the output: choose which one is."
    )
    expect(page.get_by_label("Output column")).to_have_value("response")  # the likeliest
    expect(page.get_by_label("Task column")).to_have_value("id")
    screenshot(page, "run-columns")
    assert axe_violations(page, live_server.url) == []
    page.get_by_label("Output column").select_option("answer")
    page.get_by_role("button", name="Check with these columns").click()

    expect(page.get_by_role("heading", name="Checked: ready to grade")).to_be_visible()
    read_from = page.locator('dt:text-is("Read from") + dd')
    expect(read_from).to_contain_text("the task from id, the output from answer")
    expect(page.locator('dt:text-is("Tasks matched") + dd')).to_contain_text("3 of 3")
    screenshot(page, "run-columns-preview")
    page.get_by_role("button", name="Grade 3 tasks").click()

    expect(page.locator(".run-score").first).to_contain_text("0.67")
    costs = page.locator(".run-costs")
    expect(costs).to_contain_text("2,000 ms in all, 1,000 ms a task on average")
    expect(costs).to_contain_text("$1.23")
    expect(costs).to_contain_text("gpt-x, gpt-y")
    row = page.locator("#task-list tbody tr").first
    expect(row.locator('td[data-label="Cost"]')).to_have_text("$0.75")
    expect(row.locator('td[data-label="Output"]')).to_have_text("Answer 1")
    screenshot(page, "run-page-costs")
    assert axe_violations(page, live_server.url) == []

    page.get_by_role("link", name="t1").click()
    expect(page.locator(".run-costs")).to_contain_text("1,200 ms")
    trace = page.get_by_role("link", name="the agent’s trace")
    expect(trace).to_have_attribute("href", "https://traces.example/t1")
    expect(trace).to_have_attribute("rel", "noopener noreferrer nofollow")
    screenshot(page, "run-task-costs")
    assert errors == []
