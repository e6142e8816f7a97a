"""`python -m context_verifiers grade`, run as a person or CI runs it: a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from context_verifiers.outcome import NO_JUDGE_CONFIGURED
from context_verifiers.sandbox import sandbox_status
from tests.verifiers.judge_server import Fault
from tests.verifiers.test_grading import page_example

ROOT = Path(__file__).resolve().parent.parent.parent
LENGTH_CODE = page_example("Rubric template")["tasks"][0]["criteria"][3]["verifier"]["code"]


def grade(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "context_verifiers", "grade", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=120,
    )


def lines(path, *items):
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


@pytest.fixture
def qa(tmp_path):
    path = tmp_path / "qa.json"
    path.write_text(json.dumps(page_example("Expected answers template")))
    return path


@pytest.fixture
def judge_env(judge_server):
    return {"JUDGE_BASE_URL": judge_server.base_url, "JUDGE_MODEL": "local-judge"}


def test_it_grades_and_prints_each_outcome_and_the_total(qa, tmp_path, judge_env):
    outputs = lines(
        tmp_path / "outputs.jsonl",
        {"task": "yoy-growth", "output": "correct: 25%"},
        {"task": "q3-end-date", "output": "2025-09-30 "},
    )

    completed = grade(qa, outputs, env=judge_env)

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        "yoy-growth: score 1.00, coverage 100%",
        "  ~ matches-expected-answer (weight 1) scored 1: (C) The answer is correct.",
        "q3-end-date: score 0.00, coverage 100%",
        "  ✗ matches-expected-answer (weight 1) failed: The answer differs from the expected "
        "answer only in spaces.",
        "Total: score 0.50, coverage 100%, 2 tasks",
    ]


def test_json_prints_one_document_with_the_expected_answer_as_a_criterion(qa, tmp_path):
    outputs = lines(tmp_path / "o.jsonl", {"task": "q3-end-date", "output": "2025-09-30"})

    completed = grade(qa, outputs, "--json")

    assert completed.returncode == 0, completed.stderr
    document = json.loads(completed.stdout)
    assert (document["score"], document["coverage"]) == (0.5, 1.0)
    growth, q3 = document["tasks"]
    # No line for yoy-growth: not answered, the agent's failure; no judge for it anyway.
    assert growth["task"] == "yoy-growth"
    assert [(c["id"], c["status"], c["score"], c["code"]) for c in growth["criteria"]] == [
        ("matches-expected-answer", "failed", 0.0, "no_answer")
    ]
    assert q3 == {
        "task": "q3-end-date",
        "score": 1.0,
        "coverage": 1.0,
        "criteria": [
            {
                "id": "matches-expected-answer",
                "status": "passed",
                "score": 1.0,
                "reasoning": "The answer is the expected answer exactly.",
                "code": None,
                "detail": "",
                "weight": 1.0,
                "verifier": "exact_match",
                "warnings": [],
            }
        ],
    }


def test_judge_criteria_without_a_judge_are_skipped(qa, tmp_path):
    outputs = lines(tmp_path / "o.jsonl", {"task": "yoy-growth", "output": "25%"})

    completed = grade(qa, outputs, "--json")

    criterion = json.loads(completed.stdout)["tasks"][0]["criteria"][0]
    assert (criterion["status"], criterion["code"]) == ("skipped", "no_judge_configured")
    assert criterion["reasoning"] == NO_JUDGE_CONFIGURED.message
    assert completed.returncode == 0


def test_problems_in_either_file_are_each_named_and_exit_1(qa, tmp_path):
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(
        '{"task": "nope", "output": "x"}\nnot json\n{"task": "q3-end-date", "output": 3}\n'
        '{"task": "q3-end-date", "output": "a"}\n{"task": "q3-end-date", "output": "b"}\n'
    )

    completed = grade(qa, outputs)

    assert completed.returncode == 1
    assert completed.stdout.splitlines() == [
        "4 problems; nothing was graded:",
        'outputs.jsonl, line 1: The dataset has no task "nope".',
        'outputs.jsonl, line 2: This line is not {"task": "<task id>", "output": "<text>"}: '
        "not JSON (Expecting value: line 1 column 1 (char 0)).",
        'outputs.jsonl, line 3: This line is not {"task": "<task id>", "output": "<text>"}: '
        '"output" must be text or null.',
        'outputs.jsonl, line 5: Task "q3-end-date" already has an output, on line 4.',
    ]


def test_a_dataset_file_with_problems_is_named_as_check_dataset_file_names_it(tmp_path):
    dataset = tmp_path / "broken.json"
    dataset.write_text('{"tasks": [{"id": "a", "prompt": "p", "criteria": [{"weight": -1}]}]}')
    outputs = lines(tmp_path / "o.jsonl", {"task": "a", "output": "x"})

    completed = grade(dataset, outputs)

    assert completed.returncode == 1
    first, *problems = completed.stdout.splitlines()
    assert first.endswith("nothing was graded:")
    assert problems and all(p.startswith("broken.json, line 1 › task 1 (id a)") for p in problems)


def test_a_criterion_in_error_exits_2(qa, tmp_path, judge_server):
    env = {"JUDGE_BASE_URL": judge_server.base_url, "JUDGE_MODEL": "m", "JUDGE_MAX_RETRIES": "0"}
    judge_server.fail(*[Fault(status=503)] * 4)
    outputs = lines(tmp_path / "o.jsonl", {"task": "yoy-growth", "output": "correct"})

    completed = grade(qa, outputs, env=env)

    assert completed.returncode == 2
    assert "  ! matches-expected-answer (weight 1) error [judge_unreachable]: " in completed.stdout
    assert "1 criteria in error" in completed.stdout.splitlines()[-1]


def test_an_unreadable_judge_setting_is_named(qa, tmp_path):
    outputs = lines(tmp_path / "o.jsonl", {"task": "yoy-growth", "output": "x"})

    completed = grade(qa, outputs, env={"JUDGE_CONCURRENCY": "lots"})

    assert completed.returncode == 1
    assert "JUDGE_CONCURRENCY: must be a whole number, not 'lots'" in completed.stdout


def rubric_with_length_check(tmp_path):
    document = {
        "tasks": [
            {
                "id": "email",
                "prompt": "Write it.",
                "criteria": [
                    {
                        "id": "length",
                        "criterion": "Is 150 words or fewer.",
                        "verifier": {"kind": "code_verifier", "code": LENGTH_CODE},
                    }
                ],
            }
        ]
    }
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(document))
    return path


def test_python_checks_run_only_with_allow_python(tmp_path):
    dataset = rubric_with_length_check(tmp_path)
    outputs = lines(tmp_path / "o.jsonl", {"task": "email", "output": "word " * 151})

    off = json.loads(grade(dataset, outputs, "--json").stdout)["tasks"][0]["criteria"][0]
    completed = grade(dataset, outputs, "--json", "--allow-python")
    on = json.loads(completed.stdout)["tasks"][0]["criteria"][0]

    assert (off["status"], off["code"]) == ("skipped", "python_checks_off")
    available, reason = sandbox_status()
    if available:
        assert (on["status"], on["reasoning"]) == ("failed", "151 words")
    else:
        assert (on["status"], on["code"]) == ("skipped", "sandbox_unavailable")
        assert reason in on["reasoning"]


def test_a_zips_attached_files_reach_the_judge(tmp_path, judge_env, judge_server):
    document = {
        "tasks": [
            {
                "id": "rev",
                "prompt": "Sum the revenue.",
                "expected": "300",
                "inputFiles": ["revenue.csv"],
            }
        ]
    }
    dataset = tmp_path / "rev.zip"
    with zipfile.ZipFile(dataset, "w") as archive:
        archive.writestr("dataset.json", json.dumps(document))
        archive.writestr("revenue.csv", "year,revenue\n2024,120\n2025,180\n")
    outputs = lines(tmp_path / "o.jsonl", {"task": "rev", "output": "correct: 300"})

    completed = grade(dataset, outputs, env=judge_env)

    assert completed.returncode == 0, completed.stdout + completed.stderr
    user = judge_server.requests[0]["messages"][1]["content"]
    assert "revenue.csv:\n```file\nyear,revenue\n2024,120\n2025,180\n\n```" in user


def test_a_zip_of_outputs_gives_the_judge_the_files_the_agent_wrote(
    tmp_path, judge_env, judge_server
):
    document = {"tasks": [{"id": "rev", "prompt": "Sum the revenue.", "expected": "300"}]}
    dataset = tmp_path / "rev.json"
    dataset.write_text(json.dumps(document))
    outputs = tmp_path / "outputs.zip"
    with zipfile.ZipFile(outputs, "w") as archive:
        archive.writestr("outputs.jsonl", json.dumps({"task": "rev", "output": "see sum.txt"}))
        archive.writestr("files/rev/sum.txt", "300\n")

    completed = grade(dataset, outputs, env=judge_env)

    assert completed.returncode == 0, completed.stdout + completed.stderr
    user = judge_server.requests[0]["messages"][1]["content"]
    assert "The files the agent wrote:\nsum.txt:\n```file\n300\n\n```" in user
