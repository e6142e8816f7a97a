"""docs/field-names.md says what the registry says: its shapes and refusals sections are
written from importing/shapes (scripts/field_names_doc.py), and the committed doc is that."""

from __future__ import annotations

from pathlib import Path

from datasets_app.importing import shapes
from datasets_app.importing.shapes import describe

DOC = Path(__file__).resolve().parents[2] / "docs" / "field-names.md"


def test_the_committed_field_names_doc_is_what_the_registry_writes():
    committed = DOC.read_text(encoding="utf-8")

    assert committed == describe.with_generated_sections(committed), (
        "docs/field-names.md differs from the shapes registry: run scripts/field_names_doc.py"
    )


def test_the_doc_names_every_shape_in_the_order_they_are_tried():
    committed = DOC.read_text(encoding="utf-8")
    places = [committed.index(f"**{shape.name}**: {shape.help}") for shape in shapes.SHAPES]

    assert places == sorted(places)
    for refusal in shapes.REFUSALS:
        assert f"- `{refusal.key}`: " in committed


def test_a_shape_s_help_is_escaped_before_it_is_marked_up():
    assert describe.as_html("`<b>` and **x & y**") == (
        "<code>&lt;b&gt;</code> and <strong>x &amp; y</strong>"
    )
