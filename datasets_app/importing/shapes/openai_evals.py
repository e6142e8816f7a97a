"""OpenAI evals and fine-tuning files: `input` + `ideal`, `prompt` + `completion`,
chat conversations whose last assistant turn is the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from datasets_app.importing.shapes.base import Shape, _keys_shape
from datasets_app.importing.shapes.values import is_chat

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


CHAT_CONVERSATIONS = Shape(
    "chat conversations (the last assistant turn is the expected answer)",
    lambda keys, first: _conversation_key(keys, first) is not None,
    lambda keys, first: dict.fromkeys(("prompt", "expected"), _conversation_key(keys, first) or ""),
    help=(
        "Whole conversations (OpenAI fine-tuning `messages`, ShareGPT `conversations` "
        "with `from`/`value`): the turns up to the last user turn are the prompt, as a "
        "chat prompt, and the assistant's final turn is the expected answer."
    ),
)


OPENAI_EVALS = _keys_shape(
    "OpenAI evals (input + ideal)",
    {"prompt": "input", "expected": "ideal"},
    help=(
        "`input` (a text or a chat) is the prompt and `ideal` (a text or a list of "
        'accepted answers) the expected answer; the Evals API\'s `{"item": {…}}` lines are'
        " read as the record inside."
    ),
    taught_by="openai_evals/agent_tool_routing.excerpt.jsonl",
)


PROMPT_COMPLETION = _keys_shape(
    "prompt + completion",
    {"prompt": "prompt", "expected": "completion"},
    help=(
        "OpenAI's legacy fine-tuning pairs: `prompt` is the prompt and `completion` the "
        "expected answer."
    ),
    taught_by="openai_finetune/mandarin2cantonese_prepared.excerpt.jsonl",
)
