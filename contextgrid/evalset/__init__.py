"""Eval sets: the types (:mod:`.types`), reading and writing them (:mod:`.io`), and a quick
summary of one (:mod:`.assess`)."""

from contextgrid.evalset.assess import Assessment, assess
from contextgrid.evalset.io import (
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
from contextgrid.evalset.types import (
    EvalItem,
    EvalSet,
    EvalSetError,
    GoldAnchor,
    GoldSpan,
    QuestionType,
    Span,
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
