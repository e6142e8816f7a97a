"""DeepEval goldens and ragas test sets."""

from __future__ import annotations

from datasets_app.importing.shapes.base import Shape, _keys_shape

DEEPEVAL = _keys_shape(
    "deepeval goldens (input + expected_output)", prompt="input", expected="expected_output"
)


RAGAS = _keys_shape("ragas (user_input + reference)", prompt="user_input", expected="reference")


RAGAS_GROUND_TRUTH = Shape(
    "ragas (question + ground_truth)",
    lambda keys, first: "question" in keys and ("ground_truth" in keys or "ground_truths" in keys),
    lambda keys, first: {
        "prompt": "question",
        "expected": "ground_truth" if "ground_truth" in keys else "ground_truths",
    },
)
