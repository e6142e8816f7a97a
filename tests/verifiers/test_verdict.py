"""Verdict and the task/output views: the page's contract, and their JSON round trip."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from context_verifiers import FileView, OutputView, TaskView, Verdict
from context_verifiers.verdict import MAX_REASONING_CHARS
from context_verifiers.views import CriterionView, ViewError

ROOT = Path(__file__).resolve().parent.parent.parent


def test_boolean_and_score_write_the_shapes_the_sandbox_reads():
    assert Verdict.boolean(passed=True, reasoning="120 words").to_json() == {
        "kind": "boolean",
        "passed": True,
        "reasoning": "120 words",
    }
    assert Verdict.score(1, reasoning="all there").to_json() == {
        "kind": "score",
        "value": 1.0,
        "reasoning": "all there",
    }


@pytest.mark.parametrize("value", [True, False, math.nan, math.inf, -math.inf, 1.0001, -0.01, "1"])
def test_a_score_outside_0_to_1_is_refused(value):
    with pytest.raises(ValueError, match="score"):
        Verdict.score(value)


@pytest.mark.parametrize("passed", [1, 0, "yes", None])
def test_passed_must_be_true_or_false(passed):
    with pytest.raises(ValueError, match="True or False"):
        Verdict.boolean(passed=passed)


def test_a_verdict_built_by_hand_is_checked_too():
    with pytest.raises(ValueError, match="0 to 1"):
        Verdict(kind="score", passed=None, value=7.0)


def test_long_reasoning_is_cut_and_says_so():
    verdict = Verdict.boolean(passed=False, reasoning="x" * (MAX_REASONING_CHARS + 5))

    assert verdict.reasoning.endswith("cut at 20,000 characters]")


@given(st.floats(min_value=0, max_value=1), st.text(max_size=50))
def test_a_score_survives_json(value, reasoning):
    verdict = Verdict.score(value, reasoning=reasoning)

    assert Verdict.from_json(verdict.to_json()) == verdict


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"kind": "boolean"},
        {"kind": "score", "value": 2},
        {"kind": "boolean", "passed": True, "score": 1},
        {"kind": "maybe"},
    ],
)
def test_from_json_refuses_what_is_not_a_verdict(data):
    with pytest.raises(ValueError):
        Verdict.from_json(data)


def test_task_and_output_views_round_trip_with_files():
    task = TaskView(
        id="delayed-shipment",
        name="Delayed shipment email",
        prompt="Draft an email.",
        expected=None,
        criterion=CriterionView(id="length", text="Is 150 words or fewer.", weight=10),
        input_files=(FileView.of("orders.csv", b"id,eta\n4417,14 Nov\n"),),
        expected_files=(FileView.of("logo.png", b"\x89PNG\r\n\x1a\n\xff"),),
    )
    output = OutputView(text="Dear customer", files=(FileView.of("reply.txt", b"hi"),))

    assert TaskView.from_json(task.to_json()) == task
    assert OutputView.from_json(output.to_json()) == output
    assert task.to_json()["input_files"][0]["text"] == "id,eta\n4417,14 Nov\n"
    assert "base64" in task.to_json()["expected_files"][0]


def test_a_large_file_is_cut_and_says_so_keeping_text_whole_characters():
    view = FileView.of("notes.txt", "é".encode() * 10, limit=5)

    assert view.truncated
    assert view.size == 20
    assert view.text == "éé"


def test_a_malformed_task_document_names_the_field():
    with pytest.raises(ViewError, match=r"task\.prompt must be text"):
        TaskView.from_json({"id": "a", "name": "A", "prompt": 3})


def test_the_pages_length_check_runs_as_written_in_an_isolated_python():
    code = (
        "from context_verifiers import Verdict\n\n"
        "def verify(task, output):\n"
        "    words = len(output.text.split())\n"
        '    return Verdict.boolean(passed=words <= 150, reasoning=f"{words} words")\n'
    )
    probe = (
        "import sys, json; sys.path.insert(0, sys.argv[1])\n"
        "from context_verifiers import OutputView, TaskView\n"
        "scope = {}; exec(sys.argv[2], scope)\n"
        "task = TaskView(id='t', name='T', prompt='p')\n"
        "print(json.dumps(scope['verify'](task, OutputView(text='word ' * 149)).to_json()))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'openai'}))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(ROOT), code],
        capture_output=True,
        text=True,
        check=True,
        env={},
    )
    verdict, foreign = completed.stdout.splitlines()

    assert verdict == '{"kind": "boolean", "passed": true, "reasoning": "149 words"}'
    assert foreign == "[]"
