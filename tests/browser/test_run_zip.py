"""New run in a real Chromium with a .zip of outputs and the files the agent wrote: graded,
the run page counts each task's files, a task's page lists them; a zip with a stray file
and an unknown task's folder is refused, each problem by its path."""

from __future__ import annotations

import json
import zipfile

import pytest
from playwright.sync_api import expect

from context_verifiers.judges import JudgeConfig
from tests.browser.helpers import axe_violations, watch_console
from tests.runs.conftest import saved_version

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def write_zip(path, members: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return str(path)


def check(page, live_server, version, path: str) -> None:
    page.goto(live_server.url + version.dataset.get_absolute_url())
    page.get_by_role("link", name="New run").click()
    page.get_by_label("Outputs file").set_input_files(path)
    page.get_by_role("button", name="Check the outputs").click()


def test_a_zip_of_outputs_and_files_is_graded_and_a_bad_one_named_by_its_paths(
    logged_in, live_server, django_user_model, screenshot, settings, tmp_path
):
    settings.JUDGE = JudgeConfig()
    page = logged_in
    errors = watch_console(page)
    version = saved_version(django_user_model.objects.get(username="grace"), tasks=2)
    lines = "".join(json.dumps({"task": t, "output": f"Answer {t[1]}"}) + "\n" for t in ("t1",))

    bad = {"outputs.jsonl": lines, "files/t7/report.md": "# x", "notes.txt": "stray"}
    check(page, live_server, version, write_zip(tmp_path / "bad.zip", bad))
    problems = page.locator("section[aria-labelledby=problems-heading]")
    expect(problems).to_contain_text("2 problems: nothing was graded")
    expect(problems).to_contain_text("files/t7/report.md")
    expect(problems).to_contain_text('The dataset has no task "t7".')
    expect(problems).to_contain_text("notes.txt")
    screenshot(page, "run-zip-problems")

    good = {
        "outputs.jsonl": lines,
        "files/t1/report.md": "# Revenue\n\nUp 25%.\n",
        "files/t2/chart.svg": "<svg/>",
    }
    check(page, live_server, version, write_zip(tmp_path / "outputs.zip", good))
    expect(page.get_by_role("heading", name="Checked: ready to grade")).to_be_visible()
    expect(page.locator('dt:text-is("Tasks with no output") + dd')).to_contain_text("0")
    page.get_by_role("button", name="Grade 2 tasks").click()

    expect(page.locator(".run-score").first).to_contain_text("0.50")
    rows = page.locator("#task-list tbody tr")
    expect(rows.nth(0).locator('td[data-label="Output"]')).to_have_text("Answer 1 and 1 file")
    expect(rows.nth(1).locator('td[data-label="Output"]')).to_have_text("1 file")
    screenshot(page, "run-zip-page")
    page.get_by_role("link", name="t2").click()
    expect(page.locator(".output-files")).to_contain_text("chart.svg")
    expect(page.locator("main")).to_contain_text("No text: the agent answered with its files.")
    screenshot(page, "run-zip-task")
    assert axe_violations(page, live_server.url) == []
    assert errors == []
