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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    asserting = [i for i, name in enumerate(header) if _PROMPTFOO_EXPECTED.match(name.strip())]
    kept = [i for i in range(len(header)) if i not in asserting]
    has_id = any(field_for(header[i]) == "id" for i in kept)
    own_answer = next((header[i].strip() for i in kept if field_for(header[i]) == "expected"), "")
    answer_columns = [] if own_answer else ["expected_answer", "expected_verifier"]
    new_header = [header[i] for i in kept] + [*answer_columns, "criterion"]
    if not has_id:
        new_header.append("task_id")
    problems: list[Problem] = []
    left_out: dict[str, int] = {}
    new_rows: list[Row] = []
    for number, (row, cells) in enumerate(rows, start=first_task_number):
        base = [cells[i] if i < len(cells) else "" for i in kept]
        expected, verifier, criteria = "", "", []
        for i in asserting:
            cell = cells[i].strip() if i < len(cells) else ""
            if not cell:
                continue
            assertion = promptfoo_assertion(cell)
            if assertion.rubric is not None:
                criteria.append(assertion.rubric)
            elif own_answer:
                name = assertion.kind + ":"
                left_out[name] = left_out.get(name, 0) + 1
            elif assertion.answer is not None:
                expected, verifier = assertion.answer, "exact_match"
            else:
                # Kept as the row's answer so that the row's one problem is this one (the
                # file is refused, so it never imports).
                expected = expected or cell
                problem = assertion.unsupported()
                problems.append(
                    problem.rule.at(file_name, row=row, field=header[i].strip(), **problem.params)
                )
        task_id = [] if has_id else [f"task-{number}"]
        answer = [] if own_answer else [expected, verifier]
        new_rows.append((row, [*base, *answer, criteria[0] if criteria else "", *task_id]))
        for criterion in criteria[1:]:
            blank = ["" for _ in [*base, *answer]]
            new_rows.append((row, [*blank, criterion, *task_id]))
    warnings = [
        PROMPTFOO_LEFT_OUT.at(
            file_name,
            row=1,
            count=sum(left_out.values()),
            kinds=", ".join(left_out),
            column=own_answer,
        )
    ]
    return new_header, new_rows, problems, warnings if left_out else []
