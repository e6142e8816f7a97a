"""Coding and multiple-choice benchmarks: HumanEval, MBPP, TruthfulQA, BIG-bench, ARC
and OpenBookQA.

Decisions (also in docs/field-names.md):
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
"""

from __future__ import annotations

from typing import Any

from datasets_app.importing.aliases import normalize
from datasets_app.importing.shapes.base import Shape, _keys_shape
from datasets_app.importing.shapes.prompt import _choice_list
from datasets_app.importing.shapes.values import TARGET_SCORES_KEY, option_scores

# ARC and OpenBookQA as AI2 writes them keep the options inside the question.
ARC_STEM = "question.stem"
ARC_CHOICES = "question.choices"


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


# Named by the function to write: its prompt opens with imports, not with a question.
HUMANEVAL = _keys_shape(
    "HumanEval (prompt + canonical_solution)",
    {"prompt": "prompt", "expected": "canonical_solution", "name": "entry_point"},
    help=(
        "A coding benchmark grades by running its tests, which have no equivalent here: "
        "the reference solution `canonical_solution` is the expected answer, for a judge "
        "to compare with, and `test` is named as not imported. A task is named by its "
        "`entry_point`, the function to write."
    ),
    taught_by="humaneval/HumanEval.excerpt.jsonl",
)


MBPP = Shape(
    "MBPP (text + code + test_list)",
    lambda keys, first: {"code", "test_list"} <= keys and bool(keys & {"text", "prompt"}),
    # The original files call the problem `text`; the sanitized set calls it `prompt`.
    lambda keys, first: {
        "prompt": ("text" if "text" in keys else "prompt") + " + test_list",
        "expected": "code",
    },
    help=(
        "The reference solution `code` is the expected answer; `test_list` follows the "
        "problem in the prompt, one assert a line, as MBPP's own prompt does (they name "
        "the function to write)."
    ),
    taught_by="mbpp/mbpp.excerpt.jsonl",
)


TRUTHFULQA = Shape(
    # `Correct Answers` (also read as an expected answer by its name) are the other
    # true answers, `; `-separated in one cell: the best answer is the one to grade by.
    "TruthfulQA (Question + Best Answer)",
    lambda keys, first: all(_truthfulqa_fields(keys, first).values()),
    _truthfulqa_fields,
    help=(
        "The expected answer is its `Best Answer`, not the `; `-separated `Correct "
        "Answers` cell (which its name alone would choose); that and `Incorrect Answers` "
        "are named as not imported."
    ),
    taught_by="truthfulqa/TruthfulQA.excerpt.csv",
)


BIG_BENCH = Shape(
    # A BIG-bench JSON task's multiple-choice examples: the options are the keys of
    # `target_scores`, and the best scored is the answer.
    "BIG-bench (input + target_scores)",
    lambda keys, first: "input" in keys and option_scores(first.get(TARGET_SCORES_KEY)) is not None,
    lambda keys, first: {"prompt": "input", "expected": TARGET_SCORES_KEY},
    help=(
        "A JSON task's `target_scores` (option → score) are its question's options, "
        "lettered in the file's order, and the best-scored option is the expected answer "
        "(`Any of:` when several share the best score)."
    ),
)


ARC = Shape(
    # ARC's and OpenBookQA's own files: the options are inside the question, under their
    # own labels, and `answerKey` (read by its name) names one.
    "ARC / OpenBookQA (question.stem + question.choices + answerKey)",
    lambda keys, first: ARC_STEM in keys and _choice_list(first.get(ARC_CHOICES)) is not None,
    lambda keys, first: {"prompt": f"{ARC_STEM} + {ARC_CHOICES}"},
    help=(
        'ARC\'s and OpenBookQA\'s original files (`question: {"stem", "choices": [{"text", '
        '"label"}, …]}`): the stem, then the options under their own labels, which are '
        "sometimes `1`–`4`, as `answerKey` is."
    ),
    taught_by="arc/arc_easy_dev_original.jsonl",
)
