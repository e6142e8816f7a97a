"""Template filters for the words every screen prints the same way (see `datasets_app.wording`)."""

from __future__ import annotations

from django import template

from datasets_app import wording

register = template.Library()


@register.filter
def weight(value: float | int | None) -> str:
    """20, 3.5, 0.33: a weight as the preview, the dataset, task and version pages print it."""
    return wording.weight(value)


@register.filter
def count(value: int | None) -> str:
    """1,000, not 1000: a whole number as people write it."""
    return f"{value or 0:,}"


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
