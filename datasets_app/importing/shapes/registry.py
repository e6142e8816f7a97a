"""The shapes, in the order they are tried: the first whose `matches` holds reads the
file. Order matters where two could match: a shape with more keys comes before one with
fewer (MT-Bench before chat conversations, Prompt flow's checklist before its chat data,
Alpaca before AlpacaEval), and a tool's own key before a name every tool uses.

To add a tool's shape: write it in its family's module (or a new one) and put it here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datasets_app.importing.shapes.azure import AZURE_AI, PROMPT_FLOW_CHAT, PROMPT_FLOW_CHECKLIST
from datasets_app.importing.shapes.base import Shape
from datasets_app.importing.shapes.bedrock import BEDROCK_KNOWLEDGE_BASE, BEDROCK_PROMPTS
from datasets_app.importing.shapes.benchmarks import ARC, BIG_BENCH, HUMANEVAL, MBPP, TRUTHFULQA
from datasets_app.importing.shapes.deepeval_ragas import DEEPEVAL, RAGAS, RAGAS_GROUND_TRUTH
from datasets_app.importing.shapes.llamaindex import LABELLED_RAG, QUERY_RESPONSE
from datasets_app.importing.shapes.mt_bench import ALPACA, ALPACA_EVAL, ARENA_HARD, MT_BENCH
from datasets_app.importing.shapes.openai_evals import (
    CHAT_CONVERSATIONS,
    OPENAI_EVALS,
    PROMPT_COMPLETION,
)
from datasets_app.importing.shapes.promptfoo import PROMPTFOO
from datasets_app.importing.shapes.retrieval import BOOLQ, HOTPOTQA, NQ_OPEN, SQUAD
from datasets_app.importing.shapes.rubrics import HEALTHBENCH, HELLOBENCH, PAPERBENCH, PROMETHEUS
from datasets_app.importing.shapes.tracing import LANGSMITH

SHAPES: tuple[Shape, ...] = (
    ARENA_HARD,
    MT_BENCH,
    CHAT_CONVERSATIONS,
    HEALTHBENCH,
    PROMETHEUS,
    HELLOBENCH,
    PAPERBENCH,
    OPENAI_EVALS,
    PROMPTFOO,
    LANGSMITH,
    HUMANEVAL,
    MBPP,
    TRUTHFULQA,
    BIG_BENCH,
    ARC,
    PROMPT_COMPLETION,
    BEDROCK_PROMPTS,
    BEDROCK_KNOWLEDGE_BASE,
    LABELLED_RAG,
    QUERY_RESPONSE,
    DEEPEVAL,
    RAGAS,
    PROMPT_FLOW_CHECKLIST,
    PROMPT_FLOW_CHAT,
    RAGAS_GROUND_TRUTH,
    AZURE_AI,
    ALPACA,
    ALPACA_EVAL,
    SQUAD,
    BOOLQ,
    NQ_OPEN,
    HOTPOTQA,
)

# What the records need before their keys are read (`Shape.prepare`), each step once.
PREPARES: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = tuple(
    dict.fromkeys(shape.prepare for shape in SHAPES if shape.prepare is not None)
)
