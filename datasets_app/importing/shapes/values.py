"""A record's values as the page's fields: chat turns, answers and texts.

Decisions (also in docs/field-names.md):
- A chat prompt (a list of `{role, content}`) is stored as text: a single user turn is
  just its text; a longer conversation is each earlier turn as `Role: text`, then the last
  user turn as `Question: text`, blocks separated by a blank line. Exports write that
  text, so export → import → export is identical.
- An expected answer that is an object (a structured output: Braintrust's `expected`) is
  kept whole as its JSON text, two-space indented; one with `text`, `value` or `answer`
  is that value.
- Several accepted answers (NQ-open, an OpenAI `ideal` list, SQuAD's answers) become one
  expected answer: the answer itself when they agree, else `Any of:` and one `- answer`
  line each.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeGuard

from datasets_app.importing.shapes.base import LABELS, NOT_TEXT_VALUE, ValueProblem
from datasets_app.importing.spec import (
    CHAT_QUESTION_LABEL,
    Rule,
)

CHAT_PART_NOT_TEXT = Rule(
    "chat_part_not_text",
    "Turn {turn} of the conversation in {source} holds {kind}; only text can be imported.",
)
NOT_A_CHAT_TURN = Rule(
    "not_a_chat_turn",
    'Turn {turn} of the conversation in {source} is not a {{"role": ..., "content": ...}} message.',
)


# Several accepted answers as one expected answer.
ANY_OF = "Any of:"
ROLE_LABELS = {
    "system": "System",
    "developer": "Developer",
    "user": "User",
    "assistant": "Assistant",
}


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


class _Unread(Enum):
    """What a reader of one kind of value returns for a value not of its kind (None is
    a blank field, so it cannot say so)."""

    UNREAD = "unread"


_UNREAD = _Unread.UNREAD
# A value's text, None when blank, or _UNREAD for the next reader to try.
_Reading = str | None | _Unread


def _chat_prompt_text(value: Any, key: str, source: str) -> _Reading:
    return chat_prompt(value, source) if is_chat(value) else _UNREAD


def _best_scored_options(value: Any, key: str, source: str) -> _Reading:
    scores = option_scores(value) if source == TARGET_SCORES_KEY else None
    if scores is None:
        return _UNREAD
    # The options scored best are the accepted answers (BIG-bench may score several).
    best = max(scores.values())
    return answers_text([option for option, score in scores.items() if score == best])


def _inner_answer(value: Any, key: str, source: str) -> _Reading:
    if not isinstance(value, dict):
        return _UNREAD
    # SQuAD's {"text": [...]}, TriviaQA's {"value": ..., "aliases": [...]}.
    inner = next((value[k] for k in ("text", "value", "answer") if k in value), None)
    if inner is None:
        return _UNREAD
    return text_value(inner, key, source)


def _assistant_turns(value: Any, key: str, source: str) -> _Reading:
    if not is_chat(value):
        return _UNREAD
    # A target conversation (OpenRLHF's `output`): what the assistant says.
    said = [m["content"] for m in value if m.get("role") == "assistant"] or [
        m["content"] for m in value
    ]
    return "\n\n".join(_content_text(c, source, n) for n, c in enumerate(said, start=1))


def _structured_output(value: Any, key: str, source: str) -> _Reading:
    if not isinstance(value, dict) or not value:
        return _UNREAD
    # A structured output (Braintrust's `expected` {"match", "filter", …}): the object
    # itself, as the JSON text a judge compares the answer with.
    return json.dumps(value, ensure_ascii=False, indent=2)


def _accepted_answers(value: Any, key: str, source: str) -> _Reading:
    text = answers_text(value) if isinstance(value, list) else None
    if text is None:
        return _UNREAD
    return text or None


# The readers of values that are not a scalar, each with the fields it reads, in the order
# they are tried: the first that reads a value gives its text.
_READERS: tuple[tuple[frozenset[str], Callable[[Any, str, str], _Reading]], ...] = (
    (frozenset({"prompt"}), _chat_prompt_text),
    (frozenset({"expected"}), _best_scored_options),
    (frozenset({"expected", "name", "id"}), _inner_answer),
    (frozenset({"expected"}), _assistant_turns),
    (frozenset({"expected"}), _structured_output),
    (frozenset({"expected"}), _accepted_answers),
)


def text_value(value: Any, key: str, source: str) -> str | None:
    """A record's value as the text of field `key`; None when blank. Raises ValueProblem."""
    if value is None:
        return None
    scalar = _scalar_text(value)
    if scalar is not None:
        return scalar
    for keys, read in _READERS:
        text = read(value, key, source) if key in keys else _UNREAD
        if text is not _UNREAD:
            return text
    if isinstance(value, list) and not value:
        return None
    raise ValueProblem(NOT_TEXT_VALUE, source=source, kind=_kind(value), label=LABELS[key])
