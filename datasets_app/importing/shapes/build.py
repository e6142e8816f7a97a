"""Records into the page's tasks: each record's fields by the mapping, its name, the
warnings that count what was left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from datasets_app.importing.columns import METADATA_PREFIX, metadata_key
from datasets_app.importing.shapes.azure import _history
from datasets_app.importing.shapes.base import (
    CELLS_CUT,
    FOLLOW_UPS_LEFT_OUT,
    JUDGED_BY_TOOL,
    NOT_TEXT_VALUE,
    SAMPLE_CHARS,
    SAMPLE_CRITERIA,
    SAMPLE_SHOWN,
    UNANSWERABLE_LEFT_OUT,
    Record,
    Shape,
    ValueProblem,
    _parts,
)
from datasets_app.importing.shapes.mt_bench import USER_TURNS_KEY, _is_user_turns
from datasets_app.importing.shapes.prompt import LETTERS, _is_choices, compose_prompt
from datasets_app.importing.shapes.promptfoo import _promptfoo_assertions
from datasets_app.importing.shapes.rubrics import criteria_value
from datasets_app.importing.shapes.values import (
    _content_text,
    _kind,
    chat_prompt,
    is_chat,
    text_value,
)
from datasets_app.importing.spec import (
    MAX_METADATA_KEY_CHARS,
    MAX_METADATA_KEYS,
    Problem,
    name_from_prompt,
    shorten,
)


@dataclass
class Built:
    tasks: list[dict[str, Any]] = field(default_factory=list)
    # Where each task's record is: its JSON path, row or line.
    places: list[Record] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # The record each problem is on, in the same order.
    problem_records: list[Record] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    left_out: int = 0


def _is_unanswerable(values: Mapping[str, Any], expected_source: str | None) -> bool:
    if values.get("is_impossible") is True:
        return True
    if expected_source == "answers":
        answers = values.get("answers")
        texts = answers.get("text") if isinstance(answers, dict) else answers
        return isinstance(texts, list) and not texts
    return False


def _split_conversation(value: Any, source: str) -> dict[str, str]:
    """A whole conversation: its turns up to the last user turn are the prompt, the
    assistant's turns after it the expected answer."""
    if not is_chat(value):
        raise ValueProblem(NOT_TEXT_VALUE, source=source, kind=_kind(value), label="prompt")
    end = len(value)
    while end and value[end - 1].get("role") == "assistant":
        end -= 1
    task: dict[str, str] = {}
    if end:
        task["prompt"] = chat_prompt(value[:end], source)
    answers = [
        _content_text(m["content"], source, n) for n, m in enumerate(value[end:], start=end + 1)
    ]
    if answers:
        task["expected"] = "\n\n".join(answers)
    return task


def _task(values: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
    """One record as a canonical task. Raises ValueProblem for a value that cannot be one."""
    conversation = fields.get("prompt")
    task = _prompt_task(values, conversation, fields.get("expected"))
    task.update(_field_texts(values, fields, conversation))
    criteria = _criteria(values, fields)
    if criteria is not None:
        task["criteria"] = criteria
    if "assert" in values and not fields.get("expected"):
        _promptfoo_assertions(values["assert"], task, "assert")
    answer = values.get("expected")
    if isinstance(answer, dict) and "text" in answer and fields.get("expected") == "expected":
        task["expected"] = answer  # our own {"text", "verifier"}
    return task


def _prompt_task(
    values: Mapping[str, Any], conversation: str | None, expected_source: str | None
) -> dict[str, Any]:
    """The task's prompt (and, from a whole conversation, its expected answer)."""
    if not conversation:
        return {}
    if conversation == expected_source:
        return _split_conversation(values.get(conversation), conversation)
    prompt = _asked_prompt(values, conversation)
    return {"prompt": prompt} if prompt else {}


def _asked_prompt(values: Mapping[str, Any], conversation: str) -> str:
    """The prompt composed from its parts, after the earlier turns it follows, if any."""
    prompt = compose_prompt(values, _parts(conversation))
    history = _history(values) if prompt else None
    if history and history[0] not in _parts(conversation):
        # A follow-up question is asked after the turns it follows, as a chat prompt.
        key, messages = history
        prompt = chat_prompt([*messages, {"role": "user", "content": prompt}], key)
    return prompt


def _field_texts(
    values: Mapping[str, Any], fields: Mapping[str, str], conversation: str | None
) -> dict[str, str]:
    """The task's id, name and expected answer, each the text of its mapped source (an
    expected answer a whole conversation gave is not read again; a blank id is none)."""
    texts: dict[str, str] = {}
    for key in ("id", "name", "expected"):
        source = fields.get(key)
        if not source or (key == "expected" and source == conversation):
            continue
        text = text_value(values.get(source), key, source)
        if text is not None and (key != "id" or text.strip()):
            texts[key] = text
    return texts


def _criteria(values: Mapping[str, Any], fields: Mapping[str, str]) -> list[Any] | None:
    """The task's criteria: its mapped criterion's, or else the record's own `criteria`
    list; None when it has neither."""
    if "criterion" not in fields:
        own = values.get("criteria")
        return own if isinstance(own, list) else None
    criterion = fields["criterion"]
    if not criterion:
        return None
    # A score rubric's criterion comes with the reference answer its judge reads.
    rubric, *with_it = _parts(criterion)
    if values.get(rubric) in (None, "", []):
        return None
    weight = values.get(fields["weight"]) if "weight" in fields else None
    reference = text_value(values.get(with_it[0]), "expected", with_it[0]) if with_it else None
    return criteria_value(values[rubric], weight, rubric, reference=reference)


def _task_name(
    values: Mapping[str, Any], prompt_parts: Sequence[str], prompt: str, named_by: str = ""
) -> str:
    """A passage and its question are named by the question, not by the passage or the
    options; a conversation by its question, and the user's turns alone (MT-Bench) by the
    first, which sets the task (the later turns follow it up). A shape's `named_by` key,
    when the record has its text, names the task instead."""
    named = values.get(named_by) if named_by else None
    if isinstance(named, str) and named.strip():
        return name_from_prompt(named)
    question = next(
        (p for p in reversed(prompt_parts) if not _is_choices(p) and p not in LETTERS),
        prompt_parts[-1] if prompt_parts else "",
    )
    asked = values.get(question)
    if question == USER_TURNS_KEY and isinstance(asked, list) and _is_user_turns(asked):
        opening = asked[0]["content"]
        if isinstance(opening, str):
            return name_from_prompt(opening)
    return name_from_prompt(asked if isinstance(asked, str) else prompt)


def build_tasks(
    records: Sequence[Record],
    fields: Mapping[str, str],
    *,
    file_name: str,
    shape: Shape | None = None,
) -> Built:
    """Each record as a canonical task; a value that cannot be one is a problem on its record.

    A task with nothing to grade it by gets the `shape`'s own criterion, when it has one.
    """
    built = Built()
    judged = 0
    prompt_parts = _parts(fields["prompt"]) if "prompt" in fields else []
    named_by = shape.named_by if shape else ""
    judged_by = shape.judged_by if shape else ""
    for record in records:
        if _is_unanswerable(record.values, fields.get("expected")):
            built.left_out += 1
            continue
        try:
            task = _record_task(record, fields)
        except ValueProblem as exc:
            problem = exc.rule.at(file_name, row=record.row, line=record.line, **exc.params)
            built.problems.append(problem)
            built.problem_records.append(record)
            continue
        if "prompt" in task and "name" not in task:
            task["name"] = _task_name(record.values, prompt_parts, task["prompt"], named_by)
        if judged_by and not task.get("expected") and not task.get("criteria"):
            task["criteria"] = [{"criterion": judged_by}]
            judged += 1
        built.tasks.append(task)
        built.places.append(record)
    built.warnings.extend(_build_warnings(built, judged, shape, file_name))
    return built


def _record_task(record: Record, fields: Mapping[str, str]) -> dict[str, Any]:
    """A record's task. Raises ValueProblem for a record with cells cut or a value that
    cannot be one."""
    if record.cut:
        raise ValueProblem(CELLS_CUT, cells=", ".join(record.cut))
    return _task(record.values, fields)


def _build_warnings(
    built: Built, judged: int, shape: Shape | None, file_name: str
) -> list[Problem]:
    """The warnings that count the tasks left out, judged by the tool's own criterion and
    with their later turns left out, in that order."""
    warnings: list[Problem] = []
    if built.left_out:
        warnings.append(UNANSWERABLE_LEFT_OUT.at(file_name, count=built.left_out))
    if judged and shape:
        warnings.append(JUDGED_BY_TOOL.at(file_name, count=judged, criterion=shape.judged_by))
    warnings.extend(_follow_ups_left_out(built.places, shape, file_name))
    return warnings


def _follow_ups_left_out(
    places: Sequence[Record], shape: Shape | None, file_name: str
) -> list[Problem]:
    """The warning counting the tasks whose later turns the shape left out, if any."""
    key = shape.follow_ups if shape else ""
    count = sum(1 for record in places if key and record.values.get(key))
    return [FOLLOW_UPS_LEFT_OUT.at(file_name, count=count)] if count else []


def ignored_sources(
    sources: Sequence[str], fields: Mapping[str, str], *, handled: Iterable[str] = ()
) -> list[str]:
    """Sources no field reads, named by their top-level key when none of its keys is read."""
    used = {part for source in fields.values() for part in _parts(source)} | set(handled)
    ignored: dict[str, None] = {}
    for source in sources:
        if source in used:
            continue
        parent = source.split(".", 1)[0]
        if "." in source and not any(u.startswith(parent + ".") for u in used):
            ignored[parent] = None
        elif "." in source:
            ignored[source] = None
        else:
            ignored[source] = None
    return list(ignored)


# The keys other tools keep beside a record's prompt that say what a task is, not what it
# asks or expects: kept as the task's metadata. The names are `columns.METADATA_COLUMNS`,
# which sheets' columns share (`metadata_key`), and any `metadata` object, Langfuse's and
# LangSmith's, is kept key by key.
METADATA_OBJECT = "metadata"


def metadata_sources(ignored: Sequence[str], records: Sequence[Record], *, chat: bool) -> list[str]:
    """Which of the keys no field reads are kept as each task's metadata: a `metadata`
    object, the keys that name one (`category`, `difficulty`, `source`, `split`, `context`,
    `tags`) and, beside a chat's messages, every other top-level key (a chat record's extra
    fields), as many as a task can keep. But for a `metadata` object, a key is kept when
    every record's value is a label (text, a number, true or false, or a list of them): a
    document's paragraphs or a model's completions are evidence, still named as not
    imported."""
    kept = [
        source
        for source in ignored
        if source == METADATA_OBJECT
        or (
            (metadata_key(source) or (chat and _key_like(source)))
            and all(_is_label(_value_of(record, source)) for record in records)
        )
    ]
    if len(kept) > MAX_METADATA_KEYS:
        return [source for source in kept if source == METADATA_OBJECT or metadata_key(source)]
    return kept


def _key_like(source: str) -> bool:
    return source.isprintable() and 0 < len(source) <= MAX_METADATA_KEY_CHARS


def _is_label(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(item, str | int | float | bool) for item in value)
    return value is None or isinstance(value, str | int | float | bool)


def _value_of(record: Record, source: str) -> Any:
    raw = record.raw or {}
    return raw[source] if source in raw else record.values.get(source)


def record_metadata(record: Record, sources: Iterable[str]) -> dict[str, Any]:
    """A record's values of `sources` as metadata: a `metadata` object's keys as they are,
    another key under its name (`Category` as category), an absent or null value left out."""
    metadata: dict[str, Any] = {}
    for source in sources:
        value = _value_of(record, source)
        if source == METADATA_OBJECT and isinstance(value, dict):
            metadata.update((k, v) for k, v in value.items() if v is not None)
        elif value is not None:
            name = source[len(METADATA_PREFIX) :] if source.startswith(METADATA_PREFIX) else source
            metadata[metadata_key(source) or name] = value
    return metadata


def sample_of(tasks: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The first tasks as the mapping step shows them, each text cut to what it shows
    (the sample is kept with the upload's check, so a long prompt must not bloat it)."""
    shown = []
    for task in tasks[:SAMPLE_SHOWN]:
        expected = task.get("expected")
        if isinstance(expected, dict):
            expected = expected.get("text")
        criteria = [c.get("criterion") for c in task.get("criteria") or [] if isinstance(c, dict)]
        shown.append(
            {
                "id": _cut(task.get("id")),
                "prompt": _cut(task.get("prompt")),
                "expected": _cut(expected),
                "criteria": [_cut(c) for c in criteria[:SAMPLE_CRITERIA]],
            }
        )
    return tuple(shown)


def _cut(value: Any) -> str:
    return shorten(value, SAMPLE_CHARS, one_line=False) if isinstance(value, str) else ""
