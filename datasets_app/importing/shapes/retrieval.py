"""Reading and retrieval QA sets: SQuAD, BoolQ, NQ-open, HotpotQA.

Decisions (also in docs/field-names.md):
- A SQuAD question is asked with its passage: the prompt is the context, a blank line and
  the question. A question SQuAD 2.0 marks unanswerable has nothing to grade by and is
  left out, with a warning that counts them. A BoolQ question is asked the same way (its
  `passage`, then the question), and expects its `answer` as `true` or `false`.
"""

from __future__ import annotations

from typing import Any

from datasets_app.importing.shapes.base import Shape


def _has_answer_starts(first: dict[str, Any]) -> bool:
    answers = first.get("answers")
    if isinstance(answers, dict):
        return "answer_start" in answers
    return isinstance(answers, list) and any(
        isinstance(a, dict) and "answer_start" in a for a in answers
    )


SQUAD = Shape(
    "SQuAD (context + question + answers)",
    lambda keys, first: "question" in keys and "context" in keys and _has_answer_starts(first),
    lambda keys, first: {"prompt": "context + question", "expected": "answers"},
    help=(
        "A question is asked with its passage: the prompt is the `context`, a blank line "
        "and the `question` (SQuAD's own nesting, `data` → `paragraphs` → `qas`, or "
        "flattened). A question SQuAD 2.0 marks unanswerable has nothing to grade by and "
        "is left out, with a warning counting them."
    ),
    taught_by="squad/transformers_sample.excerpt.json",
)


# BoolQ's yes/no questions are about their passage, asked before them as SQuAD's is.
BOOLQ = Shape(
    "BoolQ (passage + question + answer)",
    lambda keys, first: {"question", "passage"} <= keys and isinstance(first.get("answer"), bool),
    lambda keys, first: {"prompt": "passage + question", "expected": "answer"},
    help=(
        "Asked as SQuAD's questions are (`passage`, a blank line, `question`), expecting "
        "its `answer` as `true` or `false`."
    ),
    taught_by="hf_dataset_viewer/boolq_rows.json",
)


NQ_OPEN = Shape(
    "NQ-open (question + answers)",
    lambda keys, first: (
        "question" in keys and isinstance(first.get("answer", first.get("answers")), list)
    ),
    lambda keys, first: {
        "prompt": "question",
        "expected": "answer" if "answer" in keys else "answers",
    },
    help=(
        "`question` is the prompt; its list of accepted `answer`s is one expected answer "
        "(`Any of:`)."
    ),
    taught_by="nq_open/NQ-open.dev.excerpt.jsonl",
)


HOTPOTQA = Shape(
    "HotpotQA (question + answer + supporting facts)",
    # `supporting_facts` is a list of [title, sentence] pairs in the original files and
    # an object of lists (`supporting_facts.title`, `.sent_id`) in the Hugging Face export.
    lambda keys, first: (
        "question" in keys
        and any(k == "supporting_facts" or k.startswith("supporting_facts.") for k in keys)
    ),
    lambda keys, first: (
        {"prompt": "question", "expected": "answer"} | ({"id": "_id"} if "_id" in keys else {})
    ),
    help=(
        "The prompt is the `question` and the expected answer its `answer`; its "
        "`supporting_facts` and `context` paragraphs are named as not imported (its own "
        "files and the Hugging Face export)."
    ),
    taught_by="hotpotqa/hotpot_dev_distractor_v1.excerpt.json",
)
