"""The fast path for reader-built documents finds exactly what the full pydantic path finds."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasets_app.importing import csv_format
from datasets_app.importing.columns import (
    Table,
    _Builder,
    _document_by_columns,
    document_from_table,
    rows_from_spec,
)
from datasets_app.importing.document import (
    _DEFAULT_EXPECTED_ANSWER_VERIFIER,
    ReaderDocument,
    _Findings,
    _new,
    _reader_criteria,
    _reader_criteria_checked,
    _reader_criteria_from_columns,
    _reader_data,
    _Refused,
    _Validator,
    validate_document,
)
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


# --- The column-by-column build of a sheet and the row-by-row one.

# Header cells: every field (some under another spelling), a nameless and an unread column.
_HEADERS = (
    "task_id",
    "name",
    "prompt",
    "Expected Answer",
    "expected_verifier",
    "criterion_id",
    "criterion",
    "weight",
    "verifier",
    "verifier_output_type",
    "verifier_instructions",
    "input_files",
    "",
    "notes",
)
# Cells that take every branch: blank, whitespace, formula-neutralised (one that reads back
# as whitespace), padded ids, repeats that conflict, numbers, and plain text.
_CELLS = st.sampled_from(
    ("", "", "", " ", "t1", "t1", "t2", " t2 ", "x", "y", "'=1", "'\t", "' x", "2", "0,5", "c1")
)


_TAME_CELLS = st.sampled_from(("", "", "x", "y", "2", "llm_judge", "'=1", " x "))
_IDS = st.sampled_from(("t1", "t1", "t2", " t2", "t3", ""))


@st.composite
def _tables(draw: st.DrawFn) -> Table:
    header = draw(st.lists(st.sampled_from(_HEADERS), min_size=1, max_size=8, unique=True))
    shape = draw(st.sampled_from(("exported", "wild", "tame")))
    if shape == "exported":
        # A writer's sheet (any dataset), with a few cells then changed to awkward ones.
        header, rows, _ = rows_from_spec(draw(dataset_specs()))
        for _ in range(draw(st.integers(0, 3))):
            if rows:
                row = rows[draw(st.integers(0, len(rows) - 1))]
                row[draw(st.integers(0, len(row) - 1))] = draw(_CELLS)
    elif shape == "wild":
        # Wild rows: any cell anywhere, rows shorter or longer than the header.
        width = len(header)
        rows = draw(
            st.lists(st.lists(_CELLS, min_size=max(0, width - 2), max_size=width + 1), max_size=8)
        )
    else:
        # Nearly the usual shape: a task_id first, tamer cells, rows as wide as the header.
        header = ["task_id", *[name for name in header if name != "task_id"]]
        if "prompt" not in header:
            header.append("prompt")
        body = st.lists(_TAME_CELLS, min_size=len(header) - 1, max_size=len(header) - 1)
        rows = draw(st.lists(st.tuples(_IDS, body), max_size=8))
        if draw(st.booleans()):
            # Grouped by task, criteria for every task (blank task_id) first.
            rows.sort(key=lambda row: row[0].strip())
        rows = [[task_id, *cells] for task_id, cells in rows]
    return Table(header=header, header_row=1, rows=[(n + 2, row) for n, row in enumerate(rows)])


def _every_path(document) -> list:
    paths = [("criteria", i) for i in range(len(document.get("criteria", [])))]
    for index, task in enumerate(document.get("tasks", [])):
        paths.append(("tasks", index, "id"))
        for key, value in task.items():
            paths.append(("tasks", index, key))
            if isinstance(value, list | dict):
                for inner in range(len(value)) if isinstance(value, list) else value:
                    paths.append(("tasks", index, key, inner, "weight"))
    return paths


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(table=_tables())
def test_building_by_columns_and_row_by_row_agree(table: Table):
    built = document_from_table(table, file_name="t.csv", dataset_name="t")
    reference = _Builder(table, file_name="t.csv", dataset_name="t")
    columns = reference.map_columns()
    document = reference.build_rows(columns) if columns is not None else None

    # repr, not ==: 2 == 2.0 and key order would slip through equality.
    assert repr(built.document) == repr(document)
    assert built.problems == reference.problems
    assert built.warnings == reference.warnings
    if document is not None:
        for path in _every_path(document):
            assert built.locate(path) == reference.locate(path)


def test_a_rubric_export_is_built_by_columns():
    header = ["task_id", "prompt", "criterion_id", "criterion", "weight", "verifier"]
    rows = [
        (2, ["t1", "Say hi", "c1", "Greets", "1", ""]),
        (3, ["t1", "", "c2", "Is polite", "0.5", "llm_judge"]),
        (4, ["t2", "Say bye", "", "Waves", "", ""]),
    ]
    table = Table(header=header, header_row=1, rows=rows)
    columns = _Builder(table, file_name="t.csv", dataset_name="t").map_columns()

    assert columns is not None
    assert _document_by_columns(table, columns, "t") == {
        "name": "t",
        "description": "",
        "settings": {},
        "criteria": [],
        "tasks": [
            {
                "id": "t1",
                "name": "Say hi",
                "prompt": "Say hi",
                "criteria": [
                    {"id": "c1", "criterion": "Greets", "weight": 1},
                    {
                        "id": "c2",
                        "criterion": "Is polite",
                        "weight": 0.5,
                        "verifier": {"kind": "llm_judge"},
                    },
                ],
            },
            {
                "id": "t2",
                "name": "Say bye",
                "prompt": "Say bye",
                "criteria": [{"id": "c1", "criterion": "Waves"}],
            },
        ],
    }


# --- Reader documents with values no reader writes: the fast path must hand them over.

_ODD_VALUES = st.sampled_from(
    [None, "", " ", "x", "c1", 0, 1, -1, 2.5, float("nan"), float("inf"), True, 10**400, "2"]
)
_ODD_VALUES |= st.sampled_from(["0,5", "-1", [], {}, ["a"]])


def _criterion_docs(value: st.SearchStrategy, verifier_kinds: tuple) -> st.SearchStrategy:
    verifiers = st.fixed_dictionaries(
        {},
        optional={
            "kind": st.sampled_from(verifier_kinds),
            "outputType": st.sampled_from(("float", "boolean", "int", None)),
            "instructions": st.sampled_from(("Judge {{output}}", "{{oops}}", " ", None)),
            "code": st.sampled_from(("def verify(task, output):\n    return 1\n", "x(")),
        },
    )
    return st.fixed_dictionaries(
        {"id": value, "criterion": value},
        optional={"weight": value, "verifier": verifiers},
    )


@st.composite
def _reader_documents(draw: st.DrawFn) -> ReaderDocument:
    if draw(st.booleans()):
        # Odd: any value anywhere, keys no reader writes.
        value = _ODD_VALUES
        kinds: tuple = ("llm_judge", "code_verifier", "nope", None, 3)
        criterion = _ODD_VALUES | _criterion_docs(value, kinds) | st.just({"note": "?"})
    else:
        # Nearly what a reader writes, so that the fast path often goes to the end.
        value = st.sampled_from(("c1", "c2", "c3", "x", "2", "0.5"))
        kinds = ("llm_judge", "exact_match", "code_verifier")
        criterion = _criterion_docs(value, kinds)
    task = st.fixed_dictionaries(
        {"id": st.sampled_from(("t1", "t2", "t3", " ")), "prompt": st.sampled_from(("p", "q"))},
        optional={
            "name": value,
            "expected": st.fixed_dictionaries({"text": value}),
            "criteria": st.lists(criterion, max_size=4),
            "inputFiles": st.lists(st.sampled_from(("https://a.b/c", "x.txt")), max_size=2),
        },
    )
    return ReaderDocument(
        name="t",
        description="",
        settings={},
        criteria=draw(st.lists(criterion, max_size=2)),
        tasks=draw(st.lists(task | _ODD_VALUES, min_size=1, max_size=4)),
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(document=_reader_documents(), enabled=st.booleans())
def test_fast_and_full_paths_agree_on_reader_documents_with_odd_values(document, enabled):
    fast, full = _both(
        document, lambda path: (None, None), field_path, CheckOptions(python_checks_enabled=enabled)
    )

    assert fast == full


def _criteria_read(read, *args):
    """What reading the criteria gives: the lists and the verifiers met, or "refused"."""
    verifiers: dict = {}
    try:
        lists = read(*args, verifiers)
    except _Refused:
        return "refused"
    # repr, not ==: 2 == 2.0 would slip through equality.
    return repr(lists), repr(verifiers)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(table=_tables())
def test_the_criteria_columns_a_builder_hands_over_read_as_the_criteria_dicts_do(table: Table):
    document = document_from_table(table, file_name="t.csv", dataset_name="t").document
    columns = getattr(document, "criteria_columns", None)
    if columns is None:
        return  # built row by row: the validator reads the dicts
    tasks = document["tasks"]
    lists = [document["criteria"], *(task["criteria"] for task in tasks if "criteria" in task)]

    assert columns.describes(lists)
    assert _criteria_read(_reader_criteria_from_columns, columns) == _criteria_read(
        _reader_criteria, lists
    )


def test_criteria_columns_no_longer_describing_the_document_are_not_used():
    header = ["task_id", "prompt", "criterion_id", "criterion", "weight"]
    rows = [["t1", "Say hi", "c1", "Says hi", "2"], ["t1", "", "c2", "Is kind", ""]]
    table = Table(header=header, header_row=1, rows=[(n + 2, row) for n, row in enumerate(rows)])
    document = document_from_table(table, file_name="t.csv", dataset_name="t").document
    assert document.criteria_columns is not None
    # A criterion added after the build, with a weight the validator refuses.
    document["tasks"][0]["criteria"].append({"id": "c3", "criterion": "x", "weight": -1})

    plan, problems, _ = validate_document(
        document, file_name="t.csv", locate=lambda path: (None, None), options=CheckOptions()
    )

    assert plan is None
    assert [problem.code for problem in problems] == ["bad_weight"]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(spec=dataset_specs())
def test_the_usual_tasks_are_built_as_task_by_task(spec):
    document = csv_format.read(csv_format.write(spec)[0], "t.csv").document
    verifiers: dict = {}
    data = _reader_data(document, 1_000, verifiers)
    validator = _Validator(_Findings(), CheckOptions(), None)
    validator.criteria_checked = _reader_criteria_checked(data, validator, verifiers.values())
    usual = validator.usual_tasks(data["tasks"])
    if usual is None:
        return  # not all usual: `task` looks at each
    reference = _Validator(_Findings(), CheckOptions(), None)
    reference.criteria_checked = True
    one_by_one = [
        reference.task(doc, index, bool(data["criteria"]), _DEFAULT_EXPECTED_ANSWER_VERIFIER)
        for index, doc in enumerate(data["tasks"])
    ]

    assert repr(usual) == repr(one_by_one)
    assert not reference.findings.count()
