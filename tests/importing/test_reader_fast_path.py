"""The fast path for reader-built documents finds exactly what the full pydantic path finds."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from datasets_app.importing import csv_format
from datasets_app.importing.document import ReaderDocument, _new, validate_document
from datasets_app.importing.spec import CheckOptions, TaskSpec, field_path
from tests.importing.strategies import dataset_specs


def _both(document: ReaderDocument, locate, label, options: CheckOptions):
    fast = validate_document(
        document, file_name="t.csv", locate=locate, options=options, field_label=label
    )
    full = validate_document(
        dict(document), file_name="t.csv", locate=locate, options=options, field_label=label
    )
    return fast, full


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=dataset_specs())
def test_fast_and_full_paths_agree_on_generated_csv_files(spec):
    parsed = csv_format.read(csv_format.write(spec)[0], "t.csv")
    assert isinstance(parsed.document, ReaderDocument)
    for enabled in (False, True):
        fast, full = _both(
            parsed.document,
            parsed.locate,
            parsed.field_label or field_path,
            CheckOptions(python_checks_enabled=enabled),
        )
        assert fast == full


def test_fast_and_full_paths_agree_on_a_document_with_problems():
    document = ReaderDocument(
        name="t",
        description="",
        settings={},
        criteria=[],
        tasks=[
            {"id": "a", "prompt": "p", "criteria": [{"id": "c", "criterion": "x", "weight": -1}]},
            {"id": "a", "prompt": " ", "criteria": [{"id": "c", "verifier": {"kind": "nope"}}]},
        ],
    )
    fast, full = _both(document, lambda path: (None, None), field_path, CheckOptions())

    assert fast == full
    assert fast[1]


def test_a_task_built_field_by_field_equals_one_built_by_its_constructor():
    fields = dict(
        id="t",
        name="n",
        prompt="p",
        expected_text=None,
        expected_verifier=None,
        criteria=(),
        input_files=(),
        expected_files=(),
        evidence={},
    )

    assert _new(TaskSpec, dict(fields)) == TaskSpec(**fields)
