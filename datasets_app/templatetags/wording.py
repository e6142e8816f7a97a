"""Template filters for the words every screen prints the same way (see `datasets_app.wording`)."""

from __future__ import annotations

import math
import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from datasets_app import wording
from datasets_app.importing import columns

register = template.Library()


@register.filter
def weight(value: float | int | None) -> str:
    """20, 3.5, 0.33: a weight as the preview, the dataset, task and version pages print it."""
    return wording.weight(value)


@register.filter
def verifier_kind(value: str | None) -> str:
    """Agent judge, not agent_judge: a verifier kind as people read it."""
    return wording.verifier_kind(value)


@register.filter
def output_type(value: str | None) -> str:
    """Pass or fail, not boolean."""
    return wording.output_type(value)


@register.filter
def count(value: int | None) -> str:
    """1,000, not 1000: a whole number as people write it."""
    return f"{value or 0:,}"


@register.filter
def marked(value: object, query: str | None) -> SafeString:
    """The text, escaped, with each match of the search (any case) in a `<mark>`.

    The matches are found in the text as stored and each piece is escaped on its own, so a
    search for `&` or `<b>` marks those characters and never writes markup.
    """
    text = "" if value is None else str(value)
    if not query:
        return escape(text)
    pieces, start = [], 0
    for found in re.finditer(re.escape(query), text, re.IGNORECASE):
        pieces += [escape(text[start : found.start()]), f"<mark>{escape(found.group())}</mark>"]
        start = found.end()
    pieces.append(escape(text[start:]))
    return mark_safe("".join(pieces))  # every piece is escaped above


@register.filter
def percent(value: float | None) -> str:
    """67%: a share (coverage) as a whole percentage."""
    return f"{round((value or 0) * 100):,}%"


@register.filter
def score(value: float | None) -> str:
    """0.67: a score from 0 to 1, to two places; "no score" when nothing was graded."""
    return "no score" if value is None else f"{value:.2f}"


@register.filter
def milliseconds(value: float | None) -> str:
    """1,234 ms."""
    return f"{round(value or 0):,} ms"


@register.filter
def dollars(value: float | None) -> str:
    """$1.23, $1,234.50; a cost under a cent keeps two figures ($0.0042), not $0.00."""
    if value is None:
        return ""
    if value == 0 or value >= 0.01:
        return f"${value:,.2f}"
    places = 1 - math.floor(math.log10(value))
    return f"${value:.{places}f}"


@register.filter
def metadata_value(value: object) -> str:
    """A metadata value as its spreadsheet cell says it: text as it is, anything else (a
    number, a list, text that spells JSON) as JSON."""
    return columns.metadata_cell(value)
