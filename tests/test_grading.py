"""The app's graders: the site's judge from JUDGE_*, the Python checks switch, stored files,
and the judge calls a try keeps (against the real local judge server)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile

from context_verifiers.grading import grade_task
from context_verifiers.judges import JudgeConfig
from context_verifiers.views import MAX_FILE_VIEW_BYTES
from contextevals.settings import judge_config
from datasets_app import grading, selectors
from datasets_app.models import Criterion, JudgeCall, SiteSettings, Task, TaskFile
from datasets_app.services.judge_calls import calls_of, judge_calls_record
from tests.verifiers.conftest import judge_server  # noqa: F401 - the library's fixture

LLM = {
    "kind": "llm_judge",
    "outputType": "boolean",
    "instructions": "Is it {{criterion}}? {{output}}",
}
LENGTH = {
    "kind": "code_verifier",
    "code": (
        "from context_verifiers import Verdict\n"
        "def verify(task, output):\n"
        "    n = len(output.text.split())\n"
        "    return Verdict.boolean(passed=n <= 150, reasoning=f'{n} words')\n"
    ),
}


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"JUDGE_CONCURRENCY": "many"}, "JUDGE_CONCURRENCY"),
        ({"JUDGE_VERDICT_MODE": "telepathy"}, "JUDGE_VERDICT_MODE"),
        ({"JUDGE_BASE_URL": "http://127.0.0.1:9/v1"}, "JUDGE_MODEL"),
        ({"JUDGE_MODEL": "gpt-4.1-mini"}, "JUDGE_BASE_URL"),
    ],
)
def test_a_bad_judge_setting_stops_the_start_naming_it(environ, named):
    with pytest.raises(ImproperlyConfigured, match=named):
        judge_config(environ)


def test_no_judge_setting_is_no_judge():
    assert judge_config({}).configured is False


@pytest.fixture
def rubric_task(make_dataset):
    dataset = make_dataset(name="Writing")
    task = Task.objects.create(dataset=dataset, task_id="w1", prompt="Write a summary.")
    Criterion.objects.create(
        dataset=dataset, task=task, criterion_id="good", text="good", weight=2, verifier=LLM
    )
    Criterion.objects.create(
        dataset=dataset, task=task, criterion_id="length", text="Short", verifier=LENGTH
    )
    return selectors.task_for(dataset, task.pk)


def _grade(task, answer):
    spec = grading.dataset_spec_for_grading(task.dataset)
    return grade_task(spec, selectors.task_spec(task), answer, graders=grading.graders())


def _statuses(result):
    return {one.id: (one.outcome.status, one.outcome.code) for one in result.criteria}


def test_without_a_judge_or_python_checks_both_are_skipped(settings, rubric_task):
    settings.JUDGE = JudgeConfig()
    result = _grade(rubric_task, "A correct summary.")
    assert _statuses(result) == {
        "good": ("skipped", "no_judge_configured"),
        "length": ("skipped", "python_checks_off"),
    }
    assert result.score.value is None
    assert result.score.coverage == 0


def test_the_site_judge_grades_and_a_deterministic_retry_costs_nothing(
    settings,
    rubric_task,
    judge_server,  # noqa: F811 - the fixture imported above
    user,
):
    settings.JUDGE = JudgeConfig(base_url=judge_server.base_url, model="local-judge", seed=7)
    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": True})
    first = _grade(rubric_task, "A correct summary.")
    assert _statuses(first) == {"good": ("passed", None), "length": ("passed", None)}
    assert first.score.value == 1.0
    second = _grade(rubric_task, "A correct summary.")
    assert len(judge_server.requests) == 1
    calls = calls_of([first, second])
    assert [call.cached for call in calls] == [False, True]
    judge_calls_record(calls=calls, dataset=rubric_task.dataset, user=user)
    row = JudgeCall.objects.order_by("pk").first()
    assert row.model == "local-judge"
    assert row.request["messages"][-1]["content"].startswith("Is it good?")
    assert '\\"passed\\": true' in row.reply
    assert (row.prompt_tokens, row.completion_tokens, row.created_by) == (100, 20, user)


def test_a_stored_file_is_read_bounded_and_a_link_not_at_all(rubric_task):
    big = TaskFile(task=rubric_task, role=TaskFile.Role.INPUT, name="big.txt", size=0)
    big.file.save("big.txt", ContentFile(b"x" * (MAX_FILE_VIEW_BYTES + 5000)), save=True)
    spec = selectors.task_spec(selectors.task_for(rubric_task.dataset, rubric_task.pk))
    assert len(grading.read_task_file(spec.input_files[0])) == MAX_FILE_VIEW_BYTES + 1
    link = TaskFile(task=rubric_task, role=TaskFile.Role.INPUT, name="l", url="https://x.test/a")
    assert grading.read_task_file(selectors._file_spec(link)) is None
