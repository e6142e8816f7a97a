"""Exports of tracing tools' datasets: LangSmith's `inputs` and `outputs` (Langfuse
and Phoenix export the same two objects).
"""

from __future__ import annotations

from typing import Any

from datasets_app.importing.aliases import field_for
from datasets_app.importing.shapes.base import Shape


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


LANGSMITH = Shape(
    "LangSmith examples (inputs + outputs)",
    lambda keys, first: (
        any(k.startswith("inputs.") for k in keys) and any(k.startswith("outputs.") for k in keys)
    ),
    _langsmith_fields,
    help=(
        "The key under `inputs` that names a prompt (or its only key) is the prompt, and "
        "the key under `outputs` that names an answer (or its only key) the expected "
        "answer. Langfuse and Phoenix export the same two objects."
    ),
    taught_by="langsmith/dataset_few_shot_search.excerpt.json",
)
