"""Files that are not datasets: a run's results, a leaderboard, one model's answers,
a corpus or its relevance judgments. Each is named, with what to import instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from datasets_app.importing.aliases import normalize
from datasets_app.importing.shapes.base import _RUN_OUTPUTS
from datasets_app.importing.shapes.rubrics import STATEMENTS_KEY

# Top-level keys of an eval tool's results file (promptfoo's output.json, a run export).
_RUN_KEYS = frozenset(
    {"config", "prompts", "stats", "evalId", "metrics", "createdAt", "summary", "studio_url"}
)


def results_document(document: Any) -> bool:
    """Whether a parsed .json is a whole eval run's results rather than a dataset:
    promptfoo's output.json (`results`, `config`, `stats`, …) or what Azure AI's
    `evaluate()` writes (`rows` of inputs and outputs, `metrics`, `studio_url`)."""
    return (
        isinstance(document, dict)
        and ("results" in document or "evalId" in document or "rows" in document)
        and len(document.keys() & _RUN_KEYS) >= 2
    )


_LETTER = re.compile(r"[^\W\d_]")
_CORPUS_KEYS = frozenset({"_id", "id", "doc_id", "title", "text", "metadata", "url"})
_QUERY_KEYS = frozenset({"_id", "id", "text", "title", "metadata"})
_RESULT_KEYS = frozenset(
    {
        "actual_output",
        "response",
        "model_output",
        "prediction",
        "generated_answer",
        "result",
        "results",
        "output",
    }
)
_SCORE_HINT = re.compile(
    r"(score|passed|success|grade|metric|result|precision|recall|faithfulness)", re.I
)
QRELS_HEADERS = (
    frozenset({"queryid", "corpusid", "score"}),
    frozenset({"qid", "docid", "rel"}),
    frozenset({"queryid", "docid", "relevance"}),
)


# FastChat's and Arena-Hard's model_answer (and MT-Bench's reference_answer) files: one
# model's answers, by question id, without the questions.
_MODEL_ANSWER_KEYS = frozenset({"question_id", "answer_id", "model_id"})
MODEL_ANSWERS = (
    "one model's answers to a benchmark's questions (question_id, answer_id, model_id, "
    "choices), as FastChat and Arena-Hard write them",
    "They hold what the model said, not the questions. Import the benchmark's questions "
    "(question.jsonl) instead.",
)

# The data of Prompt flow's eval-checklist flow: an app's answer and the statements it is
# checked against, without the question it answered.
CHECKED_ANSWERS = (
    "answers to check against statements, without the questions they answer (answer, "
    "statements: the data of Prompt flow's eval-checklist flow)",
    "They hold what an app answered, not what to ask it. Import the questions with their "
    "statements instead (question, statements, as Prompt flow's chat flows take them).",
)


def not_a_dataset(
    sources: Sequence[str], fields: Mapping[str, str], *, kind: str
) -> tuple[str, str] | None:
    """(what the file looks like, what to do) for files that hold no dataset."""
    names = {normalize(s) for s in sources}
    raw = set(sources)
    headerless_qrels = (
        kind == "columns" and len(sources) in (3, 4) and sources[-1].strip().isdigit()
    )
    if any(headers <= names for headers in QRELS_HEADERS) or headerless_qrels:
        return (
            "BEIR qrels on their own (query-id, corpus-id, score)",
            "Zip them with queries.jsonl (qrels/test.tsv and queries.jsonl) and import the .zip.",
        )
    result_keys = {s for s in raw if s.lower() in _RESULT_KEYS or s.upper() == "RESULT"}
    scores = {s for s in raw if _SCORE_HINT.search(s)}
    # What an app returned, joined to its inputs by Azure AI or Prompt flow: a run, scored or not.
    run_outputs = {s for s in raw if s.startswith(_RUN_OUTPUTS)}
    graded = "expected" in fields or "criterion" in fields or "assert" in raw
    scored = bool(scores) or "RESULT" in raw
    if ((result_keys and scored) or run_outputs) and not graded:
        # Prompt flow's outputs may come without a score: say only what the file holds.
        held = "a model answered and how it scored" if scored else "an app answered"
        return (
            "the results of an eval run ("
            + ", ".join(sorted(result_keys | scores | run_outputs))
            + ")",
            f"It holds what {held}, not what a good answer is. "
            "Import the dataset the run used instead.",
        )
    if raw >= _MODEL_ANSWER_KEYS and not graded:
        return MODEL_ANSWERS
    if STATEMENTS_KEY in raw and "prompt" not in fields:
        # Its `answer` is what the app said (the one checked), not an expected answer.
        return CHECKED_ANSWERS
    if kind == "columns" and sources and not any(_LETTER.search(s) for s in sources):
        return (
            "a sheet with no header row: its first row holds values ("
            + ", ".join(sources)
            + ") instead of column names",
            "Add a first row naming the columns (question, answer, …) and choose the file again.",
        )
    if "prompt" in fields or graded:
        return None
    # Top-level keys: BEIR's metadata objects are read as `metadata.…`.
    top = {source.split(".", 1)[0] for source in raw}
    if top and top <= _QUERY_KEYS and top & {"_id", "id"} and len(top & {"text", "title"}) == 1:
        return (
            "BEIR queries on their own (" + ", ".join(sorted(top)) + ")",
            "Zip them with their qrels (qrels/test.tsv) and import the .zip.",
        )
    if top and top <= _CORPUS_KEYS and "text" in top and "title" in top:
        return (
            "a document corpus (" + ", ".join(sorted(top)) + "): documents, not questions",
            "Import the questions and their answers instead; a corpus is what an agent "
            "searches, not what it is graded on.",
        )
    return None
