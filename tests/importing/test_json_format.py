""".json files: reading, the line each problem is on, hostile input, and export round trips."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from datasets_app.importing import document as doc
from datasets_app.importing import json_format, json_text, shapes
from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import (
    MAX_PROBLEMS,
    CheckOptions,
    CriterionSpec,
    DatasetSpec,
    TaskSpec,
)

from .strategies import dataset_specs, zip_members_for

FILES = Path(__file__).resolve().parent.parent / "files" / "json"


def check(text: str | bytes, name: str = "data.json"):
    data = text.encode() if isinstance(text, str) else text
    return check_file(data, name)


def only_problem(result):
    assert len(result.problems) == 1, result.problems
    return result.problems[0]


PRETTY = """{
  "format": "context-evals-dataset",
  "version": 1,
  "tasks": [
    {
      "id": "a",
      "prompt": "One",
      "expected": {"text": "1"}
    },
    {
      "id": "b",
      "prompt": "Two",
      "criteria": [
        {"id": "c1", "criterion": "Says two", "weight": 5},
        {"id": "c2", "criterion": "Is short",
         "weight": "heavy"}
      ]
    },
    {
      "id": "c"
    }
  ]
}
"""


def test_the_reference_page_templates_pass_with_no_problem():
    expected = check_file((FILES / "expected_answers_template.json").read_bytes(), "e.json")
    rubric = check_file((FILES / "rubric_template.json").read_bytes(), "r.json")

    assert expected.ok and expected.task_count == 2 and expected.warnings == ()
    assert rubric.ok and rubric.task_count == 1
    # Its code_verifier is a warning while Python checks are off, never a problem.
    assert [w.code for w in rubric.warnings] == [doc.PYTHON_CHECKS_OFF.code]
    assert rubric.detected == "JSON dataset, UTF-8"


def test_each_problem_names_the_line_its_value_stands_on():
    result = check(PRETTY)

    lines = {(p.code, p.field): p.line for p in result.problems}
    assert lines == {
        (doc.BAD_WEIGHT.code, "tasks[1].criteria[1].weight"): 16,
        # Missing fields are reported where their object starts.
        (doc.MISSING_PROMPT.code, "tasks[2].prompt"): 19,
        (doc.NOTHING_TO_GRADE.code, "tasks[2]"): 19,
    }
    assert [p.line for p in result.problems] == sorted(p.line for p in result.problems)


def test_rule_problems_in_a_valid_shaped_file_get_their_lines_too():
    text = PRETTY.replace('"heavy"', "2").replace(
        '"id": "c"', '"id": "a", "prompt": "x", "expected": "y"'
    )
    result = check(text)

    problem = only_problem(result)
    assert (problem.code, problem.field, problem.line) == (
        doc.DUPLICATE_TASK_ID.code,
        "tasks[2].id",
        20,
    )


def test_the_locator_walks_only_to_the_paths_asked_for():
    text = json.dumps({"a": [{"b": 1}, {"b": [1, 2, {"c": "x\ny"}]}], "d": {"e": None}}, indent=1)
    locate = json_text.JsonLocator(text)
    lines = text.split("\n")

    for path, needle in [(("a", 1, "b", 2, "c"), '"c"'), (("d", "e"), '"e"'), (("a", 0), "{")]:
        _, line = locate(path)
        assert needle in lines[line - 1] or lines[line - 1].strip() == "{"
    # An absent path gets its nearest ancestor's line.
    assert locate(("d", "zzz")) == locate(("d",))
    assert locate(()) == (None, 1)


def test_a_syntax_error_is_one_problem_with_its_line_and_column():
    problem = only_problem(check('{\n  "tasks": [\n    {"id": "a",,}\n  ]\n}'))

    assert problem.code == json_text.NOT_JSON.code
    assert problem.line == 3
    assert "column" in problem.message


def test_truncated_json_is_a_problem_not_a_crash():
    text = PRETTY[: len(PRETTY) // 2]
    problem = only_problem(check(text))

    assert problem.code == json_text.NOT_JSON.code
    assert problem.line == text.count("\n") + 1


def test_json_nested_ten_thousand_deep_is_a_problem():
    problem = only_problem(check("[" * 10_000 + "]" * 10_000))

    assert problem.code == json_text.TOO_DEEP.code

    problem = only_problem(check('{"tasks": [{"evidence": ' + "[" * 10_000 + "]" * 10_000 + "}]}"))
    assert problem.code == json_text.TOO_DEEP.code


def test_a_list_of_records_is_read_and_a_scalar_says_what_a_dataset_file_is():
    # A list is records (never "save it as .jsonl"): here one task with nothing to grade.
    problem = only_problem(check('[\n{"prompt": "x"}]'))
    assert (problem.code, problem.line) == (doc.NOTHING_TO_GRADE.code, 2)
    problem = only_problem(check('"tasks"'))
    assert problem.code == shapes.NO_RECORDS.code
    assert problem.message == shapes.NO_RECORDS.format(what="text")


def test_invalid_utf8_names_the_line_and_byte():
    data = b'{\n"tasks": [\n{"prompt": "caf\xe9"}]}'
    problem = only_problem(check(data))

    assert problem.code == json_text.NOT_UTF8.code
    assert problem.line == 3
    assert problem.message == json_text.NOT_UTF8.format(byte=data.index(b"\xe9") + 1, line_number=3)


def test_a_nul_byte_is_a_problem_and_an_escaped_nul_too():
    problem = only_problem(check(b'{"tasks": [\n{"prompt": "a\x00"}]}'))
    assert (problem.code, problem.line) == (json_text.NUL_BYTE.code, 2)

    result = check('{"tasks": [\n{"prompt": "a\\u0000", "expected": "x"}]}')
    assert [(p.code, p.line) for p in result.problems] == [(json_text.NUL_CHARACTER.code, 2)]
    # An escaped backslash followed by "u0000" is just text.
    assert check('{"tasks": [{"prompt": "a\\\\u0000", "expected": "x"}]}').ok


def test_a_utf8_bom_is_accepted():
    result = check(codecs.BOM_UTF8 + (FILES / "expected_answers_template.json").read_bytes())

    assert result.ok
    assert result.detected == "JSON dataset, UTF-8"


def test_utf16_with_a_bom_is_read_without_one_it_is_refused():
    text = (FILES / "expected_answers_template.json").read_text()
    with_bom = check(text.encode("utf-16"))
    assert with_bom.ok
    assert with_bom.detected == "JSON dataset, UTF-16"

    without = check(text.encode("utf-16-le"))
    assert not without.ok and len(without.problems) == 1


def test_nan_and_infinity_are_problems():
    weight = '{"tasks": [{"prompt": "p", "criteria": [{"criterion": "c", "weight": NaN}]}]}'
    assert only_problem(check(weight)).code == json_text.NOT_JSON.code

    evidence = '{"tasks": [{"prompt": "p", "expected": "x", "evidence": {"a": -Infinity}}]}'
    problem = only_problem(check(evidence))
    assert (problem.code, problem.field) == (doc.NON_FINITE_EVIDENCE.code, "tasks[0].evidence")


def test_a_50_mb_single_line_is_checked():
    # Its time and memory are bench_hostile_files' figure (json_huge_prompt).
    prompt = "x" * (50 * 1024 * 1024 - 100)
    data = json.dumps({"tasks": [{"prompt": prompt, "weight": 1}]}).encode()
    result = check(data)

    assert [w.code for w in result.warnings] == [doc.UNKNOWN_FIELD.code]
    # A prompt of 50 MiB is also past the cap on one text field.
    assert [p.code for p in result.problems] == [
        doc.TEXT_TOO_LONG.code,
        doc.NOTHING_TO_GRADE.code,
    ]


def test_wrong_types_everywhere_are_problems():
    result = check(
        json.dumps({"name": [], "settings": 1, "criteria": "x", "tasks": [1, None, "t", []]})
    )

    assert not result.ok
    assert {p.field for p in result.problems} == {
        "name",
        "settings",
        "criteria",
        "tasks[0]",
        "tasks[1]",
        "tasks[2]",
        "tasks[3]",
    }
    assert all(p.line == 1 for p in result.problems)


# --- Export.


def test_write_is_indented_utf8_with_whole_weights_written_whole():
    spec = DatasetSpec(
        name="Café",
        tasks=(
            TaskSpec(
                id="t",
                name="T",
                prompt="p",
                criteria=(CriterionSpec("c", "x", 20.0), CriterionSpec("d", "y", 2.5)),
            ),
        ),
    )
    data = json_format.write(spec)

    assert data.startswith(b'{\n  "format": "context-evals-dataset"')
    assert "Café".encode() in data
    weights = [c["weight"] for c in json.loads(data)["tasks"][0]["criteria"]]
    assert weights == [20, 2.5] and isinstance(weights[0], int)


def test_an_export_of_the_rubric_template_reads_back_the_same():
    original = check_file((FILES / "rubric_template.json").read_bytes(), "r.json").plan
    again = check_file(json_format.write(original), "again.json")

    assert again.ok
    assert again.plan == original


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dataset_specs())
def test_write_then_check_gives_back_the_same_plan(spec):
    result = check_file(json_format.write(spec), "export.json")

    assert result.problems == ()
    assert result.plan == spec


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dataset_specs(with_paths=True))
def test_write_then_validate_with_the_zip_s_files_gives_back_the_same_plan(spec):
    document = json.loads(json_format.write(spec))
    plan, problems, _ = doc.validate_document(
        document,
        file_name="export.json",
        locate=json_text.JsonLocator(""),
        options=CheckOptions(),
        zip_members=zip_members_for(spec),
    )

    assert problems == []
    assert plan == spec


def test_millions_of_wrong_values_are_bounded_in_problems():
    # A list longer than any limit is one problem, whatever its items are. Their time and
    # memory are bench_hostile_files' figure (json_two_million_values and its neighbours).
    many_tasks = '{"tasks": [' + ",".join(["1"] * 2_000_000) + "]}"
    many_criteria = (
        '{"tasks": [{"prompt": "p", "criteria": [' + ",".join(["1"] * 2_000_000) + "]}]}"
    )
    many_keys = "{" + ",".join(f'"k{n}": 1' for n in range(400_000)) + ', "tasks": []}'
    tasks, criteria, keys = check(many_tasks), check(many_criteria), check(many_keys)

    assert [p.code for p in tasks.problems] == [doc.TOO_MANY_TASKS.code]
    assert tasks.problems[0].message == doc.TOO_MANY_TASKS.format(count=2_000_000, limit=1000)
    assert [p.code for p in criteria.problems] == [doc.TOO_MANY_CRITERIA.code]
    assert [p.code for p in keys.problems] == [doc.NO_TASKS.code]
    assert len(keys.warnings) == MAX_PROBLEMS + 1


def test_a_task_with_more_than_ten_files_of_a_kind_is_a_problem():
    links = [f"https://example.com/{n}" for n in range(11)]
    result = check(
        json.dumps({"tasks": [{"prompt": "p", "expected": "x", "expectedFiles": links}]})
    )

    assert [(p.code, p.field) for p in result.problems] == [
        (doc.TOO_MANY_FILES.code, "tasks[0].expectedFiles")
    ]


def test_prose_full_of_colons_is_not_mistaken_for_a_file_of_many_keys():
    # Log lines and timestamps put more colons in a large file than the one-pass check
    # allows keys; only keys count, so such a file still takes that pass.
    log = "2025-03-01T12:30:07Z INFO worker: job 7: status: ok\n" * 60_000
    prose = json.dumps({"tasks": [{"prompt": log, "expected": "ok"}]})
    assert prose.count(":") > json_format._MAX_KEYS_FOR_ONE_PASS
    assert json_format._few_keys(prose)

    keys = "{" + ",".join(f'"k{n}" : 1' for n in range(300_000)) + "}"
    assert not json_format._few_keys(keys)


# -- a list of more records than a file may hold: counted, not built -------------------------


def _long_list(record: dict, count: int = 150_000) -> list[dict]:
    return [{**record, "id": f"t{n}"} if "id" in record else record for n in range(count)]


@pytest.mark.parametrize(
    ("record", "line", "detected"),
    [
        ({"id": "t", "prompt": "p", "expected": "x"}, 1, "JSON dataset, UTF-8"),
        ({"question": "q", "answer": "a"}, None, "question → prompt, answer → expected answer"),
    ],
)
def test_a_list_of_too_many_records_says_how_many_it_holds(record, line, detected):
    data = json.dumps(_long_list(record)).encode()

    result = check_file(data, "long.json")

    [problem] = result.problems
    assert problem.message == doc.TOO_MANY_TASKS.format(count=150_000, limit=1_000)
    assert problem.line == line
    assert detected in result.detected


def test_a_long_list_that_is_no_valid_json_is_named_as_such_where_it_breaks():
    text = json.dumps(_long_list({"question": "q", "answer": "a"}))
    broken = text[:-1] + ",\n NaN]"

    result = check_file(broken.encode(), "long.json")

    [problem] = result.problems
    assert problem.code == "not_json"
    assert problem.line == 2


def test_a_long_list_a_mapping_names_is_refused_for_its_length_not_its_keys():
    data = json.dumps(_long_list({"q": "question", "a": "answer"})).encode()

    result = check_file(data, "long.json", options=CheckOptions(mapping={"prompt": "q"}))

    [problem] = result.problems
    assert problem.message == doc.TOO_MANY_TASKS.format(count=150_000, limit=1_000)


@pytest.mark.parametrize("end", [",]", "", "]]", ", 1"])
def test_a_long_list_broken_at_its_end_is_named_as_no_json(end):
    text = json.dumps(_long_list({"question": "q", "answer": "a"}))[:-1] + end

    result = check_file(text.encode(), "long.json")

    assert [p.code for p in result.problems] == ["not_json"]
