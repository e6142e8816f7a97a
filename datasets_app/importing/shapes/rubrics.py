"""Rubric benchmarks: HealthBench, Prometheus score rubrics, HelloBench checklists,
PaperBench rubric trees, and criteria given by name.

Decisions (also in docs/field-names.md):
- A HealthBench rubric item with negative points is a penalty: it becomes the criterion
  `Avoids: <criterion>`, weighted by the points' size, so that passing it means the
  answer did not do the penalised thing.
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
- A checklist (HelloBench's `checklists`: yes/no questions) is criteria by its name, as a
  rubric is: each question one criterion of weight 1, in the file's order, checked by the
  dataset's default verifier. Each question asks one thing a good answer does and the file
  weighs none more; HelloBench's own per-category weights are fitted to human ratings by its
  `regression.py` and are in no data file, so they are not guessed at. Its instructions
  open with their category's wording, so a HelloBench task is named by its `raw_text`
  (the question or topic the instruction wraps; `Shape.named_by`), not by that first line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from datasets_app.importing.shapes.base import (
    NOT_TEXT_VALUE,
    SYSTEM_PROMPT_KEYS,
    Shape,
    ValueProblem,
    _alias_fields,
)
from datasets_app.importing.shapes.values import _is_number, _kind, is_chat
from datasets_app.importing.spec import (
    Rule,
    shorten,
)

REQUIREMENT_WEIGHT = Rule(
    "requirement_weight_not_positive",
    "The requirement “{requirement}” in {source} has weight {weight}: each requirement's "
    "weight must be a positive number, as its share of the score is worked out from it.",
)


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


# Prompt flow's checklist: the statements an answer is checked against, by name.
STATEMENTS_KEY = "statements"


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


HEALTHBENCH = Shape(
    "HealthBench (chat prompt + rubrics)",
    lambda keys, first: "rubrics" in keys and is_chat(first.get("prompt")),
    lambda keys, first: (
        {"prompt": "prompt", "criterion": "rubrics"}
        | ({"id": "prompt_id"} if "prompt_id" in keys else {})
    ),
    help=(
        "A chat `prompt` and its `rubrics`: each rubric item is a criterion weighted by "
        "its `points`. An item with negative points is a penalty: it becomes `Avoids: "
        "<criterion>`, weighted by the points' size, so a response passes it by not doing"
        " what it describes. (HealthBench subtracts penalties from the score; here they "
        "count as criteria the response must meet.)"
    ),
    taught_by="healthbench/consensus_context_seeking.excerpt.jsonl",
)


PROMETHEUS = Shape(
    "Prometheus score rubric (criteria + score descriptions)",
    lambda keys, first: _score_rubric_key(keys, first) is not None,
    _score_rubric_fields,
    help=(
        "BiGGen-Bench's `score_rubric` (`criteria`, `score1_description` … "
        "`score5_description`) is one criterion, the rubric's `criteria`, checked by an "
        "llm_judge with outputType float. Its instructions hold each score's description "
        "and the reference answer, and ask for (score − 1) / 4, so the 1–5 scale is kept "
        "as 0–1 (five pass/fail criteria would grade something else). The reference "
        "answer is the example Prometheus says scores 5, so it goes to the judge, not "
        "into the task's expected answer. A `system_prompt` comes first in the prompt as "
        "`System: …`, the input after it as `Question: …`; a `weight` the record gives is"
        " the criterion's."
    ),
    taught_by="biggen_bench/sample_responses.excerpt.json",
)


# HelloBench's instructions open with their category's wording ("You should write a
# detailed response to the following question on Science."): named by the question.
HELLOBENCH = Shape(
    "HelloBench (instruction + checklists)",
    lambda keys, first: {"instruction", "checklists", "raw_text"} <= keys,
    lambda keys, first: {"prompt": "instruction", "criterion": "checklists"},
    named_by="raw_text",
    help=(
        "Each of an instruction's `checklists` (yes/no questions) is one criterion, in "
        "the file's order, weight 1, checked by the dataset's default verifier; the "
        "`instruction` is the prompt. HelloBench weighs them per category by weights "
        "fitted to human ratings (its `regression.py`), which no data file holds: edit "
        "the weights to match. Its instructions open with their category's sentence, so a"
        " task is named by its `raw_text`, the question or topic the instruction wraps."
    ),
    taught_by="hellobench/chat.excerpt.jsonl",
)


PAPERBENCH = Shape(
    "PaperBench rubric tree (the top requirement → prompt, the weighted leaves → criteria)",
    lambda keys, first: "requirements" in keys and is_requirement_tree(first.get("sub_tasks")),
    lambda keys, first: (
        {"prompt": "requirements", "criterion": "sub_tasks"}
        | ({"id": "id"} if "id" in keys else {})
    ),
    help=(
        "One task per tree (`requirements`, `weight`, `sub_tasks`, nested). The file says"
        " what must be true, not what to ask, so the top requirement is the prompt (the "
        "Detected line says so; edit the draft). The criteria are the leaves, in the "
        "file's order, each weighted by its share of the score as a percentage: "
        "PaperBench scores a requirement as the weighted mean of its sub-requirements, so"
        " a leaf counts for the product down its path of its weight over its siblings' "
        "total. Inner requirements are graded through their leaves; `task_category` is "
        "not kept; a weight that is no positive number is a problem naming the "
        "requirement."
    ),
    taught_by="paperbench/semantic_self_consistency_rubric.excerpt.json",
)
