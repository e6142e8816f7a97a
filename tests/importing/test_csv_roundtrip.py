"""Export then import: a dataset written as .csv (or .xlsx) reads back as the same tasks."""

from __future__ import annotations

import codecs
import dataclasses
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasets_app.importing import columns, csv_format, xlsx_format
from datasets_app.importing.spec import (
    CriterionSpec,
    DatasetSpec,
    FileSpec,
    TaskSpec,
    Verifier,
    expected_answer_criterion,
)
from tests.importing.csv_helpers import check_csv, check_xlsx
from tests.importing.strategies import dataset_specs

SPEC = DatasetSpec(
    name="Support rubric",
    criteria=(CriterionSpec("no-invented-facts", "Invents nothing.", 20.0),),
    tasks=(
        TaskSpec(
            id="delayed-shipment",
            name="Delayed shipment email",
            prompt="Draft an email.\nOrder #4417 is late.",
            criteria=(
                CriterionSpec("apology", "=Apologizes once", 10.0),
                CriterionSpec(
                    "length",
                    "Is 150 words or fewer.",
                    0.5,
                    Verifier(
                        "code_verifier",
                        code="from context_verifiers import Verdict\n\n"
                        "def verify(task, output):\n"
                        "    return Verdict.boolean(passed=True, reasoning='ok')\n",
                    ),
                ),
            ),
            input_files=(
                FileSpec("a.pdf", url="https://example.com/a.pdf"),
                FileSpec("b||c.txt", url="https://example.com/b||c.txt"),
            ),
        ),
        TaskSpec(
            id="q3-end-date",
            name="Quarter end date",
            prompt="-Return only the ISO 8601 date.",
            expected_text="'=2025-09-30\r\n",
            expected_verifier=Verifier("exact_match"),
            criteria=(
                expected_answer_criterion(Verifier("exact_match")),
                CriterionSpec("format", "Is ISO 8601.", 1.0, Verifier("llm_judge", "boolean")),
            ),
        ),
    ),
)


def comparable(spec: DatasetSpec) -> tuple:
    """What a spreadsheet carries: tasks and criteria for every task, in order.

    A blank cell is no value, so empty verifier instructions read back as none.
    """

    def criterion(item: CriterionSpec) -> CriterionSpec:
        return dataclasses.replace(item, verifier=verifier(item.verifier))

    def verifier(item: Verifier | None) -> Verifier | None:
        if item is None or item.instructions != "":
            return item
        return dataclasses.replace(item, instructions=None)

    tasks = tuple(
        dataclasses.replace(
            task,
            evidence={},
            expected_verifier=verifier(task.expected_verifier),
            criteria=tuple(criterion(item) for item in task.criteria),
        )
        for task in spec.tasks
    )
    return tuple(criterion(item) for item in spec.criteria), tasks


def test_csv_round_trip_keeps_tasks_criteria_weights_verifiers_and_files():
    data, warnings = csv_format.write(SPEC)

    plan, problems, _ = check_csv(data, "Support rubric.csv")

    assert problems == []
    assert warnings == []
    assert comparable(plan) == comparable(SPEC)


def test_csv_is_utf8_with_bom_crlf_and_formulas_neutralised():
    data, _ = csv_format.write(SPEC)

    assert data.startswith(codecs.BOM_UTF8)
    text = data.decode("utf-8-sig")
    assert text.startswith("task_id,name,prompt,expected_answer,expected_verifier,")
    assert text.endswith("\r\n")
    assert ",'=Apologizes once," in text
    assert "''=2025-09-30" in text
    assert "'-Return only" in text


def test_writer_puts_criteria_for_every_task_first_and_one_row_per_criterion():
    header, rows, _ = columns.rows_from_spec(SPEC)

    task_ids = [row[header.index("task_id")] for row in rows]
    criterion_ids = [row[header.index("criterion_id")] for row in rows]
    assert task_ids == ["", "delayed-shipment", "delayed-shipment", "q3-end-date", "q3-end-date"]
    assert criterion_ids == [
        "no-invented-facts",
        "apology",
        "length",
        "matches-expected-answer",
        "format",
    ]
    # Later rows of a task repeat only its id.
    assert rows[2][header.index("prompt")] == ""


def test_writer_says_what_a_spreadsheet_cannot_carry():
    spec = dataclasses.replace(
        SPEC,
        description="About support.",
        settings={"defaultVerifier": {"kind": "llm_judge"}},
        tasks=(dataclasses.replace(SPEC.tasks[0], evidence={"gold": [1]}),),
    )

    _, warnings = csv_format.write(spec)

    assert warnings == [
        columns.MSG_WRITE_DESCRIPTION,
        columns.MSG_WRITE_SETTINGS.format(keys="defaultVerifier"),
        columns.MSG_WRITE_EVIDENCE.format(tasks="1 task"),
    ]


def test_xlsx_round_trip():
    data, warnings = xlsx_format.write(SPEC)

    plan, problems, _ = check_xlsx(data)

    assert problems == []
    assert warnings == [xlsx_format.MSG_WRITE_CARRIAGE_RETURNS.format(cells="1 cell")]
    expected = comparable(SPEC)
    task = dataclasses.replace(expected[1][1], expected_text="'=2025-09-30\n")
    assert comparable(plan) == (expected[0], (expected[1][0], task))


_ROUND_TRIP = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@_ROUND_TRIP
@given(dataset_specs())
def test_any_valid_dataset_survives_a_csv_round_trip(spec):
    # A spreadsheet has no settings (the writer warns), so compare what it does carry.
    spec = dataclasses.replace(spec, settings={})
    data, _ = csv_format.write(spec)

    plan, problems, _ = check_csv(data)

    assert problems == []
    assert comparable(plan) == comparable(spec)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dataset_specs())
def test_any_valid_dataset_survives_an_xlsx_round_trip(spec):
    # Control characters and CRs cannot be stored in a sheet (the writer warns about each),
    # so the spec is one a sheet can hold.
    spec = sheet_safe(dataclasses.replace(spec, settings={}))
    data, _ = xlsx_format.write(spec)

    plan, problems, _ = check_xlsx(data)

    assert problems == []
    assert comparable(plan) == comparable(spec)


def sheet_safe(spec: DatasetSpec) -> DatasetSpec:
    def clean(value):
        if isinstance(value, str):
            value = re.sub("\r\n?", "\n", value)
            return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "\ufffd", value)
        if isinstance(value, tuple | list):
            return type(value)(clean(item) for item in value)
        if isinstance(value, dict):
            return {clean(key): clean(item) for key, item in value.items()}
        if dataclasses.is_dataclass(value):
            return dataclasses.replace(
                value, **{f.name: clean(getattr(value, f.name)) for f in dataclasses.fields(value)}
            )
        return value

    return dataclasses.replace(spec, criteria=clean(spec.criteria), tasks=clean(spec.tasks))


# Cells made of what starts a formula, blanks, quotes and NULs, in every order: a row is
# searched once (`neutralize_row`), and must come out as each cell guarded alone would.
_FORMULA_PARTS = ["a", "=", "+", "-", "@", " ", "\t", "\r", "\n", "'", "＝", "\u3000", "\x00"]


@given(
    st.lists(
        st.lists(st.sampled_from(_FORMULA_PARTS), max_size=4).map("".join),
        min_size=1,
        max_size=5,
    )
)
def test_a_row_is_guarded_as_each_of_its_cells_would_be(cells):
    assert columns.neutralize_row(cells) == [columns.neutralize_formula(c) for c in cells]
