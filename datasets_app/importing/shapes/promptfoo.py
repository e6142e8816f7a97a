"""promptfoo's test cases: `vars` and `assert`, its CSV `__expected` columns, and its
prompts files (templates, not tasks).

Decisions (also in docs/field-names.md):
- A promptfoo assertion is read by one rule (`promptfoo_assertion`) in a CSV `__expected`
  cell and a JSON or YAML `assert` alike; text is an assertion only when it starts with one of
  promptfoo's types (`What is 2+2: four` is an equality), as promptfoo reads it.
- A promptfoo sheet with its own expected-answer column (the Anthropic cookbook's
  `correct_answer` beside `python:file://…`) is graded by that column; its assertions
  other than `llm-rubric:`/`grade:` are left out, counted in one warning.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from datasets_app.importing.aliases import field_for
from datasets_app.importing.columns import (
    Row,
)
from datasets_app.importing.shapes.base import (
    NOT_TEXT_VALUE,
    SAMPLE_RECORDS,
    Record,
    Shape,
    ValueProblem,
)
from datasets_app.importing.shapes.values import _is_number, _kind, _scalar_text
from datasets_app.importing.spec import (
    Problem,
    Rule,
    shorten,
)

PROMPTFOO_UNSUPPORTED = Rule(
    "promptfoo_assertion_unsupported",
    "The promptfoo assertion {kind} ({value}) has no equivalent here: Context Evals grades by "
    "an expected answer or criteria. Use equals: for an exact answer or llm-rubric: for a "
    "criterion, or remove it.",
)


PROMPTFOO_LEFT_OUT = Rule(
    "promptfoo_assertions_left_out",
    "{count} promptfoo assertions ({kinds}) are not imported: the {column} column is the "
    "expected answer.",
)


_TEMPLATE_VAR = re.compile(r"\{\{\s*[\w.]+\s*\}\}")


def template_prompts(
    records: Sequence[Record], fields: Mapping[str, str], named: Mapping[str, str]
) -> str | None:
    """The prompt's source when the prompts are templates (a promptfoo prompts file) and
    nothing names an answer (`refusals`)."""
    source = fields.get("prompt")
    if not source or " + " in source or {"expected", "criterion"} & named.keys():
        return None
    values = [r.values.get(source) for r in records[:SAMPLE_RECORDS]]
    texts = [v for v in values if isinstance(v, str) and v.strip()]
    templated = sum(1 for v in texts if _TEMPLATE_VAR.search(v))
    if texts and templated * 5 >= len(texts) * 4:
        return source
    return None


PROMPTFOO = Shape(
    "promptfoo test cases (vars + assert)",
    lambda keys, first: any(key.startswith("vars.") for key in keys),
    help=(
        "promptfoo's test cases: the `vars` are the prompt's parts and each `assert` item"
        " is read by the one promptfoo rule (see promptfoo below)."
    ),
)


# promptfoo's assertion types (its docs' list): a `type:value` or bare `type` string is an
# assertion only when it names one of them, as promptfoo reads a CSV `__expected` cell;
# any other text ("What is 2+2: four") is a value to compare for equality.
_PROMPTFOO_TYPES = frozenset(
    [
        "contains",
        "icontains",
        "contains-any",
        "contains-all",
        "icontains-any",
        "icontains-all",
        "equals",
        "starts-with",
        "regex",
        "is-json",
        "contains-json",
        "is-xml",
        "is-sql",
        "is-valid-openai-tools-call",
        "javascript",
        "python",
        "fn",
        "eval",
        "grader",
        "llm-rubric",
        "model-graded-closedqa",
        "model-graded-factuality",
        "factuality",
        "similar",
        "levenshtein",
        "rouge-n",
        "bleu",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "classifier",
        "moderation",
        "latency",
        "cost",
        "perplexity",
        "perplexity-score",
        "webhook",
        "select-best",
        "human",
        "g-eval",
        "grade",
    ]
)
# The assertions graded here: an equality is an expected answer checked by exact match,
# a rubric a criterion.
PROMPTFOO_EQUALS = "equals"
PROMPTFOO_RUBRICS = frozenset({"grade", "llm-rubric", "model-graded-closedqa"})


@dataclass(frozen=True)
class Assertion:
    """One promptfoo assertion, from a CSV `__expected` cell or a JSON or YAML `assert`."""

    kind: str
    value: Any
    weight: Any = None

    @property
    def answer(self) -> str | None:
        """The expected answer an equality gives (None for any other assertion)."""
        if self.kind == PROMPTFOO_EQUALS and isinstance(self.value, str | int | float):
            return _scalar_text(self.value)
        return None

    @property
    def rubric(self) -> str | None:
        """The criterion a rubric gives (None for any other assertion)."""
        if self.kind in PROMPTFOO_RUBRICS and isinstance(self.value, str):
            return self.value
        return None

    def unsupported(self) -> ValueProblem:
        """The problem of an assertion graded neither way."""
        kind = self.kind or "(no type)"
        return ValueProblem(PROMPTFOO_UNSUPPORTED, kind=kind, value=shorten(self.value, 60))


def promptfoo_assertion(item: Any, source: str = "assert") -> Assertion:
    """The one rule for a promptfoo assertion, whatever the file: a `type:value` string, a
    bare type, plain text (an equality) or a `{"type", "value", "weight"}` object."""
    if isinstance(item, str):
        kind, sep, text = item.partition(":")
        kind = kind.strip().lower()
        if kind.startswith("not-"):
            named = kind[len("not-") :] in _PROMPTFOO_TYPES
        else:
            named = kind in _PROMPTFOO_TYPES
        if not named:
            return Assertion(PROMPTFOO_EQUALS, item.strip())
        return Assertion(kind, text.strip() if sep else "")
    if not isinstance(item, dict):
        raise ValueProblem(NOT_TEXT_VALUE, source=source, kind=_kind(item), label="assertion")
    weight = item.get("weight")
    return Assertion(str(item.get("type", "")).strip().lower(), item.get("value"), weight)


def _promptfoo_assertions(value: Any, task: dict[str, Any], source: str) -> None:
    items = value if isinstance(value, list) else [value]
    for item in items:
        assertion = promptfoo_assertion(item, source)
        if assertion.answer is not None:
            task["expected"] = {"text": assertion.answer, "verifier": {"kind": "exact_match"}}
        elif assertion.rubric is not None:
            criterion: dict[str, Any] = {"criterion": assertion.rubric}
            if _is_number(assertion.weight):
                criterion["weight"] = assertion.weight
            task.setdefault("criteria", []).append(criterion)
        else:
            raise assertion.unsupported()


_PROMPTFOO_EXPECTED = re.compile(r"^__expected\d*$", re.IGNORECASE)


def _cell(cells: Sequence[str], index: int) -> str:
    """A row's cell, or "" past its end (a short row)."""
    return cells[index] if index < len(cells) else ""


@dataclass
class _GradedRow:
    """What one row's `__expected` cells grade by, and what they raise."""

    expected: str = ""
    verifier: str = ""
    criteria: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # The `kind:` of each assertion left out for the sheet's own answer column.
    left_out: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _PromptfooColumns:
    """Which columns of a promptfoo sheet are assertions, and which are kept as they are."""

    header: list[str]
    asserting: list[int]
    kept: list[int]
    has_id: bool
    # The sheet's own expected-answer column ("" when it has none).
    own_answer: str

    @classmethod
    def of(cls, header: list[str]) -> _PromptfooColumns:
        asserting = [i for i, name in enumerate(header) if _PROMPTFOO_EXPECTED.match(name.strip())]
        kept = [i for i in range(len(header)) if i not in asserting]
        has_id = any(field_for(header[i]) == "id" for i in kept)
        own_answer = next(
            (header[i].strip() for i in kept if field_for(header[i]) == "expected"), ""
        )
        return cls(header, asserting, kept, has_id, own_answer)

    def new_header(self) -> list[str]:
        answer_columns = [] if self.own_answer else ["expected_answer", "expected_verifier"]
        task_id = [] if self.has_id else ["task_id"]
        return [self.header[i] for i in self.kept] + [*answer_columns, "criterion", *task_id]

    def graded(self, file_name: str, row: int, cells: Sequence[str]) -> _GradedRow:
        """The answer, criteria, problems and left-out assertions of one row's cells."""
        graded = _GradedRow()
        for i in self.asserting:
            cell = _cell(cells, i).strip()
            if not cell:
                continue
            assertion = promptfoo_assertion(cell)
            if assertion.rubric is not None:
                graded.criteria.append(assertion.rubric)
            elif self.own_answer:
                graded.left_out.append(assertion.kind + ":")
            elif assertion.answer is not None:
                graded.expected, graded.verifier = assertion.answer, "exact_match"
            else:
                # Kept as the row's answer so that the row's one problem is this one (the
                # file is refused, so it never imports).
                graded.expected = graded.expected or cell
                problem = assertion.unsupported()
                graded.problems.append(
                    problem.rule.at(
                        file_name, row=row, field=self.header[i].strip(), **problem.params
                    )
                )
        return graded

    def task_rows(
        self, number: int, row: int, cells: Sequence[str], graded: _GradedRow
    ) -> list[Row]:
        """One row per criterion, as our own sheets write a task with several (the first
        row carries the task's other cells)."""
        base = [_cell(cells, i) for i in self.kept]
        task_id = [] if self.has_id else [f"task-{number}"]
        answer = [] if self.own_answer else [graded.expected, graded.verifier]
        first_criterion = graded.criteria[0] if graded.criteria else ""
        task_rows: list[Row] = [(row, [*base, *answer, first_criterion, *task_id])]
        blank = ["" for _ in [*base, *answer]]
        task_rows += [(row, [*blank, criterion, *task_id]) for criterion in graded.criteria[1:]]
        return task_rows


def _promptfoo_columns(
    header: list[str], rows: Sequence[Row], file_name: str, first_task_number: int = 1
) -> tuple[list[str], Sequence[Row], list[Problem], list[Problem]]:
    """`__expected`, `__expected1`, … cells as expected-answer and criterion columns.

    `equals:` (or no prefix) is an expected answer checked by exact match; `grade:` and
    `llm-rubric:` are criteria; any other assertion is a problem on its row, by name. A row
    with several criteria becomes several rows of one task, as our own sheets write them.
    A sheet with its own expected-answer column (the Anthropic cookbook's `correct_answer`
    beside `python:file://…`) is graded by it: its other assertions are left out, with one
    warning. Returns the header, the rows, the problems and the warnings.
    """
    columns = _PromptfooColumns.of(header)
    problems: list[Problem] = []
    left_out: Counter[str] = Counter()
    new_rows: list[Row] = []
    for number, (row, cells) in enumerate(rows, start=first_task_number):
        graded = columns.graded(file_name, row, cells)
        problems += graded.problems
        left_out.update(graded.left_out)
        new_rows += columns.task_rows(number, row, cells, graded)
    if not left_out:
        return columns.new_header(), new_rows, problems, []
    warning = PROMPTFOO_LEFT_OUT.at(
        file_name,
        row=1,
        count=sum(left_out.values()),
        kinds=", ".join(left_out),
        column=columns.own_answer,
    )
    return columns.new_header(), new_rows, problems, [warning]
