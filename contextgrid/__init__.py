"""contextgrid: eval sets for retrieval, and the readers and writers that load them.

Pure Python, no Django. ``import contextgrid as cg`` gives:

Types (frozen dataclasses; collections are tuples):
    ``EvalSet``, ``EvalItem``, ``GoldAnchor``, ``GoldSpan``, ``Span``, ``QuestionType``,
    ``EvalSetError`` (the one exception every reader raises for a bad file).

Files (every path may be a ``str`` or a ``Path``):
    ``write_jsonl(evalset, path)`` / ``read_jsonl(path)``: the native, lossless format.
    ``write_csv(evalset, path)`` / ``read_csv(path, *, evalset_id=None)``: for spreadsheets.
    ``read_beir(queries_path, qrels_path, *, evalset_id="beir")``: document-level gold.
    ``read_legalbench_rag(path, *, evalset_id="legalbench-rag", corpus_dir=None)``: spans.
    ``read_evalset(path)``: ``.csv`` -> ``read_csv``, anything else -> ``read_jsonl``.
    ``describe_skipped(evalset)``: one sentence on what an import skipped.
    ``assess(evalset)``: counts, % reviewed, question types and granularity.

For content that is not on disk (a web upload), each reader has a twin taking text or UTF-8
bytes plus a display name used in error messages:
    ``parse_jsonl_text(text, *, name, evalset_id=None)``
    ``parse_csv_text(text, *, name, evalset_id=None)``
    ``parse_beir(queries_text, qrels_text, *, evalset_id="beir", queries_name=..., qrels_name=...)``
    ``parse_legalbench_rag_text(text, *, name, evalset_id="legalbench-rag", corpus_dir=None)``
    ``evalset_to_jsonl_text(evalset)``: the text ``write_jsonl`` would write.
"""

from contextgrid.evalset import (
    Assessment,
    EvalItem,
    EvalSet,
    EvalSetError,
    GoldAnchor,
    GoldSpan,
    QuestionType,
    Span,
    assess,
    describe_skipped,
    evalset_to_jsonl_text,
    parse_beir,
    parse_csv_text,
    parse_jsonl_text,
    parse_legalbench_rag_text,
    read_beir,
    read_csv,
    read_evalset,
    read_jsonl,
    read_legalbench_rag,
    write_csv,
    write_jsonl,
)

__all__ = [
    "Assessment",
    "EvalItem",
    "EvalSet",
    "EvalSetError",
    "GoldAnchor",
    "GoldSpan",
    "QuestionType",
    "Span",
    "assess",
    "describe_skipped",
    "evalset_to_jsonl_text",
    "parse_beir",
    "parse_csv_text",
    "parse_jsonl_text",
    "parse_legalbench_rag_text",
    "read_beir",
    "read_csv",
    "read_evalset",
    "read_jsonl",
    "read_legalbench_rag",
    "write_csv",
    "write_jsonl",
]
