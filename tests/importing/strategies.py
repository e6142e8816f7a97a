"""Hypothesis strategies for valid, already-normalised dataset plans (`DatasetSpec`).

A generated spec is what the checker would hand back for a good file: unique task ids,
unique criterion ids within each task and among the criteria for every task, positive
weights, verifiers the checker accepts, and a "Matches the expected answer" criterion on
every task that has both an expected answer and criteria (its own or the file's). So any
writer can be tested with `write(spec)` -> check -> the same spec.

Files are https:// links unless `with_paths=True`; then some are zip paths with a size, and
`zip_members_for(spec)` gives the {path: size} map to check them against.
"""

from __future__ import annotations

import zlib
from typing import Any

from hypothesis import strategies as st

from datasets_app.importing.columns import METADATA_COLUMNS
from datasets_app.importing.spec import (
    DEFAULT_EXPECTED_ANSWER_VERIFIER,
    EXPECTED_ANSWER_CRITERION_ID,
    MAX_ATTACHED_FILE_BYTES,
    MAX_FILES_PER_KIND,
    CriterionSpec,
    DatasetSpec,
    FileSpec,
    TaskSpec,
    Verifier,
    expected_answer_criterion,
)

# Text a person could type: no NUL (databases refuse it) and no lone surrogates (not UTF-8).
_ALPHABET = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
text = st.text(_ALPHABET, max_size=40)
non_blank_text = text.filter(lambda value: value.strip() != "")
identifiers = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True).filter(
    lambda value: value != EXPECTED_ANSWER_CRITERION_ID
)

VALID_CODE = (
    "from context_verifiers import Verdict\n\n"
    "def verify(task, output):\n"
    "    return Verdict.boolean(passed=bool(output.text), reasoning='non-empty')\n"
)


@st.composite
def verifiers(draw: st.DrawFn) -> Verifier:
    """Any verifier the checker accepts."""
    kind = draw(st.sampled_from(["exact_match", "llm_judge", "agent_judge", "code_verifier"]))
    output_type = draw(st.none() | st.sampled_from(["float", "boolean"]))
    instructions = None
    code = None
    if kind in ("llm_judge", "agent_judge"):
        # Whitespace-only instructions read back as none from a spreadsheet cell.
        words = draw(st.none() | non_blank_text.filter(lambda value: "{{" not in value))
        if words is not None:
            placeholder = draw(st.sampled_from(["", " {{criterion}}", " {{output}}"]))
            instructions = words + placeholder
    if kind == "code_verifier":
        code = VALID_CODE
    return Verifier(kind=kind, output_type=output_type, instructions=instructions, code=code)


weights = st.one_of(
    st.integers(min_value=1, max_value=1000).map(float),
    st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False),
)


def criterion_specs(criterion_id: str) -> st.SearchStrategy[CriterionSpec]:
    return st.builds(
        CriterionSpec,
        id=st.just(criterion_id),
        criterion=non_blank_text,
        weight=weights,
        verifier=st.none() | verifiers(),
    )


@st.composite
def criteria_lists(draw: st.DrawFn, *, max_size: int = 3) -> tuple[CriterionSpec, ...]:
    ids = draw(st.lists(identifiers, max_size=max_size, unique=True))
    return tuple(draw(criterion_specs(criterion_id)) for criterion_id in ids)


@st.composite
def file_specs(draw: st.DrawFn, *, with_paths: bool) -> FileSpec:
    name = draw(st.from_regex(r"[a-z0-9_]{1,12}\.(pdf|csv|txt|png)", fullmatch=True))
    if with_paths and draw(st.booleans()):
        folder = draw(st.sampled_from(["", "inputs/", "expected/", "a b/"]))
        path = f"{folder}{name}"
        # One size per path, as a zip would have, however often the path is drawn.
        return FileSpec(
            name=name, path=path, size=zlib.crc32(path.encode()) % MAX_ATTACHED_FILE_BYTES
        )
    host = draw(st.sampled_from(["example.com", "files.example.org"]))
    return FileSpec(name=name, url=f"https://{host}/{draw(identifiers)}/{name}")


json_scalars = st.none() | st.booleans() | st.integers(-(10**9), 10**9) | text
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(identifiers, children, max_size=3)
    ),
    max_leaves=6,
)
evidence = st.dictionaries(identifiers, json_values, max_size=3)
# A task's metadata: keys as people write them (the usual ones, and any text without spaces
# at either end), values any JSON, text that spells JSON ("3", "true") included.
# Built printable rather than filtered: three in four drawn texts hold a character that
# is not (unassigned, format, control), and filtering that much fails Hypothesis's health check.
_PRINTABLE = st.characters(
    exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"), include_characters=" "
)
metadata_keys = st.sampled_from(METADATA_COLUMNS) | (
    st.text(_PRINTABLE, min_size=1, max_size=20).map(str.strip).filter(bool)
)
metadata = st.dictionaries(
    metadata_keys, json_values | st.sampled_from(["3", "true", "null", '"x"', " ", ""]), max_size=3
)


@st.composite
def task_specs(
    draw: st.DrawFn,
    task_id: str,
    *,
    file_criteria: bool,
    expected_answer_verifier: Verifier,
    with_paths: bool,
) -> TaskSpec:
    """One task as the checker plans it, given what the file around it says."""
    criteria = draw(criteria_lists())
    has_expected = draw(st.booleans()) or not (criteria or file_criteria)
    expected_text = draw(non_blank_text) if has_expected else None
    expected_verifier = draw(st.none() | verifiers()) if has_expected else None
    if has_expected and (criteria or file_criteria):
        # Lands as a rubric: the expected answer becomes one of its criteria.
        criteria = (
            expected_answer_criterion(expected_verifier or expected_answer_verifier),
            *criteria,
        )
    files = st.lists(file_specs(with_paths=with_paths), max_size=MAX_FILES_PER_KIND // 4)
    return TaskSpec(
        id=task_id,
        name=draw(non_blank_text),
        prompt=draw(non_blank_text),
        expected_text=expected_text,
        expected_verifier=expected_verifier,
        criteria=criteria,
        input_files=tuple(draw(files)),
        expected_files=tuple(draw(files)),
        evidence=draw(evidence),
        metadata=draw(metadata),
    )


@st.composite
def dataset_specs(draw: st.DrawFn, *, with_paths: bool = False, max_tasks: int = 4) -> DatasetSpec:
    """A valid dataset plan with 1..max_tasks tasks."""
    settings: dict[str, Any] = {}
    for key in ("expectedAnswerVerifier", "defaultVerifier"):
        verifier = draw(st.none() | verifiers())
        if verifier is not None:
            settings[key] = verifier.to_json()
    expected_answer_verifier = Verifier.from_json(
        settings.get("expectedAnswerVerifier", DEFAULT_EXPECTED_ANSWER_VERIFIER)
    )
    assert expected_answer_verifier is not None
    file_criteria = draw(criteria_lists(max_size=2))
    task_ids = draw(st.lists(identifiers, min_size=1, max_size=max_tasks, unique=True))
    tasks = tuple(
        draw(
            task_specs(
                task_id,
                file_criteria=bool(file_criteria),
                expected_answer_verifier=expected_answer_verifier,
                with_paths=with_paths,
            )
        )
        for task_id in task_ids
    )
    return DatasetSpec(
        name=draw(text),
        description=draw(text),
        settings=settings,
        criteria=file_criteria,
        tasks=tasks,
    )


def zip_members_for(spec: DatasetSpec) -> dict[str, int]:
    """The {path: size} a zip holding every attached file of `spec` would have."""
    members: dict[str, int] = {}
    for task in spec.tasks:
        for attached in (*task.input_files, *task.expected_files):
            if attached.path is not None:
                members[attached.path] = attached.size or 0
    return members
