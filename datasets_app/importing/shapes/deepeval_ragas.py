"""DeepEval goldens and ragas test sets."""

from __future__ import annotations

from datasets_app.importing.shapes.base import Shape, _keys_shape

DEEPEVAL = _keys_shape(
    "deepeval goldens (input + expected_output)",
    {"prompt": "input", "expected": "expected_output"},
    help=("DeepEval goldens: `input` is the prompt and `expected_output` the expected answer."),
    taught_by="deepeval/goldens.json",
)


RAGAS = _keys_shape(
    "ragas (user_input + reference)",
    {"prompt": "user_input", "expected": "reference"},
    help="ragas test sets: `user_input` is the prompt and `reference` the expected answer.",
)


RAGAS_GROUND_TRUTH = Shape(
    "ragas (question + ground_truth)",
    lambda keys, first: "question" in keys and ("ground_truth" in keys or "ground_truths" in keys),
    lambda keys, first: {
        "prompt": "question",
        "expected": "ground_truth" if "ground_truth" in keys else "ground_truths",
    },
    help=(
        "Older ragas test sets: `question` is the prompt and `ground_truth` (or the list "
        "`ground_truths`) the expected answer."
    ),
)
