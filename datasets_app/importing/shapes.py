"""Files other tools wrote: their records turned into the canonical dataset document.

A .json or .jsonl file of records (a JSON array, an object holding one under a key such as
`data` or `goldens`, an object keyed by id, SQuAD's nesting, one record on its own) and a
spreadsheet's columns are read through the same steps:

1. `find_records` (JSON only) finds the list of records and where each one stands. A
   record a tool wraps in an envelope (the OpenAI Evals API's `{"item": …}`, the Hugging
   Face dataset viewer's `{"row_idx", "row", "truncated_cells"}`) is what it wraps. A row
   whose `truncated_cells` names a cell is refused (`CELLS_CUT`): the viewer cut that text
   short, and importing it would import part of a prompt or answer without a word.
2. A `Shape` (OpenAI evals, LangSmith, promptfoo, HealthBench, ...) recognises the records
   by their keys and says which key fills which field; the names in `aliases` do the rest.
   What a person gives (the mapping step, `--map FIELD=SOURCE`) overrides both.
3. `build_tasks` turns each record into a canonical task (`{"id", "name", "prompt",
   "expected", "criteria"}`), and the one validator checks it like any other document;
   problems keep the record's line (or row) in the person's own file.

When the keys do not say which is the prompt and which the expected answer, nothing is
imported: the check says so (`NEEDS_MAPPING`) with its best guess and the first records as
they would import, and the person confirms or changes the mapping.

Decisions the issue left open (also in docs/field-names.md):
- A chat prompt (a list of `{role, content}`) is stored as text: a single user turn is
  just its text; a longer conversation is each earlier turn as `Role: text`, then the last
  user turn as `Question: text`, blocks separated by a blank line. Exports write that
  text, so export → import → export is identical.
- A promptfoo assertion is read by one rule (`promptfoo_assertion`) in a CSV `__expected`
  cell and a JSON or YAML `assert` alike; text is an assertion only when it starts with one of
  promptfoo's types (`What is 2+2: four` is an equality), as promptfoo reads it.
- A promptfoo sheet with its own expected-answer column (the Anthropic cookbook's
  `correct_answer` beside `python:file://…`) is graded by that column; its assertions
  other than `llm-rubric:`/`grade:` are left out, counted in one warning.
- Azure AI and Prompt flow's `__outputs.<name>` keys hold what the app under test returned:
  never a field by name (`__outputs.answer` is no expected answer), and a file of them
  with nothing else to grade by is refused as a run's results.
- A follow-up question is asked after the turns its record keeps (Prompt flow's
  `chat_history`, as messages or {"inputs", "outputs"} pairs; Giskard's
  `conversation_history`): the turns and the question make one chat prompt, as above.
- An expected answer that is an object (a structured output: Braintrust's `expected`) is
  kept whole as its JSON text, two-space indented; one with `text`, `value` or `answer`
  is that value.
- Several accepted answers (NQ-open, an OpenAI `ideal` list, SQuAD's answers) become one
  expected answer: the answer itself when they agree, else `Any of:` and one `- answer`
  line each.
- A HealthBench rubric item with negative points is a penalty: it becomes the criterion
  `Avoids: <criterion>`, weighted by the points' size, so that passing it means the
  answer did not do the penalised thing.
- MT-Bench's `turns` (the user's turns, as plain texts) are a chat prompt of user turns,
  stored as above (`User: first turn`, a blank line, `Question: second turn`), and the task
  is named by its first turn, which sets it. Its `reference` list holds an answer per turn,
  not alternatives: the expected answer is each turn's non-blank reference as
  `Turn n: text`, blocks separated by a blank line.
- A question MT-Bench gives no reference grades by its judge's general factors (FastChat's
  `single-v1` prompt); such a task gets that as its one criterion (`Shape.judged_by`), with
  a warning that counts them, rather than being refused with nothing to grade it. Arena-Hard
  (v0.1: `turns` of `{"content": …}`, a `cluster`) is read the same way; its judge compares
  with a baseline model's answer, not in the file, so every task gets its judge's factors.
- A coding benchmark grades by running its tests, which have no equivalent here: HumanEval's
  `canonical_solution` and MBPP's `code` are the expected answer (what a judge compares
  with), HumanEval's `test` is named as not imported. MBPP's `test_list` is shown after its
  problem, one assert a line, as MBPP's own prompt does: they name the function to write.
  A HumanEval task is named by its `entry_point`, the function.
- TruthfulQA grades by its `Best Answer`; its `Correct Answers` (also an expected answer
  by name) and `Incorrect Answers` are named as not imported.
- Options given beside their own labels (ARC's `{"text": [...], "label": [...]}`) are shown
  under those labels, not re-lettered: ARC labels some questions' options 1-4, and its
  `answerKey` names the label. ARC's and OpenBookQA's original files (`question.stem`, and
  `question.choices` as a list of `{"text", "label"}`) are read the same way.
- A BIG-bench JSON task's `target_scores` (option → score) are its question's options, in
  the file's order and lettered; the best-scored option is the expected answer (`Any of:`
  when several share the best score).
- A SQuAD question is asked with its passage: the prompt is the context, a blank line and
  the question. A question SQuAD 2.0 marks unanswerable has nothing to grade by and is
  left out, with a warning that counts them. A BoolQ question is asked the same way (its
  `passage`, then the question), and expects its `answer` as `true` or `false`.
- A tool's shape outranks the names: the results of Azure's RAG chat evaluator keep the
  app's own `answer` beside the ground `truth`, and only `truth` grades. A spreadsheet whose
  header `columns` would read (`answer` as the expected answer) is renamed as the shape says.
- A Prometheus score rubric (BiGGen-Bench's `score_rubric`: `criteria` and
  `score1_description` … `score5_description`) is one criterion, its `criteria`, checked
  by an llm_judge with outputType float whose instructions hold what each score means and
  the reference answer: the judge scores on the rubric's own scale and gives
  (score - lowest) / (highest - lowest), so 1–5 becomes 0–1 and nothing of the scale is
  lost. Splitting the levels into five pass/fail criteria would grade a different thing.
  The reference answer is the answer Prometheus says scores 5, an example for the judge,
  so it is not the task's expected answer (that would add "Matches the expected answer").
  A `system_prompt` comes first in the prompt, as a chat prompt's system turn; a `weight`
  the record gives is the criterion's.
- A PaperBench rubric tree (`requirements`, `weight`, `sub_tasks` all the way down) is one
  task: the file says what must be true, not what to ask, so its top requirement is the
  prompt (the Detected line says so; the task arrives as a draft to edit). Its criteria
  are the leaves, each weighted by its share of the score: PaperBench scores a node as the
  weighted mean of its children, so a leaf's share is the product down its path of its
  weight over its siblings' total, given as a percentage (to six significant figures).
  Inner requirements are not criteria (their leaves grade them), and `task_category` is
  not kept. A weight that is no positive number is a problem naming the requirement.
- Prompt flow's checklist `statements` (`{"correctness": "should explain what's ChatGPT",
  "consise": ...}`, beside a `question` and its `chat_history`) are the task's criteria, one
  per statement, its name the criterion's id, in the file's order. Each weighs 1: the file
  gives no weights and its eval-checklist flow checks every statement on its own, so none
  counts more than another. They are checked by the dataset's default verifier: the 1–5
  score that flow asks its judge for is in the flow, not in the file, and a statement reads
  as a check an answer meets or not ("result should be 2"). The question (after its chat
  history) is the prompt; no expected answer is made up. The eval-checklist flow's own data
  (`answer` + `statements`, no question) is what an app answered, and is refused as such.
- A checklist (HelloBench's `checklists`: yes/no questions) is criteria by its name, as a
  rubric is: each question one criterion of weight 1, in the file's order, checked by the
  dataset's default verifier. Each question asks one thing a good answer does and the file
  weighs none more; HelloBench's own per-category weights are fitted to human ratings by its
  `regression.py` and are in no data file, so they are not guessed at. Its instructions
  open with their category's wording, so a HelloBench task is named by its `raw_text`
  (the question or topic the instruction wraps; `Shape.named_by`), not by that first line.
- Alpaca's `output` is the expected answer only when no key names one: beside DataFlow's
  `golden_answer`, `output` is what a model answered, and is not imported.
- A nested prompt's answer is the one beside it: when the prompt is `input.input` and
  `input` also names an expected answer, that is the answer; the top-level `expected` of
  Braintrust's scorer datasets is the score a grader should give.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeGuard

from datasets_app.importing.aliases import FIELD_KEYS, FIELDS_BY_KEY, field_for, normalize
from datasets_app.importing.columns import Built as Built_
from datasets_app.importing.columns import (
    Row,
    Table,
    document_from_table,
    field_for_header,
)
from datasets_app.importing.document import TASK_KEYS, TOO_MANY_TASKS
from datasets_app.importing.spec import (
    CHAT_QUESTION_LABEL,
    MAX_TASKS,
    CheckOptions,
    DocPath,
    FieldMap,
    Problem,
    Rule,
    field_path,
    name_from_prompt,
    nowhere,
    shorten,
    signature_of,
)

# --- What a person reads --------------------------------------------------------------------

NEEDS_MAPPING = Rule(
    "needs_mapping",
    "The {kind} do not say which one is the {missing}. Found: {found}. {basis}: {guess}. "
    "Confirm or change it in the import dialog, or with {flags}.",
)
BEST_GUESS = "Best guess"
REMEMBERED = "As you mapped this dataset's last file with these {kind}"
NOTHING_TO_GUESS = Rule(
    "nothing_to_map",
    "The {kind} do not say which one is the prompt and which the expected answer, and there "
    "are not two {kind} of text to choose from. Found: {found}.",
)
UNKNOWN_SOURCE = Rule(
    "unknown_map_source",
    "The mapping names {source} for the {label}, but the file has no such {kind}. Found: {found}.",
)
IGNORED_KEYS = Rule("ignored_keys", "These {kind} are not imported: {names}.")
NOT_TEXT_VALUE = Rule(
    "value_not_text", "{source} holds {kind}, which cannot be the {label}: it must be text."
)
CHAT_PART_NOT_TEXT = Rule(
    "chat_part_not_text",
    "Turn {turn} of the conversation in {source} holds {kind}; only text can be imported.",
)
NOT_A_CHAT_TURN = Rule(
    "not_a_chat_turn",
    'Turn {turn} of the conversation in {source} is not a {{"role": ..., "content": ...}} message.',
)
PROMPTFOO_UNSUPPORTED = Rule(
    "promptfoo_assertion_unsupported",
    "The promptfoo assertion {kind} ({value}) has no equivalent here: Context Evals grades by "
    "an expected answer or criteria. Use equals: for an exact answer or llm-rubric: for a "
    "criterion, or remove it.",
)
REQUIREMENT_WEIGHT = Rule(
    "requirement_weight_not_positive",
    "The requirement “{requirement}” in {source} has weight {weight}: each requirement's "
    "weight must be a positive number, as its share of the score is worked out from it.",
)
PROMPTFOO_LEFT_OUT = Rule(
    "promptfoo_assertions_left_out",
    "{count} promptfoo assertions ({kinds}) are not imported: the {column} column is the "
    "expected answer.",
)
UNANSWERABLE_LEFT_OUT = Rule(
    "unanswerable_left_out",
    "{count} questions marked unanswerable have no answer to grade by and were left out.",
)
JUDGED_BY_TOOL = Rule(
    "judged_by_tool",
    "{count} tasks give no reference answer; each is graded instead by the one criterion the "
    "file's tool judges such a task by: {criterion}",
)
PANDAS_INDEX = Rule(
    "pandas_index_column",
    "The first column has no name and counts 0, 1, 2, …: it is a pandas index and is not imported.",
)
ONE_CELL_HEADER = Rule(
    "one_cell_header",
    "The header row is one quoted cell ({header}): the column names are inside a single pair "
    "of quotes. Remove the quotes around the header row and save the file again.",
)
NUL_IN_IGNORED_COLUMN = Rule(
    "nul_in_ignored_column",
    "Column {column} holds NUL bytes (binary data); it is not imported, so they were left out.",
)
NOT_A_DATASET = Rule("not_a_dataset", "This looks like {what}. {advice}")
CELLS_CUT = Rule(
    "cells_truncated",
    "The Hugging Face dataset viewer cut {cells} short in this row (its truncated_cells): only "
    "the start of the text is in the file. Download the dataset's own files instead.",
)
NO_RECORDS = Rule(
    "no_records",
    "The file holds {what}, not a list of records. A .json dataset is an object with "
    '"tasks", or a list of records such as [{{"question": ..., "answer": ...}}].',
)

# What the fields are called in messages.
LABELS: dict[str, str] = {
    "id": "id",
    "name": "name",
    "prompt": "prompt",
    "expected": "expected answer",
    "criterion": "criterion",
    "weight": "weight",
}

# A score rubric (Prometheus, BiGGen-Bench) as the instructions of the llm_judge that
# scores its one criterion. `{{criterion}}`, `{{prompt}}` and `{{output}}` are the judge's.
SCORE_RUBRIC_INTRO = (
    "Grade the response by the score rubric below: give it the score from {low} to {high} "
    "whose description fits it best."
)
SCORE_RUBRIC_REFERENCE = "A reference answer that scores {high}:"
SCORE_RUBRIC_SCALE = (
    "Give the score as a number from 0 to 1: (score - {low}) / {span}, so {low} is 0 and "
    "{high} is 1."
)
SCORE_RUBRIC_PLACEHOLDERS = (
    "\n\nCriterion: {{criterion}}\n\nTask: {{prompt}}\n\nResponse: {{output}}"
)
# A HealthBench penalty (negative points) as a criterion the answer passes by not doing it.
PENALTY_PREFIX = "Avoids: "
# Several accepted answers as one expected answer.
ANY_OF = "Any of:"
ROLE_LABELS = {
    "system": "System",
    "developer": "Developer",
    "user": "User",
    "assistant": "Assistant",
}

# Keys under which a JSON object holds its list of records, most usual first.
CONTAINER_KEYS = (
    "tasks",
    "data",
    "examples",
    "goldens",
    "test_cases",
    "testcases",
    "items",
    "samples",
    "records",
    "rows",
    "questions",
    "entries",
    "dataset",
    "tests",
    "cases",
)
# Our own task keys: a record made only of these (with a text prompt) is already canonical.
CANONICAL_TASK_KEYS = TASK_KEYS
# How many records the guessing and the mapping step's sample look at.
SAMPLE_RECORDS = 50
SAMPLE_SHOWN = 3
# How much of each text, and how many criteria, the sample keeps: more than the step shows.
SAMPLE_CHARS = 1_000
SAMPLE_CRITERIA = 10


# --- The mapping ----------------------------------------------------------------------------


MAP_NOT_FIELD_EQUALS_SOURCE = "--map {value}: write it as FIELD=SOURCE, e.g. prompt=question."
MAP_NOT_A_FIELD = "--map {value}: {key} is not a field; use one of {fields}."
MAP_FIELD_TWICE = "--map maps {key} twice, to {first} and to {second}; map each field once."


def parse_map_options(values: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """`--map FIELD=SOURCE` values: (mapping, errors in words). A field mapped twice is an
    error naming both sources; what a message echoes is cut short (`spec.shorten`)."""
    mapping: dict[str, str] = {}
    errors = []
    for value in values:
        key, sep, source = value.partition("=")
        key = key.strip().lower()
        if key in ("expected_answer", "answer"):
            key = "expected"
        if key == "task_id":
            key = "id"
        source = source.strip()
        if not sep or not source:
            errors.append(MAP_NOT_FIELD_EQUALS_SOURCE.format(value=shorten(value)))
        elif key not in FIELD_KEYS:
            fields = ", ".join(FIELD_KEYS)
            errors.append(
                MAP_NOT_A_FIELD.format(value=shorten(value), key=shorten(key), fields=fields)
            )
        elif mapping.get(key, source) != source:
            errors.append(
                MAP_FIELD_TWICE.format(key=key, first=shorten(mapping[key]), second=shorten(source))
            )
        else:
            mapping[key] = source
    return mapping, errors


# --- Values ---------------------------------------------------------------------------------


class ValueProblem(Exception):
    """A value that cannot fill its field; carries the rule and its parameters."""

    def __init__(self, rule: Rule, **params: Any) -> None:
        super().__init__(rule.code)
        self.rule = rule
        self.params = params


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a true/false value"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "a number"
    return "text"


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and "role" in value and "content" in value


def is_chat(value: Any) -> bool:
    """A chat prompt: a non-empty list of `{role, content}` messages."""
    return isinstance(value, list) and bool(value) and all(map(_is_message, value))


def _content_text(content: Any, source: str, turn: int) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                kind = (
                    part.get("type", "something other than text")
                    if isinstance(part, dict)
                    else _kind(part)
                )
                raise ValueProblem(CHAT_PART_NOT_TEXT, source=source, turn=turn, kind=kind)
        return "\n".join(parts)
    raise ValueProblem(CHAT_PART_NOT_TEXT, source=source, turn=turn, kind=_kind(content))


def chat_prompt(messages: list[Any], source: str = "the prompt") -> str:
    """A conversation as the prompt text people see (see the module's docstring)."""
    turns: list[tuple[str, str]] = []
    for number, message in enumerate(messages, start=1):
        if not _is_message(message):
            raise ValueProblem(NOT_A_CHAT_TURN, source=source, turn=number)
        role = str(message["role"])
        turns.append((role, _content_text(message["content"], source, number)))
    if len(turns) == 1 and turns[0][0] == "user":
        return turns[0][1]
    last_user = max((i for i, (role, _) in enumerate(turns) if role == "user"), default=None)
    blocks = []
    for index, (role, text) in enumerate(turns):
        if index == last_user and index == len(turns) - 1:
            blocks.append(f"{CHAT_QUESTION_LABEL}: {text}")
        else:
            blocks.append(f"{ROLE_LABELS.get(role, role.capitalize())}: {text}")
    return "\n\n".join(blocks)


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None


def answers_text(values: list[Any]) -> str | None:
    """Accepted answers as one expected answer: one, or `Any of:` with a line each."""
    texts = []
    for value in values:
        if isinstance(value, dict):
            value = value.get("text", value.get("answer"))
        text = _scalar_text(value)
        if text is None:
            return None
        if text.strip() and text not in texts:
            texts.append(text)
    if not texts:
        return ""
    if len(texts) == 1:
        return texts[0]
    return "\n".join([ANY_OF, *(f"- {text}" for text in texts)])


def _is_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number: an int or a float, and not true or false (which Python counts as ints)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


# BIG-bench's options and their scores, which only this key is read as.
TARGET_SCORES_KEY = "target_scores"


def option_scores(value: Any) -> dict[str, Any] | None:
    """BIG-bench's `target_scores`: each option's text and its score, the best scored
    right; None for anything else."""
    if isinstance(value, dict) and value and all(map(_is_number, value.values())):
        return value
    return None


def text_value(value: Any, key: str, source: str) -> str | None:
    """A record's value as the text of field `key`; None when blank. Raises ValueProblem."""
    if value is None:
        return None
    scalar = _scalar_text(value)
    if scalar is not None:
        return scalar
    if key == "prompt" and is_chat(value):
        return chat_prompt(value, source)
    scores = option_scores(value) if key == "expected" and source == TARGET_SCORES_KEY else None
    if scores is not None:
        # The options scored best are the accepted answers (BIG-bench may score several).
        best = max(scores.values())
        return answers_text([option for option, score in scores.items() if score == best])
    if key in ("expected", "name", "id") and isinstance(value, dict):
        # SQuAD's {"text": [...]}, TriviaQA's {"value": ..., "aliases": [...]}.
        inner = next((value[k] for k in ("text", "value", "answer") if k in value), None)
        if inner is not None:
            return text_value(inner, key, source)
    if key == "expected" and is_chat(value):
        # A target conversation (OpenRLHF's `output`): what the assistant says.
        said = [m["content"] for m in value if m.get("role") == "assistant"] or [
            m["content"] for m in value
        ]
        return "\n\n".join(_content_text(c, source, n) for n, c in enumerate(said, start=1))
    if key == "expected" and isinstance(value, dict) and value:
        # A structured output (Braintrust's `expected` {"match", "filter", …}): the object
        # itself, as the JSON text a judge compares the answer with.
        return json.dumps(value, ensure_ascii=False, indent=2)
    if key == "expected" and isinstance(value, list):
        text = answers_text(value)
        if text is not None:
            return text or None
    if isinstance(value, list) and not value:
        return None
    raise ValueProblem(NOT_TEXT_VALUE, source=source, kind=_kind(value), label=LABELS[key])


def criteria_value(
    value: Any, weight: Any, source: str, *, reference: str | None = None
) -> list[dict[str, Any]]:
    """A record's criteria: a text, a list of texts or `{criterion, points|weight}`, a
    score rubric (`score_rubric_criterion`, with the record's `reference` answer), a
    tree of weighted requirements (`requirement_leaves`), or checks by name
    (`named_checks`: each name is its criterion's id)."""
    if is_requirement_tree(value):
        return requirement_leaves(value, source)
    checks = named_checks(value)
    if checks:
        return [
            _weighted({"id": name, "criterion": text}, weight)
            for name, text in checks.items()
            if text.strip()
        ]
    items = value if isinstance(value, list) else [value]
    criteria = []
    for item in items:
        if score_levels(item):
            criteria.append(_weighted(score_rubric_criterion(item, reference), weight))
            continue
        if isinstance(item, str):
            if item.strip():
                criteria.append(_weighted({"criterion": item}, weight))
            continue
        if not isinstance(item, dict):
            raise ValueProblem(NOT_TEXT_VALUE, source=source, kind=_kind(item), label="criterion")
        text = item.get("criterion", item.get("text", item.get("description")))
        points = item.get("points", item.get("weight"))
        criterion: dict[str, Any] = {"criterion": text}
        if _is_number(points) and points < 0:
            criterion["criterion"] = f"{PENALTY_PREFIX}{text}"
            criterion["weight"] = -points
        elif points is not None:
            criterion["weight"] = points
        if "id" in item:
            criterion["id"] = item["id"]
        criteria.append(criterion)
    return criteria


def _weighted(criterion: dict[str, Any], weight: Any) -> dict[str, Any]:
    """`criterion` with the weight its record gives (its `weight` column or key), if any."""
    return criterion if weight is None else {**criterion, "weight": weight}


# The keys of one criterion written as an object: a dict with any of them is one criterion,
# not checks by name.
_CRITERION_ITEM_KEYS = frozenset({"id", "criterion", "text", "description", "points", "weight"})


def named_checks(value: Any) -> dict[str, str]:
    """Checks by name, as Prompt flow's `statements` hold them (`{"correctness": "should
    explain what's ChatGPT", "consise": "It is a consise statement."}`): an object whose
    every value is text. Empty for anything else, and for one criterion written as an
    object or a score rubric."""
    if (
        not isinstance(value, dict)
        or not value
        or value.keys() & _CRITERION_ITEM_KEYS
        or score_levels(value)
        or not all(isinstance(text, str) for text in value.values())
    ):
        return {}
    return {str(name): text for name, text in value.items()}


_SCORE_DESCRIPTION = re.compile(r"^score(\d+)_description$")


def score_levels(value: Any) -> list[tuple[int, str]]:
    """A score rubric's levels, lowest first: Prometheus' `{"criteria": ...,
    "score1_description": ..., "score5_description": ...}`. Empty for anything else."""
    if not isinstance(value, dict) or not isinstance(value.get("criteria"), str):
        return []
    levels = []
    for key, description in value.items():
        found = _SCORE_DESCRIPTION.match(key)
        if found and isinstance(description, str):
            levels.append((int(found.group(1)), description))
    return sorted(levels) if len(levels) >= 2 else []


def score_rubric_criterion(rubric: Mapping[str, Any], reference: str | None) -> dict[str, Any]:
    """A score rubric as one criterion an llm_judge scores on the rubric's own scale.

    The judge reads what each score means and the reference answer (which Prometheus
    gives as the answer that earns the top score: an example, not the answer to match),
    and returns the score as a number from 0 to 1, lowest score 0, top score 1.
    """
    levels = score_levels(rubric)
    low, high = levels[0][0], levels[-1][0]
    lines = [SCORE_RUBRIC_INTRO.format(low=low, high=high)]
    lines += [f"Score {score}: {description}" for score, description in levels]
    if reference and reference.strip():
        lines += ["", SCORE_RUBRIC_REFERENCE.format(high=high), reference]
    lines += ["", SCORE_RUBRIC_SCALE.format(low=low, high=high, span=high - low)]
    return {
        "criterion": rubric["criteria"],
        "verifier": {
            "kind": "llm_judge",
            "outputType": "float",
            "instructions": "\n".join(lines) + SCORE_RUBRIC_PLACEHOLDERS,
        },
    }


def _is_requirement(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and isinstance(node.get("requirements"), str)
        and isinstance(node.get("sub_tasks"), list)
    )


def is_requirement_tree(value: Any) -> bool:
    """PaperBench's rubric: requirements, each with a weight and its own `sub_tasks`."""
    return isinstance(value, list) and bool(value) and all(map(_is_requirement, value))


def _positive(weight: Any) -> bool:
    return _is_number(weight) and weight > 0


def _shares(nodes: list[Any], share: float, source: str) -> list[tuple[dict[str, Any], float]]:
    """Each requirement with its share of `share`: its weight over its siblings' total."""
    for node in nodes:
        if not _positive(node.get("weight")):
            raise ValueProblem(
                REQUIREMENT_WEIGHT,
                requirement=shorten(node.get("requirements"), 60),
                weight=shorten(json.dumps(node.get("weight")), 60),
                source=source,
            )
    total = sum(node["weight"] for node in nodes)
    return [(node, share * node["weight"] / total) for node in nodes]


def requirement_leaves(tree: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """A requirement tree's leaves, in the file's order, as criteria weighted by their share
    of the score.

    PaperBench scores a requirement as the weighted mean of its sub-requirements' scores,
    so a leaf counts for the product, down its path, of its weight over its siblings'
    total. That share (as a percentage, to six significant figures) is its weight here,
    which gives the same score. Walked with a stack: a tree is as deep as the file makes it.
    """
    criteria: list[dict[str, Any]] = []
    stack = _shares(tree, 100.0, source)[::-1]
    while stack:
        node, share = stack.pop()
        if is_requirement_tree(node["sub_tasks"]):
            stack.extend(_shares(node["sub_tasks"], share, source)[::-1])
            continue
        criterion = {"criterion": node["requirements"], "weight": float(f"{share:.6g}")}
        if "id" in node:
            criterion["id"] = node["id"]
        criteria.append(criterion)
    return criteria


# --- Records --------------------------------------------------------------------------------


@dataclass
class Record:
    """One record of the file, flattened one level (`inputs.question`), and where it is."""

    values: dict[str, Any]
    # The record's path in the file's JSON (for its line) or its row in a spreadsheet.
    path: DocPath = ()
    row: int | None = None
    line: int | None = None
    # Values the tool that wrote the file cut short (the dataset viewer's truncated_cells).
    cut: tuple[str, ...] = ()


@dataclass
class Records:
    """The records a file holds, and what held them (for the Detected line)."""

    records: list[Record]
    container: str = ""
    # What each record came wrapped in (`_WRAPPERS`), as the Detected line names it.
    wrapper: str = ""
    left_out: int = 0
    # How many records the file holds: past the most a file may hold, only the first ones
    # are read (a hostile list of millions costs no more than a long one).
    total: int = 0


# Prompt flow's checklist: the statements an answer is checked against, by name.
STATEMENTS_KEY = "statements"
# Values kept whole rather than flattened: they are one field's value.
_WHOLE_KEYS = frozenset(
    {
        "expected",
        "answers",
        "answer",
        "ideal",
        "criteria",
        "rubrics",
        "choices",
        "options",
        "target_scores",
        # Checks by name (`named_checks`): Prompt flow's `statements`.
        STATEMENTS_KEY,
    }
)


_SHAREGPT_ROLES = {"human": "user", "gpt": "assistant", "system": "system", "user": "user"}


def _as_messages(value: Any) -> Any:
    """ShareGPT's turns ({"from": "human", "value": ...}) as chat messages; else as given."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(turn, dict) and "from" in turn and "value" in turn for turn in value)
    ):
        return [
            {
                "role": _SHAREGPT_ROLES.get(str(turn["from"]), str(turn["from"])),
                "content": turn["value"],
            }
            for turn in value
        ]
    return value


# MT-Bench's questions: `turns`, the user's turns (one text each, or Arena-Hard's
# `{"content": text}`), and `reference`, the reference answer to each turn ("" for a turn
# it gives none).
USER_TURNS_KEY = "turns"
TURN_REFERENCES_KEY = "reference"
TURN_LABEL = "Turn {number}: "


def _turn_text(turn: Any) -> str | None:
    """A user turn's text: the text itself, or Arena-Hard's `{"content": text}` (a turn
    with a role is a chat message already)."""
    if isinstance(turn, dict) and turn.keys() == {"content"}:
        turn = turn["content"]
    return turn if isinstance(turn, str) else None


def _user_turns(record: dict[str, Any]) -> dict[str, Any]:
    """MT-Bench's turns as a conversation of user turns, and its references as one answer:
    each turn's reference after `Turn n: `, blocks separated by a blank line (a question of
    one turn: its reference alone). A turn with a blank reference is left out."""
    turns = record.get(USER_TURNS_KEY)
    texts = [_turn_text(turn) for turn in turns] if isinstance(turns, list) else []
    if not texts or not all(isinstance(text, str) for text in texts):
        return record
    record = {**record, USER_TURNS_KEY: [{"role": "user", "content": t} for t in texts]}
    references = record.get(TURN_REFERENCES_KEY)
    if (
        isinstance(references, list)
        and len(references) == len(texts)
        and all(isinstance(r, str) for r in references)
    ):
        if len(references) == 1:
            answer = references[0]
        else:
            answer = "\n\n".join(
                TURN_LABEL.format(number=number) + text
                for number, text in enumerate(references, start=1)
                if text.strip()
            )
        record[TURN_REFERENCES_KEY] = answer if answer.strip() else None
    return record


def _flatten(record: dict[str, Any]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    record = _user_turns(record)
    for key, value in record.items():
        value = _as_messages(value)
        if isinstance(value, dict) and value and key not in _WHOLE_KEYS and not score_levels(value):
            for child, inner in value.items():
                flat[f"{key}.{child}"] = inner
        else:
            flat[key] = value
    return flat


# The viewer cuts a long cell short to keep its page small, and names it here.
TRUNCATED_CELLS = "truncated_cells"
# Envelopes a tool puts around each record: the key holding the record, the keys allowed
# beside it, and what the Detected line calls such records. The record inside is read as
# if the file held it bare, so every shape and name applies to it unchanged.
_WRAPPERS: tuple[tuple[str, frozenset[str], str], ...] = (
    # The OpenAI Evals API's data source lines.
    ("item", frozenset({"item", "sample"}), 'OpenAI Evals API items ({"item": …})'),
    # What the Hugging Face dataset viewer's /rows endpoint (and its download) gives.
    (
        "row",
        frozenset({"row", "row_idx", TRUNCATED_CELLS}),
        'Hugging Face dataset viewer rows ({"row": …})',
    ),
)


def _unwrap(record: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The record inside a tool's envelope (`_WRAPPERS`) and what wrapped it, or the
    record itself and ""."""
    for key, allowed, wrapper in _WRAPPERS:
        inner = record.get(key)
        if isinstance(inner, dict) and set(record) <= allowed:
            return inner, wrapper
    return record, ""


def records_of(
    values: Sequence[tuple[dict[str, Any], DocPath, int | None]], *, limit: int = MAX_TASKS
) -> Records:
    """Records from (object, JSON path, line) triples, unwrapped and flattened; past
    `limit`, only counted."""
    found = Records([], total=len(values))
    for value, path, line in values[: limit + 1]:
        record, wrapper = _unwrap(value)
        found.wrapper = found.wrapper or wrapper
        cut = value.get(TRUNCATED_CELLS) if wrapper else None
        cells = tuple(str(cell) for cell in cut) if isinstance(cut, list) else ()
        found.records.append(Record(_flatten(record), path=path, line=line, cut=cells))
    return found


def _squad(document: dict[str, Any]) -> Records | None:
    """SQuAD's nesting: data → paragraphs → qas, each question with its paragraph."""
    data = document.get("data")
    if not (isinstance(data, list) and data and isinstance(data[0], dict)):
        return None
    if "paragraphs" not in data[0]:
        return None
    found = Records([], container="SQuAD")
    for i, article in enumerate(data):
        for j, paragraph in enumerate(article.get("paragraphs") or []):
            if not isinstance(paragraph, dict):
                continue
            for k, qa in enumerate(paragraph.get("qas") or []):
                if not isinstance(qa, dict):
                    continue
                values = {"context": paragraph.get("context"), **qa}
                found.records.append(
                    Record(_flatten(values), path=("data", i, "paragraphs", j, "qas", k))
                )
    return found


_TEMPLATE_VAR = re.compile(r"\{\{\s*[\w.]+\s*\}\}")
TEMPLATES = (
    "prompt templates with {{{{variables}}}} (a promptfoo prompts file, {source})",
    "They are filled in by a tool, not tasks to grade. Import the tests instead: the values of "
    "the variables and what a good answer is.",
)


def template_prompts(
    records: Sequence[Record], fields: Mapping[str, str], named: Mapping[str, str]
) -> tuple[str, str] | None:
    """(what, advice) when the prompts are templates and nothing names an answer."""
    source = fields.get("prompt")
    if not source or " + " in source or {"expected", "criterion"} & named.keys():
        return None
    values = [r.values.get(source) for r in records[:SAMPLE_RECORDS]]
    texts = [v for v in values if isinstance(v, str) and v.strip()]
    templated = sum(1 for v in texts if _TEMPLATE_VAR.search(v))
    if texts and templated * 5 >= len(texts) * 4:
        return TEMPLATES[0].format(source=source), TEMPLATES[1]
    return None


# Top-level keys of an eval tool's results file (promptfoo's output.json, a run export).
_RUN_KEYS = frozenset(
    {"config", "prompts", "stats", "evalId", "metrics", "createdAt", "summary", "studio_url"}
)


def results_document(document: Any) -> bool:
    """Whether a parsed .json is a whole eval run's results rather than a dataset:
    promptfoo's output.json (`results`, `config`, `stats`, …) or what Azure AI's
    `evaluate()` writes (`rows` of inputs and outputs, `metrics`, `studio_url`)."""
    return (
        isinstance(document, dict)
        and ("results" in document or "evalId" in document or "rows" in document)
        and len(document.keys() & _RUN_KEYS) >= 2
    )


# Containers that are no key of the file, as the Detected line says them.
_DESCRIBED_CONTAINERS = {
    "SQuAD": "nested by article and paragraph",
    "keyed by id": "keyed by id",
    "one record": "one record",
    "pandas columns": "pandas to_json() by column",
    "pandas split": "pandas to_json(orient='split')",
    "columns as lists": "one list per column",
}


def _pandas_table(document: dict[str, Any]) -> Records | None:
    """pandas' `to_json()` orientations other than records: "columns" (the default,
    {column: {index: value}}), "split" ({"columns", "index", "data"}) and one list per
    column ({"questions": [...], "ground_truths": [...]}, as `to_dict(orient="list")` and
    hand-written benchmarks hold them)."""
    columns = document.get("columns")
    data = document.get("data")
    if (
        isinstance(columns, list)
        and isinstance(data, list)
        and data
        and all(isinstance(row, list) for row in data)
    ):
        names = [str(name) for name in columns]
        values = [
            (dict(zip(names, row, strict=False)), ("data", i), None) for i, row in enumerate(data)
        ]
        found = records_of(values)
        found.container = "pandas split"
        return found
    columns_as_lists = _columns_as_lists(document)
    if columns_as_lists is not None:
        return columns_as_lists
    inner = list(document.values())
    if len(inner) < 2 or not all(isinstance(value, dict) and value for value in inner):
        return None
    index = list(inner[0])
    if not all(str(key).isdigit() for key in index) or any(list(v) != index for v in inner):
        return None
    if all(str(key).isdigit() for key in document):
        return None  # keyed by number both ways: records keyed by id
    rows = [({column: document[column][key] for column in document}, (key,), None) for key in index]
    found = records_of(rows)
    found.container = "pandas columns"
    return found


def _columns_as_lists(document: dict[str, Any]) -> Records | None:
    """Two or more columns, each a list of values (no records) of the same length: row i
    is each column's i-th value."""
    inner = list(document.values())
    if len(inner) < 2 or not all(isinstance(value, list) and value for value in inner):
        return None
    if len({len(value) for value in inner}) != 1:
        return None
    if any(isinstance(item, dict) for value in inner for item in value):
        return None
    names = [str(name) for name in document]
    rows = [
        ({name: document[name][i] for name in names}, (names[0], i), None)
        for i in range(len(inner[0]))
    ]
    found = records_of(rows)
    found.container = "columns as lists"
    return found


def find_records(document: Any) -> Records | str:
    """The records a parsed .json holds, or what it holds instead (for the message)."""
    if isinstance(document, list):
        if document and all(isinstance(item, dict) for item in document):
            return records_of([(item, (index,), None) for index, item in enumerate(document)])
        return "a list of " + ("values" if document else "nothing")
    if not isinstance(document, dict):
        return _kind(document)
    squad = _squad(document)
    if squad is not None:
        return squad
    table = _pandas_table(document)
    if table is not None:
        return table
    lists = {
        key: value
        for key, value in document.items()
        if isinstance(value, list) and value and all(isinstance(item, dict) for item in value)
    }
    chosen = next((key for key in CONTAINER_KEYS if key in lists), None)
    keyed = bool(document) and all(isinstance(value, dict) for value in document.values())
    single = _one_record(document) if chosen is None and not keyed else None
    if single is not None:
        return single
    if chosen is None and len(lists) == 1:
        chosen = next(iter(lists))
    if chosen is not None:
        found = records_of(
            [(item, (chosen, index), None) for index, item in enumerate(lists[chosen])]
        )
        found.container = chosen
        return found
    if keyed:
        # An object keyed by id: each key is its record's id.
        found = records_of([(value, (key,), None) for key, value in document.items()])
        for record, key in zip(found.records, document.keys(), strict=True):
            record.values.setdefault("id", key)
        found.container = "keyed by id"
        return found
    return "an object with " + (", ".join(list(document)[:8]) or "no keys")


def _one_record(document: dict[str, Any]) -> Records | None:
    """A .json file that is itself one record (one HealthBench example, one OpenAI evals
    sample saved on its own): a shape knows it, or its keys name a prompt and what grades
    it. Its lists (the chat turns, the rubric items) are its values, not records."""
    found = records_of([(document, (), None)])
    values = found.records[0].values
    named = recognise(found.records).named
    prompt = values.get(_parts(named.get("prompt", ""))[0])
    if not (isinstance(prompt, str) or is_chat(prompt)):
        return None  # a list of questions is columns, not one record's question
    if not named.keys() & {"expected", "criterion"}:
        return None
    found.container = "one record"
    return found


# Keys other tools' records have that say the record is theirs, besides `aliases`' names.
_FOREIGN_KEYS = frozenset(
    {"item", "vars", "assert", "inputs", "outputs", "rubrics", "answers", "messages", "turns"}
)
_FOREIGN_FIELDS = frozenset({"id", "name", "prompt", "expected", "criterion"})


def is_canonical(records: Iterable[dict[str, Any]]) -> bool:
    """Whether records are our own tasks: the page's keys, held to the page's rules.

    A record made only of the page's keys is ours whatever its values hold, so that the
    validator names a wrong type (`"prompt": 5`) as it does in any container, instead of a
    shape converting it quietly; only a chat prompt (a list of turns) is another tool's.
    A task of ours with a key we do not know (a typo, a note) is still ours: the
    validator warns about the key. A record with a key another tool uses for a field
    (`question`, `ideal`, `inputs`, ...) or with no prompt is another tool's.
    """
    for record in records:
        prompt = record.get("prompt")
        if is_chat(prompt):
            return False
        if record.keys() <= CANONICAL_TASK_KEYS:
            continue
        if prompt is not None and not isinstance(prompt, str):
            return False
        if prompt is None:
            return False
        for key in record.keys() - CANONICAL_TASK_KEYS:
            if key in _FOREIGN_KEYS or field_for(key) in _FOREIGN_FIELDS:
                return False
    return True


# --- Shapes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A tool's record shape: how to know it, and which of its keys fill which field.

    `fields` may name several sources for the prompt (joined with a blank line) as
    "a + b". Sources a shape does not name are matched by `aliases`.
    """

    name: str
    matches: Callable[[set[str], dict[str, Any]], bool]
    fields: Callable[[set[str], dict[str, Any]], dict[str, str]] = lambda keys, first: {}
    # The criterion the tool's own judge grades a record by when the record gives no
    # answer (MT-Bench's questions with no reference): such a task gets it as its criterion.
    judged_by: str = ""
    # The key whose text names a task when its prompt opens with the same wording in every
    # record (HelloBench's `raw_text`, the question its instruction wraps).
    named_by: str = ""


# A record's system prompt, which a shape names as the first part of the prompt.
SYSTEM_PROMPT_KEYS = frozenset({"system_prompt"})
# A coding problem's tests (MBPP's `test_list`, one `assert` each), which its prompt
# shows one per line, as MBPP's own prompt does: they name the function to write.
TEST_LIST_KEYS = frozenset({"test_list"})
# Multiple choice: the options a question offers, as a list or as one column per letter.
CHOICE_KEYS = ("choices", "options", TARGET_SCORES_KEY)
LETTERS = "ABCDEFGH"
MULTIPLE_CHOICE = "multiple choice"
# ARC and OpenBookQA as AI2 writes them keep the options inside the question.
ARC_STEM = "question.stem"
ARC_CHOICES = "question.choices"


def _is_choices(source: str) -> bool:
    """Whether a source holds a question's options, by its own name or, one level down, by
    its key's (ARC's `question.choices`)."""
    return source.rsplit(".", 1)[-1] in CHOICE_KEYS


def _choice_sources(keys: set[str], first: Mapping[str, Any]) -> list[str]:
    for key in CHOICE_KEYS:
        value = _choice_list(first.get(key))
        if key in keys and value and all(_scalar_text(choice) is not None for _, choice in value):
            return [key]
    letters = [letter for letter in LETTERS if letter in keys]
    if len(letters) >= 3 and "".join(letters) == LETTERS[: len(letters)]:
        return letters
    return []


def _choice_list(value: Any) -> list[tuple[str, Any]] | None:
    """A question's options, each with its label: a list (lettered A, B, C, …), one text
    with the options separated by commas (as Inspect writes them in a CSV cell), or the
    options' texts beside their own labels (ARC's `{"text": [...], "label": [...]}`, whose
    labels are sometimes 1, 2, 3, 4, as its answer key is; its original files give each
    option as `{"text", "label"}`), or BIG-bench's `target_scores` (the options are its keys)."""
    scores = option_scores(value)
    if scores is not None:
        value = list(scores)
    if (
        isinstance(value, list)
        and value
        and all(isinstance(choice, dict) and {"text", "label"} <= choice.keys() for choice in value)
    ):
        value = {"text": [c["text"] for c in value], "label": [c["label"] for c in value]}
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        labels = value.get("label")
        texts = value["text"]
        if isinstance(labels, list) and len(labels) == len(texts):
            return [(str(label), text) for label, text in zip(labels, texts, strict=True)]
        value = texts
    if isinstance(value, str) and "," in value:
        value = [choice.strip() for choice in value.split(",")]
    if isinstance(value, list):
        return [(_option_label(index), choice) for index, choice in enumerate(value)]
    return None


def _option_label(index: int) -> str:
    """A, B, …, Z, then 27, 28, …: more options than letters are numbered."""
    return string.ascii_uppercase[index] if index < 26 else str(index + 1)


def compose_prompt(values: Mapping[str, Any], parts: Sequence[str]) -> str:
    """The prompt from its parts: blocks separated by a blank line; a question's options
    (a `choices` list, or columns A, B, C, …) one per line, lettered; a system prompt
    before the rest as a chat prompt's system turn (`System: …`, then `Question: …`)."""
    blocks: list[str] = []
    options: list[str] = []
    system = ""
    for part in parts:
        value = values.get(part)
        if part in SYSTEM_PROMPT_KEYS:
            system = text_value(value, "prompt", part) or ""
            continue
        choices = _choice_list(value) if _is_choices(part) else None
        if choices is not None:
            options += [f"{label}. {_scalar_text(choice)}" for label, choice in choices]
            continue
        if part in TEST_LIST_KEYS and isinstance(value, list):
            tests = [text_value(test, "prompt", part) for test in value]
            blocks.append("\n".join(test for test in tests if test and test.strip()))
            continue
        text = text_value(value, "prompt", part)
        if not text:
            continue
        if len(part) == 1 and part in LETTERS:
            options.append(f"{part}. {text}")
        else:
            blocks.append(text)
    if options:
        blocks.append("\n".join(options))
    prompt = "\n\n".join(blocks)
    if system.strip() and prompt:
        return chat_prompt(
            [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        )
    return prompt


def _keys_shape(shape_name: str, /, **fields: str) -> Shape:
    """A shape known by having every key its fields name (`prompt="instruction + input"`)."""
    needed = {part.strip() for source in fields.values() for part in source.split(" + ")}
    return Shape(shape_name, lambda keys, first: needed <= keys, lambda keys, first: dict(fields))


def _output_shape(name: str, *, prompt: str) -> Shape:
    """A shape whose `output` is the expected answer (Alpaca's), unless a key names one:
    beside DataFlow's `golden_answer`, `output` is what a model answered."""
    shape = _keys_shape(name, prompt=prompt, expected="output")
    return Shape(
        name,
        lambda keys, first: (
            shape.matches(keys, first) and not any(field_for(key) == "expected" for key in keys)
        ),
        shape.fields,
    )


def _only_child(keys: set[str], parent: str) -> str | None:
    children = [key for key in keys if key.startswith(parent + ".")]
    return children[0] if len(children) == 1 else None


def _langsmith_fields(keys: set[str], first: dict[str, Any]) -> dict[str, str]:
    fields = {}
    for field_key, parent in (("prompt", "inputs"), ("expected", "outputs")):
        named = [
            k
            for k in keys
            if k.startswith(parent + ".") and field_for(k[len(parent) + 1 :]) == field_key
        ]
        only = _only_child(keys, parent)
        if named:
            fields[field_key] = sorted(named)[0]
        elif only:
            fields[field_key] = only
    return fields


def _has_answer_starts(first: dict[str, Any]) -> bool:
    answers = first.get("answers")
    if isinstance(answers, dict):
        return "answer_start" in answers
    return isinstance(answers, list) and any(
        isinstance(a, dict) and "answer_start" in a for a in answers
    )


CONVERSATION_KEYS = ("messages", "conversations", "conversation", "dialog", "chat")


def _conversation_key(keys: set[str], first: Mapping[str, Any]) -> str | None:
    """A key holding a whole conversation whose last turn is the assistant's answer."""
    for key in CONVERSATION_KEYS:
        value = first.get(key)
        if (
            key in keys
            and isinstance(value, list)
            and is_chat(value)
            and value[-1].get("role") == "assistant"
        ):
            return key
    return None


def _score_rubric_key(keys: set[str], first: Mapping[str, Any]) -> str | None:
    """The key holding a score rubric (`score_levels`), as BiGGen-Bench's `score_rubric`."""
    return next((key for key in sorted(keys) if score_levels(first.get(key))), None)


def _score_rubric_fields(keys: set[str], first: dict[str, Any]) -> dict[str, str]:
    """The rubric and the reference answer make the criterion (the reference is what the
    judge compares with, not an expected answer of its own); the system prompt comes
    before the prompt the names give."""
    rubric = _score_rubric_key(keys, first) or ""
    named = _alias_fields(sorted(keys - {rubric}), ())
    reference = named.get("expected")
    fields = {"criterion": f"{rubric} + {reference}" if reference else rubric}
    if "prompt" in named:
        system = sorted(SYSTEM_PROMPT_KEYS & keys)
        fields["prompt"] = " + ".join([*system, named["prompt"]])
    return fields


def _key_spelled(keys: set[str], name: str) -> str | None:
    """The key spelled as `name` (case, spaces, `_` and `-` aside), if there is one."""
    return next((key for key in sorted(keys) if normalize(key) == normalize(name)), None)


def _truthfulqa_fields(keys: set[str], first: dict[str, Any]) -> dict[str, str]:
    """TruthfulQA's question and its best answer, in the CSV (`Question`, `Best Answer`)
    and the Hugging Face export (`question`, `best_answer`)."""
    return {
        "prompt": _key_spelled(keys, "question") or "",
        "expected": _key_spelled(keys, "best_answer") or "",
    }


def _is_user_turns(value: Any) -> bool:
    return is_chat(value) and all(message.get("role") == "user" for message in value)


# What MT-Bench's judge weighs when a question has no reference answer (FastChat's
# `single-v1` judge prompt), as a criterion.
MT_BENCH_JUDGE = (
    "The response is helpful, relevant, accurate, deep, creative and detailed "
    "(what MT-Bench's judge weighs for a question with no reference answer)."
)

# What Arena-Hard's judge weighs (its judge_config.yaml), as a criterion: it compares an
# answer with a baseline model's, which is no reference answer and not in the file.
ARENA_HARD_JUDGE = (
    "The response is correct, helpful, relevant and concise, asks for clarification when "
    "the prompt is ambiguous, and leaves out no important information (what Arena-Hard's "
    "judge weighs)."
)

SHAPES: tuple[Shape, ...] = (
    Shape(
        "Arena-Hard questions (turns)",
        lambda keys, first: "cluster" in keys and _is_user_turns(first.get(USER_TURNS_KEY)),
        lambda keys, first: {"prompt": USER_TURNS_KEY},
        judged_by=ARENA_HARD_JUDGE,
    ),
    Shape(
        "MT-Bench questions (turns + reference)",
        lambda keys, first: _is_user_turns(first.get(USER_TURNS_KEY)),
        lambda keys, first: (
            {"prompt": USER_TURNS_KEY}
            | ({"expected": TURN_REFERENCES_KEY} if TURN_REFERENCES_KEY in keys else {})
        ),
        judged_by=MT_BENCH_JUDGE,
    ),
    Shape(
        "chat conversations (the last assistant turn is the expected answer)",
        lambda keys, first: _conversation_key(keys, first) is not None,
        lambda keys, first: dict.fromkeys(
            ("prompt", "expected"), _conversation_key(keys, first) or ""
        ),
    ),
    Shape(
        "HealthBench (chat prompt + rubrics)",
        lambda keys, first: "rubrics" in keys and is_chat(first.get("prompt")),
        lambda keys, first: (
            {"prompt": "prompt", "criterion": "rubrics"}
            | ({"id": "prompt_id"} if "prompt_id" in keys else {})
        ),
    ),
    Shape(
        "Prometheus score rubric (criteria + score descriptions)",
        lambda keys, first: _score_rubric_key(keys, first) is not None,
        _score_rubric_fields,
    ),
    # HelloBench's instructions open with their category's wording ("You should write a
    # detailed response to the following question on Science."): named by the question.
    Shape(
        "HelloBench (instruction + checklists)",
        lambda keys, first: {"instruction", "checklists", "raw_text"} <= keys,
        lambda keys, first: {"prompt": "instruction", "criterion": "checklists"},
        named_by="raw_text",
    ),
    Shape(
        "PaperBench rubric tree (the top requirement → prompt, the weighted leaves → criteria)",
        lambda keys, first: "requirements" in keys and is_requirement_tree(first.get("sub_tasks")),
        lambda keys, first: (
            {"prompt": "requirements", "criterion": "sub_tasks"}
            | ({"id": "id"} if "id" in keys else {})
        ),
    ),
    _keys_shape("OpenAI evals (input + ideal)", prompt="input", expected="ideal"),
    Shape(
        "promptfoo test cases (vars + assert)",
        lambda keys, first: any(key.startswith("vars.") for key in keys),
    ),
    Shape(
        "LangSmith examples (inputs + outputs)",
        lambda keys, first: (
            any(k.startswith("inputs.") for k in keys)
            and any(k.startswith("outputs.") for k in keys)
        ),
        _langsmith_fields,
    ),
    # Named by the function to write: its prompt opens with imports, not with a question.
    _keys_shape(
        "HumanEval (prompt + canonical_solution)",
        prompt="prompt",
        expected="canonical_solution",
        name="entry_point",
    ),
    Shape(
        "MBPP (text + code + test_list)",
        lambda keys, first: {"code", "test_list"} <= keys and bool(keys & {"text", "prompt"}),
        # The original files call the problem `text`; the sanitized set calls it `prompt`.
        lambda keys, first: {
            "prompt": ("text" if "text" in keys else "prompt") + " + test_list",
            "expected": "code",
        },
    ),
    Shape(
        # `Correct Answers` (also read as an expected answer by its name) are the other
        # true answers, `; `-separated in one cell: the best answer is the one to grade by.
        "TruthfulQA (Question + Best Answer)",
        lambda keys, first: all(_truthfulqa_fields(keys, first).values()),
        _truthfulqa_fields,
    ),
    Shape(
        # A BIG-bench JSON task's multiple-choice examples: the options are the keys of
        # `target_scores`, and the best scored is the answer.
        "BIG-bench (input + target_scores)",
        lambda keys, first: (
            "input" in keys and option_scores(first.get(TARGET_SCORES_KEY)) is not None
        ),
        lambda keys, first: {"prompt": "input", "expected": TARGET_SCORES_KEY},
    ),
    Shape(
        # ARC's and OpenBookQA's own files: the options are inside the question, under their
        # own labels, and `answerKey` (read by its name) names one.
        "ARC / OpenBookQA (question.stem + question.choices + answerKey)",
        lambda keys, first: ARC_STEM in keys and _choice_list(first.get(ARC_CHOICES)) is not None,
        lambda keys, first: {"prompt": f"{ARC_STEM} + {ARC_CHOICES}"},
    ),
    _keys_shape("prompt + completion", prompt="prompt", expected="completion"),
    _keys_shape(
        "deepeval goldens (input + expected_output)", prompt="input", expected="expected_output"
    ),
    _keys_shape("ragas (user_input + reference)", prompt="user_input", expected="reference"),
    # Prompt flow's chat flows check an answer against `statements`, each by name (its
    # eval-checklist flow): they are the criteria, asked after any `chat_history`.
    Shape(
        "Prompt flow checklist (question + statements → criteria)",
        lambda keys, first: "question" in keys and bool(named_checks(first.get(STATEMENTS_KEY))),
        lambda keys, first: (
            {"prompt": "question", "criterion": STATEMENTS_KEY}
            | ({"expected": "ground_truth"} if "ground_truth" in keys else {})
        ),
    ),
    # Prompt flow's chat data: its `ground_truth`, when there is one, grades (an `answer`
    # beside it is what the flow said); the names say the rest.
    Shape(
        "Prompt flow chat data (question + chat_history)",
        lambda keys, first: "question" in keys and "chat_history" in keys,
        lambda keys, first: (
            {"prompt": "question"}
            | ({"expected": "ground_truth"} if "ground_truth" in keys else {})
        ),
    ),
    Shape(
        "ragas (question + ground_truth)",
        lambda keys, first: (
            "question" in keys and ("ground_truth" in keys or "ground_truths" in keys)
        ),
        lambda keys, first: {
            "prompt": "question",
            "expected": "ground_truth" if "ground_truth" in keys else "ground_truths",
        },
    ),
    # Azure's RAG samples write the ground truth as `truth` (with a `question`, or a `query`
    # as Azure AI Foundry's evaluators name it), and the evaluator's results keep the app's
    # own `answer` beside it: the shape, not the names, says which one grades.
    Shape(
        "Azure AI evaluation data (question or query + truth)",
        lambda keys, first: "truth" in keys and bool(keys & {"question", "query"}),
        lambda keys, first: {
            "prompt": "question" if "question" in keys else "query",
            "expected": "truth",
        },
    ),
    _output_shape("Alpaca (instruction + input + output)", prompt="instruction + input"),
    _output_shape("AlpacaEval (instruction + output)", prompt="instruction"),
    Shape(
        "SQuAD (context + question + answers)",
        lambda keys, first: "question" in keys and "context" in keys and _has_answer_starts(first),
        lambda keys, first: {"prompt": "context + question", "expected": "answers"},
    ),
    # BoolQ's yes/no questions are about their passage, asked before them as SQuAD's is.
    Shape(
        "BoolQ (passage + question + answer)",
        lambda keys, first: (
            {"question", "passage"} <= keys and isinstance(first.get("answer"), bool)
        ),
        lambda keys, first: {"prompt": "passage + question", "expected": "answer"},
    ),
    Shape(
        "NQ-open (question + answers)",
        lambda keys, first: (
            "question" in keys and isinstance(first.get("answer", first.get("answers")), list)
        ),
        lambda keys, first: {
            "prompt": "question",
            "expected": "answer" if "answer" in keys else "answers",
        },
    ),
    Shape(
        "HotpotQA (question + answer + supporting facts)",
        # `supporting_facts` is a list of [title, sentence] pairs in the original files and
        # an object of lists (`supporting_facts.title`, `.sent_id`) in the Hugging Face export.
        lambda keys, first: (
            "question" in keys
            and any(k == "supporting_facts" or k.startswith("supporting_facts.") for k in keys)
        ),
        lambda keys, first: (
            {"prompt": "question", "expected": "answer"} | ({"id": "_id"} if "_id" in keys else {})
        ),
    ),
)


def _sources(records: Sequence[Record]) -> list[str]:
    seen: dict[str, None] = {}
    for record in records[:SAMPLE_RECORDS]:
        seen.update(dict.fromkeys(record.values))
    return list(seen)


# Azure AI and Prompt flow evaluation data joins what the app under test returned as
# `__outputs.<name>` keys: `__outputs.answer` is the app's answer, never a field by its name.
_RUN_OUTPUTS = "__outputs."


def _alias_fields(sources: Sequence[str], taken: Iterable[str]) -> dict[str, str]:
    """Fields matched by name: a top-level key before a nested one, then the list's order."""
    used: set[str] = set()
    for source in taken:
        used.update(part.strip() for part in source.split(" + "))
    best: dict[str, tuple[tuple[int, int], str]] = {}
    for source in sources:
        if source in used or source.startswith(_RUN_OUTPUTS):
            continue
        leaf = source.rsplit(".", 1)[-1]
        key = field_for(leaf)
        if key is None:
            continue
        spellings = [normalize(s) for s in FIELDS_BY_KEY[key].spellings]
        normal = normalize(leaf)
        position = spellings.index(normal) if normal in spellings else len(spellings)
        rank = ("." in source, position)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, source)
    return {key: source for key, (_, source) in best.items()}


def _answer_beside(prompt: str, sources: Sequence[str]) -> str | None:
    """The key beside a nested prompt that names an expected answer: that prompt's answer.

    Braintrust's scorer datasets hold the question, a model's output and the reference in
    `input` (`input.input`, `input.output`, `input.expected`); their top-level `expected`
    is the score a grader should give, not an answer to the question.
    """
    parent, dot, _ = prompt.rpartition(".")
    if not dot or " + " in prompt:
        return None
    siblings = (s for s in sources if s.startswith(parent + ".") and s != prompt)
    return next((s for s in siblings if field_for(s[len(parent) + 1 :]) == "expected"), None)


def _text_columns(records: Sequence[Record], sources: Sequence[str]) -> list[tuple[str, float]]:
    """Sources holding text (or chat) in most records, with their mean length."""
    found = []
    for source in sources:
        if (
            source.startswith("__")
            or field_for_header(source) not in (None, *FIELD_KEYS)
            or source.rsplit(".", 1)[-1].lower() in _RESULT_KEYS
        ):
            # promptfoo's own columns, our verifier and file columns and what a model
            # answered are never the text to guess a prompt or an answer from.
            continue
        lengths = []
        for record in records[:SAMPLE_RECORDS]:
            value = record.values.get(source)
            if isinstance(value, str) and value.strip():
                lengths.append(len(value))
            elif isinstance(value, list) and is_chat(value):
                lengths.append(sum(len(str(m.get("content"))) for m in value))
        if lengths and len(lengths) * 2 >= min(len(records), SAMPLE_RECORDS):
            found.append((source, sum(lengths) / len(lengths)))
    return found


# Words that suggest a column's role, in the languages people's spreadsheets use. They only
# pre-fill the mapping step, which the person confirms: they are not `aliases`, which
# import without asking.
_PROMPT_HINTS = (
    "question",
    "problem",
    "task",
    "instruction",
    "query",
    "prompt",
    "input",
    "问题",
    "問題",
    "题目",
    "提问",
    "质问",
    "質問",
    "질문",
    "вопрос",
    "задани",
    "pregunta",
    "frage",
    "domanda",
    "pergunta",
    "vraag",
    "soru",
    "pytanie",
)
_EXPECTED_HINTS = (
    "expected",
    "gold",
    "correct",
    "label",
    "target",
    "reference",
    "answer",
    "solution",
    "output",
    "response",
    "réponse",
    "reponse",
    "respuesta",
    "antwort",
    "risposta",
    "resposta",
    "antwoord",
    "cevap",
    "odpowied",
    "答案",
    "回答",
    "答え",
    "解答",
    "정답",
    "답변",
    "ответ",
    "решени",
)


def _hinted(source: str, hints: Sequence[str]) -> bool:
    name = source.rsplit(".", 1)[-1].lstrip("_").lower()
    return any(hint in name for hint in hints)


def guess_fields(
    records: Sequence[Record], sources: Sequence[str], known: dict[str, str]
) -> dict[str, str]:
    """The best guess for a prompt and an expected answer the names did not give.

    A column whose name suggests the role (in several languages: `expected_category`,
    `solution`, `答案`, `réponse`) first; else the expected answer is the shortest text and
    the prompt the longest text left.
    """
    fields = dict(known)
    texts = [
        (s, length) for s, length in _text_columns(records, sources) if s not in fields.values()
    ]
    graded = "expected" in fields or "criterion" in fields or "assert" in sources
    if not graded:
        hinted = [s for s, _ in texts if _hinted(s, _EXPECTED_HINTS)]
        if hinted:
            fields["expected"] = hinted[0]
        elif len(texts) >= 2 or (texts and "prompt" in fields):
            fields["expected"] = min(texts, key=lambda item: item[1])[0]
        texts = [(s, length) for s, length in texts if s != fields.get("expected")]
    if "prompt" not in fields and texts:
        hinted = [s for s, _ in texts if _hinted(s, _PROMPT_HINTS)]
        fields["prompt"] = hinted[0] if hinted else max(texts, key=lambda item: item[1])[0]
    return fields


@dataclass
class Recognised:
    shape: str
    fields: dict[str, str]
    how: str
    # What the shape and the names said, before any guess or memory.
    named: dict[str, str]
    sources: list[str]
    # The shape that recognised the records, if one did.
    matched: Shape | None = None


def _not_a_label(key: str, value: Any) -> bool:
    """Whether a key that names an id or a name by its spelling holds something else: the
    list of titles under HotpotQA's `supporting_facts.title`, as the Hugging Face export
    writes it, is no task's name."""
    return key in ("id", "name") and value is not None and _scalar_text(value) is None


def recognise(
    records: Sequence[Record],
    *,
    given: Mapping[str, str] | None = None,
    remembered: Mapping[str, Mapping[str, str]] | None = None,
) -> Recognised:
    """Which source fills which field: given > a shape > names > remembered > guessed."""
    sources = _sources(records)
    keys = set(sources)
    first = records[0].values if records else {}
    shape = next((s for s in SHAPES if s.matches(keys, first)), None)
    fields = dict(shape.fields(keys, first)) if shape else {}
    by_name = {
        k: v
        for k, v in _alias_fields(sources, fields.values()).items()
        if k not in fields and not _not_a_label(k, first.get(v))
    }
    if "expected" in by_name:
        by_name["expected"] = (
            _answer_beside(fields.get("prompt", by_name.get("prompt", "")), sources)
            or by_name["expected"]
        )
    if is_requirement_tree(first.get(fields.get("criterion", ""))):
        # A requirement tree weighs its own leaves: a `weight` beside it is its root's, read
        # with the tree (`read_records`), not the weight of each criterion.
        by_name.pop("weight", None)
    fields.update(by_name)
    name = shape.name if shape else ""
    choices = _choice_sources(keys, first)
    prompt = fields.get("prompt")
    if choices and prompt and " + " not in prompt and prompt not in choices:
        fields["prompt"] = " + ".join([prompt, *choices])
        name = f"{name}, {MULTIPLE_CHOICE}" if name else f"{MULTIPLE_CHOICE} ({prompt} + options)"
    if given:
        chosen = {k: v for k, v in fields.items() if v not in given.values()}
        chosen.update(given)
        return Recognised(name, chosen, "given", fields, sources, shape)
    if "prompt" in fields and (
        "expected" in fields
        or "criterion" in fields
        or keys & {"criteria", "assert"}
        or (shape and shape.judged_by)
    ):
        return Recognised(name, fields, "recognised", fields, sources, shape)
    memory = (remembered or {}).get(signature_of(sources))
    if memory:
        return Recognised(name, dict(memory), "remembered", fields, sources)
    guessed = guess_fields(records, sources, fields)
    if guessed == fields:
        # Nothing to guess from: build what the names say, and let the validator say
        # what each task lacks, on its line.
        return Recognised(name, fields, "recognised", fields, sources)
    return Recognised(name, guessed, "guessed", fields, sources)


# --- Building tasks -------------------------------------------------------------------------


def _parts(source: str) -> list[str]:
    return [part.strip() for part in source.split(" + ")]


@dataclass
class Built:
    tasks: list[dict[str, Any]] = field(default_factory=list)
    # Where each task's record is: its JSON path, row or line.
    places: list[Record] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # The record each problem is on, in the same order.
    problem_records: list[Record] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    left_out: int = 0


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


def _is_unanswerable(values: Mapping[str, Any], expected_source: str | None) -> bool:
    if values.get("is_impossible") is True:
        return True
    if expected_source == "answers":
        answers = values.get("answers")
        texts = answers.get("text") if isinstance(answers, dict) else answers
        return isinstance(texts, list) and not texts
    return False


def _split_conversation(value: Any, source: str) -> dict[str, str]:
    """A whole conversation: its turns up to the last user turn are the prompt, the
    assistant's turns after it the expected answer."""
    if not is_chat(value):
        raise ValueProblem(NOT_TEXT_VALUE, source=source, kind=_kind(value), label="prompt")
    end = len(value)
    while end and value[end - 1].get("role") == "assistant":
        end -= 1
    task: dict[str, str] = {}
    if end:
        task["prompt"] = chat_prompt(value[:end], source)
    answers = [
        _content_text(m["content"], source, n) for n, m in enumerate(value[end:], start=end + 1)
    ]
    if answers:
        task["expected"] = "\n\n".join(answers)
    return task


# Keys holding the turns before a record's question: Prompt flow's `chat_history` (a list
# of {"inputs", "outputs"} pairs, or of messages) and Giskard's `conversation_history`.
HISTORY_KEYS = ("chat_history", "conversation_history")


def _pair_side_text(side: Any, field_key: str) -> Any:
    """The text of one side of a Prompt flow turn: the key that names the field, else the
    only value (`{"question": ...}`, `{"answer": ...}`, `{"ground_truth": ...}`)."""
    if not isinstance(side, dict) or not side:
        return side
    named = [value for key, value in side.items() if field_for(key) == field_key]
    if named:
        return named[0]
    return next(iter(side.values())) if len(side) == 1 else side


def _history(values: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
    """The earlier turns a record's question follows, as chat messages, and their key."""
    key = next((k for k in HISTORY_KEYS if isinstance(values.get(k), list) and values[k]), None)
    if key is None:
        return None
    messages: list[Any] = []
    for turn in values[key]:
        if isinstance(turn, dict) and not _is_message(turn) and "inputs" in turn:
            messages.append({"role": "user", "content": _pair_side_text(turn["inputs"], "prompt")})
            if "outputs" in turn:
                content = _pair_side_text(turn["outputs"], "expected")
                messages.append({"role": "assistant", "content": content})
        else:
            messages.append(turn)
    return key, messages


def _task(values: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
    """One record as a canonical task. Raises ValueProblem for a value that cannot be one."""
    task: dict[str, Any] = {}
    conversation = fields.get("prompt")
    if conversation and conversation == fields.get("expected"):
        task.update(_split_conversation(values.get(conversation), conversation))
    elif conversation:
        prompt = compose_prompt(values, _parts(conversation))
        history = _history(values) if prompt else None
        if history and history[0] not in _parts(conversation):
            # A follow-up question is asked after the turns it follows, as a chat prompt.
            key, messages = history
            prompt = chat_prompt([*messages, {"role": "user", "content": prompt}], key)
        if prompt:
            task["prompt"] = prompt
    for key in ("id", "name", "expected"):
        source = fields.get(key)
        if source and not (key == "expected" and source == conversation):
            text = text_value(values.get(source), key, source)
            if text is not None and (key != "id" or text.strip()):
                task[key] = text
    if isinstance(values.get("criteria"), list) and "criterion" not in fields:
        task["criteria"] = values["criteria"]
    criterion = fields.get("criterion")
    if criterion:
        # A score rubric's criterion comes with the reference answer its judge reads.
        rubric, *with_it = _parts(criterion)
        if values.get(rubric) not in (None, "", []):
            weight = values.get(fields["weight"]) if "weight" in fields else None
            reference = (
                text_value(values.get(with_it[0]), "expected", with_it[0]) if with_it else None
            )
            task["criteria"] = criteria_value(values[rubric], weight, rubric, reference=reference)
    if "assert" in values and not fields.get("expected"):
        _promptfoo_assertions(values["assert"], task, "assert")
    answer = values.get("expected")
    if isinstance(answer, dict) and "text" in answer and fields.get("expected") == "expected":
        task["expected"] = answer  # our own {"text", "verifier"}
    return task


def _task_name(
    values: Mapping[str, Any], prompt_parts: Sequence[str], prompt: str, named_by: str = ""
) -> str:
    """A passage and its question are named by the question, not by the passage or the
    options; a conversation by its question, and the user's turns alone (MT-Bench) by the
    first, which sets the task (the later turns follow it up). A shape's `named_by` key,
    when the record has its text, names the task instead."""
    named = values.get(named_by) if named_by else None
    if isinstance(named, str) and named.strip():
        return name_from_prompt(named)
    question = next(
        (p for p in reversed(prompt_parts) if not _is_choices(p) and p not in LETTERS),
        prompt_parts[-1] if prompt_parts else "",
    )
    asked = values.get(question)
    if question == USER_TURNS_KEY and isinstance(asked, list) and _is_user_turns(asked):
        opening = asked[0]["content"]
        if isinstance(opening, str):
            return name_from_prompt(opening)
    return name_from_prompt(asked if isinstance(asked, str) else prompt)


def build_tasks(
    records: Sequence[Record],
    fields: Mapping[str, str],
    *,
    file_name: str,
    shape: Shape | None = None,
) -> Built:
    """Each record as a canonical task; a value that cannot be one is a problem on its record.

    A task with nothing to grade it by gets the `shape`'s own criterion, when it has one.
    """
    built = Built()
    judged = 0
    prompt_parts = _parts(fields["prompt"]) if "prompt" in fields else []
    for record in records:
        values = record.values
        if _is_unanswerable(values, fields.get("expected")):
            built.left_out += 1
            continue
        try:
            if record.cut:
                raise ValueProblem(CELLS_CUT, cells=", ".join(record.cut))
            task = _task(values, fields)
        except ValueProblem as exc:
            problem = exc.rule.at(file_name, row=record.row, line=record.line, **exc.params)
            built.problems.append(problem)
            built.problem_records.append(record)
            continue
        if "prompt" in task and "name" not in task:
            named_by = shape.named_by if shape else ""
            task["name"] = _task_name(values, prompt_parts, task["prompt"], named_by)
        if shape and shape.judged_by and not task.get("expected") and not task.get("criteria"):
            task["criteria"] = [{"criterion": shape.judged_by}]
            judged += 1
        built.tasks.append(task)
        built.places.append(record)
    if built.left_out:
        built.warnings.append(UNANSWERABLE_LEFT_OUT.at(file_name, count=built.left_out))
    if judged and shape:
        built.warnings.append(JUDGED_BY_TOOL.at(file_name, count=judged, criterion=shape.judged_by))
    return built


def ignored_sources(
    sources: Sequence[str], fields: Mapping[str, str], *, handled: Iterable[str] = ()
) -> list[str]:
    """Sources no field reads, named by their top-level key when none of its keys is read."""
    used = {part for source in fields.values() for part in _parts(source)} | set(handled)
    ignored: dict[str, None] = {}
    for source in sources:
        if source in used:
            continue
        parent = source.split(".", 1)[0]
        if "." in source and not any(u.startswith(parent + ".") for u in used):
            ignored[parent] = None
        elif "." in source:
            ignored[source] = None
        else:
            ignored[source] = None
    return list(ignored)


def sample_of(tasks: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The first tasks as the mapping step shows them, each text cut to what it shows
    (the sample is kept with the upload's check, so a long prompt must not bloat it)."""
    shown = []
    for task in tasks[:SAMPLE_SHOWN]:
        expected = task.get("expected")
        if isinstance(expected, dict):
            expected = expected.get("text")
        criteria = [c.get("criterion") for c in task.get("criteria") or [] if isinstance(c, dict)]
        shown.append(
            {
                "id": _cut(task.get("id")),
                "prompt": _cut(task.get("prompt")),
                "expected": _cut(expected),
                "criteria": [_cut(c) for c in criteria[:SAMPLE_CRITERIA]],
            }
        )
    return tuple(shown)


def _cut(value: Any) -> str:
    return shorten(value, SAMPLE_CHARS, one_line=False) if isinstance(value, str) else ""


# --- Files that are not datasets ------------------------------------------------------------

_LETTER = re.compile(r"[^\W\d_]")
_CORPUS_KEYS = frozenset({"_id", "id", "doc_id", "title", "text", "metadata", "url"})
_QUERY_KEYS = frozenset({"_id", "id", "text", "title", "metadata"})
_RESULT_KEYS = frozenset(
    {
        "actual_output",
        "response",
        "model_output",
        "prediction",
        "generated_answer",
        "result",
        "results",
        "output",
    }
)
_SCORE_HINT = re.compile(
    r"(score|passed|success|grade|metric|result|precision|recall|faithfulness)", re.I
)
QRELS_HEADERS = (
    frozenset({"queryid", "corpusid", "score"}),
    frozenset({"qid", "docid", "rel"}),
    frozenset({"queryid", "docid", "relevance"}),
)


# FastChat's and Arena-Hard's model_answer (and MT-Bench's reference_answer) files: one
# model's answers, by question id, without the questions.
_MODEL_ANSWER_KEYS = frozenset({"question_id", "answer_id", "model_id"})
MODEL_ANSWERS = (
    "one model's answers to a benchmark's questions (question_id, answer_id, model_id, "
    "choices), as FastChat and Arena-Hard write them",
    "They hold what the model said, not the questions. Import the benchmark's questions "
    "(question.jsonl) instead.",
)

# The data of Prompt flow's eval-checklist flow: an app's answer and the statements it is
# checked against, without the question it answered.
CHECKED_ANSWERS = (
    "answers to check against statements, without the questions they answer (answer, "
    "statements: the data of Prompt flow's eval-checklist flow)",
    "They hold what an app answered, not what to ask it. Import the questions with their "
    "statements instead (question, statements, as Prompt flow's chat flows take them).",
)


def not_a_dataset(
    sources: Sequence[str], fields: Mapping[str, str], *, kind: str
) -> tuple[str, str] | None:
    """(what the file looks like, what to do) for files that hold no dataset."""
    names = {normalize(s) for s in sources}
    raw = set(sources)
    headerless_qrels = (
        kind == "columns" and len(sources) in (3, 4) and sources[-1].strip().isdigit()
    )
    if any(headers <= names for headers in QRELS_HEADERS) or headerless_qrels:
        return (
            "BEIR qrels on their own (query-id, corpus-id, score)",
            "Zip them with queries.jsonl (qrels/test.tsv and queries.jsonl) and import the .zip.",
        )
    result_keys = {s for s in raw if s.lower() in _RESULT_KEYS or s.upper() == "RESULT"}
    scores = {s for s in raw if _SCORE_HINT.search(s)}
    # What an app returned, joined to its inputs by Azure AI or Prompt flow: a run, scored or not.
    run_outputs = {s for s in raw if s.startswith(_RUN_OUTPUTS)}
    graded = "expected" in fields or "criterion" in fields or "assert" in raw
    scored = bool(scores) or "RESULT" in raw
    if ((result_keys and scored) or run_outputs) and not graded:
        # Prompt flow's outputs may come without a score: say only what the file holds.
        held = "a model answered and how it scored" if scored else "an app answered"
        return (
            "the results of an eval run ("
            + ", ".join(sorted(result_keys | scores | run_outputs))
            + ")",
            f"It holds what {held}, not what a good answer is. "
            "Import the dataset the run used instead.",
        )
    if raw >= _MODEL_ANSWER_KEYS and not graded:
        return MODEL_ANSWERS
    if STATEMENTS_KEY in raw and "prompt" not in fields:
        # Its `answer` is what the app said (the one checked), not an expected answer.
        return CHECKED_ANSWERS
    if kind == "columns" and sources and not any(_LETTER.search(s) for s in sources):
        return (
            "a sheet with no header row: its first row holds values ("
            + ", ".join(sources)
            + ") instead of column names",
            "Add a first row naming the columns (question, answer, …) and choose the file again.",
        )
    if "prompt" in fields or graded:
        return None
    # Top-level keys: BEIR's metadata objects are read as `metadata.…`.
    top = {source.split(".", 1)[0] for source in raw}
    if top and top <= _QUERY_KEYS and top & {"_id", "id"} and len(top & {"text", "title"}) == 1:
        return (
            "BEIR queries on their own (" + ", ".join(sorted(top)) + ")",
            "Zip them with their qrels (qrels/test.tsv) and import the .zip.",
        )
    if top and top <= _CORPUS_KEYS and "text" in top and "title" in top:
        return (
            "a document corpus (" + ", ".join(sorted(top)) + "): documents, not questions",
            "Import the questions and their answers instead; a corpus is what an agent "
            "searches, not what it is graded on.",
        )
    return None


# --- Putting it together --------------------------------------------------------------------


@dataclass
class Shaped:
    """What the records of a file make: the canonical document (or None) and its story."""

    document: dict[str, Any] | None
    mapping: FieldMap | None
    detected: str
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    places: list[Record] = field(default_factory=list)
    # The record of each of `problems` that is on one (None for the file's own).
    problem_records: list[Record | None] = field(default_factory=list)


def _described(fields: Mapping[str, str], what: str) -> str:
    """`records with question → prompt, answer → expected answer`, for the Detected line."""
    shown = [
        f"{fields[key]} → {LABELS[key]}"
        for key in ("prompt", "expected", "criterion")
        if key in fields
    ]
    return f"{what} with {', '.join(shown)}" if shown else what


def _missing_sources(fields: Mapping[str, str], sources: Sequence[str]) -> list[tuple[str, str]]:
    have = set(sources)
    return [
        (key, part) for key, source in fields.items() for part in _parts(source) if part not in have
    ]


def _map_flags(fields: Mapping[str, str], named: Mapping[str, str]) -> str:
    return " ".join(
        f"--map {key}={source}"
        for key, source in fields.items()
        if " + " not in source and named.get(key) != source
    )


def _guess_words(fields: Mapping[str, str], named: Mapping[str, str]) -> str:
    shown = [
        f"{LABELS[key]} = {fields[key]}"
        for key in FIELD_KEYS
        if key in fields and named.get(key) != fields[key]
    ]
    return ", ".join(shown) or "nothing"


def _missing_words(named: Mapping[str, str], sources: Sequence[str]) -> str:
    graded = {"expected", "criterion"} & named.keys() or "assert" in sources
    if "prompt" in named:
        return "expected answer"
    return "prompt" if graded else "prompt and which the expected answer"


def mapping_problems(recognised: Recognised, *, file_name: str, kind: str) -> list[Problem]:
    """Why a file whose mapping was guessed (or remembered) is not imported as it stands."""
    found = ", ".join(recognised.sources) or "nothing"
    fields = recognised.fields
    graded = {"expected", "criterion"} & fields.keys() or "assert" in recognised.sources
    if "prompt" not in fields or not graded:
        return [NOTHING_TO_GUESS.at(file_name, kind=kind, found=found)]
    basis = BEST_GUESS if recognised.how == "guessed" else REMEMBERED.format(kind=kind)
    return [
        NEEDS_MAPPING.at(
            file_name,
            kind=kind,
            found=found,
            missing=_missing_words(recognised.named, recognised.sources),
            basis=basis,
            guess=_guess_words(fields, recognised.named),
            flags=_map_flags(fields, recognised.named),
        )
    ]


def read_records(found: Records, *, file_name: str, options: CheckOptions | None) -> Shaped:
    """The canonical document of a .json or .jsonl file of records (not yet validated).

    `options` brings the person's mapping, the dataset's remembered ones and the task limit.
    """
    given = options.mapping if options else None
    remembered = options.remembered_mappings if options else None
    max_tasks = options.max_tasks if options else MAX_TASKS
    records = found.records
    recognised = recognise(records, given=given, remembered=remembered)
    fields = recognised.fields
    shape = recognised.shape or _described(fields, "records")
    if found.wrapper:
        shape = f"{found.wrapper}, {shape}"
    if found.container in _DESCRIBED_CONTAINERS:
        shape = f"{shape}, {_DESCRIBED_CONTAINERS[found.container]}"
    elif found.container and found.container != "tasks":
        shape = f"{shape} under {found.container!r}"
    shaped = Shaped(None, None, shape)
    missing = _missing_sources(fields, recognised.sources) if recognised.how == "given" else []
    if missing:
        shown = ", ".join(recognised.sources) or "nothing"
        shaped.mapping = FieldMap(dict(fields), "given", tuple(recognised.sources))
        shaped.problems = [
            UNKNOWN_SOURCE.at(
                file_name, source=shorten(part), label=LABELS[key], kind="key", found=shown
            )
            for key, part in missing
        ]
        return shaped
    refused = not_a_dataset(recognised.sources, recognised.named, kind="keys") or (
        template_prompts(records, fields, recognised.named)
    )
    if refused is not None and recognised.how != "given":
        what, advice = refused
        shaped.problems = [NOT_A_DATASET.at(file_name, what=what, advice=advice)]
        return shaped
    total = max(found.total, len(records))
    if total > max_tasks:
        # The validator's own words for the canonical document's `tasks`.
        shaped.problems = [TOO_MANY_TASKS.at(file_name, count=total, limit=max_tasks)]
        return shaped
    built = build_tasks(records, fields, file_name=file_name, shape=recognised.matched)
    shaped.mapping = FieldMap(
        fields=dict(fields),
        how=recognised.how,
        sources=tuple(recognised.sources),
        shape=recognised.shape,
        sample=sample_of(built.tasks),
        graded=bool({"assert", "criteria"} & set(recognised.sources))
        or bool(recognised.matched and recognised.matched.judged_by),
    )
    if shaped.mapping.needs_confirmation:
        shaped.problems = mapping_problems(recognised, file_name=file_name, kind="keys")
        return shaped
    shaped.problems = built.problems
    shaped.problem_records = list(built.problem_records)
    shaped.warnings = built.warnings
    handled = {"assert"} if "assert" in recognised.sources else set()
    handled |= {"is_impossible"} if built.left_out else set()
    if "prompt" in fields:
        handled |= set(HISTORY_KEYS) & set(recognised.sources)
    if "criteria" in recognised.sources and "criterion" not in fields:
        handled.add("criteria")
    if recognised.matched and recognised.matched.named_by:
        handled.add(recognised.matched.named_by)  # it names the tasks
    if records and is_requirement_tree(records[0].values.get(fields.get("criterion", ""))):
        handled.add("weight")  # the root's, alone at the top of its tree: all of the score
    ignored = ignored_sources(recognised.sources, fields, handled=handled)
    if ignored:
        shaped.warnings.append(IGNORED_KEYS.at(file_name, kind="keys", names=", ".join(ignored)))
    # Every record refused: their problems say why, where "the file has no tasks" would not.
    if built.tasks or not built.problems:
        shaped.document = {"tasks": built.tasks}
    shaped.places = built.places
    return shaped


# --- Spreadsheets ---------------------------------------------------------------------------

# The column names `columns` reads each field under, for a column the mapping renames.
_COLUMN_NAMES = {
    "id": "task_id",
    "name": "name",
    "prompt": "prompt",
    "expected": "expected_answer",
    "criterion": "criterion",
    "weight": "weight",
}
_PROMPTFOO_EXPECTED = re.compile(r"^__expected\d*$", re.IGNORECASE)


@dataclass
class ShapedTable:
    """A spreadsheet's rows made ready for `columns`: header renamed, rows rewritten."""

    header: list[str] | None
    rows: Sequence[Row]
    shape: str = ""
    mapping: FieldMap | None = None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    # Columns whose names say a field the shape takes from another column (`Table.not_read`).
    not_read: frozenset[str] = frozenset()


def _pandas_index(header: Sequence[str], rows: Sequence[Row]) -> bool:
    if not header or header[0].strip() not in ("", "Unnamed: 0") or len(header) < 2:
        return False
    firsts = [cells[0].strip() if cells else "" for _, cells in rows]
    return bool(firsts) and firsts == [str(n) for n in range(len(firsts))]


def _one_cell_header(header: Sequence[str], rows: Sequence[Row]) -> bool:
    named = [cell for cell in header if cell.strip()]
    return (
        len(named) == 1
        and any(mark in named[0] for mark in (",", ";", "\t"))
        and any(len([c for c in cells if c.strip()]) > 1 for _, cells in rows[:SAMPLE_RECORDS])
    )


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


def _table_records(header: Sequence[str], rows: Sequence[Row]) -> list[Record]:
    names = [name.strip() for name in header]
    return [
        Record({n: c for n, c in zip(names, cells, strict=False) if n}, row=row)
        for row, cells in rows[:SAMPLE_RECORDS]
    ]


def _spreadsheet_habits(shaped: ShapedTable, file_name: str, first_task_number: int) -> set[str]:
    """A header in one quoted cell (refused), a pandas index (left out), promptfoo's
    `__expected` columns (made into ours); returns the names of the columns made."""
    header, rows = shaped.header or [], shaped.rows
    if _one_cell_header(header, rows):
        shaped.header = None
        shaped.problems.append(ONE_CELL_HEADER.at(file_name, row=1, header=header[0].strip()))
        return set()
    if _pandas_index(header, rows):
        header = header[1:]
        rows = [(row, cells[1:]) for row, cells in rows]
        shaped.warnings.append(PANDAS_INDEX.at(file_name, row=1))
    synthetic: set[str] = set()
    if any(_PROMPTFOO_EXPECTED.match(name.strip()) for name in header):
        before = {name.strip() for name in header}
        header, rows, problems, warnings = _promptfoo_columns(
            header, rows, file_name, first_task_number
        )
        synthetic = {name for name in header if name not in before}
        shaped.problems.extend(problems)
        shaped.warnings.extend(warnings)
        shaped.shape = "promptfoo test cases (__expected)"
    shaped.header, shaped.rows = header, rows
    return synthetic


def _reads_as_it_is(shaped: ShapedTable, reads: Callable[[str], str | None]) -> bool:
    """Whether `columns` reads the sheet without help (our own sheets: the header only);
    a recognised tool is still named for the Detected line."""
    header = shaped.header or []
    read = {reads(name) for name in header}
    names = {name.strip() for name in header if name.strip()}
    if "prompt" not in read or not read & {"expected", "criterion"}:
        return False
    if names & {*CHOICE_KEYS, *LETTERS[:3]}:
        return False  # a question's options go into its prompt
    records = _table_records(header, shaped.rows[:1])
    first = records[0].values if records else {}
    matched = next((s for s in SHAPES if s.matches(names, first)), None)
    if matched and _reads_otherwise(matched.fields(names, first), reads):
        # The tool's shape, not the names, says which column grades (Azure's `truth`
        # beside the app's own `answer`): the sheet is renamed as the shape says.
        return False
    if matched and not shaped.shape:
        shaped.shape = matched.name
    return True


def _reads_otherwise(fields: Mapping[str, str], reads: Callable[[str], str | None]) -> bool:
    """Whether a shape's prompt or expected answer is a column `columns` reads otherwise."""
    return any(
        reads(source) != key
        for key, source in fields.items()
        if key in ("prompt", "expected") and " + " not in source
    )


def shape_table(
    header: list[str],
    rows: Sequence[Row],
    *,
    file_name: str,
    given: Mapping[str, str] | None = None,
    remembered: Mapping[str, Mapping[str, str]] | None = None,
    reads: Callable[[str], str | None],
    first_task_number: int = 1,
) -> ShapedTable:
    """A spreadsheet's header and rows, with other tools' habits taken care of.

    `reads` is the spreadsheet reader's own header matching (`columns.field_for_header`):
    a sheet it reads as it is, which is every sheet in our own format, is returned as it
    is, after a look at the header only.
    """
    shaped = ShapedTable(header, rows)
    synthetic = _spreadsheet_habits(shaped, file_name, first_task_number)
    if shaped.header is None:
        return shaped
    header, rows = shaped.header, shaped.rows
    if not given and _reads_as_it_is(shaped, reads):
        return shaped
    records = _table_records(header, rows)
    recognised = recognise(records, given=given, remembered=remembered)
    if not recognised.sources:
        return shaped
    shaped.shape = shaped.shape or recognised.shape
    if recognised.how == "given":
        missing = _missing_sources(recognised.fields, recognised.sources)
    if synthetic:
        # promptfoo's assertion columns are the file's own grading: the person maps the
        # columns they wrote, not the ones made from `__expected`.
        recognised.sources = [s for s in recognised.sources if s not in synthetic]
    if recognised.how == "given":
        if missing:
            shown = ", ".join(recognised.sources)
            shaped.mapping = FieldMap(dict(recognised.fields), "given", tuple(recognised.sources))
            shaped.header = None
            shaped.problems = [
                UNKNOWN_SOURCE.at(
                    file_name, source=shorten(part), label=LABELS[key], kind="column", found=shown
                )
                for key, part in missing
            ]
            return shaped
    else:
        refused = not_a_dataset(recognised.sources, recognised.named, kind="columns") or (
            template_prompts(records, recognised.fields, recognised.named)
        )
        if refused is not None:
            what, advice = refused
            shaped.header = None
            shaped.problems = [NOT_A_DATASET.at(file_name, what=what, advice=advice)]
            return shaped
    complete = "prompt" in recognised.fields and recognised.fields.keys() & {
        "expected",
        "criterion",
    }
    if recognised.how != "given" and not complete:
        # Nothing to guess from: `columns` names the missing column, as it always has.
        return shaped
    fields = recognised.fields
    if " + " in fields.get("prompt", ""):
        # A question and its options (or an instruction and its input): one prompt column.
        header, rows = _composed_prompt(header, rows, _parts(fields["prompt"]))
        fields = {**fields, "prompt": "prompt"}
    shaped.header, shaped.not_read = _renamed(header, fields, reads)
    shaped.rows = rows
    shaped.mapping = FieldMap(
        fields={k: v for k, v in recognised.fields.items() if v not in synthetic},
        how=recognised.how,
        sources=tuple(recognised.sources),
        shape=recognised.shape,
        graded=bool(synthetic),
    )
    if shaped.mapping.needs_confirmation:
        shaped.problems = mapping_problems(recognised, file_name=file_name, kind="columns")
    return shaped


def _composed_prompt(
    header: list[str], rows: Sequence[Row], parts: Sequence[str]
) -> tuple[list[str], Sequence[Row]]:
    """The sheet with the prompt's parts made into one `prompt` column (`compose_prompt`)."""
    names = [name.strip() for name in header]
    used = {names.index(part) for part in parts if part in names}
    keep = [i for i in range(len(header)) if i not in used]
    new_rows = []
    for row, cells in rows:
        values = {names[i]: cells[i] for i in used if i < len(cells)}
        kept = [cells[i] if i < len(cells) else "" for i in keep]
        new_rows.append((row, [*kept, compose_prompt(values, parts), *cells[len(header) :]]))
    return [header[i] for i in keep] + ["prompt"], new_rows


def _renamed(
    header: list[str], fields: Mapping[str, str], reads: Callable[[str], str | None]
) -> tuple[list[str], frozenset[str]]:
    """The header with each mapped column under our name, and the columns `columns` would
    read as a mapped field but are not the mapped one: not read (`Table.not_read`), so
    that they are named with the other columns not imported."""
    chosen = {source: key for key, source in fields.items()}
    mapped = {_COLUMN_NAMES[key] for key in fields}
    mapped_fields = {reads(name) for name in mapped}
    new_header, not_read = [], set()
    for name in header:
        stripped = name.strip()
        if stripped in chosen:
            key = chosen[stripped]
            # A column `columns` already reads as its field keeps the person's name.
            reads_as = reads(name)
            same = reads_as == ("task_id" if key == "id" else key)
            new_header.append(name if same else _COLUMN_NAMES[key])
            continue
        if stripped and reads(name) in mapped_fields:
            not_read.add(stripped)
        new_header.append(name)
    return new_header, frozenset(not_read)


NUL_IN_CELL = Rule(
    "nul_in_cell",
    "Column {column} holds a NUL byte on this row: it is binary data, or text saved in "
    "another encoding. Remove it, or save the file as “CSV UTF-8”.",
)


def _without_nul(table: Table, file_name: str) -> tuple[Table, list[Problem], list[Problem]]:
    """NUL bytes in a column that is not imported are left out, with one warning each;
    in an imported column they are a problem on their row."""
    problems: list[Problem] = []
    ignored: dict[int, None] = {}
    rows = []
    for row, cells in table.rows:
        if any("\x00" in cell for cell in cells):
            for index, cell in enumerate(cells):
                if "\x00" not in cell:
                    continue
                name = table.header[index] if index < len(table.header) else ""
                if name.strip() and table.reads(name) is not None:
                    problems.append(
                        NUL_IN_CELL.at(file_name, row=row, field=name.strip(), column=name.strip())
                    )
                else:
                    ignored[index] = None
            cells = [cell.replace("\x00", "") for cell in cells]
        rows.append((row, cells))
    warnings = [
        NUL_IN_IGNORED_COLUMN.at(
            file_name,
            row=table.header_row,
            column=(table.header[i].strip() if i < len(table.header) else "") or f"{i + 1}",
        )
        for i in ignored
    ]
    return replace(table, rows=rows, has_nul=False), problems, warnings


def read_table(
    table: Table, *, file_name: str, dataset_name: str, options: CheckOptions | None
) -> tuple[Built_, ShapedTable]:
    """`columns.document_from_table` for a sheet of any shape (see `shape_table`).

    When the mapping was guessed, the document is built to show its first rows in the
    mapping step, then withheld: nothing imports until the person confirms.
    """
    shaped = shape_table(
        table.header,
        table.rows,
        file_name=file_name,
        given=options.mapping if options else None,
        remembered=options.remembered_mappings if options else None,
        reads=field_for_header,
        first_task_number=options.first_task_number if options else 1,
    )
    if shaped.header is None:
        return Built_(None, nowhere, field_path, [], []), shaped
    if shaped.header is not table.header or shaped.rows is not table.rows or shaped.not_read:
        table = replace(table, header=shaped.header, rows=shaped.rows, not_read=shaped.not_read)
    if table.has_nul:
        table, problems, warnings = _without_nul(table, file_name)
        shaped.problems.extend(problems)
        shaped.warnings.extend(warnings)
        if problems:
            return Built_(None, nowhere, field_path, [], []), shaped
    built = document_from_table(
        table,
        file_name=file_name,
        dataset_name=dataset_name,
        first_task_number=options.first_task_number if options else 1,
    )
    if shaped.mapping is not None and built.document is not None:
        shaped.mapping = replace(shaped.mapping, sample=sample_of(built.document["tasks"]))
    if shaped.mapping is not None and shaped.mapping.needs_confirmation:
        built = Built_(None, built.locate, built.label, [], [])
    return built, shaped
