"""A judge's instructions with `{{criterion}}`, `{{prompt}}`, `{{output}}` and `{{expected}}`
filled in, in one pass.

One pass: what a value brings in is never read again for placeholders, so an answer that
contains `{{criterion}}` stays literal. The answer under test goes in a fence it cannot
close, and instructions that leave `{{output}}` out still get it, in a labelled section
after them (and the author is told).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from datasets_app.importing.spec import LLM_JUDGE_PLACEHOLDERS, PLACEHOLDER_PATTERN

OUTPUT_LEFT_OUT = (
    "The instructions do not use {{output}}: the answer was given to the judge after them, "
    "in a section labelled 'Answer under test'."
)
ANSWER_LABEL = "Answer under test"

_BACKTICKS = re.compile(r"`+")


class UnknownPlaceholders(ValueError):
    """Instructions that use placeholders the judges do not fill; `names` lists them."""

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__(", ".join(names))
        self.names = names


@dataclass(frozen=True, slots=True)
class Rendered:
    """The filled-in instructions and what the author should know about them."""

    text: str
    warnings: tuple[str, ...] = ()


def fenced(text: str, label: str = "answer") -> str:
    """`text` between fences of more backticks than any run inside it, so that nothing in
    the text can end the fence early (Markdown's rule for code fences)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{label}\n{text}\n{fence}"


def unknown_placeholders(instructions: str) -> tuple[str, ...]:
    """The placeholders in `instructions` that are not ours, as written (`{{answer}}`)."""
    seen: dict[str, None] = {}
    for match in PLACEHOLDER_PATTERN.finditer(instructions):
        if match.group(1).strip() not in LLM_JUDGE_PLACEHOLDERS:
            seen.setdefault(match.group(0))
    return tuple(seen)


def render(
    instructions: str, *, criterion: str, prompt: str, output: str, expected: str | None
) -> Rendered:
    """Fill the placeholders; UnknownPlaceholders names any other `{{...}}`."""
    unknown = unknown_placeholders(instructions)
    if unknown:
        raise UnknownPlaceholders(unknown)
    values = {
        "criterion": criterion,
        "prompt": prompt,
        "output": fenced(output),
        "expected": expected if expected is not None else "(this task has no expected answer)",
    }
    used: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        used.add(name)
        return values[name]

    text = PLACEHOLDER_PATTERN.sub(fill, instructions)
    if "output" in used:
        return Rendered(text=text)
    return Rendered(
        text=f"{text}\n\n{ANSWER_LABEL}:\n{values['output']}", warnings=(OUTPUT_LEFT_OUT,)
    )
