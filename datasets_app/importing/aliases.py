"""The one list of names that mean each field of a task, for every format.

A CSV or XLSX column header, a JSON or JSONL key (at the top of a record or one level
down, as `inputs.question`) and a `--map` source are matched against the same list, the
same way: case, spaces, `_` and `-` do not count, and a plural (`Questions`) matches its
singular. docs/field-names.md is the page people read; keep the two in step.

Only names that mean the field in the tools people bring files from are here. A name that
means different things in different tools (`label`, `text`, `output` of a model run,
`response`, `context`) is left to the person's mapping: a wrong guess would import a file
silently wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """A field a file can fill: its key, what people read, and the names that mean it."""

    key: str
    label: str
    # The first spelling is the one our own writers use and the help page leads with.
    spellings: tuple[str, ...]


# The fields a person can map in the dialog or with --map, in the order the dialog shows.
FIELDS: tuple[Field, ...] = (
    Field(
        "id",
        "Id",
        ("task_id", "id", "task", "_id", "qid", "question_id", "example_id", "sample_id"),
    ),
    Field("name", "Name", ("name", "task_name", "title", "__description")),
    Field(
        "prompt",
        "Prompt",
        (
            "prompt",
            "input",
            "question",
            "query",
            "user_input",
            "user_message",
            "instruction",
            # The same word in the languages people's sheets are written in: Spanish,
            # Portuguese, Italian, German, Dutch, Chinese, Japanese (French writes
            # "question", as English does).
            "pregunta",
            "pergunta",
            "domanda",
            "frage",
            "vraag",
            "问题",
            "質問",
        ),
    ),
    Field(
        "expected",
        "Expected answer",
        (
            "expected_answer",
            "expected",
            "expected_output",
            "goldenOutput",
            "answer",
            "target",
            "reference",
            "reference_answer",
            # Amazon Bedrock's evaluation datasets (`referenceResponse`, and
            # `referenceResponses` in a knowledge base's conversation turns).
            "reference_response",
            "ground_truth",
            "expected completion",
            "correct_answer",
            "gold_answer",
            "golden_answer",
            "ideal",
            "completion",
            "answer_key",
            # As for the prompt: Spanish, Portuguese, French, Italian, German, Dutch,
            # Chinese, Japanese.
            "respuesta",
            "resposta",
            "réponse",
            "risposta",
            "antwort",
            "antwoord",
            "答案",
            "回答",
        ),
    ),
    # A checklist is yes/no checks, each a criterion (HelloBench's `checklists`).
    Field("criterion", "Criterion", ("criterion", "rubric", "checklist")),
    Field("weight", "Weight", ("weight", "points")),
)
FIELDS_BY_KEY: dict[str, Field] = {field.key: field for field in FIELDS}
# What an agent's outputs file (a run's, `importing.outputs`) names its columns or keys: the
# task as a dataset's `id` is named, the agent's answer so, and what producing it cost. Not
# a field of a dataset (it is not in FIELDS, so the import dialog never offers it): `answer`
# and `completion` mean the *expected* answer in a dataset file, and the agent's in an
# outputs file, which holds no expected answer. The first spelling of each is the one the
# file format names.
RUN_FIELDS: tuple[Field, ...] = (
    Field("task", "Task", ("task", *(s for s in FIELDS_BY_KEY["id"].spellings if s != "task"))),
    Field(
        "output",
        "Output",
        (
            "output",
            "response",
            "answer",
            "completion",
            "actual_output",
            "model_output",
            "prediction",
            "generation",
        ),
    ),
    # What producing the output cost, as agent harnesses and tracing tools name it. Only
    # names that say their unit: a bare `latency` may be seconds, and a wrong guess would
    # show a run 1,000 times faster than it was.
    Field("latency_ms", "Latency (milliseconds)", ("latency_ms", "duration_ms", "elapsed_ms")),
    Field("tokens", "Tokens", ("tokens", "total_tokens", "token_count", "num_tokens")),
    Field("cost", "Cost (dollars)", ("cost", "cost_usd", "total_cost")),
    Field("model", "Model", ("model", "model_name", "model_id")),
    Field("trace", "Trace (a link)", ("trace", "trace_url", "trace_link")),
)
FIELD_KEYS: tuple[str, ...] = tuple(field.key for field in FIELDS)

_SEPARATORS = re.compile(r"[\s_\-]+")


def normalize(name: str) -> str:
    """`Expected Answer`, `expected_answer` and `expected-answer` all give `expectedanswer`."""
    return _SEPARATORS.sub("", name).lower()


_FIELD_BY_NAME: dict[str, str] = {
    normalize(spelling): field.key for field in FIELDS for spelling in field.spellings
}


def field_for(name: str) -> str | None:
    """The field a column header or key names, or None for one no format reads as a field.

    A plural matches its singular (`Questions`, `Answers`, `Queries`), unless the plural is itself a
    spelling of something else.
    """
    normal = normalize(name)
    found = _FIELD_BY_NAME.get(normal)
    if found is None and normal.endswith("ies") and len(normal) > 4:
        found = _FIELD_BY_NAME.get(normal[:-3] + "y")  # `Queries`
    if found is None and normal.endswith("s") and len(normal) > 2:
        found = _FIELD_BY_NAME.get(normal[:-1])
    return found


def spellings_of(key: str) -> tuple[str, ...]:
    return FIELDS_BY_KEY[key].spellings


_RUN_FIELD_BY_NAME: dict[str, str] = {
    normalize(spelling): field.key for field in RUN_FIELDS for spelling in field.spellings
}


def run_field_for(name: str) -> str | None:
    """The outputs file's field (`task`, `output`, or one of what the output cost:
    `latency_ms`, `tokens`, `cost`, `model`, `trace`) a column header or key names, or None."""
    return _RUN_FIELD_BY_NAME.get(normalize(name))
