"""contextgrid eval sets as datasets: read one into the canonical document, write one back.

An eval set (contextgrid's JSONL or CSV, a LegalBench-RAG .json, a BEIR queries + qrels
pair) shares its extension with a dataset file, so `detect` tells them apart by content and
`read` hands the shape stage a `Read` like every other reader: a document of the page's
keys, which it hands on as it is. `write` exports a dataset as contextgrid JSONL; importing
that export gives back the same tasks and evidence.

Decisions the reference pages leave open:
- Each question is a task: id = item id, prompt = the question, name = its first line
  (shortened), expected answer = the item's answer. Everything else the item holds (anchors,
  gold spans, BEIR gold documents, a question type other than factoid, item meta) is kept in
  `TaskSpec.evidence` (the shape is `evidence_of`'s docstring), so the eval set round-trips.
- A task's metadata is written as its item's `meta["metadata"]` object, and an item's
  `meta["metadata"]` object is read as the task's metadata (the validator checks its keys as
  any file's), so that metadata survives an eval-set export and import like every other
  format's. Evidence whose meta has a `metadata` entry of its own (only a .json file's
  `evidence` can say so) cannot come back as it was: the export says so in its warnings.
- A question with no answer but with evidence is graded by one criterion, "Retrieves the
  gold evidence" (`retrieves-gold-evidence`, weight 1), so that retrieval sets such as BEIR
  import; the preview says how many. A question with neither is a problem: nothing could
  grade it, and a criterion about evidence it does not have would be a lie.
- A `.csv` is an eval set only when it has a question column (question, query, q), no
  column our own reader takes as the prompt under another name (prompt, input, ...), and
  at least one column only an eval set has (`EVALSET_ONLY_COLUMNS`). Our reader also takes
  `question` as the prompt, and files such as `question,expected_answer` or
  `question,contexts,ground_truth,metadata` (ragas) must keep importing as before; so
  `context`, `type`, `category` and `metadata`, which the library also reads, are not
  enough on their own.
- A `.jsonl` is an eval set when its first value is an `_evalset` header or an object with
  `question`, no `prompt`, and evidence (`is_evalset_item`); a `.json` when it starts
  `{"tests":` or is a list whose first object has `query` and `snippets`.
- An `EvalSetError` is one problem on the file (and line or row, when the message has one).
"""

from __future__ import annotations

import csv
import io
import json
import posixpath
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import IO, Any

from contextgrid import (
    EvalItem,
    EvalSet,
    EvalSetError,
    QuestionType,
    assess,
    describe_skipped,
    parse_beir,
    parse_csv_text,
    parse_jsonl_text,
    parse_legalbench_rag_text,
    textfile,
)
from contextgrid.evalset.io import (
    BEIR_NOTE,
    CSV_COLUMN_ALIASES,
    NOTHING_SKIPPED,
    jsonl_header_line,
    jsonl_item_line,
)
from datasets_app.importing import csv_format
from datasets_app.importing.columns import field_for_header
from datasets_app.importing.json_text import (
    JsonLocator,
    decode,
    nul_problems,
    plain_words,
)
from datasets_app.importing.spec import (
    DatasetSpec,
    DocPath,
    Problem,
    Read,
    Rule,
    TaskSpec,
    counted,
    field_path,
    name_from_prompt,
)

__all__ = [
    "RETRIEVAL_CRITERION_ID",
    "RETRIEVAL_CRITERION_TEXT",
    "BeirMembers",
    "ExportTally",
    "detect",
    "evidence_of",
    "export_tally",
    "export_warnings",
    "find_beir_members",
    "metadata_of",
    "read",
    "read_beir",
    "spec_to_evalset",
    "write",
    "write_to",
]

# --- What a person reads -----------------------------------------------------------------

# The library's message already names the file and the line, row or test; the problem keeps
# the rest of it (the file and line go in the problem's own fields).
EVALSET_ERROR = Rule("evalset_error", "{detail}")
NOTHING_TO_GRADE = Rule(
    "evalset_nothing_to_grade",
    "Question {item} has no answer and no evidence, so nothing could grade it. Give it an "
    "answer, or evidence (a source document and a quote).",
)
NO_QUESTIONS = Rule("evalset_no_questions", "The eval set has no questions.{skipped}")
SEVERAL_QRELS = Rule(
    "evalset_several_qrels",
    "The zip holds {count} qrels files ({found}) and none is test.tsv; keep the one to import.",
)

NOTE_RETRIEVAL_CRITERION = (
    "{count} of {total} questions have no answer: each is graded by the criterion "
    "“Retrieves the gold evidence” (weight 1)."
)
NOTE_NOT_READ = "Not read from the zip: {names}."

# Export warnings: what a dataset holds that an eval set has no place for.
MSG_EXPORT_CRITERIA = (
    "Left out: {tasks} graded by criteria only ({ids}). An eval set grades a question by its "
    "answer or its evidence."
)
MSG_EXPORT_ANSWER_ONLY = (
    "Only the expected answer is kept for {tasks} graded by criteria as well: the criteria "
    "have no place in an eval set."
)
MSG_EXPORT_SHARED = "The criteria for every task have no place in an eval set; they are left out."
MSG_EXPORT_FILES = "The files of {tasks} are left out: an eval set cannot hold files."
MSG_EXPORT_VERIFIERS = (
    "An eval set keeps only the expected answer: the answer's own verifier is left out for {tasks}."
)
MSG_EXPORT_METADATA_CLASH = (
    "The evidence of task {task} has a meta entry called “metadata”, which an eval set keeps "
    "for the task's metadata: it is exported there and does not come back as evidence."
)
MSG_EXPORT_BAD_EVIDENCE = (
    "The evidence of task {task} is not in the eval-set shape ({detail}); it is exported "
    "without it."
)

# The entry of an item's meta that holds its task's metadata.
METADATA_KEY = "metadata"

RETRIEVAL_CRITERION_ID = "retrieves-gold-evidence"
RETRIEVAL_CRITERION_TEXT = "Retrieves the gold evidence"

# Columns only an eval set has (the library's spellings minus the ones ordinary QA CSVs use
# for something else: `context`, `type`, `category`, `metadata`).
EVALSET_ONLY_COLUMNS = frozenset(
    {
        *CSV_COLUMN_ALIASES["source_id"],
        *CSV_COLUMN_ALIASES["page"],
        *CSV_COLUMN_ALIASES["grade"],
        *CSV_COLUMN_ALIASES["occurrence"],
        "quote",
        "evidence",
        "answer_span",
        "passage",
        "qtype",
        "question_type",
        "meta",
    }
)
QUESTION_COLUMNS = frozenset(CSV_COLUMN_ALIASES["question"])

# How much of the file detection looks at: the header of a CSV, the first line of a JSONL,
# the first object of a LegalBench-RAG list. No real header or first line comes near it.
_SNIFF_BYTES = 64 * 1024
_TESTS_OBJECT = re.compile(r'\A\s*\{\s*"tests"\s*:')

# --- Detection ---------------------------------------------------------------------------


def _first_json_value(text: str) -> Any:
    try:
        return json.JSONDecoder().raw_decode(text.lstrip())[0]
    except (ValueError, RecursionError):
        # Not JSON, or nested past what the decoder reads: not an eval set's first line, and
        # the dataset reader reports what is wrong with it.
        return None


def _csv_header(text: str) -> tuple[str, list[str]]:
    """(delimiter, header names lowercased and stripped), the delimiter chosen as the library
    chooses it (`textfile.pick_delimiter`, a question column wanted)."""
    delimiter = textfile.pick_delimiter(text, wanted=QUESTION_COLUMNS)
    start, end = textfile.header_span(text)
    cells = next(csv.reader([text[start:end]], delimiter=delimiter), [])
    return delimiter, [cell.strip().lower() for cell in cells]


def is_evalset_csv_header(names: Iterable[str]) -> bool:
    """Whether a CSV with these column names is a contextgrid eval set (see the module doc)."""
    names = [name.strip().lower() for name in names]
    has_question = any(name in QUESTION_COLUMNS for name in names)
    has_prompt = any(
        field_for_header(name) == "prompt" and name not in QUESTION_COLUMNS for name in names
    )
    return has_question and not has_prompt and any(name in EVALSET_ONLY_COLUMNS for name in names)


# The keys only a contextgrid item has; `question` alone is not enough: NQ-open, HotpotQA
# and most QA files have one too.
_EVIDENCE_KEYS = frozenset({"anchors", "gold", "qtype", "meta"})


def is_evalset_item(first: dict[str, Any]) -> bool:
    """Whether a .jsonl's first object is a contextgrid eval set's header or item.

    `write_jsonl` starts with an `_evalset` header; an item without it is one only when it
    carries evidence (anchors, gold spans, a question type, meta). A file of questions and
    answers alone (NQ-open, Inspect's biology_qa, HotpotQA) is a dataset file: its
    Detected line names what it is, and nothing is lost either way.
    """
    if "_evalset" in first:
        return True
    return "question" in first and "prompt" not in first and bool(first.keys() & _EVIDENCE_KEYS)


def detect(data: bytes, fmt: str) -> str | None:
    """Which eval-set reader a .jsonl, .json or .csv file needs, or None for a dataset file.

    Returns "jsonl", "csv" or "legalbench". Looks at the first 64 KiB only.
    """
    text = textfile.head(data, _SNIFF_BYTES)
    if fmt == "jsonl":
        first = _first_json_value(text)
        return "jsonl" if isinstance(first, dict) and is_evalset_item(first) else None
    if fmt == "json":
        if _TESTS_OBJECT.match(text):
            return "legalbench"
        # A dataset .json is never a list, so a list of LegalBench-RAG-looking tests is one.
        if text.lstrip().startswith("[") and '"query"' in text and '"snippets"' in text:
            return "legalbench"
        return None
    if fmt == "csv":
        return "csv" if is_evalset_csv_header(_csv_header(text)[1]) else None
    return None


# --- Reading -----------------------------------------------------------------------------


def _decoded(
    data: bytes, file_name: str, fmt: str, encoding: str | None
) -> tuple[str | None, str, list[Problem], list[Problem]]:
    """The file's text as the dataset readers decode it (a CSV as `csv_format` does, in a
    legacy code page too): text, encoding, problems and warnings."""
    if fmt == "csv":
        text, label, warnings, problem = csv_format.decode_text(data, file_name, encoding)
        return text, label, [problem] if problem else [], warnings
    text, label, problems = decode(data, file_name)
    return text, label, problems, []


def error_problem(
    exc: EvalSetError,
    names: Iterable[str],
    default_file: str,
    *,
    test_line: Callable[[int], int | None] | None = None,
) -> Problem:
    """The library's error as one problem: its file, line or row, and what is wrong there.

    The file is the one the error names when it is one of `names` (the files handed to the
    library), else `default_file`. `test_line` gives the line of LegalBench-RAG's test N,
    whose errors name the test only.
    """
    file = exc.file if exc.file is not None and exc.file in names else default_file
    detail = exc.detail
    line = exc.line
    if exc.test is not None and exc.line is None and exc.row is None:
        item = f" ({exc.item})" if exc.item is not None else ""
        detail = f"test {exc.test}{item}: {detail}"
        line = test_line(exc.test) if test_line else None
    return EVALSET_ERROR.at(file, line=line, row=exc.row, detail=_sentence(detail))


def _sentence(text: str) -> str:
    text = plain_words(text.strip())
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _gold_documents(value: Any) -> list[list[Any]] | None:
    """BEIR's [(doc_id, grade), ...] as JSON lists, or None when `value` is something else."""
    if not isinstance(value, list | tuple):
        return None
    pairs = []
    for pair in value:
        if (
            not isinstance(pair, list | tuple)
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or isinstance(pair[1], bool)
            or not isinstance(pair[1], int | float)
        ):
            return None
        pairs.append([pair[0], pair[1]])
    return pairs


def evidence_of(item: EvalItem) -> dict[str, Any]:
    """What a task keeps of its question, besides the question and the answer.

    `{"anchors": [{source_id, quote, grade, page_hint, occurrence}], "gold": [{source_id,
    start, end, grade}], "gold_documents": [[doc_id, grade]], "qtype": "multi_hop",
    "meta": {...}}`; each key only when it has something (qtype only when not factoid).
    `gold_documents` is BEIR's `item.meta["gold_documents"]` lifted out so the task page can
    show it; `meta` is the rest of the item's meta.
    """
    evidence: dict[str, Any] = {}
    if item.anchors:
        evidence["anchors"] = [
            {
                "source_id": anchor.source_id,
                "quote": anchor.quote,
                "grade": anchor.grade,
                "page_hint": anchor.page_hint,
                "occurrence": anchor.occurrence,
            }
            for anchor in item.anchors
        ]
    if item.gold:
        evidence["gold"] = [
            {
                "source_id": gold.span.source_id,
                "start": gold.span.start,
                "end": gold.span.end,
                "grade": gold.grade,
            }
            for gold in item.gold
        ]
    meta = dict(item.meta)
    if isinstance(meta.get(METADATA_KEY), dict):
        del meta[METADATA_KEY]  # the task's metadata (`metadata_of`), not evidence
    documents = _gold_documents(meta.get("gold_documents"))
    if documents is not None:
        evidence["gold_documents"] = documents
        del meta["gold_documents"]
    if item.qtype != QuestionType.FACTOID:
        evidence["qtype"] = str(item.qtype)
    if meta:
        evidence["meta"] = meta
    return evidence


def metadata_of(item: EvalItem) -> dict[str, Any]:
    """The task's metadata an item carries: its `meta["metadata"]` object, or none."""
    metadata = item.meta.get(METADATA_KEY)
    return metadata if isinstance(metadata, dict) else {}


def _has_evidence(evidence: dict[str, Any]) -> bool:
    return bool(evidence.get("anchors") or evidence.get("gold") or evidence.get("gold_documents"))


def _field_label(path: DocPath) -> str:
    # ("tasks", 3, "prompt") -> "question": the problem's line or row already says which item,
    # and the eval set calls the fields by its own names.
    if len(path) > 2 and path[0] == "tasks":
        rest = path[2:]
        names = {"prompt": "question", "expected": "answer"}
        if isinstance(rest[0], str) and rest[0] in names:
            return field_path((names[rest[0]], *rest[1:]))
        return field_path(rest)
    return field_path(path)


class _ItemLocator:
    """Where each item stands in the file, worked out only when a problem needs it."""

    def __init__(self, places: Callable[[], list[tuple[int | None, int | None]]]) -> None:
        self._places = places
        self._known: list[tuple[int | None, int | None]] | None = None

    def __call__(self, path: DocPath) -> tuple[int | None, int | None]:
        if self._known is None:
            self._known = self._places()
        index = path[1] if len(path) >= 2 and path[0] == "tasks" else None
        if isinstance(index, int) and 0 <= index < len(self._known):
            return self._known[index]
        return (None, None)


def _granularity_words(granularity: str) -> str:
    return {
        "document": "document-level gold",
        "span": "character-span gold",
        "quote": "quoted evidence",
        "none": "no evidence",
    }.get(granularity, f"{granularity} evidence")


def _parsed(
    evalset: EvalSet,
    *,
    fmt: str,
    file_name: str,
    source: str,
    places: Callable[[], list[tuple[int | None, int | None]]],
    problem_file: str | None = None,
) -> Read:
    """The eval set as the canonical document, with the preview's words and cautions."""
    facts = assess(evalset)
    count = len(evalset)
    detected = (
        f"contextgrid eval set ({source}), {count} question{'s' if count != 1 else ''}, "
        f"{_granularity_words(facts.granularity)}"
    )
    problem_file = problem_file or file_name
    locate = _ItemLocator(places)
    notes: list[str] = []
    if facts.granularity == "document":
        notes.append(BEIR_NOTE)
    # What the library skipped, in its own words (describe_skipped reads evalset.meta).
    skipped = describe_skipped(evalset)
    if skipped != NOTHING_SKIPPED:
        notes.append(skipped)
    if not count:
        problem = NO_QUESTIONS.at(
            problem_file, skipped="" if skipped == NOTHING_SKIPPED else f" {skipped}"
        )
        return Read(fmt, detected, file_name, [problem], notes=notes)

    tasks: list[dict[str, Any]] = []
    problems: list[Problem] = []
    graded_by_retrieval = 0
    for index, item in enumerate(evalset):
        evidence = evidence_of(item)
        task: dict[str, Any] = {
            "id": item.id,
            "name": name_from_prompt(item.question),
            "prompt": item.question,
        }
        if item.answer is not None and item.answer.strip():
            task["expected"] = {"text": item.answer}
        elif _has_evidence(evidence):
            task["criteria"] = [
                {"id": RETRIEVAL_CRITERION_ID, "criterion": RETRIEVAL_CRITERION_TEXT, "weight": 1}
            ]
            graded_by_retrieval += 1
        else:
            # Said here in the eval set's words; the task is left out so that the validator
            # does not say it again in the dataset's.
            row, line = locate(("tasks", index))
            problems.append(
                NOTHING_TO_GRADE.at(problem_file, row=row, line=line, item=repr(item.id))
            )
            continue
        if evidence:
            task["evidence"] = evidence
        metadata = metadata_of(item)
        if metadata:
            task["metadata"] = metadata
        tasks.append(task)
    if graded_by_retrieval:
        notes.append(NOTE_RETRIEVAL_CRITERION.format(count=graded_by_retrieval, total=count))
    # The tasks' indexes must stay the items' for `locate`: with any left out, the file is
    # refused anyway, and only these problems are reported.
    document = {"name": evalset.id, "tasks": tasks} if not problems else None
    return Read(
        fmt,
        detected,
        file_name,
        problems,
        notes=notes,
        document=document,
        locate=locate,
        field_label=_field_label,
    )


def _jsonl_lines(text: str, count: int) -> list[tuple[int | None, int | None]]:
    # The usual layout is one value per line; then the item lines are the non-blank lines
    # after the header. Anything else (values spread over lines) leaves the lines unknown.
    lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    if lines and _is_header(lines[0][1]):
        lines = lines[1:]
    return [(None, number) for number, _ in lines] if len(lines) == count else []


def _is_header(line: str) -> bool:
    first = _first_json_value(line)
    return isinstance(first, dict) and "_evalset" in first


def _csv_rows(text: str, count: int) -> list[tuple[int | None, int | None]]:
    # Rows as a spreadsheet numbers them (the header is row 1), skipping what the library
    # skips: blank rows and rows with no question.
    delimiter, header = _csv_header(text)
    question = next(header.index(name) for name in CSV_COLUMN_ALIASES["question"] if name in header)
    rows: list[tuple[int | None, int | None]] = []
    records = csv.reader(io.StringIO(text.lstrip("\r\n"), newline=""), delimiter=delimiter)
    try:
        for number, cells in enumerate(records, 1):
            if number > 1 and question < len(cells) and cells[question].strip():
                rows.append((number, None))
    except csv.Error:
        return []
    return rows if len(rows) == count else []


def read(data: bytes, file_name: str, kind: str, encoding: str | None = None) -> Read:
    """Read an eval set (`kind` from `detect`: "jsonl", "csv" or "legalbench") for checking;
    `encoding`, a CSV's as the person chose it (`CheckOptions.encoding`)."""
    fmt = {"jsonl": "jsonl", "csv": "csv", "legalbench": "json"}[kind]
    text, label, problems, warnings = _decoded(data, file_name, fmt, encoding)
    if text is None:
        detected = f"contextgrid eval set, {label}"
        return Read(fmt, detected, file_name, problems)
    try:
        if kind == "jsonl":
            evalset = parse_jsonl_text(text, name=file_name)
            header = _is_header(text.lstrip().split("\n", 1)[0])
            source = "JSONL" + (f", eval set {evalset.id!r}" if header else "")
            parsed = _parsed(
                evalset,
                fmt=fmt,
                file_name=file_name,
                source=source,
                places=lambda: _jsonl_lines(text, len(evalset)),
            )
        elif kind == "csv":
            evalset = parse_csv_text(text, name=file_name)
            parsed = _parsed(
                evalset,
                fmt=fmt,
                file_name=file_name,
                source="CSV",
                places=lambda: _csv_rows(text, len(evalset)),
            )
        else:
            evalset = parse_legalbench_rag_text(text, name=file_name)
            parsed = _parsed(
                evalset,
                fmt=fmt,
                file_name=file_name,
                source="LegalBench-RAG",
                places=lambda: _legalbench_lines(text),
            )
    except EvalSetError as exc:
        detected = (
            f"contextgrid eval set ({'LegalBench-RAG' if kind == 'legalbench' else kind.upper()})"
        )
        problem = error_problem(
            exc, [file_name], file_name, test_line=lambda index: _test_line(text, index)
        )
        return Read(fmt, detected, file_name, [problem])
    if fmt != "csv":
        parsed.problems.extend(nul_problems(text, file_name))
    parsed.warnings[:0] = warnings
    return parsed


def _test_line(text: str, index: int) -> int | None:
    """The line LegalBench-RAG's test `index` starts on ({"tests": [...]} or a bare list)."""
    locator = JsonLocator(text)
    prefix: tuple[str, ...] = ("tests",) if text.lstrip().startswith("{") else ()
    try:
        return locator((*prefix, index))[1]
    except ValueError:  # text that is not JSON at all: no line to give
        return None


def _legalbench_lines(text: str) -> list[tuple[int | None, int | None]]:
    # Items are the tests that have a query, in order; the JSON locator finds each one's line.
    payload = json.loads(text)
    tests = payload["tests"] if isinstance(payload, dict) else payload
    prefix: DocPath = ("tests",) if isinstance(payload, dict) else ()
    paths: list[DocPath] = [
        (*prefix, index)
        for index, test in enumerate(tests)
        if isinstance(test.get("query"), str) and test["query"].strip()
    ]
    found = JsonLocator(text).many(paths)
    return [found[path] for path in paths]


def _nowhere(path: DocPath) -> tuple[int | None, int | None]:
    return (None, None)


# --- BEIR in a zip -----------------------------------------------------------------------


@dataclass(frozen=True)
class BeirMembers:
    """The members of a zip that make a BEIR eval set, and those it leaves unread."""

    queries: str
    qrels: str | None
    qrels_candidates: tuple[str, ...] = ()
    not_read: tuple[str, ...] = field(default_factory=tuple)


# The files a dataset zip takes as its dataset file (a BEIR zip has only its queries and
# corpus among them).
_DATASET_LIKE_SUFFIXES = (".csv", ".json", ".jsonl", ".xlsx")


def _stem(name: str) -> str:
    """A member's file name without folder or extension, lowercased."""
    return posixpath.splitext(posixpath.basename(name))[0].lower()


def _suffix(name: str) -> str:
    """A member's extension, lowercased."""
    return posixpath.splitext(name)[1].lower()


def _files_under(names: Iterable[str], folder: str) -> list[str]:
    """The zip's files (not its folders) under `folder`."""
    return [name for name in names if name.startswith(folder) and not name.endswith("/")]


def _jsonl_named(names: list[str], prefix: str) -> list[str]:
    """The `.jsonl` files among `names` whose name starts with `prefix`."""
    return [name for name in names if _suffix(name) == ".jsonl" and _stem(name).startswith(prefix)]


def _chosen_qrels(qrels: list[str]) -> str | None:
    """The qrels file to read: the one `test.tsv` (BEIR evaluates on it), else the only one,
    else None (the person chooses)."""
    tests = [name for name in qrels if posixpath.basename(name).lower() == "test.tsv"]
    if len(tests) == 1:
        return tests[0]
    if len(qrels) == 1:
        return qrels[0]
    return None


def find_beir_members(names: Iterable[str], folder: str = "") -> BeirMembers | None:
    """A BEIR benchmark as published, or None: the zip is then an ordinary dataset zip.

    BEIR: one `queries*.jsonl` at the top of `folder`, at least one `.tsv` under it (BEIR
    puts them in `qrels/`), and no other file a dataset zip would take as its dataset file,
    except `corpus*.jsonl` (which is not read: gold is judged by document id). Of several
    qrels files, `test.tsv` is the one BEIR evaluates on; without it the choice is the
    person's (`qrels` is None and `qrels_candidates` lists them).
    """
    names = _files_under(names, folder)
    top = [name for name in names if "/" not in name[len(folder) :]]
    dataset_like = [name for name in top if _suffix(name) in _DATASET_LIKE_SUFFIXES]
    queries = _jsonl_named(dataset_like, "queries")
    corpus = _jsonl_named(dataset_like, "corpus")
    qrels = sorted(name for name in names if _suffix(name) == ".tsv")
    if len(queries) != 1 or not qrels or len(dataset_like) != len(queries) + len(corpus):
        return None
    chosen = _chosen_qrels(qrels)
    not_read = tuple(corpus) + tuple(name for name in qrels if chosen and name != chosen)
    return BeirMembers(queries[0], chosen, tuple(qrels), not_read)


def several_qrels_problem(members: BeirMembers, zip_name: str) -> Problem:
    """The problem for a BEIR zip whose qrels file cannot be chosen (`members.qrels` None)."""
    found = ", ".join(members.qrels_candidates)
    return SEVERAL_QRELS.at(zip_name, count=len(members.qrels_candidates), found=found)


def read_beir(
    queries: bytes,
    queries_name: str,
    qrels: bytes,
    qrels_name: str,
    *,
    not_read: Iterable[str] = (),
) -> Read:
    """Read a BEIR queries file and qrels file (zip members) for checking."""
    texts = []
    for data, name in ((queries, queries_name), (qrels, qrels_name)):
        text, _encoding, problems = decode(data, name)
        if text is None:
            return Read("zip", "BEIR eval set", queries_name, problems)
        texts.append(text)
    queries_text, qrels_text = texts
    try:
        evalset = parse_beir(
            queries_text,
            qrels_text,
            evalset_id=posixpath.basename(posixpath.dirname(queries_name)) or "beir",
            queries_name=queries_name,
            qrels_name=qrels_name,
        )
    except EvalSetError as exc:
        problem = error_problem(exc, [queries_name, qrels_name], queries_name)
        return Read("zip", "BEIR eval set", queries_name, [problem])
    parsed = _parsed(
        evalset,
        fmt="zip",
        file_name=queries_name,
        source=f"BEIR, {queries_name} + {qrels_name}",
        places=lambda: _beir_lines(queries_text, evalset),
    )
    parsed.problems.extend(nul_problems(queries_text, queries_name))
    if not_read := list(not_read):
        parsed.notes.append(NOTE_NOT_READ.format(names=", ".join(not_read)))
    return parsed


def _beir_lines(text: str, evalset: EvalSet) -> list[tuple[int | None, int | None]]:
    line_of: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # blank, or queries glued on one line: those items stay unplaced
        if isinstance(record, dict):
            query_id = record.get("_id", record.get("id"))
            line_of.setdefault(str(query_id), number)
    return [(None, line_of.get(item.id)) for item in evalset]


# --- Writing -----------------------------------------------------------------------------


def _item_json(task: TaskSpec, evidence: dict[str, Any]) -> dict[str, Any]:
    """The task as contextgrid's JSONL item (the inverse of `evidence_of`)."""
    meta = dict(evidence.get("meta") or {})
    if "gold_documents" in evidence:
        meta = {"gold_documents": evidence["gold_documents"], **meta}
    if task.metadata:
        meta[METADATA_KEY] = task.metadata
    return {
        "id": task.id,
        "question": task.prompt,
        "gold": [
            {
                "span": {
                    "source_id": g.get("source_id"),
                    "start": g.get("start"),
                    "end": g.get("end"),
                },
                "grade": g.get("grade", 2),
            }
            if isinstance(g, dict)
            else g
            for g in evidence.get("gold") or []
        ],
        "anchors": evidence.get("anchors") or [],
        "qtype": evidence.get("qtype"),
        "answer": task.expected_text or None,
        "meta": meta,
    }


def _metadata_clashes(task: TaskSpec) -> bool:
    """Whether the task's evidence has a meta entry `metadata` that would not come back as
    evidence: it is the task's metadata's place (replaced by it, or read back as it)."""
    meta = (task.evidence or {}).get("meta")
    if not isinstance(meta, dict) or METADATA_KEY not in meta:
        return False
    return bool(task.metadata) or isinstance(meta[METADATA_KEY], dict)


def _spec_item(task: TaskSpec, warnings: list[str]) -> EvalItem | None:
    """The task as an eval-set item, or None when nothing in an eval set could grade it (no
    answer and no evidence: a task graded by criteria only, which the reader would refuse)."""
    if _metadata_clashes(task):
        warnings.append(MSG_EXPORT_METADATA_CLASH.format(task=task.id))
    try:
        line = json.dumps(_item_json(task, task.evidence or {}), ensure_ascii=False)
        item = parse_jsonl_text(line, name=task.id).items[0]
    except (EvalSetError, TypeError, ValueError) as exc:
        detail = exc.detail if isinstance(exc, EvalSetError) and exc.detail else str(exc)
        warnings.append(MSG_EXPORT_BAD_EVIDENCE.format(task=task.id, detail=detail))
        line = json.dumps(_item_json(task, {}), ensure_ascii=False)
        item = parse_jsonl_text(line, name=task.id).items[0]
    if item.answer is None and not _has_evidence(evidence_of(item)):
        return None
    return item


def _spec_items(spec: DatasetSpec) -> tuple[list[EvalItem], list[str]]:
    items: list[EvalItem] = []
    warnings: list[str] = []
    for task in spec.tasks:
        item = _spec_item(task, warnings)
        if item is not None:
            items.append(item)
    return items, warnings


def _document_level(item: EvalItem) -> bool:
    """Whether the item's gold is whole documents only (as BEIR's is)."""
    return bool(item.meta.get("gold_documents")) and not (item.anchors or item.gold)


def _evalset_head(spec: DatasetSpec, *, document_level: bool) -> EvalSet:
    """The eval set without its items; `document_level`: every item's gold is documents."""
    # Keep the caution with the file: document-level gold cannot compare chunkers.
    meta = {"granularity": "document", "note": BEIR_NOTE} if document_level else {}
    return EvalSet(id=spec.name.strip() or "dataset", source="context-evals", meta=meta)


def spec_to_evalset(spec: DatasetSpec) -> EvalSet:
    """The dataset as a contextgrid eval set: one item per task (see `evidence_of`)."""
    items, _ = _spec_items(spec)
    document_level = bool(items) and all(map(_document_level, items))
    return replace(_evalset_head(spec, document_level=document_level), items=tuple(items))


def write(spec: DatasetSpec) -> bytes:
    """The dataset as a contextgrid JSONL eval set (UTF-8), which imports back the same."""
    out = io.BytesIO()
    write_to(spec, out)
    return out.getvalue()


# Item lines are spooled in memory up to this size, then on disk, until the header is known.
_SPOOL_BYTES = 8 * 1024 * 1024
_COPY_BYTES = 1024 * 1024


def write_to(spec: DatasetSpec, out: IO[bytes]) -> None:
    """`write`'s bytes into `out`, from one pass over the tasks that never holds them all
    (`spec.tasks` may be read from the database as it is written). The header line comes
    first but says whether every item's gold is document-level, which is known only after
    the last one: the item lines wait in a spool (that spills to disk) behind it."""
    items = 0
    document_level = True
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as lines:
        for task in spec.tasks:
            item = _spec_item(task, [])
            if item is None:
                continue
            items += 1
            document_level = document_level and _document_level(item)
            lines.write((jsonl_item_line(item) + "\n").encode("utf-8"))
        head = _evalset_head(spec, document_level=items > 0 and document_level)
        out.write((jsonl_header_line(head) + "\n").encode("utf-8"))
        lines.seek(0)
        shutil.copyfileobj(lines, out, _COPY_BYTES)


def has_items(spec: DatasetSpec) -> bool:
    """Whether any task can be written as an eval-set item (see `_spec_item`)."""
    return any(
        task.expected_text is not None or _spec_item(task, []) is not None for task in spec.tasks
    )


# The ids of the tasks an export leaves out that its warning names; the rest are counted.
LEFT_OUT_NAMED = 5


@dataclass
class ExportTally:
    """What an eval-set export leaves out of some tasks, counted: `export_warnings` words it.
    Counted here over tasks in memory (`export_tally`), or by the database over the tasks
    whose evidence needs no reading (`selectors.export_facts`), then added up."""

    tasks: int = 0
    # The first LEFT_OUT_NAMED ids of the tasks nothing in an eval set could grade, in the
    # tasks' order, and how many there are.
    left_out: list[str] = field(default_factory=list)
    left_out_count: int = 0
    # Kept for their answer, though graded by criteria too (which an eval set cannot hold).
    answer_only: int = 0
    with_files: int = 0
    verifiers: int = 0
    # Said of single tasks as their items are made (evidence it cannot read, metadata clashes).
    item_warnings: list[str] = field(default_factory=list)

    @property
    def has_items(self) -> bool:
        return self.tasks > self.left_out_count


def export_tally(tasks: Iterable[TaskSpec]) -> ExportTally:
    """What an eval-set export leaves out of `tasks`, worked out without writing the file:
    only tasks with evidence are tried as items (evidence is the one thing whose shape
    decides what is written)."""
    tally = ExportTally()
    for task in tasks:
        tally.tasks += 1
        graded_by_criteria = any(c.id != RETRIEVAL_CRITERION_ID for c in task.criteria)
        if task.evidence:
            kept = _spec_item(task, tally.item_warnings) is not None
        else:
            kept = task.expected_text is not None
        if not kept:
            tally.left_out_count += 1
            if len(tally.left_out) < LEFT_OUT_NAMED:
                tally.left_out.append(task.id)
        elif graded_by_criteria:
            tally.answer_only += 1
        tally.with_files += bool(task.input_files or task.expected_files)
        tally.verifiers += task.expected_verifier is not None
    return tally


def export_warnings(spec: DatasetSpec, tally: ExportTally | None = None) -> list[str]:
    """What an eval-set export leaves out, so the export page can say it before download:
    from `tally` when the caller counted it (`export_tally` of the spec's tasks if not)."""
    if tally is None:
        tally = export_tally(spec.tasks)
    warnings = list(tally.item_warnings)
    if tally.left_out_count:
        more = tally.left_out_count - len(tally.left_out)
        ids = ", ".join(tally.left_out) + (f" and {more:,} more" if more > 0 else "")
        warnings.append(
            MSG_EXPORT_CRITERIA.format(tasks=counted(tally.left_out_count, "task"), ids=ids)
        )
    if tally.answer_only:
        warnings.append(MSG_EXPORT_ANSWER_ONLY.format(tasks=counted(tally.answer_only, "task")))
    if spec.criteria:
        warnings.append(MSG_EXPORT_SHARED)
    if tally.with_files:
        warnings.append(MSG_EXPORT_FILES.format(tasks=counted(tally.with_files, "task")))
    if tally.verifiers:
        warnings.append(MSG_EXPORT_VERIFIERS.format(tasks=counted(tally.verifiers, "task")))
    return warnings
