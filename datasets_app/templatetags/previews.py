"""Rows of the import preview, rendered in one pass.

A 1,000-task file has a 1,000-row preview; a template loop with a filter per cell costs more
than checking the file did. Every value goes through `html.escape`, which is what Django's
own `escape` calls, so the output is exactly as safe as autoescaped template output.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

from datasets_app.importing.spec import TaskPreview, shorten
from datasets_app.wording import weight

register = template.Library()

SCORED_BY = {"criteria": "criteria", "expected_answer": "expected answer"}


# How much of a prompt or an answer a preview row shows before "the rest".
SHORT_CHARS = 80


def _text_cell(text: str, length: int) -> str:
    """A text shortened on one line; the whole of it (as far as the check kept it) one
    click away, in a <details>."""
    if not text:
        return '<span class="muted">—</span>'
    short = shorten(text, SHORT_CHARS)
    if short == text and length == len(text):
        return escape(text)
    rest = escape(text)
    if length > len(text):
        rest += f"… <em>({length - len(text):,} more characters, all imported)</em>"
    return f'<details class="text"><summary>{escape(short)}</summary><div>{rest}</div></details>'


@register.simple_tag
def preview_rows(
    tasks: Sequence[TaskPreview], texts: list[list] | None = None, *, with_criteria: bool = True
) -> SafeString:
    """`<tr>` per task of a checked file: id, name, prompt, expected answer, scored by,
    and `with_criteria`, criteria and total weight. `texts` are the check's
    (`selectors.preview_texts`).

    Each cell carries its column's name (`data-label`), which a narrow screen shows beside
    it when the table becomes stacked rows.
    """
    texts = texts or []
    rows = []
    for index, task in enumerate(tasks):
        prompt, prompt_length, expected, expected_length = (
            texts[index] if index < len(texts) else ("", 0, "", 0)
        )
        rows.append(
            f'<tr><td data-label="Id"><code>{escape(task.id)}</code></td>'
            f'<td data-label="Name">{escape(task.name)}</td>'
            f'<td data-label="Prompt" class="text">{_text_cell(prompt, prompt_length)}</td>'
            f'<td data-label="Expected answer" class="text">'
            f"{_text_cell(expected, expected_length)}</td>"
            f'<td data-label="Scored by">{SCORED_BY.get(task.scored_by, "")}</td>'
            + (
                f'<td data-label="Criteria" class="num">{task.criteria:,}</td>'
                f'<td data-label="Total weight" class="num">'
                f"{escape(weight(task.total_weight))}</td>"
                if with_criteria
                else ""
            )
            + "</tr>"
        )
    return mark_safe("\n".join(rows))  # every value above is escaped
