"""`manage.py check_dataset_file`: the preview or every problem, and an exit code for scripts."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from datasets_app.importing import document as doc

ROOT = Path(__file__).resolve().parent.parent
FILES = ROOT / "tests" / "files" / "json"
RUBRIC = FILES / "rubric_template.json"

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, int]:
    out = io.StringIO()
    try:
        call_command("check_dataset_file", *args, stdout=out)
    except SystemExit as exc:
        return out.getvalue(), int(exc.code)
    return out.getvalue(), 0


@pytest.fixture
def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(
        "{\n"
        '  "tasks": [\n'
        '    {"id": "a", "prompt": "p", "criteria": [{"criterion": "c", "weight": -1}]},\n'
        '    {"id": "b"}\n'
        "  ]\n"
        "}\n"
    )
    return path


def test_a_good_file_prints_the_preview_and_exits_0():
    output, code = run(str(RUBRIC))

    lines = output.splitlines()
    assert code == 0
    assert lines[0] == "JSON dataset, UTF-8"
    assert lines[1].split() == [
        "delayed-shipment",
        "Delayed",
        "shipment",
        "email",
        "scored",
        "by",
        "criteria",
        "6",
        "criteria",
        "total",
        "weight",
        "90",
    ]
    assert lines[2].startswith(
        "Warning: rubric_template.json, line 1 › task 1 (id delayed-shipment) › criterion 4 › "
        "verifier:"
    )
    assert lines[-1] == "Ready to import 1 task."


def test_a_file_with_problems_prints_each_with_its_location_and_exits_1(bad_file):
    output, code = run(str(bad_file))

    assert code == 1
    task_b = '"b"'
    assert output.splitlines()[2:] == [
        "bad.json, line 3 › task 1 (id a) › criterion 1 › weight: "
        + doc.BAD_WEIGHT.format(value="-1"),
        f"bad.json, line 4 › task 2 (id b) › prompt: {doc.MISSING_PROMPT.format(task=task_b)}",
        f"bad.json, line 4 › task 2 (id b): {doc.NOTHING_TO_GRADE.format(task=task_b)}",
    ]
    assert "Ready to import" not in output


def test_json_output_is_one_object(bad_file):
    output, code = run(str(RUBRIC), "--json")
    result = json.loads(output)

    assert code == 0
    assert result["ok"] is True and result["task_count"] == 1 and result["format"] == "json"
    assert result["tasks"][0]["total_weight"] == 90

    output, code = run(str(bad_file), "--json")
    assert code == 1
    assert [(p["field"], p["code"]) for p in json.loads(output)["problems"]] == [
        ("tasks[0].criteria[0].weight", "bad_weight"),
        ("tasks[1].prompt", "missing_prompt"),
        ("tasks[1]", "nothing_to_grade"),
    ]


def test_a_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match=r"Cannot read .*nope\.json: No such file"):
        call_command("check_dataset_file", str(tmp_path / "nope.json"))


def test_the_exit_code_from_a_real_process(tmp_path, bad_file):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "contextevals.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )

    assert manage("migrate", "--run-syncdb", "-v", "0").returncode == 0
    good = manage("check_dataset_file", str(RUBRIC))
    bad = manage("check_dataset_file", str(bad_file), "--json")
    missing = manage("check_dataset_file", str(tmp_path / "nope.json"))

    assert good.returncode == 0, good.stderr
    assert good.stdout.rstrip().endswith("Ready to import 1 task.")
    assert bad.returncode == 1, bad.stderr
    assert json.loads(bad.stdout)["ok"] is False
    assert missing.returncode == 2
    assert "Cannot read" in missing.stderr


def test_a_pipeline_without_a_database_still_checks_files(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "contextevals.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'never-migrated.sqlite3'}",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check_dataset_file", str(RUBRIC)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "Ready to import 1 task." in result.stdout
    assert "Python checks are taken as off" in result.stderr


# -- the mapping step on the command line -----------------------------------------------------

TRIAGE = ROOT / "tests" / "files" / "real" / "ragas" / "support_triage.csv"


def test_a_file_that_does_not_say_which_column_is_which_exits_1_with_the_guess():
    out, code = run(str(TRIAGE), "--json")

    result = json.loads(out)
    assert code == 1
    assert result["mapping"]["how"] == "guessed"
    assert result["mapping"]["fields"] == {"id": "id", "prompt": "text", "expected": "labels"}
    assert result["mapping"]["sources"] == ["id", "text", "labels", "priority"]
    assert result["problems"][0]["message"].endswith(
        "or with --map expected=labels --map prompt=text."
    )


def test_map_options_import_it_and_json_says_what_was_applied():
    out, code = run(str(TRIAGE), "--map", "prompt=text", "--map", "expected=labels", "--json")

    result = json.loads(out)
    assert code == 0
    assert result["task_count"] == 20
    assert result["mapping"]["how"] == "given"
    assert result["mapping"]["fields"]["prompt"] == "text"
    assert result["mapping"]["fields"]["expected"] == "labels"
    assert result["warnings"][0]["message"] == "These columns are not imported: priority."


def test_the_printed_check_says_the_mapping():
    out, code = run(str(TRIAGE), "--map", "prompt=text", "--map", "expected=labels")

    assert code == 0
    assert "Mapping (given): id ← id, prompt ← text, expected answer ← labels" in out


def test_a_map_naming_no_column_of_the_file_is_a_problem_naming_what_there_is():
    out, code = run(str(TRIAGE), "--map", "prompt=txt", "--json")

    result = json.loads(out)
    assert code == 1
    assert [p["message"] for p in result["problems"]] == [
        "The mapping names txt for the prompt, but the file has no such column. Found: id, "
        "text, labels, priority."
    ]


@pytest.mark.parametrize(
    ("value", "words"),
    [("prompt", "write it as FIELD=SOURCE"), ("answerz=x", "answerz is not a field")],
)
def test_a_malformed_map_is_a_command_error(value, words):
    with pytest.raises(CommandError, match=words):
        run(str(TRIAGE), "--map", value)
