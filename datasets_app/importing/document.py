"""The one validator every format shares: a canonical dataset document in, a plan or problems out.

Every reader (JSON, JSONL, CSV, XLSX, the zip's) turns its bytes into the .json format's
document and hands it here. Pydantic-core checks structure, types and every rule about one
value (non-blank text, positive finite weights, verifier kinds and output types, list
lengths) in one pass and reports every error; the rules across values the page states
(unique ids, something to grade each task, the expected-answer criterion, verifiers'
instructions and code, files and limits) are checked after, as the plan (`DatasetSpec`)
is built.

Decisions the page leaves open:
- A task without an id gets `task-<position>` (1-based), a criterion without one
  `criterion-<position>` within its list; a task without a name is named by its id.
- A key the format does not know is a warning (it is ignored), never a problem.
- `expected` may be a bare string (the expected text) and a file a bare string (a zip path,
  or a link when it has a scheme); a weight may be a numeric string, blank or null = 1.
- A task with an expected answer and any criteria (its own or the file's for every task)
  lands as a rubric: "Matches the expected answer" goes first among its own criteria,
  unless it already has a criterion with that id (so an export imports back unchanged).
- `field` of a problem is the value's path in the document, e.g. `tasks[3].criteria[0].weight`
  (a reader may pass its own `field_label`, e.g. a CSV column name).
- A task's criteria and the criteria for every task are unique within their own list; a
  task may reuse an id of a criterion for every task.
- Tasks, criteria and verifiers validate straight into `TaskSpec`, `CriterionSpec` and
  `Verifier` (in pydantic-core), and each list's length is checked before its items, so
  hostile input costs one error, not millions (at most `MAX_PROBLEMS` are reported, then a
  count).
"""

from __future__ import annotations

import ast
import functools
import json
import math
import posixpath
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from itertools import chain
from operator import attrgetter
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import (
    ConfigDict,
    Field,
    GetPydanticSchema,
    TypeAdapter,
    ValidationError,
)
from pydantic import with_config as pydantic_with_config
from pydantic_core import ErrorDetails, SchemaValidator
from pydantic_core import core_schema as cs
from typing_extensions import TypedDict

from datasets_app.importing.spec import (
    DEFAULT_EXPECTED_ANSWER_VERIFIER,
    LLM_JUDGE_PLACEHOLDERS,
    MAX_ATTACHED_FILE_BYTES,
    MAX_CRITERIA_PER_FILE,
    MAX_CRITERIA_PER_LIST,
    MAX_FILE_NAME_BYTES,
    MAX_FILES_PER_KIND,
    MAX_ID_CHARS,
    MAX_METADATA_KEY_CHARS,
    MAX_METADATA_KEYS,
    MAX_PROBLEMS,
    MAX_TASK_NAME_CHARS,
    MAX_TEXT_CHARS,
    MAX_TEXT_CHARS_PER_FILE,
    MAX_URL_CHARS,
    OUTPUT_TYPES,
    PLACEHOLDER_PATTERN,
    VERIFIER_KINDS,
    CheckOptions,
    CheckResult,
    CriterionSpec,
    DatasetSpec,
    DocPath,
    FileSpec,
    Locate,
    Parsed,
    Problem,
    Rule,
    TaskSpec,
    Verifier,
    counted,
    expected_answer_criterion,
    field_path,
    file_size,
    lands_as_rubric,
    name_from_prompt,
    path_parts,
    shorten,
    trimmed_id,
)

ExtraBehavior = Literal["forbid", "ignore"]

FORMAT_NAME = "context-evals-dataset"
FORMAT_VERSION = 1

# --- What a person reads. Every problem and warning the validator reports is one of these.

NOT_AN_OBJECT = Rule(
    "not_an_object",
    "The file must hold one JSON object with the dataset's settings, criteria and tasks.",
)
WRONG_TYPE = Rule("wrong_type", "{label} has the wrong type: {detail}.")
NOT_TEXT = Rule("not_text", "{label} must be text.")
NOT_A_LIST = Rule("not_a_list", "{label} must be a list.")
NOT_AN_OBJECT_FIELD = Rule("not_an_object_field", "{label} must be an object ({{...}}).")
NOT_TEXT_OR_OBJECT = Rule("not_text_or_object", "{label} must be text or an object ({{...}}).")
NOT_A_WHOLE_NUMBER = Rule("not_a_whole_number", "{label} must be a whole number.")
BAD_ID = Rule("bad_id", "An id must be text or a whole number.")
BAD_WEIGHT = Rule(
    "bad_weight",
    "A weight must be a positive number (blank counts as 1); {value} is not.",
)
UNKNOWN_VERIFIER_KIND = Rule(
    "unknown_verifier_kind",
    "Unknown verifier kind {value}: use exact_match, llm_judge, agent_judge or code_verifier.",
)
UNKNOWN_OUTPUT_TYPE = Rule(
    "unknown_output_type", "Unknown outputType {value}: use float or boolean."
)
NOT_A_DATASET_FILE = Rule(
    "not_a_dataset_file",
    f'This is not a Context Evals dataset file: "format" is {{value}}, expected "{FORMAT_NAME}".',
)
UNSUPPORTED_VERSION = Rule(
    "unsupported_version",
    f"Version {{value}} of the dataset format is not supported: this checker reads version "
    f"{FORMAT_VERSION}.",
)
NO_TASKS = Rule("no_tasks", "The file has no tasks. Add at least one task to import.")
TOO_MANY_TASKS = Rule(
    "too_many_tasks", "The file has {count} tasks; one file can hold up to {limit}."
)
MISSING_PROMPT = Rule("missing_prompt", "Task {task} has no prompt.")
NOTHING_TO_GRADE = Rule(
    "nothing_to_grade",
    "Task {task} has no expected answer and no criteria, so nothing could grade it. Give it "
    "an expected answer, criteria, or both.",
)
MISSING_EXPECTED_TEXT = Rule(
    "missing_expected_text", "Task {task} has an expected answer with no text."
)
MISSING_CRITERION_TEXT = Rule("missing_criterion_text", "Criterion {criterion} has no text.")
DUPLICATE_TASK_ID = Rule(
    "duplicate_task_id",
    "Task id {task} is already used by task {first} of the file. Each task needs its own id.",
)
TASKS_NUMBERED = Rule(
    "tasks_numbered",
    "The tasks are numbered {first} to {last}, as you asked: {replaced} of the file were "
    "replaced, {repeated} of them a repeat of an id above it.",
)
DUPLICATE_CRITERION_ID = Rule(
    "duplicate_criterion_id",
    "Criterion id {criterion} is used twice in {where}. Each criterion there needs its own id.",
)
MISSING_VERIFIER_KIND = Rule(
    "missing_verifier_kind",
    "This verifier has no kind: use exact_match, llm_judge, agent_judge or code_verifier.",
)
UNKNOWN_PLACEHOLDER = Rule(
    "unknown_placeholder",
    "The instructions use {placeholder}; an llm_judge can only use {{{{criterion}}}}, "
    "{{{{prompt}}}}, {{{{output}}}} and {{{{expected}}}}.",
)
MISSING_CODE = Rule("missing_code", "This code_verifier has no code.")
CODE_SYNTAX_ERROR = Rule(
    "code_syntax_error", "The code does not parse (line {code_line} of the code): {detail}."
)
CODE_MISSING_VERIFY = Rule(
    "code_missing_verify",
    "The code must define verify(task, output), a function with exactly those two parameters.",
)
TOO_MANY_FILES = Rule(
    "too_many_files", "This task has {count} {kind}; a task can have up to {limit}."
)
TOO_MANY_CRITERIA = Rule(
    "too_many_criteria", "This list has {count} criteria; a list can have up to {limit}."
)
FILE_NEEDS_ZIP = Rule(
    "file_needs_zip",
    "{path} is a path, but a .csv, .json or .jsonl on its own can only link files "
    "(https://...). Put the file and this one in a .zip to attach it.",
)
FILE_NOT_IN_ZIP = Rule("file_not_in_zip", "{path} is not in the zip.")
FILE_TOO_LARGE = Rule(
    "file_too_large",
    "{path} is larger than 10 MiB ({size}), the most an attached file can be.",
)
LINK_NOT_HTTPS = Rule(
    "link_not_https", "{url} is not an https:// link. Files link only over https."
)
FILE_PATH_AND_URL = Rule("file_path_and_url", "A file has both a path and a url; give one of them.")
FILE_NO_LOCATION = Rule(
    "file_no_location", "A file needs a path (inside the zip) or a url (https://...)."
)
TEXT_TOO_LONG = Rule(
    "text_too_long", "{label} is {count:,} characters long; the most it can be is {limit:,}."
)
TOO_MUCH_TEXT = Rule(
    "too_much_text",
    "The file holds {count:,} characters of text in all; the most one file can import is "
    "{limit:,}. Split it into several files.",
)
TOO_MANY_CRITERIA_IN_FILE = Rule(
    "too_many_criteria_in_file",
    "The file has {count:,} criteria in all; the most one file can import is {limit:,}. "
    "Split it into several files.",
)
BAD_FILE_NAME = Rule(
    "bad_file_name",
    "{name} cannot be a file's name: {reason}. Give the file a plain name, like report.pdf.",
)
TOO_MANY_PROBLEMS = Rule(
    "too_many_problems", "…and {count} more problems not listed. Fix these and check again."
)

BAD_METADATA_KEY = Rule(
    "bad_metadata_key",
    "Task {task} has a metadata key {key}: a key is one line of 1 to {limit} characters, "
    "not blank, without spaces at either end.",
)
TOO_MANY_METADATA_KEYS = Rule(
    "too_many_metadata_keys",
    "Task {task} has {count} metadata keys; a task can have {limit} at most.",
)
NON_FINITE_METADATA = Rule(
    "non_finite_metadata",
    "The metadata of task {task} holds NaN or Infinity, which are not JSON numbers.",
)
NON_FINITE_EVIDENCE = Rule(
    "non_finite_evidence",
    "The evidence of task {task} holds NaN or Infinity, which are not JSON numbers.",
)

# Warnings: worth knowing, but the file still imports.
UNKNOWN_FIELD = Rule(
    "unknown_field", "{label} is not part of the dataset format; it will be ignored."
)
DUPLICATE_PROMPT = Rule("duplicate_prompt", "Task {task} has the same prompt as task {first}.")
PYTHON_CHECKS_OFF = Rule(
    "python_checks_off",
    "{subject} is a Python check (code_verifier): it will not be graded until an "
    "administrator turns Python checks on.",
)

# --- Structure, types and the rules about one value, checked by pydantic-core in one pass.
#
# Settings, expected answers written as objects and files validate into plain dicts
# (TypedDicts); tasks, criteria and verifiers, the bulk of a large file, validate straight
# into the plan's `TaskSpec`, `CriterionSpec` and `Verifier` in pydantic-core, so the valid
# path builds no intermediate copy of them in Python (a task is only finished, in place,
# by `_Validator.task`).


def _weight_from_other(value: Any) -> float:
    """A weight given as blank, null or text; numbers take the fast path before this."""
    if value is None:
        return 1.0
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 1.0
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if math.isfinite(number) and number > 0:
            return number
    raise ValueError("not a positive number")


def _optional(schema: cs.CoreSchema, default: Any = None) -> cs.CoreSchema:
    return cs.with_default_schema(cs.nullable_schema(schema), default=default)


# Text a person must give (a prompt, a criterion, an expected answer) holds at least one
# character that is not white space: `\s` is Unicode's White_Space, and Python's
# `str.isspace` also counts the four separators \x1c-\x1f.
# Every text field is capped at MAX_TEXT_CHARS (see spec for why).
_NON_BLANK_TEXT = cs.str_schema(pattern=r"[^\s\x1c-\x1f]", max_length=MAX_TEXT_CHARS)
# An id is text; a whole number (not true/false) is read as its digits. Either way it is
# trimmed (spec.trimmed_id: every file format and the task form alike) and fits the
# database's id columns.
_ID = _optional(
    cs.chain_schema(
        [
            cs.custom_error_schema(
                cs.union_schema(
                    [
                        cs.str_schema(),
                        cs.no_info_after_validator_function(str, cs.int_schema(strict=True)),
                    ],
                    mode="left_to_right",
                ),
                custom_error_type="bad_id",
                custom_error_message="An id must be text or a whole number",
            ),
            cs.no_info_plain_validator_function(trimmed_id),
            cs.str_schema(max_length=MAX_ID_CHARS),
        ]
    )
)
# Strict numbers first (bools are not numbers); blank, null and numeric text after.
_WEIGHT = cs.with_default_schema(
    cs.custom_error_schema(
        cs.union_schema(
            [
                cs.float_schema(strict=True, gt=0, allow_inf_nan=False),
                cs.no_info_plain_validator_function(_weight_from_other),
            ],
            # The first that accepts wins: a number never reaches the Python function.
            mode="left_to_right",
        ),
        custom_error_type="bad_weight",
        custom_error_message="A weight must be a positive number",
    ),
    default=1.0,
)
_TEXT = _optional(cs.str_schema(max_length=MAX_TEXT_CHARS))


def _verifier_schema(extra: ExtraBehavior) -> cs.CoreSchema:
    fields = [
        cs.dataclass_field("kind", _optional(cs.literal_schema(list(VERIFIER_KINDS)))),
        cs.dataclass_field(
            "output_type",
            _optional(cs.literal_schema(list(OUTPUT_TYPES))),
            validation_alias="outputType",
        ),
        cs.dataclass_field("instructions", _TEXT),
        cs.dataclass_field("code", _TEXT),
    ]
    return _optional(
        cs.dataclass_schema(
            Verifier,
            cs.dataclass_args_schema("Verifier", fields, extra_behavior=extra),
            [field.name for field in dataclass_fields(Verifier)],
            frozen=True,
            slots=True,
        )
    )


@functools.cache
def _verifier_validator() -> SchemaValidator:
    return SchemaValidator(_verifier_schema("ignore"))


def schema_verifier(value: dict[str, Any]) -> Verifier | dict[str, Any]:
    """A verifier as the document's schema reads it, for a reader whose rows repeat the same
    verifier cells (a spreadsheet's): validated once, the rows share one `Verifier`, which the
    schema then takes as it is. One the schema refuses stays as written, so that it is
    reported on every row that holds it, in that row's place."""
    try:
        validated: Verifier | None = _verifier_validator().validate_python(value)
    except ValidationError:
        return value
    return value if validated is None else validated


def _criteria_schema(extra: ExtraBehavior, default: Any = None) -> cs.CoreSchema:
    fields = [
        cs.dataclass_field("id", _ID),
        cs.dataclass_field("criterion", _NON_BLANK_TEXT),
        cs.dataclass_field("weight", _WEIGHT),
        cs.dataclass_field("verifier", _verifier_schema(extra)),
    ]
    criterion = cs.dataclass_schema(
        CriterionSpec,
        cs.dataclass_args_schema("CriterionSpec", fields, extra_behavior=extra),
        [field.name for field in dataclass_fields(CriterionSpec)],
        frozen=True,
        slots=True,
    )
    # A tuple, as the plan holds it (a list's length is checked before its items; a tuple's
    # is not, so the list is made a tuple after).
    criteria = cs.list_schema(criterion, max_length=MAX_CRITERIA_PER_LIST)
    return _optional(cs.no_info_after_validator_function(tuple, criteria), default)


def _file_shorthand(value: Any) -> Any:
    if isinstance(value, str):
        return {"url": value} if "://" in value else {"path": value}
    return value


# The two ways `expected` may be written, as pydantic's errors name them (the error
# mapping below reads these names in an error's location).
_EXPECTED_AS_OBJECT = "ExpectedDoc"
_EXPECTED_AS_TEXT = frozenset({"str", "constrained-str"})


def _task_schema(extra: ExtraBehavior) -> cs.CoreSchema:
    """A task, validated straight into the plan's `TaskSpec` (keys as the file writes them).

    What only the whole file can say is left for `_Validator.task` to finish, as the file
    wrote it: an id or name not given (None), `expected` as written (None, its text, or
    {"text", "verifier"} in `expected_text`; `expected_verifier` is None), files given as
    lists (or null as None; absent, they are () already), evidence null as None. Criteria
    come as the plan's tuple already.
    """
    expected = cs.union_schema(
        [
            (
                cs.typed_dict_schema(
                    {
                        # Missing or null text is the rules' to report.
                        "text": cs.typed_dict_field(
                            cs.nullable_schema(_NON_BLANK_TEXT), required=False
                        ),
                        "verifier": cs.typed_dict_field(_verifier_schema(extra), required=False),
                    },
                    extra_behavior=extra,
                ),
                _EXPECTED_AS_OBJECT,
            ),
            # A bare string is the expected text.
            (_NON_BLANK_TEXT, "constrained-str"),
        ]
    )
    attached = cs.no_info_before_validator_function(
        _file_shorthand,
        cs.typed_dict_schema(
            {
                "path": cs.typed_dict_field(cs.nullable_schema(cs.str_schema()), required=False),
                "url": cs.typed_dict_field(
                    cs.nullable_schema(cs.str_schema(max_length=MAX_URL_CHARS)), required=False
                ),
                # Checked by the rules (`file`), which also check names made from a path or url.
                "name": cs.typed_dict_field(cs.nullable_schema(cs.str_schema()), required=False),
            },
            extra_behavior=extra,
        ),
    )
    files = _optional(cs.list_schema(attached, max_length=MAX_FILES_PER_KIND), default=())
    fields = [
        cs.dataclass_field("id", _ID),
        cs.dataclass_field("name", _optional(cs.str_schema(max_length=MAX_TASK_NAME_CHARS))),
        cs.dataclass_field("prompt", _NON_BLANK_TEXT),
        cs.dataclass_field("expected_text", _optional(expected), validation_alias="expected"),
        # Not a key of the file: filled from `expected` by the rules.
        cs.dataclass_field(
            "expected_verifier", cs.with_default_schema(cs.none_schema(), default=None), init=False
        ),
        cs.dataclass_field("criteria", _criteria_schema(extra, default=())),
        cs.dataclass_field("input_files", files, validation_alias="inputFiles"),
        cs.dataclass_field("expected_files", files, validation_alias="expectedFiles"),
        cs.dataclass_field(
            "evidence",
            cs.with_default_schema(
                cs.nullable_schema(cs.dict_schema(cs.str_schema(), cs.any_schema())),
                default_factory=dict,
            ),
        ),
        cs.dataclass_field(
            "metadata",
            cs.with_default_schema(
                cs.nullable_schema(cs.dict_schema(cs.str_schema(), cs.any_schema())),
                default_factory=dict,
            ),
        ),
    ]
    return cs.dataclass_schema(
        TaskSpec,
        cs.dataclass_args_schema("TaskSpec", fields, extra_behavior=extra),
        [field.name for field in dataclass_fields(TaskSpec)],
        frozen=True,
        slots=True,
    )


@functools.lru_cache(maxsize=8)
def _models(extra: ExtraBehavior, max_tasks: int) -> TypeAdapter[Any]:
    """The document's shape; `forbid` reports unknown keys (as warnings), `ignore` drops them.

    Every list has a maximum length, which pydantic checks before it looks at the items,
    so that a hostile list of millions of wrong values is one error, not millions.
    """
    config = ConfigDict(extra=extra)
    verifier = GetPydanticSchema(lambda source, handler: _verifier_schema(extra))
    criteria = GetPydanticSchema(lambda source, handler: _criteria_schema(extra))
    tasks = GetPydanticSchema(
        lambda source, handler: cs.nullable_schema(
            cs.list_schema(_task_schema(extra), max_length=max_tasks)
        )
    )

    @pydantic_with_config(config)
    class SettingsDoc(TypedDict, total=False):
        expectedAnswerVerifier: Annotated[Verifier | None, verifier]
        defaultVerifier: Annotated[Verifier | None, verifier]

    @pydantic_with_config(config)
    class DatasetDoc(TypedDict, total=False):
        format: str | None
        version: int | None
        name: str | None
        description: Annotated[str, Field(max_length=MAX_TEXT_CHARS)] | None
        settings: SettingsDoc | None
        criteria: Annotated[tuple[CriterionSpec, ...] | None, criteria]
        tasks: Annotated[list[TaskSpec] | None, tasks]

    return TypeAdapter(DatasetDoc)


# The keys each object of the format knows; others are warned about (see `_unknown_keys`).
_VERIFIER_KEYS = frozenset({"kind", "outputType", "instructions", "code"})
_CRITERION_KEYS = frozenset({"id", "criterion", "weight", "verifier"})
_EXPECTED_KEYS = frozenset({"text", "verifier"})
_FILE_KEYS = frozenset({"path", "url", "name"})
# The keys a task of the format knows (its `metadata` object is our extension).
TASK_KEYS = frozenset(
    {
        "id",
        "name",
        "prompt",
        "expected",
        "criteria",
        "inputFiles",
        "expectedFiles",
        "evidence",
        "metadata",
    }
)
_SETTINGS_KEYS = frozenset({"expectedAnswerVerifier", "defaultVerifier"})
_DATASET_KEYS = frozenset(
    {"format", "version", "name", "description", "settings", "criteria", "tasks"}
)


def _dicts(values: Any) -> list[dict[str, Any]]:
    return (
        [value for value in values if isinstance(value, dict)] if isinstance(values, list) else []
    )


def _unknown_keys(
    document: dict[str, Any], findings: _Findings, label: Callable[[DocPath], str]
) -> None:
    """Warn about every key the format does not know.

    Pydantic could report them (extra="forbid"), but an object with millions of keys
    would then be millions of errors held at once; here the warnings stop at the cap.
    """
    walk = _UnknownKeys(findings, label)
    walk.keys(document, _DATASET_KEYS, ())
    settings = document.get("settings")
    if isinstance(settings, dict) and walk.keys(settings, _SETTINGS_KEYS, ("settings",)):
        for key in _SETTINGS_KEYS:
            walk.verifier(settings.get(key), ("settings", key))
    walk.criteria(document.get("criteria"), ("criteria",))
    tasks = document.get("tasks")
    if not isinstance(tasks, list) or _all_keys_known(_dicts(tasks)):
        return
    for index, task in enumerate(tasks):
        walk.task(task, ("tasks", index))


class _UnknownKeys:
    """The walk of `_unknown_keys`, object by object."""

    def __init__(self, findings: _Findings, label: Callable[[DocPath], str]) -> None:
        self.findings = findings
        self.label = label

    def keys(self, value: Any, known: frozenset[str], path: DocPath) -> bool:
        """Warn about `value`'s unknown keys; False when it is not an object at all."""
        if not isinstance(value, dict):
            return False
        for key in value.keys() - known:
            self.findings.warning(
                UNKNOWN_FIELD, (*path, key), label=_label((*path, key), self.label)
            )
        return True

    def verifier(self, value: Any, path: DocPath) -> None:
        self.keys(value, _VERIFIER_KEYS, path)

    def criteria(self, value: Any, path: DocPath) -> None:
        for index, item in enumerate(value if isinstance(value, list) else ()):
            if self.keys(item, _CRITERION_KEYS, (*path, index)):
                self.verifier(item.get("verifier"), (*path, index, "verifier"))

    def task(self, task: Any, path: DocPath) -> None:
        if not self.keys(task, TASK_KEYS, path):
            return
        expected = task.get("expected")
        if self.keys(expected, _EXPECTED_KEYS, (*path, "expected")):
            self.verifier(expected.get("verifier"), (*path, "expected", "verifier"))
        self.criteria(task.get("criteria"), (*path, "criteria"))
        for kind in ("inputFiles", "expectedFiles"):
            files = task.get(kind)
            for number, item in enumerate(files if isinstance(files, list) else ()):
                self.keys(item, _FILE_KEYS, (*path, kind, number))


def _all_keys_known(tasks: list[dict[str, Any]]) -> bool:
    """Whether the tasks and every object in them hold only keys the format knows.

    Each kind of object is looked at all at once (the union of their keys), so that the
    usual file, which has no unknown key, is not walked object by object.
    """
    expected = _dicts([task.get("expected") for task in tasks])
    criteria = [item for task in tasks for item in _dicts(task.get("criteria"))]
    files = [
        item
        for task in tasks
        for kind in ("inputFiles", "expectedFiles")
        for item in _dicts(task.get(kind))
    ]
    verifiers = _dicts([item.get("verifier") for item in chain(expected, criteria)])
    return all(
        known.issuperset(chain.from_iterable(values))
        for values, known in (
            (tasks, TASK_KEYS),
            (expected, _EXPECTED_KEYS),
            (criteria, _CRITERION_KEYS),
            (files, _FILE_KEYS),
            (verifiers, _VERIFIER_KEYS),
        )
    )


# pydantic error type -> our rule, for errors that need no more than the field's name.
_TYPE_RULES: dict[str, Rule] = {
    "string_type": NOT_TEXT,
    "list_type": NOT_A_LIST,
    "dict_type": NOT_AN_OBJECT_FIELD,
    "dataclass_type": NOT_AN_OBJECT_FIELD,
    "text_or_object": NOT_TEXT_OR_OBJECT,
    "int_type": NOT_A_WHOLE_NUMBER,
    "int_parsing": NOT_A_WHOLE_NUMBER,
    "int_from_float": NOT_A_WHOLE_NUMBER,
    "bad_id": BAD_ID,
}


def link_problem(url: str) -> str | None:
    """Why a task may not link to `url` (the one rule for links, the file's and the
    admin's: https, with a host), or None."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "https" or not parts.netloc:
        return LINK_NOT_HTTPS.format(url=_shown(url))
    return None


def _shown(value: Any) -> str:
    """A value from the file, quoted for a message and cut short if long."""
    if not isinstance(value, str):
        return shorten(value, 60, one_line=False)
    # Cut inside the quotes, so that a long path still reads as one quoted value.
    return f'"{shorten(value, 58, one_line=False)}"'


def _label(path: DocPath, field_label: Callable[[DocPath], str]) -> str:
    """How a message names a value: by its key ("prompt") or its column. The problem's
    location says which task, criterion or row it is in, counted from 1."""
    label = field_label(path)
    parts = path_parts(label) if label else None
    if parts is None:
        return label or "The file"
    if isinstance(parts[-1], int):
        return "This item"
    return f'"{parts[-1]}"'


# --- Collecting problems before knowing where they are.


@dataclass
class _Finding:
    rule: Rule
    path: DocPath
    params: dict[str, Any]
    # A missing value is located where the object that should hold it starts.
    missing: bool


def _in_document_order(finding: _Finding) -> tuple[int, int]:
    """Problems about the whole file first, then task by task (stable within a task)."""
    path = finding.path
    if len(path) >= 2 and path[0] == "tasks" and isinstance(path[1], int):
        return (1, path[1])
    return (0, 0)


class _Findings:
    """Problems and warnings as paths; `resolve` turns them into located `Problem`s."""

    def __init__(self) -> None:
        self.problems: list[_Finding] = []
        self.warnings: list[_Finding] = []
        self.dropped_problems = 0
        self.dropped_warnings = 0

    def problem(
        self, rule: Rule, path: DocPath, /, *, missing: bool = False, **params: Any
    ) -> None:
        if len(self.problems) >= MAX_PROBLEMS:
            self.dropped_problems += 1
            return
        self.problems.append(_Finding(rule, path, params, missing))

    def warning(
        self, rule: Rule, path: DocPath, /, *, missing: bool = False, **params: Any
    ) -> None:
        if len(self.warnings) >= MAX_PROBLEMS:
            self.dropped_warnings += 1
            return
        self.warnings.append(_Finding(rule, path, params, missing))

    def count(self) -> int:
        """How many problems and warnings have been found so far, dropped ones included."""
        return (
            len(self.problems) + len(self.warnings) + self.dropped_problems + self.dropped_warnings
        )

    def resolve(
        self,
        file_name: str,
        locate: Locate,
        field_label: Callable[[DocPath], str],
        given_id: Callable[[int], Any] | None = None,
    ) -> tuple[list[Problem], list[Problem]]:
        """Located problems and warnings; `given_id(index)` (the id a task of the file is
        given, as written, or None) names the task each one is in, so that a screen can
        say "task 2 (id b)"."""
        findings = self.problems + self.warnings
        if not findings:
            return [], []
        wanted = {_where(finding) for finding in findings}
        many = getattr(locate, "many", None)
        places = many(wanted) if many is not None else {path: locate(path) for path in wanted}

        def located(finding: _Finding) -> Problem:
            row, line = places.get(_where(finding), (None, None))
            problem = finding.rule.at(
                file_name,
                row=row,
                line=line,
                field=field_label(finding.path) or None,
                **finding.params,
            )
            task = _task_id_at(given_id, finding.path)
            return problem if task is None else replace(problem, task=task)

        problems = [located(finding) for finding in sorted(self.problems, key=_in_document_order)]
        if self.dropped_problems:
            problems.append(TOO_MANY_PROBLEMS.at(file_name, count=self.dropped_problems))
        warnings = [located(finding) for finding in sorted(self.warnings, key=_in_document_order)]
        if self.dropped_warnings:
            warnings.append(TOO_MANY_PROBLEMS.at(file_name, count=self.dropped_warnings))
        return problems, warnings


def _where(finding: _Finding) -> DocPath:
    return finding.path[:-1] if finding.missing else finding.path


def _task_id_at(given_id: Callable[[int], Any] | None, path: DocPath) -> str | None:
    """The id the file gives the task a path is in, if it gives one."""
    if given_id is None or len(path) < 2 or path[0] != "tasks" or not isinstance(path[1], int):
        return None
    task_id = given_id(path[1])
    if isinstance(task_id, bool) or not isinstance(task_id, str | int):
        return None
    return str(task_id)


def _id_in_document(tasks: Any) -> Callable[[int], Any]:
    """`Findings.resolve`'s `given_id` for a document's list of tasks."""

    def given_id(index: int) -> Any:
        if not isinstance(tasks, list) or not 0 <= index < len(tasks):
            return None
        task = tasks[index]
        return task.get("id") if isinstance(task, dict) else None

    return given_id


# --- The rules across values.

_BLANK_VERIFIER = Verifier(kind=None)  # type: ignore[arg-type]  # "verifier": {} = none given
_DEFAULT_EXPECTED_ANSWER_VERIFIER = Verifier(
    kind=DEFAULT_EXPECTED_ANSWER_VERIFIER["kind"],
    output_type=DEFAULT_EXPECTED_ANSWER_VERIFIER["outputType"],
)
_ID_OF = attrgetter("id")
_VERIFIER_OF = attrgetter("verifier")
_TEXT_OF = attrgetter("criterion")
_CRITERIA_OF = attrgetter("criteria")
_PROMPT_OF = attrgetter("prompt")
_NAME_OF = attrgetter("name")
_EXPECTED_VERIFIER_OF = attrgetter("expected_verifier")
_EXPECTED_TEXT_OF = attrgetter("expected_text")
_INSTRUCTIONS_OF = attrgetter("instructions")
_CODE_OF = attrgetter("code")


# The criterion ids of a task without criteria.
_NO_IDS: frozenset[str | None] = frozenset()

# Sets a field of a task pydantic-core built: `TaskSpec` is frozen for everyone who reads
# the plan, and pydantic-core sets its fields one by one in the same way; the validator
# finishes each task (as a frozen dataclass's own __post_init__ would) before the plan
# leaves it.
_finish = object.__setattr__


def _name_from_prompt_or_id(task: TaskSpec, task_id: str) -> str:
    """The name of a task the file gives none: made from its prompt, else its id."""
    return name_from_prompt(task.prompt or "") or task_id


def _blank(value: str | None) -> bool:
    return value is None or value.strip() == ""


class _Validator:
    """Checks one validated document against the rules across its values; builds its plan.

    The schema has already checked every value on its own, so the usual task costs a few
    cheap tests: its criteria ids unique, its verifiers among those already checked.
    """

    def __init__(
        self,
        findings: _Findings,
        options: CheckOptions,
        zip_members: Mapping[str, int] | None,
    ) -> None:
        self.findings = findings
        self.options = options
        self.zip_members = zip_members
        # A file repeats the same code many times: parse each one once.
        self._code_problems: dict[str, tuple[Rule, dict[str, Any]] | None] = {}
        self._expected_criteria: dict[Verifier, tuple[CriterionSpec]] = {}
        # Most tasks share one expected-answer verifier (the file's): skip hashing it.
        self._last_expected: tuple[Verifier, tuple[CriterionSpec]] | None = None
        # Verifiers already checked without a finding (None: no verifier, nothing to check);
        # a criteria list whose verifiers are all among them needs no look one by one.
        self._clean_verifiers: set[Verifier | None] = {None}
        # Runs of criterion ids already seen given, unique and not blank.
        self._clean_ids: dict[tuple[str | None, ...], frozenset[str]] = {}
        # The ids the file gave tasks that get `task-<position>` instead (None or blank).
        self._given_ids: dict[int, str | None] = {}
        self._tasks: tuple[TaskSpec, ...] = ()

    def dataset(self, data: dict[str, Any]) -> DatasetSpec:
        fmt = data.get("format")
        if fmt is not None and fmt != FORMAT_NAME:
            self.findings.problem(NOT_A_DATASET_FILE, ("format",), value=_shown(fmt))
        version = data.get("version")
        if version is not None and version != FORMAT_VERSION:
            self.findings.problem(UNSUPPORTED_VERSION, ("version",), value=version)

        settings: dict[str, Any] = {}
        expected_answer_verifier = _DEFAULT_EXPECTED_ANSWER_VERIFIER
        given = data.get("settings") or {}
        for key, subject in (
            ("expectedAnswerVerifier", "The expected answers' verifier in settings"),
            ("defaultVerifier", "The default verifier in settings"),
        ):
            verifier = self.verifier(given.get(key), ("settings", key), _constant(subject))
            if verifier is not None:
                settings[key] = verifier.to_json()
                if key == "expectedAnswerVerifier":
                    expected_answer_verifier = verifier

        criteria, _ = self.criteria(data.get("criteria"), ("criteria",), None)

        given_tasks: list[TaskSpec] | None = data.get("tasks")
        if not given_tasks:
            self.findings.problem(NO_TASKS, ("tasks",), missing=given_tasks is None)
            given_tasks = []
        file_has_criteria = bool(criteria)
        if self.options.number_tasks:
            self.forget_ids(given_tasks)
        for index, task in enumerate(given_tasks):
            self.task(task, index, file_has_criteria, expected_answer_verifier)
        tasks = self._tasks = tuple(given_tasks)
        if self.options.number_tasks:
            self.numbered(tasks)
        self.duplicates(tasks)
        spec = DatasetSpec(
            name=data.get("name") or "",
            description=data.get("description") or "",
            settings=settings,
            criteria=criteria,
            tasks=tasks,
        )
        self.totals(spec)
        return spec

    def totals(self, spec: DatasetSpec) -> None:
        """What the whole file would store, against the per-file totals (see spec).

        Counted as the database stores it: a task's criteria and verifiers once per task,
        the criteria for every task once.
        """
        tasks = spec.tasks
        criteria = list(chain(spec.criteria, *map(_CRITERIA_OF, tasks)))
        if len(criteria) > MAX_CRITERIA_PER_FILE:
            self.findings.problem(
                TOO_MANY_CRITERIA_IN_FILE, (), count=len(criteria), limit=MAX_CRITERIA_PER_FILE
            )
        # A field at a time over the whole file, in C (no Python call per value; a verifier
        # is not hashed, which a dataclass does in Python).
        verifiers = list(
            filter(None, chain(map(_VERIFIER_OF, criteria), map(_EXPECTED_VERIFIER_OF, tasks)))
        )
        text = (
            len(spec.description)
            + sum(map(len, map(_TEXT_OF, criteria)))
            + sum(map(len, map(_PROMPT_OF, tasks)))
            + sum(map(len, map(_NAME_OF, tasks)))
            + sum(map(len, filter(None, map(_EXPECTED_TEXT_OF, tasks))))
            + sum(map(len, filter(None, map(_INSTRUCTIONS_OF, verifiers))))
            + sum(map(len, filter(None, map(_CODE_OF, verifiers))))
        )
        if text > MAX_TEXT_CHARS_PER_FILE:
            self.findings.problem(TOO_MUCH_TEXT, (), count=text, limit=MAX_TEXT_CHARS_PER_FILE)

    def given_id(self, index: int) -> str | None:
        """The id the file gives task `index` (None when it gives none), even once the task
        has its own; `Findings.resolve`'s `given_id`."""
        if index in self._given_ids:
            return self._given_ids[index]
        return self._tasks[index].id if 0 <= index < len(self._tasks) else None

    def forget_ids(self, tasks: list[TaskSpec]) -> None:
        """Each task's id taken away, to be numbered as if the file gave none; kept as the
        id the file gives (`given_id`), for messages and `numbered`."""
        for index, task in enumerate(tasks):
            self._given_ids[index] = task.id
            _finish(task, "id", "")

    def numbered(self, tasks: tuple[TaskSpec, ...]) -> None:
        """Numbered as the person asked (`CheckOptions.number_tasks`): how many of the file's
        ids that replaced, and how many of those more than one task used."""
        given = [
            task_id
            for index, task_id in self._given_ids.items()
            if task_id and task_id.strip() and task_id != tasks[index].id
        ]
        if not given:
            return
        repeated = len(given) - len(set(given))
        self.findings.warning(
            TASKS_NUMBERED,
            (),
            first=tasks[0].id,
            last=tasks[-1].id,
            replaced=counted(len(given), "id"),
            repeated=repeated,
        )

    def duplicates(self, tasks: tuple[TaskSpec, ...]) -> None:
        """A repeated task id is a problem; a repeated prompt only a warning."""
        if len(set(map(_ID_OF, tasks))) != len(tasks):
            first: dict[str, int] = {}
            for index, task in enumerate(tasks):
                if task.id not in first:
                    first[task.id] = index
                    continue
                path: DocPath = ("tasks", index)
                self.findings.problem(
                    DUPLICATE_TASK_ID,
                    (*path, "id") if self.given_id(index) is not None else path,
                    task=_shown(task.id),
                    first=first[task.id] + 1,
                )
        if len(set(map(_PROMPT_OF, tasks))) != len(tasks):
            first_id: dict[str, str] = {}
            for index, task in enumerate(tasks):
                if task.prompt not in first_id:
                    first_id[task.prompt] = task.id
                    continue
                self.findings.warning(
                    DUPLICATE_PROMPT,
                    ("tasks", index, "prompt"),
                    task=_shown(task.id),
                    first=_shown(first_id[task.prompt]),
                )

    def task(
        self,
        task: TaskSpec,
        index: int,
        file_has_criteria: bool,
        expected_answer_verifier: Verifier,
    ) -> None:
        """Finish a task pydantic-core built (`_task_schema`) with what needs the file."""
        # The hot loop of a large file: messages and paths are built only for a problem,
        # and the usual task (an id, a name, an answer as text or {"text": ...}, criteria
        # whose ids and verifiers need no second look, no files) calls nothing it does not
        # need and sets only its criteria (and answer, given as an object).
        task_id = task.id
        if not task_id or task_id.isspace():
            # The file's own id, if `forget_ids` took it away.
            self._given_ids.setdefault(index, task_id)
            task_id = f"task-{self.options.first_task_number + index}"
            _finish(task, "id", task_id)
        if not task.name:
            _finish(task, "name", _name_from_prompt_or_id(task, task_id))
        # As the file wrote it: None, the text, or {"text": ..., "verifier": ...}.
        expected: Any = task.expected_text
        text, verifier = expected, None
        if type(expected) is dict:
            text, verifier = expected.get("text"), expected["verifier"]
            if verifier is not None or text is None:
                verifier = self.answer(text, verifier, index, task_id)
                _finish(task, "expected_verifier", verifier)
            _finish(task, "expected_text", text)
        given: Any = task.criteria
        ids: Collection[str | None]
        if given:
            criteria, ids = self.criteria(given, ("tasks", index, "criteria"), task_id)
        else:
            criteria, ids = (), _NO_IDS
        if not expected and not criteria and not file_has_criteria:
            self.findings.problem(NOTHING_TO_GRADE, ("tasks", index), task=_shown(task_id))
        # Given both ways of grading, the task lands as a rubric with the expected answer
        # as one of its criteria (unless it is there already, as in an exported file).
        if lands_as_rubric(text, ids, shared_criteria=file_has_criteria):
            alone = self.expected_criterion(verifier or expected_answer_verifier)
            criteria = alone + criteria if criteria else alone
        if criteria is not given:
            _finish(task, "criteria", criteria)
        self.optional_parts(task, index, task_id)

    def answer(
        self, text: str | None, verifier: Verifier | None, index: int, task_id: str
    ) -> Verifier | None:
        """The verifier of an answer given as {"text": ..., "verifier": ...}, once checked;
        an answer given without text is a problem."""
        path: DocPath = ("tasks", index, "expected")
        checked = self.verifier(
            verifier,
            (*path, "verifier"),
            lambda: f"The expected answer of task {_shown(task_id)}",
        )
        if text is None:
            self.findings.problem(
                MISSING_EXPECTED_TEXT, (*path, "text"), missing=True, task=_shown(task_id)
            )
        return checked

    def expected_criterion(self, verifier: Verifier) -> tuple[CriterionSpec]:
        """The "Matches the expected answer" criterion graded by `verifier`, in a tuple."""
        # Criteria and tuples are immutable, so the tasks graded the same way share one
        # criterion, and those with no criteria of their own one tuple of it too.
        last = self._last_expected
        if last is not None and last[0] is verifier:
            return last[1]
        alone = self._expected_criteria.get(verifier)
        if alone is None:
            alone = self._expected_criteria[verifier] = (expected_answer_criterion(verifier),)
        self._last_expected = (verifier, alone)
        return alone

    def optional_parts(self, task: TaskSpec, index: int, task_id: str) -> None:
        """What the usual task leaves out: its files, checked when given, () for null or [];
        its evidence and metadata, free-form JSON checked when given, {} for null."""
        # Absent files are () already; null, [] or a list of files are not.
        files: Any = task.input_files
        if type(files) is not tuple:
            path: DocPath = ("tasks", index, "inputFiles")
            _finish(task, "input_files", self.files(files, path) if files else ())
        files = task.expected_files
        if type(files) is not tuple:
            path = ("tasks", index, "expectedFiles")
            _finish(task, "expected_files", self.files(files, path) if files else ())
        evidence: dict[str, Any] | None = task.evidence
        if evidence:
            self.evidence(evidence, ("tasks", index, "evidence"), task_id)
        elif evidence is None:
            _finish(task, "evidence", {})
        metadata: dict[str, Any] | None = task.metadata
        if metadata:
            self.metadata(metadata, ("tasks", index, "metadata"), task_id)
        elif metadata is None:
            _finish(task, "metadata", {})

    def metadata(self, metadata: dict[str, Any], path: DocPath, task_id: str) -> None:
        """Keys a column header and a filter can carry; values that are JSON."""
        if len(metadata) > MAX_METADATA_KEYS:
            self.findings.problem(
                TOO_MANY_METADATA_KEYS,
                path,
                task=_shown(task_id),
                count=len(metadata),
                limit=MAX_METADATA_KEYS,
            )
        for key in metadata:
            if (
                not key.isprintable()
                or key != key.strip()
                or not 0 < len(key) <= MAX_METADATA_KEY_CHARS
            ):
                self.findings.problem(
                    BAD_METADATA_KEY,
                    (*path, key),
                    task=_shown(task_id),
                    key=_shown(key[:MAX_METADATA_KEY_CHARS]),
                    limit=MAX_METADATA_KEY_CHARS,
                )
        try:
            json.dumps(metadata, allow_nan=False)
        except ValueError:
            self.findings.problem(NON_FINITE_METADATA, path, task=_shown(task_id))

    def evidence(self, evidence: dict[str, Any], path: DocPath, task_id: str) -> None:
        """Free-form evidence, which must still be JSON (no NaN or Infinity in it)."""
        try:
            json.dumps(evidence, allow_nan=False)
        except ValueError:
            self.findings.problem(NON_FINITE_EVIDENCE, path, task=_shown(task_id))

    def criteria(
        self, criteria: tuple[CriterionSpec, ...] | None, path: DocPath, task_id: str | None
    ) -> tuple[tuple[CriterionSpec, ...], Collection[str | None]]:
        """A task's criteria (or, with no task_id, the file's for every task) and their ids."""
        if not criteria:
            return (), set()
        # The usual list: every id given and unique, every verifier already checked. Tasks
        # repeat their ids (c1, c2, ...): each run of ids is looked at once.
        given = tuple(map(_ID_OF, criteria))
        ids = self._clean_ids.get(given)
        if ids is None:
            ids = frozenset(given)
            if len(ids) == len(given) and all(ids) and not any(map(str.isspace, ids)):
                self._clean_ids[given] = ids
            else:
                ids = None
        if ids is not None and self._clean_verifiers.issuperset(map(_VERIFIER_OF, criteria)):
            return criteria, ids
        where = "the criteria for every task" if task_id is None else f"task {_shown(task_id)}"
        checked = self._criteria_one_by_one(criteria, path, where)
        return tuple(checked), {criterion.id for criterion in checked}

    def _criteria_one_by_one(
        self, criteria: tuple[CriterionSpec, ...], path: DocPath, where: str
    ) -> list[CriterionSpec]:
        seen: set[str] = set()
        checked = []
        for index, criterion in enumerate(criteria):
            here = (*path, index)
            criterion_id = _given_id(criterion.id, f"criterion-{index + 1}")
            shown = _shown(criterion_id)
            if criterion_id in seen:
                self.findings.problem(
                    DUPLICATE_CRITERION_ID,
                    (*here, "id") if criterion.id is not None else here,
                    criterion=shown,
                    where=where,
                )
            seen.add(criterion_id)
            verifier = self.verifier(
                criterion.verifier, (*here, "verifier"), _constant(f"Criterion {shown}")
            )
            if criterion_id != criterion.id or verifier is not criterion.verifier:
                criterion = replace(criterion, id=criterion_id, verifier=verifier)
            checked.append(criterion)
        return checked

    def verifier(
        self, verifier: Verifier | None, path: DocPath, subject: Callable[[], str]
    ) -> Verifier | None:
        """`verifier` once its instructions and code are checked; None when it is blank."""
        if verifier is None or verifier == _BLANK_VERIFIER:
            return None
        if verifier.kind is None:
            self.findings.problem(MISSING_VERIFIER_KIND, (*path, "kind"), missing=True)
            return None
        found_before = self.findings.count()
        if verifier.kind == "llm_judge" and verifier.instructions:
            for name in PLACEHOLDER_PATTERN.findall(verifier.instructions):
                if name.strip() not in LLM_JUDGE_PLACEHOLDERS:
                    self.findings.problem(
                        UNKNOWN_PLACEHOLDER,
                        (*path, "instructions"),
                        placeholder=_shown("{{" + name + "}}"),
                    )
        if verifier.kind == "code_verifier":
            self.code(verifier.code, path, subject)
        if self.findings.count() == found_before:
            self._clean_verifiers.add(verifier)
        return verifier

    def code(self, code: str | None, path: DocPath, subject: Callable[[], str]) -> None:
        if not code or code.isspace():
            self.findings.problem(MISSING_CODE, (*path, "code"), missing=code is None)
            return
        if code not in self._code_problems:
            self._code_problems[code] = _code_problem(code)
        found = self._code_problems[code]
        if found is not None:
            rule, params = found
            self.findings.problem(rule, (*path, "code"), **params)
        elif not self.options.python_checks_enabled:
            self.findings.warning(PYTHON_CHECKS_OFF, path, subject=subject())

    def files(self, docs: list[dict[str, Any]], path: DocPath) -> tuple[FileSpec, ...]:
        files = []
        for index, doc in enumerate(docs):
            attached = self.file(doc, (*path, index))
            if attached is not None:
                files.append(attached)
        return tuple(files)

    def file(self, doc: dict[str, Any], path: DocPath) -> FileSpec | None:
        zip_path, url, name = doc.get("path"), doc.get("url"), doc.get("name")
        if zip_path is not None and url is not None:
            self.findings.problem(FILE_PATH_AND_URL, path)
            return None
        if url is not None:
            parts = urlsplit(url)
            if link_problem(url) is not None:
                self.findings.problem(LINK_NOT_HTTPS, (*path, "url"), url=_shown(url))
                return None
            default_name = unquote(posixpath.basename(parts.path)) or parts.netloc
            return self.named(FileSpec(name=name or default_name, url=url), path, name)
        if zip_path is None or _blank(zip_path):
            self.findings.problem(FILE_NO_LOCATION, path)
            return None
        if self.zip_members is None:
            self.findings.problem(FILE_NEEDS_ZIP, (*path, "path"), path=_shown(zip_path))
            return None
        member = _zip_member(zip_path, self.zip_members)
        if member is None:
            self.findings.problem(FILE_NOT_IN_ZIP, (*path, "path"), path=_shown(zip_path))
            return None
        size = self.zip_members[member]
        if size > MAX_ATTACHED_FILE_BYTES:
            self.findings.problem(
                FILE_TOO_LARGE, (*path, "path"), path=_shown(zip_path), size=file_size(size)
            )
            return None
        return self.named(
            FileSpec(name=name or posixpath.basename(member), path=member, size=size), path, name
        )

    def named(self, spec: FileSpec, path: DocPath, given: str | None) -> FileSpec | None:
        """`spec` if its name (given, or made from its path or link) can be a file's name."""
        reason = bad_file_name_reason(spec.name)
        if reason is None:
            return spec
        where = (*path, "name") if given is not None else path
        self.findings.problem(BAD_FILE_NAME, where, name=_shown(spec.name), reason=reason)
        return None


def bad_file_name_reason(name: str) -> str | None:
    """Why `name` cannot be an attached file's name, or None.

    A name is one file name: stored as the file's name and written as one in an export's
    zip, so it has no folder in it and fits a file system (at most 255 bytes).
    """
    if not name or name.isspace():
        return "it is blank"
    if name in (".", ".."):
        return "it names a folder"
    if "/" in name or "\\" in name:
        return "it has a folder in it (/ or \\)"
    if "\x00" in name:
        return "it has a NUL character in it"
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_NAME_BYTES:
        return f"it is {size:,} bytes long, and a file's name can be at most {MAX_FILE_NAME_BYTES}"
    return None


def _constant(text: str) -> Callable[[], str]:
    """A subject for `_Validator.verifier`, already known."""
    return lambda: text


def _given_id(value: Any, default: str) -> str:
    """An id as the schema reads it (text, or a whole number's digits); `default` if blank."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return default
    text = str(value)
    return default if not text or text.isspace() else text


def _zip_member(path: str, members: Mapping[str, int]) -> str | None:
    """The zip member `path` names: as written, or tidied (`./a//b` -> `a/b`), never outside."""
    if path in members:
        return path
    tidy = posixpath.normpath(path.replace("\\", "/"))
    if tidy.startswith(("/", "../")) or tidy in ("..", "."):
        return None
    return tidy if tidy in members else None


def _code_problem(code: str) -> tuple[Rule, dict[str, Any]] | None:
    """Why `code` cannot be a code_verifier, or None. The code is parsed, never run."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return CODE_SYNTAX_ERROR, {"code_line": exc.lineno or 1, "detail": exc.msg}
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError: NUL bytes; RecursionError/MemoryError: hostile nesting.
        return CODE_SYNTAX_ERROR, {"code_line": 1, "detail": type(exc).__name__}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "verify":
            args = node.args
            names = [arg.arg for arg in (*args.posonlyargs, *args.args)]
            if (
                names == ["task", "output"]
                and not args.kwonlyargs
                and args.vararg is None
                and args.kwarg is None
            ):
                return None
    return CODE_MISSING_VERIFY, {}


# --- From pydantic's errors to problems.


def _at(document: Any, path: DocPath) -> Any:
    """The value at `path` in a parsed document, or None where there is none."""
    for part in path:
        if isinstance(part, int) and isinstance(document, list) and 0 <= part < len(document):
            document = document[part]
        elif isinstance(part, str) and isinstance(document, dict):
            document = document.get(part)
        else:
            return None
    return document


def _text_problem(path: DocPath, document: Any, findings: _Findings, *, missing: bool) -> bool:
    """Record a missing or blank text a person must give; False if `path` is no such text."""
    if len(path) == 3 and path[0] == "tasks" and path[2] == "prompt":
        task = _given_id(_at(document, (*path[:2], "id")), f"task-{path[1] + 1}")  # type: ignore[operator]
        findings.problem(MISSING_PROMPT, path, missing=missing, task=_shown(task))
    elif len(path) == 4 and path[0] == "tasks" and path[2:] == ("expected", "text"):
        task = _given_id(_at(document, (*path[:2], "id")), f"task-{path[1] + 1}")  # type: ignore[operator]
        findings.problem(MISSING_EXPECTED_TEXT, path, missing=missing, task=_shown(task))
    elif len(path) >= 3 and path[-1] == "criterion" and path[-3] == "criteria":
        criterion = _given_id(_at(document, (*path[:-1], "id")), f"criterion-{path[-2] + 1}")  # type: ignore[operator]
        findings.problem(MISSING_CRITERION_TEXT, path, missing=missing, criterion=_shown(criterion))
    else:
        return False
    return True


def _expected_branch(path: DocPath) -> int | None:
    """Where the `expected` union names its branch in an error's path, if it does."""
    for index in range(3, len(path)):
        part = path[index]
        if path[index - 1] == "expected" and (
            part == _EXPECTED_AS_OBJECT or part in _EXPECTED_AS_TEXT
        ):
            return index
    return None


def _bare_answer_errors(errors: list[ErrorDetails]) -> dict[DocPath, ErrorDetails]:
    """The errors of bare-string answers that are text but blank or too long, by answer.

    Such an answer fails both branches of `expected`; it is text, so the object branch's
    error says nothing, and the text branch's says what is wrong.
    """
    answers: dict[DocPath, ErrorDetails] = {}
    for error in errors:
        path = tuple(error["loc"])
        tag = _expected_branch(path)
        if (
            tag is not None
            and path[tag] in _EXPECTED_AS_TEXT
            and error["type"] in ("string_pattern_mismatch", "string_too_long")
        ):
            answers[path[:tag]] = error
    return answers


def _type_problems(
    errors: list[ErrorDetails],
    findings: _Findings,
    field_label: Callable[[DocPath], str],
    document: Any,
) -> list[DocPath]:
    """Record pydantic's errors; return the paths of the values that are wrong.

    Unknown keys are only warnings, so they are not among the paths returned.
    """
    wrong: list[DocPath] = []
    answers = _bare_answer_errors(errors)
    for error in errors:
        path = tuple(error["loc"])
        kind = error["type"]
        tag = _expected_branch(path)
        if tag is not None:
            owner = path[:tag]
            if owner in answers:
                if path[tag] in _EXPECTED_AS_TEXT:
                    _answer_problem(owner, error, findings, field_label, document)
                    wrong.append(owner)
                continue
            # The string branch only fails when the object branch does, so its error adds
            # nothing; a wrong type at the object branch itself means the value was neither.
            if path[tag] in _EXPECTED_AS_TEXT:
                continue
            if tag == len(path) - 1 and kind == "dict_type":
                kind = "text_or_object"
            path = owner + path[tag + 1 :]
        label = _label(path, field_label)
        if kind in ("extra_forbidden", "unexpected_keyword_argument"):
            findings.warning(UNKNOWN_FIELD, path, label=label)
            continue
        wrong.append(path)
        _value_problem(kind, path, error, label, findings, document)
    return wrong


def _answer_problem(
    owner: DocPath,
    error: ErrorDetails,
    findings: _Findings,
    field_label: Callable[[DocPath], str],
    document: Any,
) -> None:
    """A bare-string answer that is blank or too long."""
    if error["type"] == "string_pattern_mismatch":
        _text_problem((*owner, "text"), document, findings, missing=False)
        return
    limit = (error.get("ctx") or {}).get("max_length")
    label = field_label(owner) or "The file"
    count = len(error.get("input") or "")
    findings.problem(TEXT_TOO_LONG, owner, label=label, count=count, limit=limit)


def _value_problem(
    kind: str,
    path: DocPath,
    error: ErrorDetails,
    label: str,
    findings: _Findings,
    document: Any,
) -> None:
    """The rule one wrong value breaks, found at its place."""
    value = error.get("input")
    absent = kind == "missing" or (kind == "string_type" and value is None)
    if (absent or kind == "string_pattern_mismatch") and _text_problem(
        path, document, findings, missing=absent
    ):
        return
    ctx = error.get("ctx") or {}
    if kind == "string_too_long":
        findings.problem(
            TEXT_TOO_LONG, path, label=label, count=len(value), limit=ctx.get("max_length")
        )
    elif kind == "too_long":
        _too_long_problem(path, ctx, findings)
    elif kind == "literal_error":
        rule = UNKNOWN_OUTPUT_TYPE if path[-1] == "outputType" else UNKNOWN_VERIFIER_KIND
        findings.problem(rule, path, value=_shown(value))
    elif kind == "bad_weight":
        findings.problem(BAD_WEIGHT, path, value=_shown(value))
    elif kind in _TYPE_RULES:
        findings.problem(_TYPE_RULES[kind], path, label=label)
    else:
        findings.problem(WRONG_TYPE, path, label=label, detail=error["msg"])


def _too_long_problem(path: DocPath, ctx: dict[str, Any], findings: _Findings) -> None:
    """A list longer than its limit: the tasks, a criteria list, or a task's files."""
    count, limit = ctx.get("actual_length"), ctx.get("max_length")
    if path[-1] == "tasks":
        findings.problem(TOO_MANY_TASKS, path, count=count, limit=limit)
    elif path[-1] == "criteria":
        findings.problem(TOO_MANY_CRITERIA, path, count=count, limit=limit)
    else:
        kind_name = "input files" if path[-1] == "inputFiles" else "expected files"
        findings.problem(TOO_MANY_FILES, path, count=count, kind=kind_name, limit=limit)


# A value that must be there, put in place of a wrong one so that the rest of the document
# can still be checked. Unique per place, so no rule across values mistakes two for equal.
def _stand_in(path: DocPath) -> Any:
    text = "\x00" + field_path(path)
    if len(path) == 3 and path[0] == "tasks" and path[2] == "prompt":
        return text
    if len(path) >= 3 and path[-1] == "criterion" and path[-3] == "criteria":
        return text
    if len(path) == 2 and path[0] == "tasks":
        return {"prompt": text}
    if len(path) >= 2 and path[-2] == "criteria" and isinstance(path[-1], int):
        return {"criterion": text}
    if isinstance(path[-1], int):
        return {}  # a list item keeps its place, so the items after it keep theirs
    return _DROPPED


_DROPPED = object()


def _without(value: Any, wrong: dict[Any, Any], path: DocPath = ()) -> Any:
    """A copy of `value` with stand-ins for the wrong values (a trie of paths; {} marks one).

    Only the objects and lists on the way to a wrong value are copied. A wrong value is
    dropped, or replaced where the schema needs one (`_stand_in`).
    """
    if isinstance(value, dict):
        copy = dict(value)
        for key, below in wrong.items():
            here = (*path, key)
            if below:
                if key in copy:
                    copy[key] = _without(copy[key], below, here)
                continue
            stand_in = _stand_in(here)
            if stand_in is _DROPPED:
                copy.pop(key, None)
            else:
                copy[key] = stand_in
        return copy
    if isinstance(value, list):
        items = list(value)
        for key, below in wrong.items():
            if isinstance(key, int) and 0 <= key < len(items):
                here = (*path, key)
                items[key] = _without(items[key], below, here) if below else _stand_in(here)
        return items
    return value


def _follows_from(finding: _Finding, wrong: DocPath) -> bool:
    """Whether a rule fired only because the wrong value at `wrong` was replaced."""
    if finding.path[: len(wrong)] == wrong:
        return True
    # A task whose expected answer or criteria were dropped looks ungraded; it is not.
    depth = len(finding.path)
    return (
        finding.rule is NOTHING_TO_GRADE
        and len(wrong) > depth
        and wrong[:depth] == finding.path
        and wrong[depth] in ("expected", "criteria")
    )


def _trie(paths: list[DocPath]) -> dict[Any, Any]:
    root: dict[Any, Any] = {}
    for path in paths:
        node = root
        for part in path[:-1]:
            node = node.setdefault(part, {})
        if path:
            node.setdefault(path[-1], {})
    return root


def validate_document(
    document: Any,
    *,
    file_name: str,
    locate: Locate,
    options: CheckOptions,
    zip_members: Mapping[str, int] | None = None,
    field_label: Callable[[DocPath], str] = field_path,
    type_errors: list[ErrorDetails] | None = None,
    only_known_keys: bool = False,
) -> tuple[DatasetSpec | None, list[Problem], list[Problem]]:
    """Check a canonical dataset document; return (plan, problems, warnings).

    The plan is None when there is any problem. `zip_members` maps each member of the
    uploaded zip to its size; None means the document came on its own, so its files can
    only be links. `locate` turns a document path into (row, line); `field_label` turns it
    into the problem's `field`. `type_errors` are the errors `validate_json_text` already
    found in this document's text, so that they are not looked for twice. With
    `only_known_keys` (see `Parsed`) no key is looked for that the format does not know.
    Never raises for anything the document holds.
    """
    findings = _Findings()
    plan = None
    if not isinstance(document, dict):
        findings.problem(NOT_AN_OBJECT, ())
    else:
        shape = _models("ignore", options.max_tasks)
        wrong: list[DocPath] = []
        data = None
        if type_errors is not None:
            # Found already, unknown keys included: go straight to checking the rest.
            wrong = _type_problems(type_errors, findings, field_label, document)
        else:
            if not only_known_keys:
                _unknown_keys(document, findings, field_label)
            try:
                data = shape.validate_python(document)
            except ValidationError as exc:
                wrong = _type_problems(_errors(exc), findings, field_label, document)
        if data is None:
            # Check the rest of the document too, so one pass lists every problem: replace
            # the wrong values, and drop any rule that then fires on them or inside them.
            try:
                data = shape.validate_python(_without(document, _trie(wrong)))
            except ValidationError:  # pragma: no cover - stand-ins cannot add errors
                data = None
        if data is not None:
            checked = len(findings.problems)
            plan = _Validator(findings, options, zip_members).dataset(data)
            if wrong:
                findings.problems[checked:] = [
                    finding
                    for finding in findings.problems[checked:]
                    if not any(_follows_from(finding, path) for path in wrong)
                ]
    tasks = document.get("tasks") if isinstance(document, dict) else None
    problems, warnings = findings.resolve(file_name, locate, field_label, _id_in_document(tasks))
    return (None if problems else plan), problems, warnings


_MAX_ERRORS_TO_REUSE = 10 * MAX_PROBLEMS


def _errors(exc: ValidationError) -> list[ErrorDetails]:
    return exc.errors(include_url=False, include_input=True)


def validate_json_text(
    text: str,
    *,
    file_name: str,
    locate: Locate,
    options: CheckOptions,
    zip_members: Mapping[str, int] | None = None,
) -> tuple[DatasetSpec | None, list[Problem], list[Problem]] | list[ErrorDetails] | None:
    """`validate_document` for JSON text, parsed and type-checked in one pass.

    The fast path for the usual, well-formed file: no intermediate document is built.
    When a value is wrong or a key is unknown, returns pydantic's errors instead: parse
    the text and hand them to `validate_document(type_errors=...)`, which says where
    they are and checks the rest. Returns None when the text is not a JSON object at all.
    """
    try:
        data = _models("forbid", options.max_tasks).validate_json(text)
    except ValidationError as exc:
        # Past a few problems' worth, let validate_document find them, capped, rather than
        # turn every one of pydantic's errors into Python.
        if exc.error_count() > _MAX_ERRORS_TO_REUSE:
            return None
        errors = _errors(exc)
        if any(error["type"] == "json_invalid" or not error["loc"] for error in errors):
            return None
        return errors
    findings = _Findings()
    validator = _Validator(findings, options, zip_members)
    plan = validator.dataset(data)
    problems, warnings = findings.resolve(file_name, locate, field_path, validator.given_id)
    return (None if problems else plan), problems, warnings


def in_file_order(problems: list[Problem]) -> tuple[Problem, ...]:
    """Problems about the whole file first, then by row or line; stable within a line."""

    def key(problem: Problem) -> tuple[int, int]:
        place = problem.row if problem.row is not None else problem.line
        if problem.code == TOO_MANY_PROBLEMS.code:
            return (2, 0)
        return (0, 0) if place is None else (1, place)

    return tuple(sorted(problems, key=key))


def check_parsed(
    parsed: Parsed,
    *,
    options: CheckOptions,
    zip_members: Mapping[str, int] | None = None,
    type_errors: list[ErrorDetails] | None = None,
) -> CheckResult:
    """Validate what a reader produced and say so as a `CheckResult`."""
    problems = list(parsed.problems)
    warnings = list(parsed.warnings)
    plan = None
    if parsed.document is not None:
        plan, found, cautions = validate_document(
            parsed.document,
            file_name=parsed.file_name,
            locate=parsed.locate,
            options=options,
            zip_members=zip_members,
            field_label=parsed.field_label or field_path,
            type_errors=type_errors,
            only_known_keys=parsed.only_known_keys,
        )
        problems.extend(found)
        warnings.extend(cautions)
    return CheckResult(
        file_name=parsed.file_name,
        format=parsed.format,
        detected=parsed.detected,
        problems=in_file_order(problems),
        warnings=in_file_order(warnings),
        plan=None if problems else plan,
        notes=tuple(parsed.notes),
        mapping=parsed.mapping,
    )
