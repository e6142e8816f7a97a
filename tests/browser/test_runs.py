"""Runs in a real Chromium, on the reference page's two templates: New run with a passing
and a failing output each, the preview, Grade, the run page, a task's outcomes, compare
with a second run, and both downloads."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

from context_verifiers.judges import JudgeConfig
from datasets_app.importing import starters
from datasets_app.models import Dataset, Version
from datasets_app.services import datasets, imports
from tests.browser.helpers import axe_violations, watch_console
from tests.verifiers.conftest import judge_server  # noqa: F401 - the library's fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def saved_starter(owner, slug: str) -> Version:
    """A dataset imported from one of the page's templates, saved as v1."""
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
    return datasets.version_save(dataset=dataset, user=owner)


def new_run(page, live_server, version: Version, outputs: dict[str, str], tmp_path) -> None:
    path = tmp_path / f"outputs-{len(list(tmp_path.iterdir()))}.jsonl"
    path.write_text(
        "".join(json.dumps({"task": t, "output": o}) + "\n" for t, o in outputs.items())
    )
    page.goto(live_server.url + version.dataset.get_absolute_url())
    page.get_by_role("link", name="New run").click()
    page.get_by_label("Outputs file").set_input_files(str(path))
    page.get_by_role("button", name="Check the outputs").click()


def test_runs_of_both_templates_graded_compared_and_downloaded(
    logged_in,
    live_server,
    django_user_model,
    screenshot,
    settings,
    judge_server,  # noqa: F811 - the fixture imported above
    tmp_path,
):
    settings.JUDGE = JudgeConfig(base_url=judge_server.base_url, model="local-judge", seed=7)
    page = logged_in
    errors = watch_console(page)
    owner = django_user_model.objects.get(username="grace")
    answers = saved_starter(owner, "expected-answers")

    new_run(
        page, live_server, answers, {"q3-end-date": "2025-09-30", "yoy-growth": "No idea"}, tmp_path
    )
    expect(page.get_by_role("heading", name="Checked: ready to grade")).to_be_visible()
    expect(page.locator('dt:text-is("Judge calls") + dd')).to_contain_text("1")
    screenshot(page, "run-preview")
    page.get_by_role("button", name="Grade 2 tasks").click()
    expect(page.locator(".run-score").first).to_contain_text("0.50")
    expect(page.get_by_role("table").first).to_be_visible()
    screenshot(page, "run-page")
    assert axe_violations(page, live_server.url) == []

    page.get_by_role("link", name="yoy-growth").click()
    expect(page.locator(".outcomes")).to_contain_text("The answer does not do it.")
    page.get_by_text("The judge’s raw reply").click()
    expect(page.locator("details pre")).to_contain_text("reasoning")
    screenshot(page, "run-task")
    page.go_back()

    with page.expect_download() as download:
        page.get_by_role("link", name=".csv").click()
    assert download.value.suggested_filename.endswith(".csv")
    with page.expect_download() as download:
        page.get_by_role("link", name=".jsonl").click()
    lines = open(download.value.path()).read().splitlines()  # noqa: SIM115
    assert [json.loads(line)["task"] for line in lines] == ["yoy-growth", "q3-end-date"]

    new_run(
        page,
        live_server,
        answers,
        {"q3-end-date": "30/09/2025", "yoy-growth": "correct: 25%"},
        tmp_path,
    )
    page.get_by_role("button", name="Grade 2 tasks").click()
    page.get_by_role("link", name="Compare with the previous run").click()
    expect(page.locator("body")).to_contain_text("1 criterion went from passed to failed")
    expect(page.locator("body")).to_contain_text("Within the noise")
    screenshot(page, "run-compare")

    rubric = saved_starter(owner, "rubric-criteria")
    for reply in ("A correct, careful reply.", "Whatever."):
        new_run(page, live_server, rubric, {"delayed-shipment": reply}, tmp_path)
        page.get_by_role("button", name="Grade 1 task").click()
        expect(page.locator("#criteria-heading")).to_be_visible()
    expect(page.locator(".run-score").first).to_contain_text("0.00")
    screenshot(page, "run-page-rubric")
    page.get_by_role("link", name="Compare with the previous run").click()
    expect(page.locator("body")).to_contain_text("from passed to failed")
    page.goto(live_server.url + rubric.dataset.get_absolute_url())
    expect(page.locator("section[aria-labelledby=runs-heading] tbody tr")).to_have_count(2)
    assert errors == []
