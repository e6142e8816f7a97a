"""EvalSetError says where a problem is as attributes, not only in its message."""

from __future__ import annotations

import json

import pytest

import contextgrid as cg
from contextgrid.evalset.io import (
    parse_csv_text,
    parse_jsonl_text,
    parse_legalbench_rag_text,
)


def test_a_row_error_carries_its_file_row_and_detail():
    with pytest.raises(cg.EvalSetError) as excinfo:
        parse_csv_text("id,question\nq1,One?\nq1,Two?\n", name="quiz.csv")

    error = excinfo.value
    assert (error.file, error.row, error.line, error.test) == ("quiz.csv", 3, None, None)
    assert error.detail == "id 'q1' is already used on row 2"
    assert str(error) == "quiz.csv, row 3: id 'q1' is already used on row 2"


def test_a_line_error_carries_its_line():
    with pytest.raises(cg.EvalSetError) as excinfo:
        parse_jsonl_text('{"id": "q1", "question": "Q?"}\n{"id": , }\n', name="q.jsonl")

    error = excinfo.value
    assert (error.file, error.line, error.row) == ("q.jsonl", 2, None)
    assert error.detail.startswith("invalid JSON")
    assert str(error) == f"q.jsonl, line 2: {error.detail}"


def test_a_legalbench_error_carries_its_test_and_item():
    tests = [{"query": "Q?", "query_id": "a"}, {"query": "R?", "query_id": "a"}]
    with pytest.raises(cg.EvalSetError) as excinfo:
        parse_legalbench_rag_text(json.dumps({"tests": tests}), name="lb.json")

    error = excinfo.value
    assert (error.file, error.test, error.item, error.line) == ("lb.json", 1, "a", None)
    assert str(error) == f"lb.json, test 1 (a): {error.detail}"


def test_an_error_about_the_whole_file_has_no_place():
    with pytest.raises(cg.EvalSetError) as excinfo:
        parse_csv_text("", name="quiz.csv")

    error = excinfo.value
    assert (error.file, error.line, error.row) == ("quiz.csv", None, None)
    assert error.detail == str(error) == "quiz.csv is empty"
