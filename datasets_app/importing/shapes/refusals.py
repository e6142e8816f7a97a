"""Files that are not datasets: a run's results, a leaderboard, one model's answers,
a corpus or its relevance judgments. Each is named, with what to import instead.

`REFUSALS` is the table, tried in order: each refusal has its key, what the file looks like
and what to do (the message, `NOT_A_DATASET`'s `what` and `advice`), the real file under
tests/files/real/ that taught it, and the test on what the file holds (`Evidence`: its keys
or columns, what the shape and the names said, and, for a .json document, the document).
The first refusal whose test holds is the file's; a mapping the person gives is never
refused (the callers ask only when there is none).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from datasets_app.importing.aliases import normalize
from datasets_app.importing.shapes.base import _RUN_OUTPUTS, NOT_A_DATASET, SAMPLE_RECORDS, Record
from datasets_app.importing.shapes.promptfoo import template_prompts
from datasets_app.importing.shapes.rubrics import STATEMENTS_KEY
from datasets_app.importing.spec import Problem

# Top-level keys of an eval tool's results file (promptfoo's output.json, a run export).
_RUN_KEYS = frozenset(
    {"config", "prompts", "stats", "evalId", "metrics", "createdAt", "summary", "studio_url"}
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


def results_document(document: Any) -> bool:
    """Whether a parsed .json is a whole eval run's results rather than a dataset:
    promptfoo's output.json (`results`, `config`, `stats`, …) or what Azure AI's
    `evaluate()` writes (`rows` of inputs and outputs, `metrics`, `studio_url`)."""
    return (
        isinstance(document, dict)
        and ("results" in document or "evalId" in document or "rows" in document)
        and len(document.keys() & _RUN_KEYS) >= 2
    )


@dataclass
class Evidence:
    """What the refusals look at, worked out once for a file."""

    sources: Sequence[str]
    # Which source fills which field, as the shape and the names said (no guess).
    named: Mapping[str, str]
    # "keys" (JSON records) or "columns" (a sheet).
    kind: str
    records: Sequence[Record] = ()
    # The mapping the file would import with (the guess included), for the templates test.
    fields: Mapping[str, str] = field(default_factory=dict)
    # A whole .json document, when the test is on the document rather than its records.
    document: Any = None

    def __post_init__(self) -> None:
        self.names = {normalize(s) for s in self.sources}
        self.raw = set(self.sources)
        self.graded = bool({"expected", "criterion"} & self.named.keys()) or "assert" in self.raw
        self.result_keys = {
            s for s in self.raw if s.lower() in _RESULT_KEYS or s.upper() == "RESULT"
        }
        self.scores = {s for s in self.raw if _SCORE_HINT.search(s)}
        # What an app returned, joined to its inputs by Azure AI or Prompt flow.
        self.run_outputs = {s for s in self.raw if s.startswith(_RUN_OUTPUTS)}
        self.scored = bool(self.scores) or "RESULT" in self.raw
        # Something in it asks or grades: only a refusal of what such a file can be applies.
        self.asks = "prompt" in self.named or self.graded
        # Top-level keys: BEIR's metadata objects are read as `metadata.…`.
        self.top = {source.split(".", 1)[0] for source in self.raw}


Params = dict[str, str]


@dataclass(frozen=True)
class Refusal:
    """One kind of file that is no dataset: its key, what it looks like (`what`, with the
    `found` parameters) and what to do (`advice`), the real file that taught it, and the
    test (`found`: the parameters when the file is one, else None)."""

    key: str
    what: str
    advice: str
    taught_by: str
    found: Callable[[Evidence], Params | None]

    def problem(self, file_name: str, params: Params, *, line: int | None = None) -> Problem:
        return NOT_A_DATASET.at(
            file_name,
            line=line,
            what=self.what.format(**params),
            advice=self.advice.format(**params),
        )


def _run_document(seen: Evidence) -> Params | None:
    if seen.document is None or not results_document(seen.document):
        return None
    return {"found": ", ".join(sorted(seen.document)[:6])}


# LlamaIndex's EmbeddingQAFinetuneDataset: queries, the corpus they were generated from,
# and which documents each query should find.
_RETRIEVAL_PAIRS_KEYS = frozenset({"queries", "corpus", "relevant_docs"})


def _retrieval_pairs(seen: Evidence) -> Params | None:
    document = seen.document
    if not (isinstance(document, dict) and document.keys() >= _RETRIEVAL_PAIRS_KEYS):
        return None
    return {"found": ", ".join(document)}


def _qrels(seen: Evidence) -> Params | None:
    headerless = (
        seen.kind == "columns"
        and len(seen.sources) in (3, 4)
        and seen.sources[-1].strip().isdigit()
    )
    matched = any(headers <= seen.names for headers in QRELS_HEADERS)
    return {} if matched or headerless else None


def _run_results(seen: Evidence) -> Params | None:
    if seen.graded or not ((seen.result_keys and seen.scored) or seen.run_outputs):
        return None
    # Prompt flow's outputs may come without a score: say only what the file holds.
    held = "a model answered and how it scored" if seen.scored else "an app answered"
    return {
        "found": ", ".join(sorted(seen.result_keys | seen.scores | seen.run_outputs)),
        "held": held,
    }


def _model_answers(seen: Evidence) -> Params | None:
    return {} if seen.raw >= _MODEL_ANSWER_KEYS and not seen.graded else None


# What a grader's test set calls the one candidate answer it asks the grader to judge.
_CANDIDATE_KEYS = ("output", "answer", "response", "completion")


def _verdict(value: Any) -> bool:
    return isinstance(value, bool | int | float)


def _grader_tests(seen: Evidence) -> Params | None:
    # A question and a candidate answer side by side in one object (`input.input`,
    # `input.output`), and at the top a number: the verdict a grader should give.
    sample = seen.records[:SAMPLE_RECORDS]
    if not sample or not all(_verdict(r.values.get("expected")) for r in sample):
        return None
    parents = sorted({s.split(".", 1)[0] for s in seen.raw if "." in s})
    for parent in parents:
        asked = {f"{parent}.input", f"{parent}.question"} & seen.raw
        judged = [f"{parent}.{key}" for key in _CANDIDATE_KEYS if f"{parent}.{key}" in seen.raw]
        if asked and judged:
            return {"found": f"{min(asked)}, {judged[0]}, expected"}
    return None


def _checked_answers(seen: Evidence) -> Params | None:
    # Its `answer` is what the app said (the one checked), not an expected answer.
    return {} if STATEMENTS_KEY in seen.raw and "prompt" not in seen.named else None


def _no_header(seen: Evidence) -> Params | None:
    if seen.kind != "columns" or not seen.sources:
        return None
    if any(_LETTER.search(s) for s in seen.sources):
        return None
    return {"found": ", ".join(seen.sources)}


def _queries(seen: Evidence) -> Params | None:
    top = seen.top
    if seen.asks or not (top and top <= _QUERY_KEYS and top & {"_id", "id"}):
        return None
    return {"found": ", ".join(sorted(top))} if len(top & {"text", "title"}) == 1 else None


def _corpus(seen: Evidence) -> Params | None:
    top = seen.top
    if seen.asks or not (top and top <= _CORPUS_KEYS and {"text", "title"} <= top):
        return None
    return {"found": ", ".join(sorted(top))}


def _templates(seen: Evidence) -> Params | None:
    templated = template_prompts(seen.records, seen.fields, seen.named)
    return None if templated is None else {"source": templated}


REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        "eval_run_document",
        "the results of an eval run ({found})",
        "It holds what models answered and how they scored. Import the tests the run used instead.",
        "azure_ai_samples/privacy_evaluate_results.excerpt.json",
        _run_document,
    ),
    Refusal(
        "retrieval_pairs",
        "a retriever's eval set ({found}: LlamaIndex's EmbeddingQAFinetuneDataset): queries "
        "and the documents each should find, with no answers",
        "It grades which documents a search returns, not an answer. Write it as BEIR "
        "(queries.jsonl, corpus.jsonl, qrels/test.tsv) and import the .zip as a retrieval "
        "eval set, or import questions with their answers instead.",
        "llamaindex/finetune_embedding_val_dataset.excerpt.json",
        _retrieval_pairs,
    ),
    Refusal(
        "beir_qrels",
        "BEIR qrels on their own (query-id, corpus-id, score)",
        "Zip them with queries.jsonl (qrels/test.tsv and queries.jsonl) and import the .zip.",
        "realdata/beir/agentset_dbpedia/qrels/test.excerpt.tsv",
        _qrels,
    ),
    Refusal(
        "eval_run_results",
        "the results of an eval run ({found})",
        "It holds what {held}, not what a good answer is. Import the dataset the run used instead.",
        "promptfoo/simple_test_output.csv",
        _run_results,
    ),
    Refusal(
        "model_answers",
        "one model's answers to a benchmark's questions (question_id, answer_id, model_id, "
        "choices), as FastChat and Arena-Hard write them",
        "They hold what the model said, not the questions. Import the benchmark's questions "
        "(question.jsonl) instead.",
        "mt_bench/reference_answer_gpt-4.excerpt.jsonl",
        _model_answers,
    ),
    Refusal(
        "grader_test_set",
        "a grader's test set ({found}): each record holds a question, one candidate answer "
        "and the verdict a grader should give it, as autoevals' and Braintrust's scorer "
        "tests write them",
        "It tests a grader, not an agent: imported, agents would be graded against a score. "
        "Import the questions with their reference answers instead, or map the prompt and "
        "the expected answer yourself (--map prompt=… --map expected=…).",
        "autoevals/coqa_closed_qa.excerpt.json",
        _grader_tests,
    ),
    # The data of Prompt flow's eval-checklist flow: an app's answer and the statements it
    # is checked against, without the question it answered.
    Refusal(
        "checked_answers",
        "answers to check against statements, without the questions they answer (answer, "
        "statements: the data of Prompt flow's eval-checklist flow)",
        "They hold what an app answered, not what to ask it. Import the questions with their "
        "statements instead (question, statements, as Prompt flow's chat flows take them).",
        "promptflow/eval_checklist_data.jsonl",
        _checked_answers,
    ),
    Refusal(
        "no_header_row",
        "a sheet with no header row: its first row holds values ({found}) instead of column names",
        "Add a first row naming the columns (question, answer, …) and choose the file again.",
        "realdata/beir/kirloxious_scifact_modified/qrels/test.excerpt.tsv",
        _no_header,
    ),
    Refusal(
        "beir_queries",
        "BEIR queries on their own ({found})",
        "Zip them with their qrels (qrels/test.tsv) and import the .zip.",
        "realdata/beir/agentset_fiqa/queries.jsonl",
        _queries,
    ),
    Refusal(
        "document_corpus",
        "a document corpus ({found}): documents, not questions",
        "Import the questions and their answers instead; a corpus is what an agent searches, "
        "not what it is graded on.",
        "",
        _corpus,
    ),
    Refusal(
        "prompt_templates",
        "prompt templates with {{{{variables}}}} (a promptfoo prompts file, {source})",
        "They are filled in by a tool, not tasks to grade. Import the tests instead: the values "
        "of the variables and what a good answer is.",
        "promptfoo/csv_prompts.csv",
        _templates,
    ),
)


def refusal_problem(seen: Evidence, file_name: str, *, line: int | None = None) -> Problem | None:
    """The file's refusal (`REFUSALS`, the first that holds) as a problem, or None."""
    for refusal in REFUSALS:
        params = refusal.found(seen)
        if params is not None:
            return refusal.problem(file_name, params, line=line)
    return None


def document_refusal(document: Any, file_name: str) -> Problem | None:
    """A whole .json document's refusal (a run's results), on its first line, or None."""
    return refusal_problem(Evidence((), {}, "keys", document=document), file_name, line=1)
