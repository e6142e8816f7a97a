"""The one validator every format shares: a canonical dataset document in, a plan or problems out.

Every reader (JSON, JSONL, CSV, XLSX, the zip's) turns its bytes into the .json format's
document and hands it here. Pydantic checks structure and types in one pass and reports
every error; the rules the page states (what a task needs, unique ids, weights, verifiers,
files and limits) are checked after, and the plan (`DatasetSpec`) is built as they go.

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
- Criteria and verifiers validate straight into `CriterionSpec` and `Verifier` (in
  pydantic-core), and each list's length is checked before its items, so hostile input
  costs one error, not millions (at most `MAX_PROBLEMS` are reported, then a count).
"""

from __future__ import annotations

import ast
import functools
import json
import math
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from itertools import accumulate, chain, compress, pairwise, repeat
from operator import attrgetter, is_, is_not
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    GetPydanticSchema,
    TypeAdapter,
    ValidationError,
)
from pydantic import with_config as pydantic_with_config
from pydantic_core import ErrorDetails
from pydantic_core import core_schema as cs
from typing_extensions import TypedDict

from datasets_app.importing.spec import (
    DEFAULT_EXPECTED_ANSWER_VERIFIER,
    EXPECTED_ANSWER_CRITERION_ID,
    LLM_JUDGE_PLACEHOLDERS,
    MAX_ATTACHED_FILE_BYTES,
    MAX_CRITERIA_PER_LIST,
    MAX_FILES_PER_KIND,
    MAX_PROBLEMS,
    OUTPUT_TYPES,
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
    expected_answer_criterion,
    field_path,
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
    "Task id {task} is already used by task #{first} (counting from 1 in file order). Each "
    "task needs its own id.",
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
    "{{{{prompt}}}} and {{{{output}}}}.",
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
    "{path} is {size} bytes; an attached file can be up to 10 MiB.",
)
LINK_NOT_HTTPS = Rule(
    "link_not_https", "{url} is not an https:// link. Files link only over https."
)
FILE_PATH_AND_URL = Rule("file_path_and_url", "A file has both a path and a url; give one of them.")
FILE_NO_LOCATION = Rule(
    "file_no_location", "A file needs a path (inside the zip) or a url (https://...)."
)
TOO_MANY_PROBLEMS = Rule(
    "too_many_problems", "…and {count} more problems not listed. Fix these and check again."
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

# --- Structure and types, checked by pydantic in one pass.
#
# Tasks, settings and files validate into plain dicts (TypedDicts); criteria and verifiers,
# the bulk of a large file, validate straight into the plan's `CriterionSpec` and `Verifier`
# in pydantic-core, so the valid path builds no intermediate copy of them in Python.


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


# An id is text; a whole number (not true/false) is read as its digits.
_ID = _optional(
    cs.custom_error_schema(
        cs.union_schema(
            [cs.str_schema(), cs.no_info_after_validator_function(str, cs.int_schema(strict=True))],
            mode="left_to_right",
        ),
        custom_error_type="bad_id",
        custom_error_message="An id must be text or a whole number",
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
_TEXT = _optional(cs.str_schema())


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
        )
    )


def _criteria_schema(extra: ExtraBehavior) -> cs.CoreSchema:
    fields = [
        cs.dataclass_field("id", _ID),
        cs.dataclass_field("criterion", _TEXT),
        cs.dataclass_field("weight", _WEIGHT),
        cs.dataclass_field("verifier", _verifier_schema(extra)),
    ]
    criterion = cs.dataclass_schema(
        CriterionSpec,
        cs.dataclass_args_schema("CriterionSpec", fields, extra_behavior=extra),
        [field.name for field in dataclass_fields(CriterionSpec)],
        frozen=True,
    )
    return _optional(cs.list_schema(criterion, max_length=MAX_CRITERIA_PER_LIST))


def _file_shorthand(value: Any) -> Any:
    if isinstance(value, str):
        return {"url": value} if "://" in value else {"path": value}
    return value


@functools.lru_cache(maxsize=8)
def _models(extra: ExtraBehavior, max_tasks: int) -> TypeAdapter[Any]:
    """The document's shape; `forbid` reports unknown keys (as warnings), `ignore` drops them.

    Every list has a maximum length, which pydantic checks before it looks at the items,
    so that a hostile list of millions of wrong values is one error, not millions.
    """
    config = ConfigDict(extra=extra)
    verifier = GetPydanticSchema(lambda source, handler: _verifier_schema(extra))
    criteria = GetPydanticSchema(lambda source, handler: _criteria_schema(extra))
    identifier = GetPydanticSchema(lambda source, handler: _ID)

    @pydantic_with_config(config)
    class ExpectedDoc(TypedDict, total=False):
        text: str | None
        verifier: Annotated[Verifier | None, verifier]

    @pydantic_with_config(config)
    class FileDoc(TypedDict, total=False):
        path: str | None
        url: str | None
        name: str | None

    files = (
        Annotated[
            list[Annotated[FileDoc, BeforeValidator(_file_shorthand)]],
            Field(max_length=MAX_FILES_PER_KIND),
        ]
        | None
    )

    @pydantic_with_config(config)
    class TaskDoc(TypedDict, total=False):
        id: Annotated[str | None, identifier]
        name: str | None
        prompt: str | None
        # A bare string is the expected text (turned into {"text": ...} by the rules);
        # a union rather than a before-validator keeps Python out of the hot path.
        expected: ExpectedDoc | str | None
        criteria: Annotated[list[CriterionSpec] | None, criteria]
        inputFiles: files
        expectedFiles: files
        evidence: dict[str, Any] | None

    @pydantic_with_config(config)
    class SettingsDoc(TypedDict, total=False):
        expectedAnswerVerifier: Annotated[Verifier | None, verifier]
        defaultVerifier: Annotated[Verifier | None, verifier]

    @pydantic_with_config(config)
    class DatasetDoc(TypedDict, total=False):
        format: str | None
        version: int | None
        name: str | None
        description: str | None
        settings: SettingsDoc | None
        criteria: Annotated[list[CriterionSpec] | None, criteria]
        tasks: Annotated[list[TaskDoc], Field(max_length=max_tasks)] | None

    return TypeAdapter(DatasetDoc)


# The keys each object of the format knows; others are warned about (see `_unknown_keys`).
_VERIFIER_KEYS = frozenset({"kind", "outputType", "instructions", "code"})
_CRITERION_KEYS = frozenset({"id", "criterion", "weight", "verifier"})
_EXPECTED_KEYS = frozenset({"text", "verifier"})
_FILE_KEYS = frozenset({"path", "url", "name"})
_TASK_KEYS = frozenset(
    {"id", "name", "prompt", "expected", "criteria", "inputFiles", "expectedFiles", "evidence"}
)
_SETTINGS_KEYS = frozenset({"expectedAnswerVerifier", "defaultVerifier"})
_DATASET_KEYS = frozenset(
    {"format", "version", "name", "description", "settings", "criteria", "tasks"}
)


def _unknown_keys(
    document: dict[str, Any], findings: _Findings, label: Callable[[DocPath], str]
) -> None:
    """Warn about every key the format does not know, walking the document once.

    Pydantic could report them (extra="forbid"), but an object with millions of keys
    would then be millions of errors held at once; here the warnings stop at the cap.
    """

    def keys(value: Any, known: frozenset[str], path: DocPath) -> bool:
        if not isinstance(value, dict):
            return False
        for key in value.keys() - known:
            findings.warning(UNKNOWN_FIELD, (*path, key), label=label((*path, key)))
        return True

    def verifier(value: Any, path: DocPath) -> None:
        keys(value, _VERIFIER_KEYS, path)

    def criteria(value: Any, path: DocPath) -> None:
        for index, item in enumerate(value if isinstance(value, list) else ()):
            if keys(item, _CRITERION_KEYS, (*path, index)):
                verifier(item.get("verifier"), (*path, index, "verifier"))

    keys(document, _DATASET_KEYS, ())
    settings = document.get("settings")
    if keys(settings, _SETTINGS_KEYS, ("settings",)):
        for key in _SETTINGS_KEYS:
            verifier(settings.get(key), ("settings", key))
    criteria(document.get("criteria"), ("criteria",))
    tasks = document.get("tasks")
    for index, task in enumerate(tasks if isinstance(tasks, list) else ()):
        path = ("tasks", index)
        if not keys(task, _TASK_KEYS, path):
            continue
        expected = task.get("expected")
        if keys(expected, _EXPECTED_KEYS, (*path, "expected")):
            verifier(expected.get("verifier"), (*path, "expected", "verifier"))
        criteria(task.get("criteria"), (*path, "criteria"))
        for kind in ("inputFiles", "expectedFiles"):
            files = task.get(kind)
            for number, item in enumerate(files if isinstance(files, list) else ()):
                keys(item, _FILE_KEYS, (*path, kind, number))


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


def _shown(value: Any) -> str:
    """A value from the file, quoted for a message and cut short if long."""
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= 60 else text[:57] + "…"


# --- Collecting problems before knowing where they are.


@dataclass
class _Finding:
    rule: Rule
    path: DocPath
    params: dict[str, Any]
    # A missing value is located where the object that should hold it starts.
    missing: bool


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
        self, file_name: str, locate: Locate, field_label: Callable[[DocPath], str]
    ) -> tuple[list[Problem], list[Problem]]:
        findings = self.problems + self.warnings
        if not findings:
            return [], []
        wanted = {_where(finding) for finding in findings}
        many = getattr(locate, "many", None)
        places = many(wanted) if many is not None else {path: locate(path) for path in wanted}

        def located(finding: _Finding) -> Problem:
            row, line = places.get(_where(finding), (None, None))
            return finding.rule.at(
                file_name,
                row=row,
                line=line,
                field=field_label(finding.path) or None,
                **finding.params,
            )

        problems = [located(finding) for finding in self.problems]
        if self.dropped_problems:
            problems.append(TOO_MANY_PROBLEMS.at(file_name, count=self.dropped_problems))
        warnings = [located(finding) for finding in self.warnings]
        if self.dropped_warnings:
            warnings.append(TOO_MANY_PROBLEMS.at(file_name, count=self.dropped_warnings))
        return problems, warnings


def _where(finding: _Finding) -> DocPath:
    return finding.path[:-1] if finding.missing else finding.path


# --- Building the plan's frozen dataclasses.
#
# A frozen dataclass's generated __init__ sets each field through object.__setattr__, which
# costs about 1 µs per TaskSpec: as much as the rest of a task's checks. `_new` fills the
# instance's __dict__ at once, as pydantic-core does for the criteria it builds, and as
# pickle does. It is only used for the plan's types, which have no __post_init__, no
# __slots__ and no field that computes a default (asserted below), and always with every
# field given, so the instance equals the one the constructor would build (a test checks).

_NEW_OK = (TaskSpec, CriterionSpec, Verifier)
assert all(not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__") for cls in _NEW_OK)


def _new(cls: type[Any], values: dict[str, Any]) -> Any:
    """An instance of one of `_NEW_OK` with exactly `values` as its fields."""
    instance = object.__new__(cls)
    object.__setattr__(instance, "__dict__", values)
    return instance


def _new_many(cls: type[Any], values: list[dict[str, Any]]) -> list[Any]:
    """`[_new(cls, fields) for fields in values]`, with no Python call per instance."""
    instances = list(map(object.__new__, repeat(cls, len(values))))
    for _ in map(object.__setattr__, instances, repeat("__dict__"), values):
        pass
    return instances


# --- The rules.

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_BLANK_VERIFIER = Verifier(kind=None)  # type: ignore[arg-type]  # "verifier": {} = none given
_DEFAULT_EXPECTED_ANSWER_VERIFIER = Verifier(
    kind=DEFAULT_EXPECTED_ANSWER_VERIFIER["kind"],
    output_type=DEFAULT_EXPECTED_ANSWER_VERIFIER["outputType"],
)


def _blank(value: str | None) -> bool:
    return value is None or value.strip() == ""


class _Validator:
    """Checks one validated document against the page's rules and builds its plan.

    Each step has a fast path for the usual, valid case (one pass of cheap tests over the
    values pydantic built) and only looks value by value when that pass finds something.
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
        self._expected_criteria: dict[Verifier, CriterionSpec] = {}
        # Most tasks share one expected-answer verifier (the file's): skip hashing it.
        self._last_expected: tuple[Verifier, CriterionSpec] | None = None
        # Verifiers already checked without a finding; a criterion list whose verifiers
        # are all among them needs no look value by value.
        self._clean_verifiers: set[Verifier] = set()
        # Set when every criterion of the document is known to have a non-blank id and
        # text and a clean verifier or none (`_validate_reader_document` checks the whole
        # file's at once): then a list only needs its ids to be unique.
        self.criteria_checked = False

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
            verifier = self.verifier(given.get(key), ("settings", key), lambda s=subject: s)
            if verifier is not None:
                settings[key] = verifier.to_json()
                if key == "expectedAnswerVerifier":
                    expected_answer_verifier = verifier

        criteria, _ = self.criteria(data.get("criteria"), ("criteria",), None)

        task_docs = data.get("tasks")
        if not task_docs:
            self.findings.problem(NO_TASKS, ("tasks",), missing=task_docs is None)
            task_docs = []
        usual = self.usual_tasks(task_docs)
        tasks = (
            tuple(usual)
            if usual is not None
            else tuple(
                self.task(doc, index, bool(criteria), expected_answer_verifier)
                for index, doc in enumerate(task_docs)
            )
        )
        self.duplicates(tasks, task_docs)
        return DatasetSpec(
            name=data.get("name") or "",
            description=data.get("description") or "",
            settings=settings,
            criteria=criteria,
            tasks=tasks,
        )

    def duplicates(self, tasks: tuple[TaskSpec, ...], docs: list[dict[str, Any]]) -> None:
        """A repeated task id is a problem; a repeated prompt only a warning."""
        if len({task.id for task in tasks}) != len(tasks):
            first: dict[str, int] = {}
            for index, task in enumerate(tasks):
                if task.id not in first:
                    first[task.id] = index
                    continue
                path: DocPath = ("tasks", index)
                self.findings.problem(
                    DUPLICATE_TASK_ID,
                    (*path, "id") if docs[index].get("id") is not None else path,
                    task=_shown(task.id),
                    first=first[task.id] + 1,
                )
        if len({task.prompt for task in tasks}) != len(tasks):
            first_id: dict[str, str] = {}
            for index, task in enumerate(tasks):
                if not task.prompt or task.prompt.isspace():
                    continue
                if task.prompt not in first_id:
                    first_id[task.prompt] = task.id
                    continue
                self.findings.warning(
                    DUPLICATE_PROMPT,
                    ("tasks", index, "prompt"),
                    task=_shown(task.id),
                    first=_shown(first_id[task.prompt]),
                )

    def usual_tasks(self, docs: list[dict[str, Any]]) -> list[TaskSpec] | None:
        """`self.task` of every doc when all are the usual rubric task, else None.

        The usual task (a reader's, with `criteria_checked` set) has only an id, a prompt,
        perhaps a name, and criteria, all non-blank, with unique criterion ids. For it
        `task` finds nothing and returns exactly this: no expected answer (so no
        expected-answer criterion either), the criteria as they are, no files, a new empty
        evidence dict. Checked a key at a time over all tasks, in C through `map`.
        """
        if not (self.criteria_checked and docs and _USUAL_TASK_KEYS.issuperset(chain(*docs))):
            return None
        ids = list(map(dict.get, docs, repeat("id")))
        prompts = list(map(dict.get, docs, repeat("prompt")))
        criteria = list(map(dict.get, docs, repeat("criteria")))
        if not (all(ids) and all(prompts) and all(criteria)):
            return None  # a missing id, prompt or criteria: `task` numbers or reports it
        if any(map(str.isspace, ids)) or any(map(str.isspace, prompts)):
            return None
        if list(map(len, map(set, map(map, repeat(_ID_OF), criteria)))) != list(map(len, criteria)):
            return None  # a repeated criterion id: `task` reports it
        names = map(dict.get, docs, repeat("name"))
        return _new_many(
            TaskSpec,
            [
                {
                    "id": task_id,
                    "name": name or task_id,
                    "prompt": prompt,
                    "expected_text": None,
                    "expected_verifier": None,
                    "criteria": tuple(own),
                    "input_files": (),
                    "expected_files": (),
                    "evidence": {},
                }
                for task_id, name, prompt, own in zip(ids, names, prompts, criteria, strict=True)
            ],
        )

    def task(
        self,
        doc: dict[str, Any],
        index: int,
        file_has_criteria: bool,
        expected_answer_verifier: Verifier,
    ) -> TaskSpec:
        # The hot loop of a large file: messages and paths are built only for a problem.
        task_id = doc.get("id")
        if not task_id or task_id.isspace():
            task_id = f"task-{index + 1}"
        prompt = doc.get("prompt")
        if not prompt or prompt.isspace():
            self.findings.problem(
                MISSING_PROMPT,
                ("tasks", index, "prompt"),
                missing=prompt is None,
                task=_shown(task_id),
            )
            prompt = prompt or ""

        expected_text = expected_verifier = None
        expected = doc.get("expected")
        if isinstance(expected, str):
            expected = {"text": expected}
        if expected:
            expected_text = expected.get("text")
            if expected.get("verifier") is not None:
                expected_verifier = self.verifier(
                    expected["verifier"],
                    ("tasks", index, "expected", "verifier"),
                    lambda: f"The expected answer of task {_shown(task_id)}",
                )
            if not expected_text or expected_text.isspace():
                self.findings.problem(
                    MISSING_EXPECTED_TEXT,
                    ("tasks", index, "expected", "text"),
                    missing=expected_text is None,
                    task=_shown(task_id),
                )
                expected_text = None

        criteria, ids = self.criteria(doc.get("criteria"), ("tasks", index, "criteria"), task_id)
        if not expected and not criteria and not file_has_criteria:
            self.findings.problem(NOTHING_TO_GRADE, ("tasks", index), task=_shown(task_id))
        # Given both ways of grading, the task lands as a rubric with the expected answer
        # as one of its criteria (unless it is there already, as in an exported file).
        if (
            expected_text is not None
            and (criteria or file_has_criteria)
            and EXPECTED_ANSWER_CRITERION_ID not in ids
        ):
            criteria = (
                self.expected_criterion(expected_verifier or expected_answer_verifier),
                *criteria,
            )

        input_files = doc.get("inputFiles")
        expected_files = doc.get("expectedFiles")
        evidence = doc.get("evidence")
        return _new(
            TaskSpec,
            {
                "id": task_id,
                "name": doc.get("name") or task_id,
                "prompt": prompt,
                "expected_text": expected_text,
                "expected_verifier": expected_verifier,
                "criteria": criteria,
                "input_files": self.files(
                    input_files, ("tasks", index, "inputFiles"), task_id, "input files"
                )
                if input_files
                else (),
                "expected_files": self.files(
                    expected_files, ("tasks", index, "expectedFiles"), task_id, "expected files"
                )
                if expected_files
                else (),
                "evidence": self.evidence(evidence, ("tasks", index, "evidence"), task_id)
                if evidence
                else {},
            },
        )

    def expected_criterion(self, verifier: Verifier) -> CriterionSpec:
        # Criteria are immutable, so the tasks graded the same way share one.
        last = self._last_expected
        if last is not None and last[0] is verifier:
            return last[1]
        criterion = self._expected_criteria.get(verifier)
        if criterion is None:
            criterion = self._expected_criteria[verifier] = expected_answer_criterion(verifier)
        self._last_expected = (verifier, criterion)
        return criterion

    def evidence(self, evidence: dict[str, Any], path: DocPath, task_id: str) -> dict[str, Any]:
        """Free-form evidence, which must still be JSON (no NaN or Infinity in it)."""
        try:
            json.dumps(evidence, allow_nan=False)
        except ValueError:
            self.findings.problem(NON_FINITE_EVIDENCE, path, task=_shown(task_id))
        return evidence

    def criteria(
        self, criteria: list[CriterionSpec] | None, path: DocPath, task_id: str | None
    ) -> tuple[tuple[CriterionSpec, ...], set[str | None]]:
        """A task's criteria (or, with no task_id, the file's for every task) and their ids."""
        if not criteria:
            return (), set()
        if self.criteria_checked:
            ids = set(map(_ID_OF, criteria))
            if len(ids) == len(criteria):
                return tuple(criteria), ids
        ids = {criterion.id for criterion in criteria}
        usual = None not in ids and len(ids) == len(criteria)
        if usual:
            clean = self._clean_verifiers
            with_verifier = False
            for criterion in criteria:
                text = criterion.criterion
                if not text or text.isspace():
                    usual = False
                    break
                verifier = criterion.verifier
                if verifier is not None:
                    if verifier not in clean:
                        usual = False
                        break
                    with_verifier = True
            # Looked at one by one, a blank id becomes `criterion-<n>`; the list below
            # keeps it only when no criterion has a verifier (as it always has). A list
            # with verifiers already checked clean, and no blank id, is exactly what the
            # one-by-one look would return.
            if usual and with_verifier:
                usual = not any(not id_ or id_.isspace() for id_ in ids)
        if usual:
            return tuple(criteria), ids
        where = "the criteria for every task" if task_id is None else f"task {_shown(task_id)}"
        checked = self._criteria_one_by_one(criteria, path, where)
        return tuple(checked), {criterion.id for criterion in checked}

    def _criteria_one_by_one(
        self, criteria: list[CriterionSpec], path: DocPath, where: str
    ) -> list[CriterionSpec]:
        seen: set[str] = set()
        checked = []
        for index, criterion in enumerate(criteria):
            here = (*path, index)
            given_id = criterion.id
            criterion_id = given_id
            if not criterion_id or criterion_id.isspace():
                criterion_id = f"criterion-{index + 1}"
            shown = _shown(criterion_id)
            if criterion_id in seen:
                self.findings.problem(
                    DUPLICATE_CRITERION_ID,
                    (*here, "id") if given_id is not None else here,
                    criterion=shown,
                    where=where,
                )
            seen.add(criterion_id)
            text = criterion.criterion
            if not text or text.isspace():
                self.findings.problem(
                    MISSING_CRITERION_TEXT,
                    (*here, "criterion"),
                    missing=text is None,
                    criterion=shown,
                )
            verifier = self.verifier(
                criterion.verifier, (*here, "verifier"), lambda shown=shown: f"Criterion {shown}"
            )
            checked.append(
                replace(criterion, id=criterion_id, criterion=text or "", verifier=verifier)
            )
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
            for name in _PLACEHOLDER.findall(verifier.instructions):
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

    def files(
        self, docs: list[dict[str, Any]], path: DocPath, task_id: str, kind: str
    ) -> tuple[FileSpec, ...]:
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
            if parts.scheme.lower() != "https" or not parts.netloc:
                self.findings.problem(LINK_NOT_HTTPS, (*path, "url"), url=_shown(url))
                return None
            default_name = unquote(posixpath.basename(parts.path)) or parts.netloc
            return FileSpec(name=name or default_name, url=url)
        if _blank(zip_path):
            self.findings.problem(FILE_NO_LOCATION, path)
            return None
        assert zip_path is not None
        if self.zip_members is None:
            self.findings.problem(FILE_NEEDS_ZIP, (*path, "path"), path=_shown(zip_path))
            return None
        member = _zip_member(zip_path, self.zip_members)
        if member is None:
            self.findings.problem(FILE_NOT_IN_ZIP, (*path, "path"), path=_shown(zip_path))
            return None
        size = self.zip_members[member]
        if size > MAX_ATTACHED_FILE_BYTES:
            self.findings.problem(FILE_TOO_LARGE, (*path, "path"), path=_shown(zip_path), size=size)
            return None
        return FileSpec(name=name or posixpath.basename(member), path=member, size=size)


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


def _type_problems(
    errors: list[ErrorDetails], findings: _Findings, field_label: Callable[[DocPath], str]
) -> list[DocPath]:
    """Record pydantic's errors; return the paths of the values that are wrong.

    Unknown keys are only warnings, so they are not among the paths returned.
    """
    wrong: list[DocPath] = []
    for error in errors:
        path: DocPath = tuple(error["loc"])
        kind = error["type"]
        if "ExpectedDoc" in path or "str" in path:
            # `expected` is an object or a bare string: the string branch only fails when
            # the object branch does, so its error adds nothing; a wrong type at the
            # object branch itself means the value was neither.
            if "str" in path:
                continue
            tag = path.index("ExpectedDoc")
            if tag == len(path) - 1 and kind == "dict_type":
                kind = "text_or_object"
            path = path[:tag] + path[tag + 1 :]
        label = field_label(path) or "The file"
        if kind in ("extra_forbidden", "unexpected_keyword_argument"):
            findings.warning(UNKNOWN_FIELD, path, label=label)
            continue
        wrong.append(path)
        value = error.get("input")
        if kind == "too_long":
            count = (error.get("ctx") or {}).get("actual_length")
            limit = (error.get("ctx") or {}).get("max_length")
            if path[-1] == "tasks":
                findings.problem(TOO_MANY_TASKS, path, count=count, limit=limit)
            elif path[-1] == "criteria":
                findings.problem(TOO_MANY_CRITERIA, path, count=count, limit=limit)
            else:
                kind_name = "input files" if path[-1] == "inputFiles" else "expected files"
                findings.problem(TOO_MANY_FILES, path, count=count, kind=kind_name, limit=limit)
        elif kind == "literal_error":
            rule = UNKNOWN_OUTPUT_TYPE if path[-1] == "outputType" else UNKNOWN_VERIFIER_KIND
            findings.problem(rule, path, value=_shown(value))
        elif kind == "bad_weight":
            findings.problem(BAD_WEIGHT, path, value=_shown(value))
        elif kind in _TYPE_RULES:
            findings.problem(_TYPE_RULES[kind], path, label=label)
        else:
            findings.problem(WRONG_TYPE, path, label=label, detail=error["msg"])
    return wrong


def _without(value: Any, wrong: dict[Any, Any]) -> Any:
    """A copy of `value` without the wrong values (a trie of paths; {} marks a wrong value).

    Only the objects and lists on the way to a wrong value are copied. A wrong list item
    becomes {} so that the items after it keep their positions.
    """
    if isinstance(value, dict):
        copy = dict(value)
        for key, below in wrong.items():
            if key in copy:
                if below:
                    copy[key] = _without(copy[key], below)
                else:
                    del copy[key]
        return copy
    if isinstance(value, list):
        items = list(value)
        for key, below in wrong.items():
            if isinstance(key, int) and 0 <= key < len(items):
                items[key] = _without(items[key], below) if below else {}
        return items
    return value


def _follows_from(finding: _Finding, wrong: DocPath) -> bool:
    """Whether a rule fired only because the wrong value at `wrong` was dropped."""
    if finding.path[: len(wrong)] == wrong:
        return True
    # A task whose expected answer or criteria were dropped looks ungraded; it is not.
    return finding.rule is NOTHING_TO_GRADE and wrong[: len(finding.path)] == finding.path


def _trie(paths: list[DocPath]) -> dict[Any, Any]:
    root: dict[Any, Any] = {}
    for path in paths:
        node = root
        for part in path[:-1]:
            node = node.setdefault(part, {})
        if path:
            node.setdefault(path[-1], {})
    return root


class ReaderDocument(dict):  # type: ignore[type-arg]
    """A canonical document a reader built itself from text cells (the CSV and XLSX readers).

    It is a plain dict to everything else. To `validate_document` it says the document
    likely holds only the shapes a spreadsheet reader writes: known keys, text values, a
    weight as a number or text, files as a list of text. For such a document the validator
    builds what pydantic would build directly (`_reader_data`) and runs the same rules;
    when that finds anything at all, or the document holds any other shape, the document
    takes the full pydantic path, so problems, warnings and plan are the same either way.

    `criteria_columns`, when the reader sets it, is every criterion of the document a field
    at a time (see `CriteriaColumns`), which spares reading each criterion back.
    """

    criteria_columns: CriteriaColumns | None = None


@dataclass(frozen=True, eq=False)
class CriteriaColumns:
    """Every criterion of a `ReaderDocument`, a field at a time, as its builder wrote them.

    A builder that works column by column (`columns._document_by_columns`) knows each field
    of every criterion before it makes the dicts; handing those columns over spares
    `_reader_criteria` reading 5,000 dicts back and checking their keys.

    Item i of each column describes the i-th criterion of `lists` taken in order (the
    document's own `criteria`, then each task's that has a "criteria" key, as
    `_reader_data` meets them), exactly as its dict holds it: `ids` and `texts` are what
    `dict.get` gives for "id" and "criterion", `weights` what it gives for "weight" with
    1.0 for none, `verifiers` the (kind, outputType, instructions, code) of its "verifier"
    dict (None for a missing key), or None when it has no "verifier".

    The builder sets it as its last step, once the dicts are final. `_reader_data` uses it
    only while the document still holds these very lists at these lengths; anything that
    changes a criterion dict of such a document must set `criteria_columns` to None.
    """

    lists: list[list[dict[str, Any]]]
    ids: list[Any]
    texts: list[Any]
    weights: list[Any]
    verifiers: list[tuple[Any, ...] | None]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sizes", list(map(len, self.lists)))

    def describes(self, lists: list[Any]) -> bool:
        """Whether `lists` are still the very lists, at the same lengths, this was made for."""
        return (
            len(lists) == len(self.lists)
            and all(map(is_, lists, self.lists))
            and list(map(len, lists)) == self._sizes  # type: ignore[attr-defined]
            and len(self.ids) == sum(self._sizes)  # type: ignore[attr-defined]
        )


def _reader_verifier(value: Any, cache: dict[tuple[Any, ...], Verifier]) -> Verifier | None:
    """What the verifier schema builds from a dict of text values, or None to refuse."""
    if type(value) is not dict or not _VERIFIER_KEYS.issuperset(value):
        return None
    key = (value.get("kind"), value.get("outputType"), value.get("instructions"), value.get("code"))
    verifier = cache.get(key) if all(type(part) in _TEXT_OR_NONE for part in key) else None
    if verifier is not None:
        return verifier
    kind, output_type, instructions, code = key
    if (
        any(type(part) not in _TEXT_OR_NONE for part in key)
        or (kind is not None and kind not in VERIFIER_KINDS)
        or (output_type is not None and output_type not in OUTPUT_TYPES)
    ):
        return None
    # One object per distinct verifier: the same one on 5,000 rows is checked once.
    verifier = cache[key] = Verifier(kind, output_type, instructions, code)
    return verifier


_TEXT_OR_NONE = (str, type(None))


class _Refused(Exception):
    """A value of a `ReaderDocument` outside the shapes `_reader_data` builds directly."""


def _reader_data(
    document: dict[str, Any], max_tasks: int, verifiers: dict[tuple[Any, ...], Verifier]
) -> dict[str, Any] | None:
    """What `_models("ignore", max_tasks)` returns for a reader-built document, or None.

    None whenever any value is not one the reader writes and the schema accepts as it is
    (text, a finite positive weight, a known verifier kind and output type, lists within
    their limits): then pydantic must check it. The values built are the schema's own
    (a weight as float, a file as {"path"} or {"url"}, a missing weight as 1.0), which the
    test comparing both paths on generated documents holds to. `verifiers` gathers each
    distinct verifier built.
    """
    # The criteria lists, converted all at once when the walk is done (see `_reader_criteria`).
    pending: list[tuple[dict[str, Any], list[Any]]] = []

    def text(value: Any) -> Any:
        if type(value) is not str:
            raise _Refused
        return value

    def files(value: Any) -> list[dict[str, str]]:
        if type(value) is not list or len(value) > MAX_FILES_PER_KIND:
            raise _Refused
        return [_file_shorthand(text(item)) for item in value]

    def expected(value: Any) -> dict[str, Any]:
        if type(value) is not dict or not _EXPECTED_KEYS.issuperset(value):
            raise _Refused
        built: dict[str, Any] = {}
        if "text" in value:
            built["text"] = text(value["text"])
        if "verifier" in value:
            verifier = _reader_verifier(value["verifier"], verifiers)
            if verifier is None:
                raise _Refused
            built["verifier"] = verifier
        return built

    def tasks(docs: list[Any]) -> list[dict[str, Any]]:
        # Checked a key at a time over all tasks; only the few keys whose values are not
        # text are then rebuilt task by task.
        if set(map(type, docs)) - {dict} or not _READER_TASK_KEYS.issuperset(
            chain.from_iterable(docs)
        ):
            raise _Refused
        for key in ("id", "name", "prompt"):
            if set(map(type, map(dict.get, docs, repeat(key), repeat("")))) - {str}:
                raise _Refused
        built = list(map(dict.copy, docs))
        for key, convert in (
            ("expected", expected),
            ("inputFiles", files),
            ("expectedFiles", files),
        ):
            for doc in compress(built, map(dict.__contains__, built, repeat(key))):
                doc[key] = convert(doc[key])
        for doc in compress(built, map(dict.__contains__, built, repeat("criteria"))):
            pending.append((doc, doc["criteria"]))
        return built

    if not _READER_DATASET_KEYS.issuperset(document):
        return None
    try:
        data: dict[str, Any] = {}
        for key, value in document.items():
            if key == "settings":
                if value != {} or type(value) is not dict:
                    raise _Refused
                data[key] = {}
            elif key == "criteria":
                pending.append((data, value))
                data[key] = value
            elif key == "tasks":
                if type(value) is not list or len(value) > max_tasks:
                    raise _Refused
                data[key] = tasks(value)
            else:
                data[key] = text(value)
        lists = [value for _, value in pending]
        columns = document.criteria_columns if isinstance(document, ReaderDocument) else None
        if columns is not None and columns.describes(lists):
            converted = _reader_criteria_from_columns(columns, verifiers)
        else:
            converted = _reader_criteria(lists, verifiers)
    except _Refused:
        return None
    for (owner, _), criteria in zip(pending, converted, strict=True):
        owner["criteria"] = criteria
    return data


_ID_OF = attrgetter("id")
# A usual task's keys (`_Validator.usual_tasks`): none that needs a look of its own.
_USUAL_TASK_KEYS = frozenset({"id", "name", "prompt", "criteria"})
_ABSENT = object()
_WEIGHT_TYPES = frozenset({int, float, str})
_TEXT_OR_NONE_TYPES = frozenset(_TEXT_OR_NONE)


def _reader_criteria(
    lists: list[Any], verifiers: dict[tuple[Any, ...], Verifier]
) -> list[list[CriterionSpec]]:
    """Every criteria list of a reader-built document as the schema builds them, at once.

    Criteria are most of a large file, so each check runs over all of the file's at once
    (in C, through `map`), and the distinct weights and verifiers are read once each.
    Raises `_Refused` for anything but what the reader writes, as the walk does.
    """
    if set(map(type, lists)) - {list}:
        raise _Refused
    items = list(chain.from_iterable(lists))
    if set(map(type, items)) - {dict} or not _CRITERION_KEYS.issuperset(chain.from_iterable(items)):
        raise _Refused
    given = list(map(dict.get, items, repeat("verifier"), repeat(_ABSENT)))
    present = list(map(is_not, given, repeat(_ABSENT)))
    return _reader_criteria_built(
        list(map(len, lists)),
        list(map(dict.get, items, repeat("id"))),
        list(map(dict.get, items, repeat("criterion"))),
        list(map(dict.get, items, repeat("weight"), repeat(1.0))),
        present,
        _reader_verifier_keys(list(compress(given, present))),
        verifiers,
    )


def _reader_criteria_from_columns(
    columns: CriteriaColumns, verifiers: dict[tuple[Any, ...], Verifier]
) -> list[list[CriterionSpec]]:
    """`_reader_criteria(columns.lists, verifiers)`, read from the columns the reader kept.

    The same as reading each dict, since each column holds what `dict.get` gives for its
    key (`CriteriaColumns`): the dicts' keys are the four criterion keys by construction,
    and every value still goes through the same type, weight and verifier checks below.
    """
    present = list(map(is_not, columns.verifiers, repeat(None)))
    return _reader_criteria_built(
        list(map(len, columns.lists)),
        columns.ids,
        columns.texts,
        columns.weights,
        present,
        list(compress(columns.verifiers, present)),  # type: ignore[arg-type]
        verifiers,
    )


def _reader_criteria_built(
    sizes: list[int],
    ids: list[Any],
    texts: list[Any],
    weights: list[Any],
    present: list[bool],
    verifier_keys: list[tuple[Any, ...]],
    verifiers: dict[tuple[Any, ...], Verifier],
) -> list[list[CriterionSpec]]:
    """The criteria, a field at a time: each criterion's id, text, weight (1.0 when none),
    whether it has a verifier, and the (kind, outputType, instructions, code) of each it
    has; split into lists of `sizes`. Raises `_Refused` as `_reader_criteria` says."""
    if max(sizes, default=0) > MAX_CRITERIA_PER_LIST:
        raise _Refused
    if not (
        _TEXT_OR_NONE_TYPES.issuperset(map(type, ids))
        and _TEXT_OR_NONE_TYPES.issuperset(map(type, texts))
        and _WEIGHT_TYPES.issuperset(map(type, weights))
    ):
        raise _Refused
    numbers = {weight: _reader_weight(weight) for weight in set(weights)}
    built_verifiers: list[Verifier | None] = [None] * len(ids)
    for index, verifier in zip(
        compress(range(len(ids)), present),
        _reader_verifiers_by_key(verifier_keys, verifiers),
        strict=True,
    ):
        built_verifiers[index] = verifier
    specs = _new_many(
        CriterionSpec,
        [
            {"id": criterion_id, "criterion": text, "weight": weight, "verifier": verifier}
            for criterion_id, text, weight, verifier in zip(
                ids, texts, map(numbers.__getitem__, weights), built_verifiers, strict=True
            )
        ],
    )
    bounds = accumulate(sizes, initial=0)
    return [specs[start:end] for start, end in pairwise(bounds)]


_VERIFIER_FIELDS = ("kind", "outputType", "instructions", "code")


def _reader_verifier_keys(values: list[Any]) -> list[tuple[Any, ...]]:
    """Each verifier dict's (kind, outputType, instructions, code), or `_Refused`."""
    if set(map(type, values)) - {dict} or not _VERIFIER_KEYS.issuperset(
        chain.from_iterable(values)
    ):
        raise _Refused
    return list(
        zip(*(map(dict.get, values, repeat(field)) for field in _VERIFIER_FIELDS), strict=True)
    )


def _reader_verifiers_by_key(
    keys: list[tuple[Any, ...]], cache: dict[tuple[Any, ...], Verifier]
) -> list[Verifier]:
    """`_reader_verifier` of the verifier each key describes, or `_Refused` if any is refused."""
    if not _TEXT_OR_NONE_TYPES.issuperset(map(type, chain.from_iterable(keys))):
        raise _Refused
    for kind, output_type, instructions, code in set(keys) - cache.keys():
        verifier = _reader_verifier(
            {"kind": kind, "outputType": output_type, "instructions": instructions, "code": code},
            cache,
        )
        if verifier is None:
            raise _Refused
    return list(map(cache.__getitem__, keys))


def _reader_weight(weight: int | float | str) -> float:
    """What the weight schema builds from a weight the reader wrote, or `_Refused`."""
    if type(weight) is str:
        try:
            return _weight_from_other(weight)
        except ValueError:
            raise _Refused from None
    try:
        number = float(weight)
    except OverflowError:
        raise _Refused from None
    if not (number > 0 and math.isfinite(number)):
        raise _Refused
    return number


def _reader_criteria_checked(
    data: dict[str, Any], validator: _Validator, verifiers: Iterable[Verifier]
) -> bool:
    """Whether every criterion of `data` passes the validator's per-criterion checks.

    True when every id and text is non-blank and every verifier is clean (each distinct
    one is checked once here, as the validator would check it anyway), so that the
    validator need only look at each list's ids. False leaves it all to the validator.
    """
    lists = [data.get("criteria") or []]
    lists += [task.get("criteria") or [] for task in data.get("tasks") or []]
    criteria = list(chain.from_iterable(lists))
    for values in (list(map(_ID_OF, criteria)), list(map(_TEXT_OF, criteria))):
        if not all(values) or any(map(str.isspace, values)):
            return False
    for verifier in verifiers:
        if verifier == _BLANK_VERIFIER:
            return False
        validator.verifier(verifier, (), str)
    return True


_TEXT_OF = attrgetter("criterion")


# What a spreadsheet reader writes (no format, version, evidence: those need pydantic).
_READER_DATASET_KEYS = frozenset({"name", "description", "settings", "criteria", "tasks"})
_READER_TASK_KEYS = _TASK_KEYS - {"evidence"}


def _validate_reader_document(
    document: ReaderDocument,
    options: CheckOptions,
    zip_members: Mapping[str, int] | None,
) -> DatasetSpec | None:
    """The plan of a reader-built document that is all good, or None to take the full path."""
    verifiers: dict[tuple[Any, ...], Verifier] = {}
    data = _reader_data(document, options.max_tasks, verifiers)
    if data is None:
        return None
    findings = _Findings()
    validator = _Validator(findings, options, zip_members)
    validator.criteria_checked = _reader_criteria_checked(data, validator, verifiers.values())
    if findings.count():
        return None
    plan = validator.dataset(data)
    return None if findings.count() else plan


def validate_document(
    document: Any,
    *,
    file_name: str,
    locate: Locate,
    options: CheckOptions,
    zip_members: Mapping[str, int] | None = None,
    field_label: Callable[[DocPath], str] = field_path,
    type_errors: list[ErrorDetails] | None = None,
) -> tuple[DatasetSpec | None, list[Problem], list[Problem]]:
    """Check a canonical dataset document; return (plan, problems, warnings).

    The plan is None when there is any problem. `zip_members` maps each member of the
    uploaded zip to its size; None means the document came on its own, so its files can
    only be links. `locate` turns a document path into (row, line); `field_label` turns it
    into the problem's `field`. `type_errors` are the errors `validate_json_text` already
    found in this document's text, so that they are not looked for twice. Never raises for
    anything the document holds.
    """
    if isinstance(document, ReaderDocument):
        plan = _validate_reader_document(document, options, zip_members)
        if plan is not None:
            return plan, [], []
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
            wrong = _type_problems(type_errors, findings, field_label)
        else:
            _unknown_keys(document, findings, field_label)
            try:
                data = shape.validate_python(document)
            except ValidationError as exc:
                wrong = _type_problems(_errors(exc), findings, field_label)
        if data is None:
            # Check the rest of the document too, so one pass lists every problem: drop
            # the wrong values, and any rule that then fires on them or inside them.
            try:
                data = shape.validate_python(_without(document, _trie(wrong)))
            except ValidationError:  # pragma: no cover - dropping values cannot add errors
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
    problems, warnings = findings.resolve(file_name, locate, field_label)
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
    When a value has the wrong type or a key is unknown, returns pydantic's errors instead:
    parse the text and hand them to `validate_document(type_errors=...)`, which says where
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
    plan = _Validator(findings, options, zip_members).dataset(data)
    problems, warnings = findings.resolve(file_name, locate, field_path)
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
    )
