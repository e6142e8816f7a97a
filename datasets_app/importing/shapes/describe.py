"""The shapes and the refusals in words, from the registry: the sections of
docs/field-names.md between its `generated` markers (`scripts/field_names_doc.py` writes
them; a test fails when the committed doc differs) and the help page's list.

A shape's `help` is written once, with `code` in backticks and **bold**; `as_html` turns it
into the help page's markup, escaped first.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from datasets_app.importing.shapes.refusals import REFUSALS, Refusal
from datasets_app.importing.shapes.registry import SHAPES

BEGIN = "<!-- generated from importing/shapes ({section}): scripts/field_names_doc.py -->"
END = "<!-- end of the generated {section} -->"
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def as_html(text: str) -> str:
    """A shape's `help` as HTML: escaped, then `code` and **bold** marked up."""
    escaped = html.escape(text, quote=False)
    return _BOLD.sub(r"<strong>\1</strong>", _CODE.sub(r"<code>\1</code>", escaped))


def _source(relative: str) -> str:
    return f" Real file: `tests/files/real/{relative}`." if relative else ""


def shapes_markdown() -> str:
    """Each shape, in the order they are tried: its Detected-line name and what it does."""
    return "\n".join(
        f"{number}. **{shape.name}**: {shape.help}{_source(shape.taught_by)}"
        for number, shape in enumerate(SHAPES, start=1)
    )


def refusal_words(refusal: Refusal) -> tuple[str, str]:
    """What a refused file looks like and what to do, with "…" for what the file holds."""
    return refusal.what.format(found="…", source="…"), refusal.advice.format(held="…")


def refusals_markdown() -> str:
    """Each refusal, in the order they are tried: what the file looks like, what to do."""
    lines = []
    for refusal in REFUSALS:
        what, advice = refusal_words(refusal)
        lines.append(f"- `{refusal.key}`: {what}. {advice}{_source(refusal.taught_by)}")
    return "\n".join(lines)


SECTIONS: dict[str, Callable[[], str]] = {
    "shapes": shapes_markdown,
    "refusals": refusals_markdown,
}


def with_generated_sections(text: str) -> str:
    """docs/field-names.md with each generated section written from the registry."""
    for section, write in SECTIONS.items():
        begin, end = BEGIN.format(section=section), END.format(section=section)
        start = text.index(begin) + len(begin)
        stop = text.index(end)
        text = text[:start] + "\n" + write() + "\n" + text[stop:]
    return text
