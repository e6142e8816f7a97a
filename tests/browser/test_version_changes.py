"""A version compared with the one before, in a real browser: what changed reads at the top,
a changed task opens on demand with its words struck and added, a saved task opens
read-only, and the export warnings are one line until opened. At 1,280 and 375 px."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from datasets_app import selectors
from datasets_app.importing.spec import CriterionSpec
from datasets_app.services import datasets
from tests.browser.helpers import axe_violations, clipped, dataset_with_everything, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 375])
def test_a_version_compared_with_the_one_before(logged_in, live_server, screenshot, width):
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    errors = watch_console(page)
    owner = get_user_model().objects.get(username="grace")
    dataset = dataset_with_everything(owner)
    task = selectors.task_for(dataset, dataset.tasks.live().get().pk)
    spec = selectors.task_spec(task)
    datasets.task_save(
        dataset=dataset,
        task=task,
        spec=replace(spec, prompt=spec.prompt.replace("5 days late", "a week late")),
    )
    datasets.task_save(
        dataset=dataset,
        task=None,
        spec=replace(spec, id="refund", name="Refund request", criteria=(spec.criteria[0],)),
    )
    datasets.dataset_settings_update(
        dataset=dataset,
        name=dataset.name,
        description=dataset.description,
        settings=dataset.settings,
        criteria=[CriterionSpec(id="no-invented-facts", criterion="States only facts.", weight=20)],
        require_review=False,
    )
    version = datasets.version_save(dataset=dataset, user=owner)
    page.goto(live_server.url + version.get_absolute_url())
    summary = page.locator(".changes-summary")
    expect(summary).to_contain_text("1 task added, 0 removed, 1 changed, 0 unchanged.")
    expect(summary).to_contain_text("Criteria for every task changed.")
    warnings = page.locator("details.export-warnings")
    expect(warnings.locator("summary")).to_contain_text("Some formats leave things out:")
    expect(warnings.locator("li").first).to_be_hidden()
    screenshot(page, f"version-changes-{width}", full_page=False)

    change = page.locator("details.change")
    change.locator("summary").click()
    expect(change.locator("del")).to_contain_text("5 days")
    expect(change.locator("ins")).to_contain_text("a week")
    warnings.locator("summary").click()
    expect(warnings.locator("li").first).to_be_visible()
    screenshot(page, f"version-changes-open-{width}")
    assert clipped(page) == []
    assert axe_violations(page, live_server.url) == []

    change.get_by_role("link", name="as v1 saved it").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Delayed shipment email")
    expect(page.locator("pre.prompt")).to_contain_text("5 days late")
    expect(page.get_by_text("as saved in v1, read-only")).to_be_visible()
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)
    screenshot(page, f"version-task-{width}")
    assert clipped(page) == []
    assert errors == []
