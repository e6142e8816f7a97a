"""The importer's three stages (spec.py, docs/architecture.md): read → shape → validate,
each with one input type and one output type, and what the shape stage makes of the same
records whatever the container they came in."""

from __future__ import annotations

import json
import typing

import pytest

from datasets_app.importing import checker, document, evalset_format, shapes
from datasets_app.importing.formats import READERS
from datasets_app.importing.spec import CheckOptions, CheckResult, Parsed, Read


def _signature(function) -> tuple[list[object], object]:
    hints = typing.get_type_hints(function)
    returned = hints.pop("return")
    return list(hints.values()), returned


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_every_format_reader_hands_the_shape_stage_a_read(fmt):
    parameters, returned = _signature(READERS[fmt])

    assert parameters[:2] == [bytes, str]
    assert returned is Read


@pytest.mark.parametrize("reader", [evalset_format.read, evalset_format.read_beir])
def test_the_eval_set_readers_are_readers_like_the_others(reader):
    assert _signature(reader)[1] is Read


def test_shape_takes_a_read_and_validate_a_parsed_document():
    assert _signature(shapes.shape) == ([Read, CheckOptions | None], Parsed)
    parameters, returned = _signature(document.check_parsed)
    assert (parameters[0], returned) == (Parsed, CheckResult)


RECORDS = [
    {"question": "What is 2 + 2?", "answer": "4"},
    {"question": "Capital of France?", "answer": "Paris"},
]


@pytest.mark.parametrize(
    ("file_name", "data"),
    [
        ("records.json", json.dumps(RECORDS).encode()),
        ("records.json", json.dumps({"data": RECORDS}).encode()),
        ("records.jsonl", "".join(json.dumps(r) + "\n" for r in RECORDS).encode()),
        ("records.csv", b"question,answer\nWhat is 2 + 2?,4\nCapital of France?,Paris\n"),
    ],
)
def test_the_same_records_make_the_same_tasks_whatever_their_container(file_name, data):
    result = checker.check_file(data, file_name)

    assert result.ok, result.problems
    assert [(t.id, t.name, t.prompt, t.expected_text) for t in result.plan.tasks] == [
        ("task-1", "What is 2 + 2?", "What is 2 + 2?", "4"),
        ("task-2", "Capital of France?", "Capital of France?", "Paris"),
    ]


def test_a_problem_on_a_record_is_on_its_line_in_json_and_in_json_lines():
    records = [{"question": "Fine?", "answer": "yes"}, {"question": {"a": 1}, "answer": "no"}]
    as_json = json.dumps(records, indent=2).encode()
    as_lines = "".join(json.dumps(r) + "\n" for r in records).encode()

    in_json = checker.check_file(as_json, "r.json").problems
    in_lines = checker.check_file(as_lines, "r.jsonl").problems

    # The second record starts on line 6 of the indented JSON, and is line 2 of the lines.
    assert [(p.code, p.line) for p in in_json] == [(in_lines[0].code, 6)]
    assert [p.line for p in in_lines] == [2]
