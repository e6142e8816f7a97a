"""`manage.py run_outputs`: a CI job's grade, with its exit status for a threshold."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from datasets_app.models import Run
from tests.runs import outputs_jsonl
from tests.runs.conftest import saved_version

pytestmark = pytest.mark.django_db


def run_command(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("run_outputs", *args, stdout=out, stderr=err)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_a_run_waits_prints_its_score_and_fails_below_a_threshold(user, tmp_path):
    version = saved_version(user, tasks=2)
    path = tmp_path / "o.jsonl"
    path.write_bytes(outputs_jsonl({"t1": "Answer 1", "t2": "wrong"}))
    dataset = str(version.dataset_id)
    user_args = ("--user", user.username)

    status, out, err = run_command(str(path), "--dataset", dataset, "--wait", *user_args)
    assert status == 0
    assert "score 0.500 ± 0.500, coverage 100%, 2 tasks (1 below 1" in err

    status, _out, err = run_command(
        str(path), "--dataset", dataset, "--wait", "--min-score", "0.75", *user_args
    )
    assert status == 2 and "The score 0.500 is below --min-score 0.75." in err

    path.write_bytes(outputs_jsonl({"t1": "wrong", "t2": "wrong"}))
    status, out, err = run_command(
        str(path), "--dataset", "Arithmetic", "--wait", "--no-worse", "--json", *user_args
    )
    assert status == 2 and "is below the previous run's 0.500" in err
    assert [t["score"] for t in json.loads(out)["tasks"]] == [0.0, 0.0]
    assert Run.objects.count() == 3


def test_problems_are_printed_each_on_its_line_and_nothing_runs(user, tmp_path):
    version = saved_version(user, tasks=1)
    path = tmp_path / "o.jsonl"
    path.write_text('{"task": "t7", "output": "x"}\n')
    status, out, _err = run_command(
        str(path), "--dataset", str(version.dataset_id), "--user", user.username
    )
    assert status == 1
    assert out.splitlines() == [
        "1 problem; nothing was graded:",
        'o.jsonl, line 1: The dataset has no task "t7".',
    ]
    assert not Run.objects.exists()


def test_two_output_columns_are_refused_by_name_unless_one_is_chosen(user, tmp_path):
    version = saved_version(user, tasks=1)
    path = tmp_path / "o.csv"
    path.write_bytes(b"id,answer,response\nt1,Answer 1,no\n")
    args = (str(path), "--dataset", str(version.dataset_id), "--user", user.username)

    status, out, _err = run_command(*args)
    assert status == 1
    assert "could each be the output: choose which one is." in out
    assert not Run.objects.exists()
    status, out, _err = run_command(*args, "--output-column", "answer", "--wait")
    assert status == 0 and Run.objects.get().results.get().output == "Answer 1"


def test_a_zip_of_outputs_with_files_is_graded_and_its_problems_named_by_path(user, tmp_path):
    import zipfile

    version = saved_version(user, tasks=2)
    path = tmp_path / "outputs.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("outputs.jsonl", outputs_jsonl({"t1": "Answer 1"}))
        zf.writestr("files/t2/answer.txt", "Answer 2")
        zf.writestr("files/t3/answer.txt", "no such task")
    args = ("--dataset", str(version.dataset_id), "--user", user.username)
    status, out, _err = run_command(str(path), *args)
    assert status == 1
    assert out.splitlines()[1] == 'files/t3/answer.txt: The dataset has no task "t3".'

    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("outputs.jsonl", outputs_jsonl({"t1": "Answer 1"}))
        zf.writestr("files/t2/answer.txt", "Answer 2")
    status, _out, err = run_command(str(path), *args, "--wait")
    assert status == 0 and "2 tasks (1 below 1, 0 with errors, 0 with no output)" in err
    assert Run.objects.get().results.get(task_key="t2").files == [
        {"name": "answer.txt", "member": "files/t2/answer.txt", "size": 8}
    ]
