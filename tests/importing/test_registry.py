"""The shapes registry and the refusals table (importing/shapes/): every shape and every
refusal says what it does and names the real file that taught it, and that file is still
read as it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_app.importing import shapes
from datasets_app.importing.checker import check_file

REAL = Path(__file__).resolve().parents[1] / "files" / "real"


def check(relative: str):
    path = REAL / relative
    return check_file(path.read_bytes(), path.name)


def test_every_shape_has_one_name_and_says_what_it_does():
    names = [shape.name for shape in shapes.SHAPES]

    assert len(set(names)) == len(names)
    assert [shape.name for shape in shapes.SHAPES if not shape.help.strip()] == []


@pytest.mark.parametrize(
    "shape", [s for s in shapes.SHAPES if s.taught_by], ids=lambda shape: shape.taught_by
)
def test_the_real_file_a_shape_was_built_on_is_read_by_it(shape):
    result = check(shape.taught_by)

    assert result.problems == ()
    assert shape.name in result.detected


def test_every_refusal_has_its_own_key():
    keys = [refusal.key for refusal in shapes.REFUSALS]

    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize(
    "refusal", [r for r in shapes.REFUSALS if r.taught_by], ids=lambda refusal: refusal.key
)
def test_the_real_file_a_refusal_was_taught_by_is_refused_by_it(refusal):
    result = check(refusal.taught_by)

    [problem] = result.problems
    opening = refusal.what.split("{", 1)[0]
    assert problem.code == shapes.NOT_A_DATASET.code
    assert problem.message.startswith(f"This looks like {opening}")
