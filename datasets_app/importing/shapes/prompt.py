"""A prompt made of several parts: a system prompt, a question's options, a coding
problem's tests.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

from datasets_app.importing.shapes.base import SYSTEM_PROMPT_KEYS
from datasets_app.importing.shapes.values import (
    TARGET_SCORES_KEY,
    _scalar_text,
    chat_prompt,
    option_scores,
    text_value,
)

# A coding problem's tests (MBPP's `test_list`, one `assert` each), which its prompt
# shows one per line, as MBPP's own prompt does: they name the function to write.
TEST_LIST_KEYS = frozenset({"test_list"})
# Multiple choice: the options a question offers, as a list or as one column per letter.
CHOICE_KEYS = ("choices", "options", TARGET_SCORES_KEY)
LETTERS = "ABCDEFGH"
MULTIPLE_CHOICE = "multiple choice"


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
    value = _texts_beside_labels(value)
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        labelled = _labelled_options(value["text"], value.get("label"))
        if labelled is not None:
            return labelled
        value = value["text"]
    if isinstance(value, str) and "," in value:
        value = [choice.strip() for choice in value.split(",")]
    if isinstance(value, list):
        return [(_option_label(index), choice) for index, choice in enumerate(value)]
    return None


def _texts_beside_labels(value: Any) -> Any:
    """BIG-bench's `target_scores` as the list of its keys, and ARC's original options (each
    `{"text", "label"}`) as its texts beside its labels; any other value as it is."""
    scores = option_scores(value)
    if scores is not None:
        value = list(scores)
    if not _is_option_objects(value):
        return value
    return {"text": [c["text"] for c in value], "label": [c["label"] for c in value]}


def _is_option_objects(value: Any) -> bool:
    """Whether a value is a list of options, each given as `{"text", "label"}`."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(choice, dict) and {"text", "label"} <= choice.keys() for choice in value)
    )


def _labelled_options(texts: list[Any], labels: Any) -> list[tuple[str, Any]] | None:
    """The options' texts by their own labels, when there is one label for each."""
    if isinstance(labels, list) and len(labels) == len(texts):
        return [(str(label), text) for label, text in zip(labels, texts, strict=True)]
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
        part_options = _option_lines(part, value)
        if part_options is not None:
            options += part_options
            continue
        block = _prompt_block(part, value)
        if block is not None:
            blocks.append(block)
    if options:
        blocks.append("\n".join(options))
    prompt = "\n\n".join(blocks)
    if system.strip() and prompt:
        return chat_prompt(
            [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        )
    return prompt


def _option_lines(part: str, value: Any) -> list[str] | None:
    """The lettered lines of a part that holds options (a `choices` list, or the column of
    one letter); None for any other part."""
    choices = _choice_list(value) if _is_choices(part) else None
    if choices is not None:
        return [f"{label}. {_scalar_text(choice)}" for label, choice in choices]
    if len(part) == 1 and part in LETTERS:
        text = text_value(value, "prompt", part)
        return [f"{part}. {text}"] if text else []
    return None


def _prompt_block(part: str, value: Any) -> str | None:
    """A part's block of the prompt (a coding problem's tests one per line); None for a
    part without text."""
    if part in TEST_LIST_KEYS and isinstance(value, list):
        tests = [text_value(test, "prompt", part) for test in value]
        return "\n".join(test for test in tests if test and test.strip())
    return text_value(value, "prompt", part) or None
