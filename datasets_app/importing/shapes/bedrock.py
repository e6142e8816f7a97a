"""Amazon Bedrock's model-evaluation datasets: a prompt dataset's JSON Lines.

Decisions (also in docs/field-names.md):
- A custom prompt dataset's line (`prompt`, `referenceResponse`, `category`) asks its
  `prompt` and expects its `referenceResponse`; `category` groups results in Bedrock's
  report and is named as not imported. A "bring your own inference" line's
  `modelResponses` are one model's answers, never the expected answer, and are named as
  not imported too.
- A knowledge base's evaluation line (`conversationTurns`, turns of a `prompt` and
  `referenceResponses`, each text under `content[].text`) asks its first turn's prompt and
  expects its reference responses (several: any of them). A line of more turns asks its
  first, its later turns left out with a warning, as MT-Bench's second turns are.
"""

from __future__ import annotations

from typing import Any

from datasets_app.importing.shapes.base import Shape, _keys_shape

TURNS_KEY = "conversationTurns"
TURN_PROMPT = f"{TURNS_KEY}.prompt"
TURN_REFERENCES = f"{TURNS_KEY}.referenceResponses"
# The turns after the first, left out (`Shape.follow_ups`) as MT-Bench's second turns are.
LATER_TURNS = f"{TURNS_KEY}.later"


def _content_text(message: Any) -> str | None:
    """A Bedrock message's text: its `content` parts' `text`, joined by a blank line."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or not content:
        return None
    texts = [part.get("text") if isinstance(part, dict) else None for part in content]
    if not all(isinstance(text, str) for text in texts):
        return None
    return "\n\n".join(str(text) for text in texts)


def _first_turn(record: dict[str, Any]) -> dict[str, Any]:
    """A knowledge base evaluation line's first turn as its prompt's and its reference
    responses' texts (`conversationTurns.prompt`, `conversationTurns.referenceResponses`),
    its later turns under `LATER_TURNS`; any other line as it is."""
    turns = record.get(TURNS_KEY)
    if not (isinstance(turns, list) and turns and isinstance(turns[0], dict)):
        return record
    turn = turns[0]
    prompt = _content_text(turn.get("prompt"))
    references = [_content_text(r) for r in turn.get("referenceResponses") or []]
    if prompt is None or None in references:
        return record
    others = {f"{TURNS_KEY}.{key}": value for key, value in turn.items()}
    others[TURN_PROMPT] = prompt
    others[TURN_REFERENCES] = references[0] if len(references) == 1 else references or None
    if len(turns) > 1:
        others[LATER_TURNS] = turns[1:]
    rest = {key: value for key, value in record.items() if key != TURNS_KEY}
    return {**rest, **others}


BEDROCK_KNOWLEDGE_BASE = Shape(
    "Amazon Bedrock knowledge base evaluation (conversationTurns)",
    lambda keys, first: TURN_PROMPT in keys and isinstance(first.get(TURN_PROMPT), str),
    lambda keys, first: {"prompt": TURN_PROMPT, "expected": TURN_REFERENCES},
    prepare=_first_turn,
    follow_ups=LATER_TURNS,
    help=(
        "A retrieve-and-generate evaluation line: its first turn's `prompt` is the prompt and "
        "its `referenceResponses` the expected answer (several: any of them), each the "
        "text of its `content` parts. A line of more turns asks its first, as MT-Bench's "
        "questions are: the later turns follow the answer to the one before and are left "
        "out, with a warning counting such tasks. A bring-your-own-inference turn's "
        "`output` (the app's answer and passages) is named as not imported."
    ),
    taught_by="bedrock/kb_ground_truth.jsonl",
)

BEDROCK_PROMPTS = _keys_shape(
    "Amazon Bedrock evaluation prompts (prompt + referenceResponse)",
    {"prompt": "prompt", "expected": "referenceResponse"},
    help=(
        "A model-evaluation job's custom prompt dataset: `prompt` is the prompt and "
        "`referenceResponse` the expected answer. `category` (which groups Bedrock's "
        "report) and a bring-your-own-inference line's `modelResponses` (one model's "
        "answers) are named as not imported."
    ),
    taught_by="bedrock/golden.jsonl",
)
