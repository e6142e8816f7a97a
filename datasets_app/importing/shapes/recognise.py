"""Which key fills which field: the shapes first, then the names in `aliases`, then a
guess from the values.

Decisions (also in docs/field-names.md):
- A nested prompt's answer is the one beside it: when the prompt is `input.input` and
  `input` also names an expected answer, that is the answer; the top-level `expected` of
  Braintrust's scorer datasets is the score a grader should give.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from datasets_app.importing.aliases import FIELD_KEYS, field_for
from datasets_app.importing.columns import (
    field_for_header,
)
from datasets_app.importing.shapes.base import SAMPLE_RECORDS, Record, Shape, _alias_fields
from datasets_app.importing.shapes.prompt import MULTIPLE_CHOICE, _choice_sources
from datasets_app.importing.shapes.refusals import _RESULT_KEYS
from datasets_app.importing.shapes.registry import SHAPES
from datasets_app.importing.shapes.rubrics import is_requirement_tree
from datasets_app.importing.shapes.values import _scalar_text, is_chat
from datasets_app.importing.spec import (
    signature_of,
)


def _sources(records: Sequence[Record]) -> list[str]:
    seen: dict[str, None] = {}
    for record in records[:SAMPLE_RECORDS]:
        seen.update(dict.fromkeys(record.values))
    return list(seen)


def _answer_beside(prompt: str, sources: Sequence[str]) -> str | None:
    """The key beside a nested prompt that names an expected answer: that prompt's answer.

    Braintrust's scorer datasets hold the question, a model's output and the reference in
    `input` (`input.input`, `input.output`, `input.expected`); their top-level `expected`
    is the score a grader should give, not an answer to the question.
    """
    parent, dot, _ = prompt.rpartition(".")
    if not dot or " + " in prompt:
        return None
    siblings = (s for s in sources if s.startswith(parent + ".") and s != prompt)
    return next((s for s in siblings if field_for(s[len(parent) + 1 :]) == "expected"), None)


def _text_columns(records: Sequence[Record], sources: Sequence[str]) -> list[tuple[str, float]]:
    """Sources holding text (or chat) in most records, with their mean length."""
    found = []
    for source in sources:
        if (
            source.startswith("__")
            or field_for_header(source) not in (None, *FIELD_KEYS)
            or source.rsplit(".", 1)[-1].lower() in _RESULT_KEYS
        ):
            # promptfoo's own columns, our verifier and file columns and what a model
            # answered are never the text to guess a prompt or an answer from.
            continue
        lengths = []
        for record in records[:SAMPLE_RECORDS]:
            value = record.values.get(source)
            if isinstance(value, str) and value.strip():
                lengths.append(len(value))
            elif isinstance(value, list) and is_chat(value):
                lengths.append(sum(len(str(m.get("content"))) for m in value))
        if lengths and len(lengths) * 2 >= min(len(records), SAMPLE_RECORDS):
            found.append((source, sum(lengths) / len(lengths)))
    return found


# Words that suggest a column's role, in the languages people's spreadsheets use. They only
# pre-fill the mapping step, which the person confirms: they are not `aliases`, which
# import without asking.
_PROMPT_HINTS = (
    "question",
    "problem",
    "task",
    "instruction",
    "query",
    "prompt",
    "input",
    "问题",
    "問題",
    "题目",
    "提问",
    "质问",
    "質問",
    "질문",
    "вопрос",
    "задани",
    "pregunta",
    "frage",
    "domanda",
    "pergunta",
    "vraag",
    "soru",
    "pytanie",
)
_EXPECTED_HINTS = (
    "expected",
    "gold",
    "correct",
    "label",
    "target",
    "reference",
    "answer",
    "solution",
    "output",
    "response",
    "réponse",
    "reponse",
    "respuesta",
    "antwort",
    "risposta",
    "resposta",
    "antwoord",
    "cevap",
    "odpowied",
    "答案",
    "回答",
    "答え",
    "解答",
    "정답",
    "답변",
    "ответ",
    "решени",
)


def _hinted(source: str, hints: Sequence[str]) -> bool:
    name = source.rsplit(".", 1)[-1].lstrip("_").lower()
    return any(hint in name for hint in hints)


def _first_hinted(texts: Sequence[tuple[str, float]], hints: Sequence[str]) -> str | None:
    """The first text column whose name suggests the role `hints` are words for."""
    return next((s for s, _ in texts if _hinted(s, hints)), None)


def _guess_expected(texts: Sequence[tuple[str, float]], *, has_prompt: bool) -> str | None:
    """The expected answer's column: one named like an answer, else the shortest text when
    a prompt is known or another text is left to be it."""
    hinted = _first_hinted(texts, _EXPECTED_HINTS)
    if hinted is not None:
        return hinted
    if len(texts) >= 2 or (texts and has_prompt):
        return min(texts, key=lambda item: item[1])[0]
    return None


def _guess_prompt(texts: Sequence[tuple[str, float]]) -> str | None:
    """The prompt's column: one named like a question, else the longest text."""
    if not texts:
        return None
    hinted = _first_hinted(texts, _PROMPT_HINTS)
    return hinted if hinted is not None else max(texts, key=lambda item: item[1])[0]


def guess_fields(
    records: Sequence[Record], sources: Sequence[str], known: dict[str, str]
) -> dict[str, str]:
    """The best guess for a prompt and an expected answer the names did not give.

    A column whose name suggests the role (in several languages: `expected_category`,
    `solution`, `答案`, `réponse`) first; else the expected answer is the shortest text and
    the prompt the longest text left.
    """
    fields = dict(known)
    texts = [
        (s, length) for s, length in _text_columns(records, sources) if s not in fields.values()
    ]
    graded = "expected" in fields or "criterion" in fields or "assert" in sources
    if not graded:
        expected = _guess_expected(texts, has_prompt="prompt" in fields)
        if expected is not None:
            fields["expected"] = expected
            texts = [(s, length) for s, length in texts if s != expected]
    prompt = _guess_prompt(texts) if "prompt" not in fields else None
    if prompt is not None:
        fields["prompt"] = prompt
    return fields


@dataclass
class Recognised:
    shape: str
    fields: dict[str, str]
    how: str
    # What the shape and the names said, before any guess or memory.
    named: dict[str, str]
    sources: list[str]
    # The shape that recognised the records, if one did.
    matched: Shape | None = None


def _not_a_label(key: str, value: Any) -> bool:
    """Whether a key that names an id or a name by its spelling holds something else: the
    list of titles under HotpotQA's `supporting_facts.title`, as the Hugging Face export
    writes it, is no task's name."""
    return key in ("id", "name") and value is not None and _scalar_text(value) is None


def _named_fields(
    sources: Sequence[str], fields: Mapping[str, str], first: Mapping[str, Any]
) -> dict[str, str]:
    """The fields the sources' names give that the shape did not."""
    by_name = {
        k: v
        for k, v in _alias_fields(sources, fields.values()).items()
        if k not in fields and not _not_a_label(k, first.get(v))
    }
    if "expected" in by_name:
        by_name["expected"] = (
            _answer_beside(fields.get("prompt", by_name.get("prompt", "")), sources)
            or by_name["expected"]
        )
    if is_requirement_tree(first.get(fields.get("criterion", ""))):
        # A requirement tree weighs its own leaves: a `weight` beside it is its root's, read
        # with the tree (`read_records`), not the weight of each criterion.
        by_name.pop("weight", None)
    return by_name


def _with_choices(
    name: str, fields: dict[str, str], keys: set[str], first: Mapping[str, Any]
) -> str:
    """Join a multiple-choice question's options to its prompt (`question + A + B`);
    returns the shape's name, then saying so."""
    choices = _choice_sources(keys, first)
    prompt = fields.get("prompt")
    if not choices or not prompt or " + " in prompt or prompt in choices:
        return name
    fields["prompt"] = " + ".join([prompt, *choices])
    return f"{name}, {MULTIPLE_CHOICE}" if name else f"{MULTIPLE_CHOICE} ({prompt} + options)"


def _with_given(fields: Mapping[str, str], given: Mapping[str, str]) -> dict[str, str]:
    """The person's mapping, and the recognised fields whose sources it does not use."""
    chosen = {k: v for k, v in fields.items() if v not in given.values()}
    chosen.update(given)
    return chosen


def _is_graded_prompt(fields: Mapping[str, str], keys: set[str], shape: Shape | None) -> bool:
    """Whether the fields name a prompt and something that grades it: enough to import
    without remembering or guessing."""
    graded = "expected" in fields or "criterion" in fields or keys & {"criteria", "assert"}
    return "prompt" in fields and bool(graded or (shape and shape.judged_by))


def recognise(
    records: Sequence[Record],
    *,
    given: Mapping[str, str] | None = None,
    remembered: Mapping[str, Mapping[str, str]] | None = None,
) -> Recognised:
    """Which source fills which field: given > a shape > names > remembered > guessed."""
    sources = _sources(records)
    keys = set(sources)
    first = records[0].values if records else {}
    shape = next((s for s in SHAPES if s.matches(keys, first)), None)
    fields = dict(shape.fields(keys, first)) if shape else {}
    fields.update(_named_fields(sources, fields, first))
    name = _with_choices(shape.name if shape else "", fields, keys, first)
    if given:
        return Recognised(name, _with_given(fields, given), "given", fields, sources, shape)
    if _is_graded_prompt(fields, keys, shape):
        return Recognised(name, fields, "recognised", fields, sources, shape)
    memory = (remembered or {}).get(signature_of(sources))
    if memory:
        return Recognised(name, dict(memory), "remembered", fields, sources)
    guessed = guess_fields(records, sources, fields)
    if guessed == fields:
        # Nothing to guess from: build what the names say, and let the validator say
        # what each task lacks, on its line.
        return Recognised(name, fields, "recognised", fields, sources)
    return Recognised(name, guessed, "guessed", fields, sources)
