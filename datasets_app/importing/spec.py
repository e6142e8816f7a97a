"""The values the checker hands back: a dataset spec (the plan to import) and its problems.

Every reader (JSON, JSONL, CSV, XLSX, ZIP, contextgrid eval sets) ends in these types, and
every writer (export, templates) starts from them. Pure Python: no Django here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from datasets_app.importing.aliases import normalize
from datasets_app.importing.encodings import CHOICES as ENCODINGS

if TYPE_CHECKING:  # the parts of a Read the shape stage makes a document of
    from datasets_app.importing.columns import Table
    from datasets_app.importing.shapes.base import Record, Records

ScoredBy = Literal["expected_answer", "criteria"]

VERIFIER_KINDS: tuple[str, ...] = ("exact_match", "llm_judge", "agent_judge", "code_verifier")
OUTPUT_TYPES: tuple[str, ...] = ("float", "boolean")

# Limits from the reference page ("Dataset files"): a file holds up to 1,000 tasks, and a
# task up to 10 input and 10 expected files of up to 10 MiB each.
MAX_TASKS = 1_000
MAX_FILES_PER_KIND = 10
MAX_ATTACHED_FILE_BYTES = 10 * 1024 * 1024

# How much of a .json, .jsonl, .csv or .xlsx upload the checker reads. The page's largest
# file, 1,000 tasks with long prompts and several criteria each, stays well under 10 MiB;
# 50 MiB leaves room for prompts that paste whole documents while keeping the parsed copy
# in memory (several times the bytes for JSON) bounded. A zip has its own limits.
MAX_FILE_BYTES = 50 * 1024 * 1024

# Not a limit the page states: a bound so that a hostile file (a list of millions of wrong
# criteria) cannot make the checker collect millions of errors. No rubric comes near it.
MAX_CRITERIA_PER_LIST = 1_000

# A file wrong everywhere could otherwise list millions of problems; past this many, one
# last problem says how many more there are.
MAX_PROBLEMS = 1_000

# The longest text a person can give in one field: a prompt, an expected answer, a
# criterion, a verifier's instructions or code. 1 MiB of text is about 250,000 tokens, past
# what most models take in one prompt and far past what a person reads on the task page
# (which shows every field whole); Excel itself stops a cell at 32,767 characters. Longer
# material belongs in an attached input file (10 MiB each, which the task page links rather
# than shows). Without a cap, one 195 KB .xlsx imported a 199 MB prompt and its task page
# then took 1.7 GiB to draw.
MAX_TEXT_CHARS = 1024 * 1024
# What one file may hold in all, so that what a file imports stays the size of what it is:
# text (every field above, counted each time it is stored, and task names) up to the size a
# plain .json or .csv can have, so a .xlsx's shared strings cannot multiply it; criteria up
# to 20 a task on average for 1,000 tasks (rubrics are usually 5-20 each, PaperBench's
# ~400 for each of its 20 papers; a file of 1,000 tasks × 1,000 criteria took 54 s and
# 1.5 GiB to import). Attached files are bounded by the page's own limits: 20 a task
# (20,000 a file), 10 MiB each, 2 GiB unzipped a zip.
MAX_TEXT_CHARS_PER_FILE = MAX_FILE_BYTES
MAX_CRITERIA_PER_FILE = 20_000

# Limits of the database and the storage, checked so that a file the checker passes also
# imports (and exports and imports back): ids (Task.task_id, Criterion.criterion_id), task
# names (Task.name), links (TaskFile.url) and attached files' names, which are one name of
# at most 255 bytes, the most a file system takes, with no folder in it.
MAX_ID_CHARS = 200
# A task's metadata: keys a filter and a column header can carry, few enough for a page.
MAX_METADATA_KEYS = 50
MAX_METADATA_KEY_CHARS = 100
MAX_TASK_NAME_CHARS = 300
MAX_URL_CHARS = 2_000
MAX_FILE_NAME_BYTES = 255


def trimmed_id(value: str) -> str:
    """A task's or criterion's id as every path reads it: without the whitespace around it.

    Spaces a spreadsheet cell or a hand-written file carries are never part of an id: on
    screen " t1" and "t1" read the same, and a CSV export of " t1" read back as "t1" would
    not import back as it was. The one rule, applied where every file's (and the task
    form's) ids are validated (document._ID)."""
    return value.strip()


# A task's name made from its prompt: at most this long, enough to tell tasks apart in a list.
NAME_CHARS = 80
# How a chat prompt stored as text marks the question it asks (see `shapes`' docstring).
CHAT_QUESTION_LABEL = "Question"
ELLIPSIS = "…"


def shorten(value: Any, limit: int = 40, *, one_line: bool = True) -> str:
    """A value from a file as a message or a preview echoes it: text as it is (anything else
    as Python writes it), on one line unless `one_line` is false, and at most `limit`
    characters, the last of a cut one an ellipsis. The one way every message shortens."""
    text = value if isinstance(value, str) else repr(value)
    if one_line:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def question_of(prompt: str) -> str:
    """The question a prompt asks: a chat prompt's last user turn, else the prompt."""
    marker = f"\n\n{CHAT_QUESTION_LABEL}: "
    at = prompt.rfind(marker)
    return prompt[at + len(marker) :] if at != -1 else prompt


def name_from_prompt(prompt: str) -> str:
    """The name of a task that gives none, whatever its file: the first line of the question
    its prompt asks, shortened. One rule for every container (.json, .jsonl, a sheet, a
    zip, the API), so the same record is named alike wherever it comes from."""
    question = question_of(prompt)
    line = next((line.strip() for line in question.splitlines() if line.strip()), "")
    return shorten(line, NAME_CHARS)


def limits_for_people() -> dict[str, str]:
    """The limits above as the help page states them (numbers written as people read them)."""
    return {
        "text": f"{MAX_TEXT_CHARS:,}",
        "text_per_file": f"{MAX_TEXT_CHARS_PER_FILE:,}",
        "criteria_per_file": f"{MAX_CRITERIA_PER_FILE:,}",
        "id": f"{MAX_ID_CHARS:,}",
        "task_name": f"{MAX_TASK_NAME_CHARS:,}",
        "url": f"{MAX_URL_CHARS:,}",
        "file_name": f"{MAX_FILE_NAME_BYTES:,}",
    }


# What grades a task or criterion that names no verifier of its own. The page: "When a task
# doesn't say how to check it (no verifier), an agent judge compares the answer with the
# expected one and scores it from 0 to 1."
DEFAULT_EXPECTED_ANSWER_VERIFIER: dict[str, Any] = {"kind": "agent_judge", "outputType": "float"}
DEFAULT_CRITERION_VERIFIER: dict[str, Any] = {
    "kind": "llm_judge",
    "outputType": "boolean",
    "instructions": (
        "You are grading an AI agent's response against one rubric criterion. Pass only if "
        "the response clearly satisfies the criterion. Criterion: {{criterion}}. "
        "Task: {{prompt}}. Response: {{output}}"
    ),
}

# "A task given both lands as a rubric, with 'Matches the expected answer' as one of its
# criteria."
EXPECTED_ANSWER_CRITERION_ID = "matches-expected-answer"
EXPECTED_ANSWER_CRITERION_TEXT = "Matches the expected answer"

# The placeholders an llm_judge's instructions may use (`{{ output }}` as well as
# `{{output}}`), found by one pattern: the checker names any other, and the judges
# (context_verifiers.templates) fill these.
LLM_JUDGE_PLACEHOLDERS: tuple[str, ...] = ("criterion", "prompt", "output", "expected")
PLACEHOLDER_PATTERN = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Verifier:
    """How one criterion or expected answer is graded (`kind` is one of VERIFIER_KINDS)."""

    kind: str
    output_type: str | None = None
    instructions: str | None = None
    code: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The verifier as the dataset file writes it (camelCase keys, no empty ones)."""
        data: dict[str, Any] = {"kind": self.kind}
        if self.output_type is not None:
            data["outputType"] = self.output_type
        if self.instructions is not None:
            data["instructions"] = self.instructions
        if self.code is not None:
            data["code"] = self.code
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Verifier | None:
        if not data:
            return None
        return cls(
            kind=data["kind"],
            output_type=data.get("outputType"),
            instructions=data.get("instructions"),
            code=data.get("code"),
        )


@dataclass(frozen=True, slots=True)
class CriterionSpec:
    id: str
    criterion: str
    weight: float = 1.0
    verifier: Verifier | None = None


def expected_answer_criterion(verifier: Verifier) -> CriterionSpec:
    """The "Matches the expected answer" criterion a task given both ways of grading gets."""
    return CriterionSpec(
        id=EXPECTED_ANSWER_CRITERION_ID,
        criterion=EXPECTED_ANSWER_CRITERION_TEXT,
        weight=1.0,
        verifier=verifier,
    )


def lands_as_rubric(
    expected_text: str | None, criterion_ids: Collection[str | None], *, shared_criteria: bool
) -> bool:
    """The page's rule, "a task given both lands as a rubric, with 'Matches the expected
    answer' as one of its criteria", as the one test every path uses: a task with an
    expected answer and criteria (its own, or its dataset's for every task) gets that
    criterion, unless it has it already (an exported file does)."""
    return (
        expected_text is not None
        and bool(criterion_ids or shared_criteria)
        and EXPECTED_ANSWER_CRITERION_ID not in criterion_ids
    )


def expected_answer_verifier(settings: Mapping[str, Any]) -> Verifier:
    """The verifier that grades expected answers under a dataset's settings: its
    `expectedAnswerVerifier`, else the page's default (an agent judge scoring 0 to 1)."""
    verifier = Verifier.from_json(
        settings.get("expectedAnswerVerifier") or DEFAULT_EXPECTED_ANSWER_VERIFIER
    )
    assert verifier is not None
    return verifier


def default_verifier(settings: Mapping[str, Any]) -> Verifier:
    """The verifier of a criterion that names none: the settings' `defaultVerifier`, else
    an llm_judge passing or failing the criterion (DEFAULT_CRITERION_VERIFIER)."""
    verifier = Verifier.from_json(settings.get("defaultVerifier") or DEFAULT_CRITERION_VERIFIER)
    assert verifier is not None
    return verifier


@dataclass(frozen=True, slots=True)
class FileSpec:
    """An input or expected file: a member of the uploaded zip (`path`) or a link (`url`)."""

    name: str
    path: str | None = None
    url: str | None = None
    size: int | None = None
    # Filled in for zip members when the checker streams them (and for stored files).
    sha256: str | None = None


@dataclass(frozen=True, slots=True)
class TaskSpec:
    id: str
    name: str
    prompt: str
    expected_text: str | None = None
    expected_verifier: Verifier | None = None
    criteria: tuple[CriterionSpec, ...] = ()
    input_files: tuple[FileSpec, ...] = ()
    expected_files: tuple[FileSpec, ...] = ()
    # Retrieval evidence kept from a contextgrid eval set (anchors, gold spans, gold
    # documents), as plain JSON; empty for ordinary dataset files.
    evidence: dict[str, Any] = field(default_factory=dict)
    # What a dataset cannot otherwise hold (category, difficulty, source, split, context,
    # tags): our extension of the page's format, plain JSON by key.
    metadata: dict[str, Any] = field(default_factory=dict)


class MappedTasks(Sequence[TaskSpec]):
    """`change(index, task)` of each of `tasks`, worked out as they are read: a writer
    streaming a dataset of many tasks (read from the database a chunk at a time) changes
    them on the way without holding them all. Read again, it reads `tasks` again."""

    def __init__(
        self, tasks: Sequence[TaskSpec], change: Callable[[int, TaskSpec], TaskSpec]
    ) -> None:
        self._tasks = tasks
        self._change = change

    def __iter__(self) -> Iterator[TaskSpec]:
        for index, task in enumerate(self._tasks):
            yield self._change(index, task)

    def __len__(self) -> int:
        return len(self._tasks)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]  # int or slice, as Sequence
        if isinstance(index, slice):
            return tuple(self)[index]
        return self._change(index % len(self), self._tasks[index])


def graded_as_rubric(
    task: TaskSpec, *, shared_criteria: bool, expected_answer_verifier: Verifier
) -> TaskSpec:
    """`task` with "Matches the expected answer" first among its criteria when the rule
    (`lands_as_rubric`) says so, in a dataset that has (or has no) criteria for every task;
    graded by the answer's own verifier, else the dataset's expectedAnswerVerifier."""
    ids = [criterion.id for criterion in task.criteria]
    if not lands_as_rubric(task.expected_text, ids, shared_criteria=shared_criteria):
        return task
    verifier = task.expected_verifier or expected_answer_verifier
    return replace(task, criteria=(expected_answer_criterion(verifier), *task.criteria))


@dataclass(frozen=True)
class DatasetSpec:
    """The plan to import: everything a checked file says about a dataset."""

    name: str = ""
    description: str = ""
    # The file's `settings` object as written (keys `expectedAnswerVerifier`,
    # `defaultVerifier`), so that nothing the file says is lost.
    settings: dict[str, Any] = field(default_factory=dict)
    criteria: tuple[CriterionSpec, ...] = ()
    tasks: Sequence[TaskSpec] = ()


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or, as a warning, worth knowing) in a file, with where it is.

    `row` is a spreadsheet row (header = row 1) for CSV/XLSX; `line` a 1-based line for
    JSON/JSONL. `field` is the value's path in the dataset document (`tasks[1].prompt`, as
    programs read it) or a column's name; `task` is the id the file gives the task the
    problem is in, when it gives one. `code` is stable for programs; `message` is what a
    person reads.
    """

    code: str
    message: str
    file: str
    row: int | None = None
    line: int | None = None
    field: str | None = None
    task: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The problem as `--json`, the stored check and the API carry it, code included."""
        return {
            "code": self.code,
            "file": self.file,
            "row": self.row,
            "line": self.line,
            "field": self.field,
            "task": self.task,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Problem:
        """A problem as `to_json` wrote it (the form an upload keeps its check in)."""
        return cls(
            code=data.get("code", ""),
            message=data["message"],
            file=data.get("file") or "",
            row=data.get("row"),
            line=data.get("line"),
            field=data.get("field"),
            task=data.get("task"),
        )


class _Count(int):
    """A whole number in a message: `{count}` reads 1,000; an explicit format spec wins."""

    def __format__(self, spec: str) -> str:
        return format(int(self), spec or ",")


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`1 task`, `1,000 tasks`: a count and its noun, never "task(s)"."""
    noun = singular if count == 1 else (plural or singular + "s")
    return f"{count:,} {noun}"


def file_size(size: int) -> str:
    """A size as people read it: 512 bytes, 3.4 KiB, 10 MiB, 1.5 GiB."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:,.1f}".removesuffix(".0") + f" {unit}"
    return counted(size, "byte")


@dataclass(frozen=True)
class Rule:
    """A kind of problem: its stable `code` and the message a person reads.

    The message is a `str.format` template; tests import the rule and compare
    `problem.code == RULE.code`, or the whole message via `RULE.format(...)`.
    """

    code: str
    message: str

    def format(self, **params: Any) -> str:
        """The message with its values; whole numbers read as people write them (1,000)."""
        if not params:
            return self.message
        return self.message.format(
            **{
                name: _Count(value) if type(value) is int else value
                for name, value in params.items()
            }
        )

    def at(
        self,
        file: str,
        *,
        row: int | None = None,
        line: int | None = None,
        field: str | None = None,
        **params: Any,
    ) -> Problem:
        """This rule as a problem (or warning) found at the given place."""
        return Problem(
            code=self.code,
            message=self.format(**params),
            file=file,
            row=row,
            line=line,
            field=field,
        )


@dataclass(frozen=True)
class TaskPreview:
    """A row of the preview: a task as the checked file gives it."""

    id: str
    name: str
    scored_by: ScoredBy
    criteria: int
    total_weight: float

    def to_json(self) -> dict[str, Any]:
        """The row as `--json` prints it and an upload keeps it (a whole weight as 3)."""
        weight = self.total_weight
        return {
            "id": self.id,
            "name": self.name,
            "scored_by": self.scored_by,
            "criteria": self.criteria,
            "total_weight": int(weight) if float(weight).is_integer() else weight,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskPreview:
        return cls(
            id=data["id"],
            name=data.get("name", ""),
            scored_by=data.get("scored_by", "expected_answer"),
            criteria=data.get("criteria", 0),
            total_weight=data.get("total_weight", 0.0),
        )


@dataclass(frozen=True)
class FieldMap:
    """Which source (a column, or a key as a dotted path) fills each field, and why.

    `how` is "recognised" (a known shape or field names), "guessed" (nothing said which
    is which: the check asks the person to confirm), "given" (the dialog or `--map`) or
    "remembered" (the mapping this dataset's last file of the same shape used, offered
    again). `sample` is the first records as they would import under this mapping.
    """

    fields: dict[str, str]
    how: str
    sources: tuple[str, ...]
    shape: str = ""
    sample: tuple[dict[str, Any], ...] = ()
    # The file grades its tasks itself (promptfoo assertions, a criteria list), so no
    # expected-answer column need be chosen.
    graded: bool = False

    @property
    def needs_confirmation(self) -> bool:
        return self.how in ("guessed", "remembered")

    @property
    def signature(self) -> str:
        """The shape of the file as the dataset remembers a mapping by: its sources."""
        return signature_of(self.sources)

    def to_json(self) -> dict[str, Any]:
        return {
            "how": self.how,
            "fields": dict(self.fields),
            "sources": list(self.sources),
            "shape": self.shape,
            "needs_confirmation": self.needs_confirmation,
            "sample": [dict(row) for row in self.sample],
            "graded": self.graded,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FieldMap:
        return cls(
            fields=dict(data.get("fields") or {}),
            how=data.get("how", "recognised"),
            sources=tuple(data.get("sources") or ()),
            shape=data.get("shape", ""),
            sample=tuple(data.get("sample") or ()),
            graded=bool(data.get("graded")),
        )


def signature_of(sources: Iterable[str]) -> str:
    """The shape of a file as a dataset remembers a mapping by: its sources, normalised."""
    return "\n".join(sorted({normalize(source) for source in sources}))


@dataclass(frozen=True)
class CheckResult:
    file_name: str
    format: str | None
    detected: str
    problems: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()
    plan: DatasetSpec | None = None
    # Cautions to repeat in the preview (e.g. contextgrid's document-level gold note).
    notes: tuple[str, ...] = ()
    # Which column or key filled each field, when the file is another tool's shape; None
    # for a file in our own format.
    mapping: FieldMap | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and self.plan is not None

    @property
    def task_count(self) -> int:
        return len(self.plan.tasks) if self.plan else 0


@dataclass(frozen=True)
class CheckOptions:
    """What the checker needs to know from outside the file."""

    # The administrator setting "Python checks": off means each code_verifier is a warning.
    python_checks_enabled: bool = False
    max_tasks: int = MAX_TASKS
    # The person's mapping of fields to the file's columns or keys ({"prompt": "question"}),
    # from the import dialog's mapping step or `--map`; None to recognise them.
    mapping: dict[str, str] | None = None
    # Mappings the dataset remembers, by the shape of the file they were made for
    # (`signature_of`): offered again, for confirmation, for a file of that shape.
    remembered_mappings: dict[str, dict[str, str]] | None = None
    # The number of the first id made up for a task the file gives none (`task-N`): the
    # dataset's next, so that a second file without ids adds after the first's tasks
    # instead of clashing with them (`selectors.first_task_number`).
    first_task_number: int = 1
    # The encoding a person chose for a text table (a codec of `encodings.CHOICES`), from the
    # dialog's Read options or `--encoding`; None to read it as `csv_format.decode` says.
    encoding: str | None = None
    # Number the tasks task-1, task-2… whatever ids the file gives (ids that collide in
    # the file, as generated sets have), from Read options or `--number-tasks`.
    number_tasks: bool = False
    # The row of a text table's column names as a person said it (from 1), from Read
    # options or `--header-row`; None to take the first (below any title lines).
    header_row: int | None = None

    def read_as(self, read_options: Mapping[str, Any]) -> CheckOptions:
        """These options, read as a person said in `read_options` (`READ_OPTIONS` keys, as
        an upload keeps them); what is not one of them is left as it is."""
        encoding = read_options.get("encoding")
        return replace(
            self,
            encoding=encoding if encoding in ENCODINGS else None,
            number_tasks=read_options.get("number_tasks") is True,
            header_row=_row_number(read_options.get("header_row")),
        )


def _row_number(value: Any) -> int | None:
    return value if type(value) is int and 1 <= value <= MAX_HEADER_ROW else None


# What a person may say about how to read a file (the dialog's Read options, the API's form
# fields, the command line's flags): each key, and what it holds.
READ_OPTIONS = ("encoding", "number_tasks", "header_row")
# The lowest row a header may be said to be on: titles and notes above a table are a few.
MAX_HEADER_ROW = 1_000


# Maps a path inside the canonical document, e.g. ("tasks", 3, "criteria", 0, "weight"),
# to where it stands in the file: (row, line). A reader gives the best it knows: a CSV row,
# a JSON line; (None, None) when it cannot tell. A locate may also have a `many(paths)`
# method returning {path: (row, line)} for many paths at once (the JSON reader's does, so
# that it walks the text once however many problems there are); `document.validate_document`
# uses it when present.
DocPath = tuple[str | int, ...]
Locate = Callable[[DocPath], tuple[int | None, int | None]]


def field_path(path: DocPath) -> str:
    """`("tasks", 3, "criteria", 0, "weight")` -> `tasks[3].criteria[0].weight`.

    The `field` of every problem the shared validator finds, so that a person can find the
    value even in a file written on one line.
    """
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


_FIELD_PATH = re.compile(r"[A-Za-z_][\w-]*(?:\[\d+\]|\.[A-Za-z_][\w-]*)*")
_FIELD_PART = re.compile(r"\[(\d+)\]|([A-Za-z_][\w-]*)")


def path_parts(field: str) -> DocPath | None:
    """`tasks[3].criteria[0].weight` -> ("tasks", 3, "criteria", 0, "weight"); the inverse
    of `field_path`. None for a field that is not such a path (a CSV column's name)."""
    if not _FIELD_PATH.fullmatch(field):
        return None
    return tuple(int(index) if index else name for index, name in _FIELD_PART.findall(field))


def nowhere(path: DocPath) -> tuple[int | None, int | None]:
    """A Locate for documents that came from nowhere in particular (tests, exports)."""
    return (None, None)


# The importer's three stages, each with one input type and one output type:
#
#   read      bytes, file name, CheckOptions  ->  Read      (formats.READERS, evalset_format)
#   shape     Read, CheckOptions              ->  Parsed    (shapes.shape)
#   validate  Parsed, CheckOptions            ->  CheckResult  (document.check_parsed)
#
# `checker.check_file` runs them in turn (a .zip on its dataset file; a .json file that is
# the page's own document is read and validated in one pass, `json_format.check`).


class RecordsLayout(Protocol):
    """Where another tool's records stand in the file they were read from (JSON text's
    paths, JSON Lines' lines): what the shape stage needs to place the tasks it makes."""

    def detected(self, shape: str) -> str:
        """The Detected line, given the records' shape ("OpenAI evals samples")."""
        ...

    def lines(self, records: Sequence[Record]) -> list[int | None]:
        """The line of each record (a problem on one is put there)."""
        ...

    def locate(self, places: Sequence[Record]) -> Locate:
        """Where the paths of the document made of `places` (task n: the nth) are."""
        ...

    def around(self, document: dict[str, Any]) -> dict[str, Any]:
        """The document made of the records, in what held them in the file."""
        ...

    def field_label(self, path: DocPath) -> str:
        """How a problem names a field of a task made of a record."""
        ...


@dataclass
class Read:
    """What a format's reader hands the shape stage: the file decoded, and what it holds
    with where each part of it is. At most one of
    - `document`: a document of the page's own keys, handed on as it is (`locate` places
      its paths, `field_label` names them);
    - `records`: another tool's records, which `layout` places in the file;
    - `table`: a sheet's header and rows;
    none when the file could not be read (then `problems` says why).
    """

    format: str
    detected: str
    file_name: str
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    document: dict[str, Any] | None = None
    locate: Locate = nowhere
    field_label: Callable[[DocPath], str] | None = None
    records: Records | None = None
    layout: RecordsLayout | None = None
    table: Table | None = None


@dataclass
class Parsed:
    """What the shape stage hands the shared validator: the page's document.

    `document` is the canonical dataset document (the .json format's shape:
    {"name", "description", "settings", "criteria", "tasks": [...]}) or None when the
    file could not be read at all (then `problems` says why).
    """

    format: str
    detected: str
    file_name: str
    document: dict[str, Any] | None
    locate: Locate
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # How a problem's `field` names a document path; None = `field_path` (tasks[3].prompt).
    # JSONL drops the `tasks[3].` its line already says; a CSV may give its column name.
    field_label: Callable[[DocPath], str] | None = None
    # Which column or key filled each field, when the file is another tool's shape.
    mapping: FieldMap | None = None
    # True when the reader wrote the document itself from the format's own fields (a
    # sheet's columns): it holds no key the format does not know, so the validator does
    # not look for one.
    only_known_keys: bool = False
