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
"""

from __future__ import annotations

import ast
import math
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import BeforeValidator, ConfigDict, PlainValidator, TypeAdapter, ValidationError
from pydantic import with_config as pydantic_with_config
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from datasets_app.importing.spec import (
    DEFAULT_EXPECTED_ANSWER_VERIFIER,
    EXPECTED_ANSWER_CRITERION_ID,
    LLM_JUDGE_PLACEHOLDERS,
    MAX_ATTACHED_FILE_BYTES,
    MAX_FILES_PER_KIND,
    MAX_PROBLEMS,
    CheckOptions,
    CriterionSpec,
    DatasetSpec,
    DocPath,
    FileSpec,
    Locate,
    Problem,
    Rule,
    TaskSpec,
    Verifier,
    expected_answer_criterion,
    field_path,
)

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
    "too_many_files",
    "Task {task} has {count} {kind}; a task can have up to {limit}.",
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


def _identifier(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise PydanticCustomError("bad_id", "bad id")


def _weight(value: Any) -> float:
    """A positive, finite weight; blank or null counts as 1 and bools are not numbers."""
    number: float | None = None
    if value is None:
        return 1.0
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 1.0
        try:
            number = float(text)
        except ValueError:
            number = None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    if number is None or not math.isfinite(number) or number <= 0:
        raise PydanticCustomError("bad_weight", "bad weight")
    return number


def _expected_shorthand(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


def _file_shorthand(value: Any) -> Any:
    if isinstance(value, str):
        return {"url": value} if "://" in value else {"path": value}
    return value


def _models(extra: Literal["forbid", "ignore"]) -> TypeAdapter[Any]:
    """The document's shape; `forbid` reports unknown keys (as warnings), `ignore` drops them."""
    config = ConfigDict(extra=extra)

    @pydantic_with_config(config)
    class VerifierDoc(TypedDict, total=False):
        kind: Literal["exact_match", "llm_judge", "agent_judge", "code_verifier"] | None
        outputType: Literal["float", "boolean"] | None
        instructions: str | None
        code: str | None

    @pydantic_with_config(config)
    class CriterionDoc(TypedDict, total=False):
        id: Annotated[str | None, PlainValidator(_identifier)]
        criterion: str | None
        weight: Annotated[float, PlainValidator(_weight)]
        verifier: VerifierDoc | None

    @pydantic_with_config(config)
    class ExpectedDoc(TypedDict, total=False):
        text: str | None
        verifier: VerifierDoc | None

    @pydantic_with_config(config)
    class FileDoc(TypedDict, total=False):
        path: str | None
        url: str | None
        name: str | None

    files = list[Annotated[FileDoc, BeforeValidator(_file_shorthand)]] | None

    @pydantic_with_config(config)
    class TaskDoc(TypedDict, total=False):
        id: Annotated[str | None, PlainValidator(_identifier)]
        name: str | None
        prompt: str | None
        expected: Annotated[ExpectedDoc | None, BeforeValidator(_expected_shorthand)]
        criteria: list[CriterionDoc] | None
        inputFiles: files
        expectedFiles: files
        evidence: dict[str, Any] | None

    @pydantic_with_config(config)
    class SettingsDoc(TypedDict, total=False):
        expectedAnswerVerifier: VerifierDoc | None
        defaultVerifier: VerifierDoc | None

    @pydantic_with_config(config)
    class DatasetDoc(TypedDict, total=False):
        format: str | None
        version: int | None
        name: str | None
        description: str | None
        settings: SettingsDoc | None
        criteria: list[CriterionDoc] | None
        tasks: list[TaskDoc] | None

    return TypeAdapter(DatasetDoc)


_STRICT = _models("forbid")
_LENIENT: TypeAdapter[Any] | None = None


def _lenient() -> TypeAdapter[Any]:
    # Built on first use: only files with unknown keys need it.
    global _LENIENT
    if _LENIENT is None:
        _LENIENT = _models("ignore")
    return _LENIENT


# pydantic error type -> our rule, for errors that need no more than the field's name.
_TYPE_RULES: dict[str, Rule] = {
    "string_type": NOT_TEXT,
    "list_type": NOT_A_LIST,
    "dict_type": NOT_AN_OBJECT_FIELD,
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


# --- The rules.

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


def _blank(value: str | None) -> bool:
    return value is None or value.strip() == ""


class _Validator:
    """Checks one validated document against the page's rules and builds its plan."""

    def __init__(
        self,
        findings: _Findings,
        options: CheckOptions,
        zip_members: Mapping[str, int] | None,
    ) -> None:
        self.findings = findings
        self.options = options
        self.zip_members = zip_members
        # A file repeats the same verifier and code many times: parse each code once.
        self._code_problems: dict[str, tuple[Rule, dict[str, Any]] | None] = {}

    def dataset(self, data: dict[str, Any]) -> DatasetSpec:
        fmt = data.get("format")
        if fmt is not None and fmt != FORMAT_NAME:
            self.findings.problem(NOT_A_DATASET_FILE, ("format",), value=_shown(fmt))
        version = data.get("version")
        if version is not None and version != FORMAT_VERSION:
            self.findings.problem(UNSUPPORTED_VERSION, ("version",), value=version)

        settings: dict[str, Any] = {}
        expected_answer_verifier = Verifier.from_json(DEFAULT_EXPECTED_ANSWER_VERIFIER)
        for key, subject in (
            ("expectedAnswerVerifier", "The expected answers' verifier in settings"),
            ("defaultVerifier", "The default verifier in settings"),
        ):
            verifier = self.verifier(
                (data.get("settings") or {}).get(key), ("settings", key), subject
            )
            if verifier is not None:
                settings[key] = verifier.to_json()
                if key == "expectedAnswerVerifier":
                    expected_answer_verifier = verifier
        assert expected_answer_verifier is not None

        criteria = self.criteria(data.get("criteria"), ("criteria",), "the criteria for every task")

        tasks_doc = data.get("tasks")
        if not tasks_doc:
            self.findings.problem(NO_TASKS, ("tasks",), missing=tasks_doc is None)
            tasks_doc = []
        elif len(tasks_doc) > self.options.max_tasks:
            self.findings.problem(
                TOO_MANY_TASKS, ("tasks",), count=len(tasks_doc), limit=self.options.max_tasks
            )
        first_by_id: dict[str, int] = {}
        first_by_prompt: dict[str, str] = {}
        tasks = []
        for index, task_doc in enumerate(tasks_doc):
            task = self.task(task_doc, index, bool(criteria), expected_answer_verifier)
            path = ("tasks", index)
            if task.id in first_by_id:
                where = (*path, "id") if task_doc.get("id") is not None else path
                self.findings.problem(
                    DUPLICATE_TASK_ID, where, task=_shown(task.id), first=first_by_id[task.id] + 1
                )
            else:
                first_by_id[task.id] = index
            if task.prompt.strip():
                if task.prompt in first_by_prompt:
                    self.findings.warning(
                        DUPLICATE_PROMPT,
                        (*path, "prompt"),
                        task=_shown(task.id),
                        first=_shown(first_by_prompt[task.prompt]),
                    )
                else:
                    first_by_prompt[task.prompt] = task.id
            tasks.append(task)

        return DatasetSpec(
            name=data.get("name") or "",
            description=data.get("description") or "",
            settings=settings,
            criteria=criteria,
            tasks=tuple(tasks),
        )

    def task(
        self,
        doc: dict[str, Any],
        index: int,
        file_has_criteria: bool,
        expected_answer_verifier: Verifier,
    ) -> TaskSpec:
        path: DocPath = ("tasks", index)
        task_id = doc.get("id")
        if _blank(task_id):
            task_id = f"task-{index + 1}"
        shown = _shown(task_id)
        prompt = doc.get("prompt")
        if _blank(prompt):
            self.findings.problem(
                MISSING_PROMPT, (*path, "prompt"), missing=prompt is None, task=shown
            )
            prompt = prompt or ""

        expected_text = None
        expected_verifier = None
        expected = doc.get("expected")
        if expected:
            expected_text = expected.get("text")
            expected_verifier = self.verifier(
                expected.get("verifier"),
                (*path, "expected", "verifier"),
                f"The expected answer of task {shown}",
            )
            if _blank(expected_text):
                self.findings.problem(
                    MISSING_EXPECTED_TEXT,
                    (*path, "expected", "text"),
                    missing=expected_text is None,
                    task=shown,
                )
                expected_text = None

        criteria = self.criteria(doc.get("criteria"), (*path, "criteria"), f"task {shown}")
        has_expected = expected_text is not None or bool(expected)
        if not has_expected and not criteria and not file_has_criteria:
            self.findings.problem(NOTHING_TO_GRADE, path, task=shown)
        lands_as_rubric = expected_text is not None and (criteria or file_has_criteria)
        if lands_as_rubric and all(c.id != EXPECTED_ANSWER_CRITERION_ID for c in criteria):
            criteria = (
                expected_answer_criterion(expected_verifier or expected_answer_verifier),
                *criteria,
            )

        return TaskSpec(
            id=task_id,
            name=doc.get("name") or task_id,
            prompt=prompt,
            expected_text=expected_text,
            expected_verifier=expected_verifier,
            criteria=criteria,
            input_files=self.files(
                doc.get("inputFiles"), (*path, "inputFiles"), shown, "input files"
            ),
            expected_files=self.files(
                doc.get("expectedFiles"), (*path, "expectedFiles"), shown, "expected files"
            ),
            evidence=doc.get("evidence") or {},
        )

    def criteria(
        self, docs: list[dict[str, Any]] | None, path: DocPath, where: str
    ) -> tuple[CriterionSpec, ...]:
        if not docs:
            return ()
        seen: set[str] = set()
        criteria = []
        for index, doc in enumerate(docs):
            here = (*path, index)
            criterion_id = doc.get("id")
            if _blank(criterion_id):
                criterion_id = f"criterion-{index + 1}"
            shown = _shown(criterion_id)
            if criterion_id in seen:
                self.findings.problem(
                    DUPLICATE_CRITERION_ID,
                    (*here, "id") if doc.get("id") is not None else here,
                    criterion=shown,
                    where=where,
                )
            seen.add(criterion_id)
            text = doc.get("criterion")
            if _blank(text):
                self.findings.problem(
                    MISSING_CRITERION_TEXT,
                    (*here, "criterion"),
                    missing=text is None,
                    criterion=shown,
                )
            criteria.append(
                CriterionSpec(
                    id=criterion_id,
                    criterion=text or "",
                    weight=doc.get("weight", 1.0),
                    verifier=self.verifier(
                        doc.get("verifier"), (*here, "verifier"), f"Criterion {shown}"
                    ),
                )
            )
        return tuple(criteria)

    def verifier(self, doc: dict[str, Any] | None, path: DocPath, subject: str) -> Verifier | None:
        """The verifier `doc` describes, checking its instructions and code; None when blank."""
        if not doc or all(value is None for value in doc.values()):
            return None
        kind = doc.get("kind")
        if kind is None:
            self.findings.problem(MISSING_VERIFIER_KIND, (*path, "kind"), missing=True)
            return None
        verifier = Verifier(
            kind=kind,
            output_type=doc.get("outputType"),
            instructions=doc.get("instructions"),
            code=doc.get("code"),
        )
        if kind == "llm_judge" and verifier.instructions:
            for name in _PLACEHOLDER.findall(verifier.instructions):
                if name.strip() not in LLM_JUDGE_PLACEHOLDERS:
                    self.findings.problem(
                        UNKNOWN_PLACEHOLDER,
                        (*path, "instructions"),
                        placeholder=_shown("{{" + name + "}}"),
                    )
        if kind == "code_verifier":
            self.code(verifier.code, path, subject)
        return verifier

    def code(self, code: str | None, path: DocPath, subject: str) -> None:
        if _blank(code):
            self.findings.problem(MISSING_CODE, (*path, "code"), missing=code is None)
            return
        assert code is not None
        if code not in self._code_problems:
            self._code_problems[code] = _code_problem(code)
        found = self._code_problems[code]
        if found is not None:
            rule, params = found
            self.findings.problem(rule, (*path, "code"), **params)
        elif not self.options.python_checks_enabled:
            self.findings.warning(PYTHON_CHECKS_OFF, path, subject=subject)

    def files(
        self, docs: list[dict[str, Any]] | None, path: DocPath, task: str, kind: str
    ) -> tuple[FileSpec, ...]:
        if not docs:
            return ()
        if len(docs) > MAX_FILES_PER_KIND:
            self.findings.problem(
                TOO_MANY_FILES,
                path,
                task=task,
                count=len(docs),
                kind=kind,
                limit=MAX_FILES_PER_KIND,
            )
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


def _type_problems(exc: ValidationError, findings: _Findings) -> bool:
    """Record pydantic's errors; True when any is a problem (not only unknown keys)."""
    any_problem = False
    for error in exc.errors(include_url=False, include_input=True):
        path: DocPath = tuple(error["loc"])
        label = field_path(path) or "The file"
        kind = error["type"]
        if kind == "extra_forbidden":
            findings.warning(UNKNOWN_FIELD, path, label=label)
            continue
        any_problem = True
        value = error.get("input")
        if kind == "literal_error":
            rule = UNKNOWN_OUTPUT_TYPE if path[-1] == "outputType" else UNKNOWN_VERIFIER_KIND
            findings.problem(rule, path, value=_shown(value))
        elif kind == "bad_weight":
            findings.problem(BAD_WEIGHT, path, value=_shown(value))
        elif kind in _TYPE_RULES:
            findings.problem(_TYPE_RULES[kind], path, label=label)
        else:
            findings.problem(WRONG_TYPE, path, label=label, detail=error["msg"])
    return any_problem


def validate_document(
    document: Any,
    *,
    file_name: str,
    locate: Locate,
    options: CheckOptions,
    zip_members: Mapping[str, int] | None = None,
    field_label: Callable[[DocPath], str] = field_path,
) -> tuple[DatasetSpec | None, list[Problem], list[Problem]]:
    """Check a canonical dataset document; return (plan, problems, warnings).

    The plan is None when there is any problem. `zip_members` maps each member of the
    uploaded zip to its size; None means the document came on its own, so its files can
    only be links. `locate` turns a document path into (row, line); `field_label` turns it
    into the problem's `field`. Never raises for anything the document holds.
    """
    findings = _Findings()
    plan: DatasetSpec | None = None
    if not isinstance(document, dict):
        findings.problem(NOT_AN_OBJECT, ())
    else:
        data: dict[str, Any] | None
        try:
            data = _STRICT.validate_python(document)
        except ValidationError as exc:
            data = None if _type_problems(exc, findings) else _lenient().validate_python(document)
        if data is not None:
            plan = _Validator(findings, options, zip_members).dataset(data)
    problems, warnings = findings.resolve(file_name, locate, field_label)
    return (None if problems else plan), problems, warnings
