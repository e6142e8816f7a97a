"""The run pages through their views: New run (checked, then "Grade N tasks"), the run page
with its score, criteria and tasks, a task's outcomes, progress, downloads and compare."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app.models import Run, RunOutcome, RunResult, RunState
from datasets_app.services import runs
from tests.runs import READS_REPORT, as_before_grading, outputs_jsonl, run_outputs, zipped
from tests.runs.conftest import saved_version

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def new_run(client, version, data: bytes, name: str = "outputs.jsonl"):
    url = reverse("datasets_app:run_new", args=[version.dataset_id])
    return client.post(url, {"outputs": SimpleUploadedFile(name, data), "version": version.number})


def test_new_run_checks_the_file_shows_the_preview_then_grades(auth_client, user):
    version = saved_version(user, tasks=3)
    page = auth_client.get(reverse("datasets_app:run_new", args=[version.dataset_id]))
    assert "Check the outputs" in page.content.decode() and "v1 (latest)" in page.content.decode()

    checked = new_run(auth_client, version, outputs_jsonl({"t1": "Answer 1", "t2": "no"}))
    run = Run.objects.get()
    assert checked.status_code == 302 and checked.url == run.get_absolute_url()
    preview = auth_client.get(checked.url).content.decode()
    assert run.state == RunState.CHECKING and not RunResult.objects.exists()
    assert "Grade 3 tasks" in preview and "2 of 3" in preview
    assert "none configured: judge criteria are skipped" in preview
    # Not listed until it is graded.
    assert "No runs yet." in auth_client.get(version.dataset.get_absolute_url()).content.decode()

    started = auth_client.post(reverse("datasets_app:run_start", args=[version.dataset_id, run.pk]))
    assert started.status_code == 302
    page = auth_client.get(run.get_absolute_url()).content.decode()
    assert "<strong>0.33</strong>" in page and "± 0.33" in page
    assert "3 tasks: 2 scored below 1, 0 with an error, 1 with no output." in page
    assert "Tasks 1 to 3 of 3." in page
    assert '<figcaption id="scores-title">Tasks by score</figcaption>' in page
    listed = auth_client.get(version.dataset.get_absolute_url()).content.decode()
    assert run.get_absolute_url() in listed and "0.33" in listed
    version_page = auth_client.get(version.get_absolute_url()).content.decode()
    assert "Runs of v1" in version_page and run.get_absolute_url() in version_page


def test_a_file_with_problems_is_named_line_by_line_and_nothing_is_written(auth_client, user):
    version = saved_version(user, tasks=2)
    page = new_run(auth_client, version, b'{"task": "t8", "output": "x"}\nnot json\n')
    text = page.content.decode()
    assert page.status_code == 200
    assert "2 problems: nothing was graded" in text
    assert "The dataset has no task &quot;t8&quot;." in text
    assert not Run.objects.exists()


def test_tasks_filter_sort_and_open_to_their_outcomes(auth_client, user):
    version = saved_version(user, tasks=3)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "no", "t3": "<b>Answer 3</b>"})
    url = run.get_absolute_url()
    failed = auth_client.get(url, {"show": "failed"}).content.decode()
    assert "2 of 3 tasks match." in failed and ">t1<" not in failed
    lowest = auth_client.get(url, {"sort": "score"}, **HX).content.decode()
    assert lowest.strip().startswith('<div id="task-list"')
    assert lowest.index(">t2<") < lowest.index(">t1<")
    assert "&lt;b&gt;Answer 3&lt;/b&gt;" in lowest and "<b>Answer 3" not in lowest
    result = RunResult.objects.get(run=run, task_key="t2")
    task = auth_client.get(
        reverse("datasets_app:run_task", args=[version.dataset_id, run.pk, result.pk])
    ).content.decode()
    assert "The answer differs from the expected answer from character 1 on." in task
    assert '<pre class="output">no</pre>' in task


def test_downloads_are_a_row_per_criterion_guarded_and_a_line_per_task(auth_client, user):
    version = saved_version(user, tasks=2)
    run = run_outputs(version, user, {"t1": "=HYPERLINK(1)", "t2": "Answer 2"})
    base = [version.dataset_id, run.pk]
    response = auth_client.get(reverse("datasets_app:run_download", args=[*base, "csv"]))
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0][:4] == ["task", "task_score", "task_coverage", "criterion"]
    assert [(r[0], r[6]) for r in rows[1:]] == [("t1", "failed"), ("t2", "passed")]
    lines = auth_client.get(reverse("datasets_app:run_download", args=[*base, "jsonl"]))
    assert [json.loads(line)["task"] for line in lines.content.decode().splitlines()] == [
        "t1",
        "t2",
    ]
    assert (
        auth_client.get(reverse("datasets_app:run_download", args=[*base, "xml"])).status_code
        == 404
    )


def test_compare_lists_what_got_worse_first_and_marks_noise(auth_client, user):
    version = saved_version(user, tasks=3)
    first = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2", "t3": "no"})
    second = run_outputs(version, user, {"t1": "Answer 1", "t2": "no", "t3": "Answer 3"})
    page = auth_client.get(second.get_absolute_url()).content.decode()
    compare = reverse("datasets_app:run_compare", args=[version.dataset_id, first.pk, second.pk])
    assert compare in page and "Compare with the previous run" in page
    text = auth_client.get(compare).content.decode()
    assert "2 tasks changed: 1 scored lower, 1 higher" in text
    assert "1 criterion went from passed to failed, 1 from failed to passed." in text
    assert text.index(">t2<") < text.index(">t3<"), "what got worse comes first"
    assert "Within the noise" in text


def test_progress_is_polled_until_the_run_ends_then_the_page_reloads(auth_client, user):
    version = saved_version(user, tasks=2)
    run = run_outputs(version, user, {"t1": "Answer 1"})
    Run.objects.filter(pk=run.pk).update(state=RunState.GRADING, outcomes_done=1)
    RunOutcome.objects.filter(result__task_key="t2").delete()
    RunResult.objects.filter(run=run, task_key="t2").update(graded=False, score=None)
    page = auth_client.get(run.get_absolute_url()).content.decode()
    assert "1 of 2 criteria graded" in page and "Stop the run" in page
    assert f'href="{run.get_absolute_url()}">Refresh</a>' in page
    poll = auth_client.get(run.get_absolute_url(), {"poll": "1"}, **HX).content.decode()
    assert poll.strip().startswith('<div id="run-progress"') and 'hx-trigger="every 2s"' in poll
    stopped = auth_client.post(reverse("datasets_app:run_stop", args=[version.dataset_id, run.pk]))
    assert stopped.status_code == 302
    done = auth_client.get(run.get_absolute_url(), {"poll": "1"}, **HX)
    assert done["HX-Refresh"] == "true"
    assert "Stopped" in auth_client.get(run.get_absolute_url()).content.decode()


def test_a_stopped_run_shows_the_criteria_it_did_not_grade_as_pending(auth_client, user):
    version = saved_version(user, tasks=2)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2"})
    as_before_grading(run)
    runs.run_grade_chunk(run_id=run.pk, first=0, last=0, lease="a-worker")
    assert runs.run_stop(run=run)
    page = auth_client.get(run.get_absolute_url()).content.decode()
    assert "Stopped" in page and "1 criterion was not graded." in page
    left = RunResult.objects.get(run=run, task_key="t2")
    url = reverse("datasets_app:run_task", args=[version.dataset_id, run.pk, left.pk])
    task = auth_client.get(url).content.decode()
    assert "Not graded yet." in task
    assert "Matches the expected answer" in task and "<strong>Pending</strong>" in task
    base = [version.dataset_id, run.pk]
    lines = auth_client.get(reverse("datasets_app:run_download", args=[*base, "jsonl"]))
    tasks = [json.loads(line) for line in lines.content.decode().splitlines()]
    statuses = [[c["status"] for c in task["criteria"]] for task in tasks]
    assert statuses == [["passed"], ["pending"]]


def test_others_get_404_for_every_run_page(client, other_user, user):
    version = saved_version(user, tasks=1)
    run = run_outputs(version, user, {"t1": "Answer 1"})
    client.force_login(other_user)
    result = run.results.get()
    base = [version.dataset_id, run.pk]
    for url in (
        reverse("datasets_app:run_new", args=[version.dataset_id]),
        run.get_absolute_url(),
        reverse("datasets_app:run_task", args=[*base, result.pk]),
        reverse("datasets_app:run_download", args=[*base, "csv"]),
        reverse("datasets_app:run_compare", args=[*base, run.pk]),
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("datasets_app:run_stop", args=base)).status_code == 404


def test_replace_after_a_run_leaves_the_run_page_as_it_was(auth_client, user):
    from tests.datasets import import_file

    version = saved_version(user, tasks=2)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 2"})

    def shown() -> str:
        page = auth_client.get(run.get_absolute_url()).content.decode()
        return page[page.index("<h1") : page.index("</main>")]

    before = shown()
    data = json.dumps({"tasks": [{"id": "n1", "prompt": "New?", "expected": "Yes"}]}).encode()
    import_file(auth_client, version.dataset, "new.json", data, mode="replace")
    assert not version.dataset.tasks.live().filter(task_id="t1").exists()
    assert shown() == before and "Answer 2" in before


def test_a_csv_with_two_output_columns_asks_which_and_keeps_the_answer_until_grade(
    auth_client, user
):
    version = saved_version(user, tasks=2)
    data = b"id,answer,response\nt1,Answer 1,wrong\nt2,Answer 2,wrong\n"
    asked = new_run(auth_client, version, data, name="outputs.csv")
    text = asked.content.decode()
    assert asked.status_code == 200 and "Which column is which?" in text
    assert (
        "Row 1: The columns &#x27;answer&#x27;, &#x27;response&#x27; could each be the output: "
        "choose which one is." in text
    )
    assert '<select name="output"' in text and '<option value="response" selected>' in text
    assert '<option value="id" selected>' in text  # the task column, read without asking
    run = Run.objects.get()
    assert run.state == RunState.CHECKING and not RunResult.objects.exists()
    # Its page, meanwhile, asks too and offers no "Grade".
    waiting = auth_client.get(run.get_absolute_url()).content.decode()
    assert "Choose which column is which" in waiting and "Grade 2 tasks" not in waiting

    columns = reverse("datasets_app:run_columns", args=[version.dataset_id, run.pk])
    same = auth_client.post(columns, {"task": "id", "output": "id"}).content.decode()
    assert "The task and the output are two different columns." in same
    chosen = auth_client.post(columns, {"task": "id", "output": "answer"})
    assert chosen.status_code == 302 and chosen.url == run.get_absolute_url()
    preview = auth_client.get(run.get_absolute_url()).content.decode()
    assert "Grade 2 tasks" in preview and "the output from <code>answer</code>" in preview
    auth_client.post(reverse("datasets_app:run_start", args=[version.dataset_id, run.pk]))
    assert sorted(RunResult.objects.values_list("task_key", "output")) == [
        ("t1", "Answer 1"),
        ("t2", "Answer 2"),
    ]
    assert "<strong>1.00</strong>" in auth_client.get(run.get_absolute_url()).content.decode()


def test_columns_chosen_that_leave_problems_discard_the_kept_file(auth_client, user):
    version = saved_version(user, tasks=2)
    new_run(auth_client, version, b"id,answer,response\nt9,a,b\n", name="o.csv")
    run = Run.objects.get()
    columns = reverse("datasets_app:run_columns", args=[version.dataset_id, run.pk])
    page = auth_client.post(columns, {"task": "id", "output": "answer"}).content.decode()
    assert "1 problem: nothing was graded" in page
    assert "The dataset has no task &quot;t9&quot;." in page
    assert not Run.objects.exists()


COSTED = b"""task,output,duration_ms,total_tokens,cost_usd,model,trace_url
t1,Answer 1,"1,200",350,0.75,gpt-x,"https://traces.example/1?a=1&b=<2>"
t2,wrong,800,150,0.48,gpt-y,
t3,Answer 3,,,,,
"""


def test_what_each_task_cost_is_shown_per_task_and_summed_on_the_run_page(auth_client, user):
    version = saved_version(user, tasks=3)
    checked = new_run(auth_client, version, COSTED, name="outputs.csv")
    run = Run.objects.get()
    auth_client.post(reverse("datasets_app:run_start", args=[version.dataset_id, run.pk]))
    assert checked.status_code == 302

    page = auth_client.get(run.get_absolute_url()).content.decode()
    assert "What the agent’s runs cost" in page
    assert "<dd>2,000 ms in all, 1,000 ms a task on average</dd>" in page
    assert "<dt>Tokens</dt><dd>500</dd>" in page and "<dt>Cost</dt><dd>$1.23</dd>" in page
    assert "<dt>Models</dt><dd><code>gpt-x</code>, <code>gpt-y</code></dd>" in page
    table = page[page.index('<div id="task-list"') :]
    assert '<th scope="col" class="num">Latency</th>' in table
    assert '<td data-label="Latency" class="num">1,200 ms</td>' in table
    assert '<td data-label="Cost" class="num">$0.48</td>' in table
    assert '<td data-label="Tokens" class="num">—</td>' in table  # t3 said nothing

    first = run.results.get(task_key="t1")
    task_page = auth_client.get(
        reverse("datasets_app:run_task", args=[version.dataset_id, run.pk, first.pk])
    ).content.decode()
    assert "<dt>Cost</dt><dd>$0.75</dd>" in task_page and "<code>gpt-x</code>" in task_page
    assert (
        '<a href="https://traces.example/1?a=1&amp;b=&lt;2&gt;" rel="noopener noreferrer '
        'nofollow">the agent’s trace</a>'
    ) in task_page

    base = [version.dataset_id, run.pk]
    rows = list(
        csv.DictReader(
            io.StringIO(
                auth_client.get(reverse("datasets_app:run_download", args=[*base, "csv"]))
                .content.decode()
                .lstrip("\ufeff")
            )
        )
    )
    assert [(r["task"], r["latency_ms"], r["tokens"], r["cost"], r["model"]) for r in rows] == [
        ("t1", "1200.0", "350", "0.75", "gpt-x"),
        ("t2", "800.0", "150", "0.48", "gpt-y"),
        ("t3", "", "", "", ""),
    ]
    lines = auth_client.get(reverse("datasets_app:run_download", args=[*base, "jsonl"]))
    tasks = [json.loads(line) for line in lines.content.decode().splitlines()]
    assert tasks[1]["agent"] == {"latency_ms": 800.0, "tokens": 150, "cost": 0.48, "model": "gpt-y"}
    assert "agent" not in tasks[2]


def test_a_cost_that_is_not_a_number_is_a_problem_of_its_row(auth_client, user):
    version = saved_version(user, tasks=2)
    data = b"task,output,cost\nt1,Answer 1,cheap\nt2,Answer 2,0.1\n"
    page = new_run(auth_client, version, data, name="outputs.csv").content.decode()
    assert "outputs.csv, row 2" in page and "<li>cost must be a number, 0 or more.</li>" in page
    assert not Run.objects.exists()


def test_a_zip_s_output_files_reach_the_python_check_and_show_on_the_task(auth_client, user):
    from datasets_app.models import SiteSettings

    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": True})
    version = saved_version(user, tasks=2, verifier=READS_REPORT)
    dataset = version.dataset
    data = zipped(
        {
            "outputs.jsonl": outputs_jsonl({"t1": "Answer 1", "t2": "Answer 2"}),
            "files/t1/report.csv": b"total\n42\n",
            "files/t2/report.csv": b"total\n41\n",
            "files/t2/notes/extra.txt": b"more",
        }
    )
    checked = new_run(auth_client, version, data, name="outputs.zip")
    run = Run.objects.get()
    assert checked.status_code == 302, checked.content.decode()
    preview = auth_client.get(run.get_absolute_url()).content.decode()
    assert "Grade 2 tasks" in preview and "<dd>2</dd>" in preview  # two Python checks
    auth_client.post(reverse("datasets_app:run_start", args=[dataset.pk, run.pk]))

    page = auth_client.get(run.get_absolute_url()).content.decode()
    assert "<strong>0.75</strong>" in page  # t1 passes both; t2 its answer, not its report
    assert "and 2 files" in page
    second = run.results.get(task_key="t2")
    task_page = auth_client.get(
        reverse("datasets_app:run_task", args=[dataset.pk, run.pk, second.pk])
    ).content.decode()
    assert "The agent’s files" in task_page
    assert "<code>notes/extra.txt</code>" in task_page and "<code>report.csv</code>" in task_page
    verdict = second.outcomes.get(criterion_key="clear")
    assert (
        verdict.status == "failed"
        and verdict.reasoning == "files: ['notes/extra.txt', 'report.csv']"
    )


def test_a_zip_with_problems_names_each_by_its_path_and_nothing_is_written(auth_client, user):
    version = saved_version(user, tasks=2)
    data = zipped(
        {
            "outputs.jsonl": outputs_jsonl({"t1": "Answer 1"}),
            "files/t9/report.csv": b"x",
            "readme.txt": b"stray",
        }
    )
    page = new_run(auth_client, version, data, name="outputs.zip")
    text = page.content.decode()
    assert page.status_code == 200 and "2 problems: nothing was graded" in text
    assert '<span class="where">files/t9/report.csv</span>' in text
    assert "The dataset has no task &quot;t9&quot;." in text
    assert '<span class="where">readme.txt</span>' in text
    assert not Run.objects.exists()


def test_new_run_lists_every_name_an_outputs_file_is_read_by(auth_client, user):
    from datasets_app.importing import aliases

    version = saved_version(user, tasks=1)
    page = auth_client.get(reverse("datasets_app:run_new", args=[version.dataset_id]))
    table = page.content.decode().split('class="list stack run-fields"')[1].split("</table>")[0]
    for field in aliases.RUN_FIELDS:
        assert f'<td data-label="What">{field.label}</td>' in table
        assert all(f"<code>{spelling}</code>" in table for spelling in field.spellings)
