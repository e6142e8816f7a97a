"""Amazon Bedrock's model-evaluation datasets: a prompt dataset's JSON Lines.

Decisions (also in docs/field-names.md):
- A custom prompt dataset's line (`prompt`, `referenceResponse`, `category`) asks its
  `prompt` and expects its `referenceResponse`; `category` groups results in Bedrock's
  report and is named as not imported. A "bring your own inference" line's
  `modelResponses` are one model's answers, never the expected answer, and are named as
  not imported too.
"""

from __future__ import annotations

from datasets_app.importing.shapes.base import _keys_shape

BEDROCK_PROMPTS = _keys_shape(
    "Amazon Bedrock evaluation prompts (prompt + referenceResponse)",
    {"prompt": "prompt", "expected": "referenceResponse"},
    help=(
        "A model-evaluation job's custom prompt dataset: `prompt` is the prompt and "
        "`referenceResponse` the expected answer. `category` (which groups Bedrock's "
        "report) and a bring-your-own-inference line's `modelResponses` (one model's "
        "answers) are named as not imported."
    ),
    taught_by="bedrock/golden.jsonl",
)
