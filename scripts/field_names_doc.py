"""Write docs/field-names.md's generated sections (the shapes and the refusals) from the
registry in importing/shapes/. `tests/importing/test_field_names_doc.py` fails when the
committed doc differs; run this after changing a shape or a refusal."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from datasets_app.importing.shapes.describe import with_generated_sections  # noqa: E402

DOC = REPO / "docs" / "field-names.md"


def main() -> None:
    DOC.write_text(with_generated_sections(DOC.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
