"""Where the shared real third-party files live, for the tests that read them."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
REALDATA = REPO_ROOT.parent / "shared" / "realdata"


def realdata(relative: str) -> Path:
    """The path of a shared real file; skips the test (visibly) when the folder is absent."""
    if not REALDATA.is_dir():
        pytest.skip(f"real third-party files not found at {REALDATA}")
    path = REALDATA / relative
    assert path.exists(), f"{path} is listed in realdata/INDEX.md but missing"
    return path
