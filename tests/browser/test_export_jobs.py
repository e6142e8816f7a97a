"""An export past EXPORT_IN_REQUEST_TASKS in a real browser: the export page's button opens
the job's page, which follows a worker's progress by itself (htmx polling) until its
Download button gives the file. At 1,280 and 375 px; the threshold is lowered to 3 tasks."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from datasets_app import tasks
from datasets_app.models import ExportJob
from tests.browser.helpers import axe_violations, clipped, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 375])
def test_a_large_export_is_waited_for_on_its_page_then_downloaded(
    logged_in, live_server, screenshot, make_dataset, settings, width
):
    settings.EXPORT_IN_REQUEST_TASKS = 3
    page = logged_in
    page.set_viewport_size({"width": width, "height": 900})
    errors = watch_console(page)
    owner = get_user_model().objects.get(username="grace")
    dataset = make_dataset(owner=owner, tasks=4)

    page.goto(f"{live_server.url}/datasets/{dataset.pk}/export/")
    expect(page.locator("main")).to_contain_text("More than 3 tasks: a worker builds each export")
    screenshot(page, f"export-page-worker-{width}", full_page=False)
    page.get_by_role("button", name="CSV (.csv)").click()
    # No broker here: the worker's task ran before the page opened.
    expect(page.get_by_role("heading", level=1)).to_have_text("Export Finance QA as CSV (.csv)")
    expect(page.locator("#export-status")).to_contain_text("Ready: 4 tasks")
    screenshot(page, f"export-job-ready-{width}", full_page=False)

    # A job a worker is building: the page follows it by itself.
    job = ExportJob.objects.create(
        dataset=dataset,
        format="json",
        requested_by=owner,
        state="building",
        progress_done=2,
        progress_total=4,
    )
    page.goto(live_server.url + job.get_absolute_url())
    status = page.locator("#export-status")
    expect(status).to_contain_text("Building: 2 of 4 tasks written.")
    screenshot(page, f"export-job-building-{width}", full_page=False)
    assert axe_violations(page, live_server.url) == []
    tasks.build_export.delay(str(job.key))
    expect(status).to_contain_text("Ready: 4 tasks", timeout=10_000)
    expect(page.get_by_text("Refresh")).to_have_count(0)
    with page.expect_download() as download:
        page.get_by_role("link", name="Download Finance_QA.json").click()
    assert download.value.suggested_filename == "Finance_QA.json"
    assert clipped(page) == []
    assert axe_violations(page, live_server.url) == []
    assert errors == []
