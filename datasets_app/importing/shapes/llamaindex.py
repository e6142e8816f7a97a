"""LlamaIndex's evaluation datasets: `LabelledRagDataset` and `QueryResponseDataset`.

Decisions (also in docs/field-names.md):
- A `LabelledRagDataset`'s `examples` ask their `query` and expect their
  `reference_answer`; the `reference_contexts` are the passages the answer came from,
  which the agent must find itself, and are named as not imported with `query_by` and
  `reference_answer_by` (who wrote each).
- A `QueryResponseDataset` is two objects side by side, `queries` and `responses`, each
  keyed by the same ids (`records._objects_by_id`): each id is one task, asking its query
  and expecting its response.
- An `EmbeddingQAFinetuneDataset` (`queries`, `corpus`, `relevant_docs`) grades a
  retriever and holds no answers: it is refused (`refusals`), not read as records.
"""

from __future__ import annotations

from datasets_app.importing.shapes.base import Shape, _keys_shape

LABELLED_RAG = Shape(
    "LlamaIndex LabelledRagDataset (query + reference_answer)",
    lambda keys, first: {"query", "reference_answer", "reference_contexts"} <= keys,
    lambda keys, first: {"prompt": "query", "expected": "reference_answer"},
    help=(
        "`examples` of `query` (the prompt) and `reference_answer` (the expected answer). "
        "The `reference_contexts`, the passages the answer came from, are the agent's to "
        "find, and are named as not imported with `query_by` and `reference_answer_by`."
    ),
    taught_by="llamaindex/aragog_rag_dataset.excerpt.json",
)

QUERY_RESPONSE = _keys_shape(
    "LlamaIndex QueryResponseDataset (queries + responses)",
    {"prompt": "queries", "expected": "responses"},
    help=(
        "`queries` and `responses`, two objects keyed by the same ids: each id is one "
        "task with that id, asking its query and expecting its response."
    ),
    taught_by="llamaindex/ipcc_eval_qr_dataset.json",
)
