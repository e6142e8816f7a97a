"""MT-Bench and Arena-Hard questions, Alpaca and AlpacaEval instructions.

Decisions (also in docs/field-names.md):
- MT-Bench's first turn is the prompt and the first of its `reference` answers (one per
  turn) the expected answer. Its second turn follows the model's own answer to the
  first, which one prompt cannot hold: it is left out with a warning that counts such
  tasks (`Shape.follow_ups`), never joined to the first in silence.
- A question MT-Bench gives no reference grades by its judge's general factors (FastChat's
  `single-v1` prompt); such a task gets that as its one criterion (`Shape.judged_by`), with
  a warning that counts them, rather than being refused with nothing to grade it. Arena-Hard
  (v0.1: `turns` of `{"content": …}`, a `cluster`) is read the same way; its judge compares
  with a baseline model's answer, not in the file, so every task gets its judge's factors.
- Alpaca's `output` is the expected answer only when no key names one: beside DataFlow's
  `golden_answer`, `output` is what a model answered, and is not imported.
"""

from __future__ import annotations

from typing import Any

from datasets_app.importing.aliases import field_for
from datasets_app.importing.shapes.base import Shape, _keys_shape
from datasets_app.importing.shapes.values import is_chat

# MT-Bench's questions: `turns`, the user's turns (one text each, or Arena-Hard's
# `{"content": text}`), and `reference`, the reference answer to each turn ("" for a turn
# it gives none).
USER_TURNS_KEY = "turns"
TURN_REFERENCES_KEY = "reference"
# Where `_user_turns` keeps the turns after the first, which are left out.
FOLLOW_UP_TURNS_KEY = "follow_up_turns"


def _turn_text(turn: Any) -> str | None:
    """A user turn's text: the text itself, or Arena-Hard's `{"content": text}` (a turn
    with a role is a chat message already)."""
    if isinstance(turn, dict) and turn.keys() == {"content"}:
        turn = turn["content"]
    return turn if isinstance(turn, str) else None


def _user_turns(record: dict[str, Any]) -> dict[str, Any]:
    """MT-Bench's first turn as the prompt (a user turn) and its reference as the answer;
    the later turns under `FOLLOW_UP_TURNS_KEY`, left out (`Shape.follow_ups`): each
    follows the model's own answer to the turn before, which one prompt cannot hold."""
    turns = record.get(USER_TURNS_KEY)
    texts = [_turn_text(turn) for turn in turns] if isinstance(turns, list) else []
    if not texts or not all(isinstance(text, str) for text in texts):
        return record
    record = {**record, USER_TURNS_KEY: [{"role": "user", "content": texts[0]}]}
    if len(texts) > 1:
        record[FOLLOW_UP_TURNS_KEY] = texts[1:]
    references = record.get(TURN_REFERENCES_KEY)
    if (
        isinstance(references, list)
        and len(references) == len(texts)
        and all(isinstance(r, str) for r in references)
    ):
        record[TURN_REFERENCES_KEY] = references[0] if references[0].strip() else None
    return record


def _output_shape(name: str, *, prompt: str, help: str, taught_by: str = "") -> Shape:
    """A shape whose `output` is the expected answer (Alpaca's), unless a key names one:
    beside DataFlow's `golden_answer`, `output` is what a model answered."""
    shape = _keys_shape(name, {"prompt": prompt, "expected": "output"})
    return Shape(
        name,
        lambda keys, first: (
            shape.matches(keys, first) and not any(field_for(key) == "expected" for key in keys)
        ),
        shape.fields,
        help=help,
        taught_by=taught_by,
    )


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


ARENA_HARD = Shape(
    "Arena-Hard questions (turns)",
    lambda keys, first: "cluster" in keys and _is_user_turns(first.get(USER_TURNS_KEY)),
    lambda keys, first: {"prompt": USER_TURNS_KEY},
    judged_by=ARENA_HARD_JUDGE,
    prepare=_user_turns,
    help=(
        'Arena-Hard v0.1 questions (`turns` of `{"content": …}`, a `cluster`) are asked '
        "as MT-Bench's are. Its judge compares an answer with a baseline model's, which "
        "is not in the file, so each task gets one criterion, what that judge weighs "
        '("correct, helpful, relevant and concise, …"), with a warning counting them.'
    ),
    taught_by="arena_hard/question.excerpt.jsonl",
)


MT_BENCH = Shape(
    "MT-Bench questions (turns + reference)",
    lambda keys, first: _is_user_turns(first.get(USER_TURNS_KEY)),
    lambda keys, first: (
        {"prompt": USER_TURNS_KEY}
        | ({"expected": TURN_REFERENCES_KEY} if TURN_REFERENCES_KEY in keys else {})
    ),
    judged_by=MT_BENCH_JUDGE,
    prepare=_user_turns,
    follow_ups=FOLLOW_UP_TURNS_KEY,
    help=(
        "FastChat's `question.jsonl`: the first of the `turns` is the prompt, and the "
        "task is named by it; the first of the `reference` answers (one per turn) is the "
        'expected answer. The second turn ("Rewrite your previous response…") follows '
        "the model's own answer to the first, which one prompt cannot hold: it is left "
        "out, with a warning counting such tasks, never joined to the first. A question "
        "with no `reference` (or a blank first one) gets one criterion, what MT-Bench's "
        'judge weighs for such a question ("helpful, relevant, accurate, deep, creative '
        'and detailed"), with a warning counting them.'
    ),
    taught_by="mt_bench/question.excerpt.jsonl",
)


ALPACA = _output_shape(
    "Alpaca (instruction + input + output)",
    prompt="instruction + input",
    help=(
        "`instruction` and `input` are the prompt and `output` the expected answer, "
        "unless a key names the expected answer (`golden_answer`, `expected`, …): then "
        "`output` is what a model answered (DataFlow writes both) and is named as not "
        "imported."
    ),
)


ALPACA_EVAL = _output_shape(
    "AlpacaEval (instruction + output)",
    prompt="instruction",
    help=(
        "`instruction` is the prompt and `output` the expected answer, with the same "
        "exception as Alpaca's."
    ),
    taught_by="alpaca_eval/model_outputs.excerpt.json",
)
