"""Azure AI evaluation data and Prompt flow's chat data and checklists.

Decisions (also in docs/field-names.md):
- Azure AI and Prompt flow's `__outputs.<name>` keys hold what the app under test returned:
  never a field by name (`__outputs.answer` is no expected answer), and a file of them
  with nothing else to grade by is refused as a run's results.
- A follow-up question is asked after the turns its record keeps (Prompt flow's
  `chat_history`, as messages or {"inputs", "outputs"} pairs; Giskard's
  `conversation_history`): the turns and the question make one chat prompt (`values`).
- A tool's shape outranks the names: the results of Azure's RAG chat evaluator keep the
  app's own `answer` beside the ground `truth`, and only `truth` grades. A spreadsheet whose
  header `columns` would read (`answer` as the expected answer) is renamed as the shape says.
- Prompt flow's checklist `statements` (`{"correctness": "should explain what's ChatGPT",
  "consise": ...}`, beside a `question` and its `chat_history`) are the task's criteria, one
  per statement, its name the criterion's id, in the file's order. Each weighs 1: the file
  gives no weights and its eval-checklist flow checks every statement on its own, so none
  counts more than another. They are checked by the dataset's default verifier: the 1–5
  score that flow asks its judge for is in the flow, not in the file, and a statement reads
  as a check an answer meets or not ("result should be 2"). The question (after its chat
  history) is the prompt; no expected answer is made up. The eval-checklist flow's own data
  (`answer` + `statements`, no question) is what an app answered, and is refused as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from datasets_app.importing.aliases import field_for
from datasets_app.importing.shapes.base import Shape
from datasets_app.importing.shapes.rubrics import STATEMENTS_KEY, named_checks
from datasets_app.importing.shapes.values import _is_message

# Prompt flow's chat flows check an answer against `statements`, each by name (its
# eval-checklist flow): they are the criteria, asked after any `chat_history`.
PROMPT_FLOW_CHECKLIST = Shape(
    "Prompt flow checklist (question + statements → criteria)",
    lambda keys, first: "question" in keys and bool(named_checks(first.get(STATEMENTS_KEY))),
    lambda keys, first: (
        {"prompt": "question", "criterion": STATEMENTS_KEY}
        | ({"expected": "ground_truth"} if "ground_truth" in keys else {})
    ),
    help=(
        'The chat flex flows\' `statements` (`{"correctness": "should explain what\'s '
        "ChatGPT\", …}`): each statement is one criterion, in the file's order, its name "
        "the criterion's id, weight 1, checked by the dataset's default verifier (Prompt "
        "flow's eval-checklist flow checks each statement on its own, and the 1–5 score "
        "its judge gives is in the flow, not the file). The `question`, after its "
        "`chat_history`, is the prompt; no expected answer is made up."
    ),
    taught_by="promptflow/chat_basic_data.jsonl",
)


# Prompt flow's chat data: its `ground_truth`, when there is one, grades (an `answer`
# beside it is what the flow said); the names say the rest.
PROMPT_FLOW_CHAT = Shape(
    "Prompt flow chat data (question + chat_history)",
    lambda keys, first: "question" in keys and "chat_history" in keys,
    lambda keys, first: (
        {"prompt": "question"} | ({"expected": "ground_truth"} if "ground_truth" in keys else {})
    ),
    help=(
        "A follow-up `question` is asked after its `chat_history` (messages, or "
        '`{"inputs", "outputs"}` pairs), as a chat prompt; `ground_truth`, when there is '
        "one, is the expected answer, and an `answer` beside it is what the flow said."
    ),
    taught_by="promptflow/generated_qa_pf_conv.jsonl",
)


# Azure's RAG samples write the ground truth as `truth` (with a `question`, or a `query`
# as Azure AI Foundry's evaluators name it), and the evaluator's results keep the app's
# own `answer` beside it: the shape, not the names, says which one grades.
AZURE_AI = Shape(
    "Azure AI evaluation data (question or query + truth)",
    lambda keys, first: "truth" in keys and bool(keys & {"question", "query"}),
    lambda keys, first: {
        "prompt": "question" if "question" in keys else "query",
        "expected": "truth",
    },
    help=(
        "A tool's shape outranks the names: Azure's RAG samples write the ground truth as"
        " `truth` (with a `question`, or a `query` as Azure AI Foundry's evaluators name "
        "it), and the evaluator's results keep the app's own `answer` beside it. `truth` "
        "is the expected answer and `answer` is named as not imported. `__outputs.<name>`"
        " keys hold what the app under test returned: never a field by name."
    ),
    taught_by="azure_ai_rag_chat_evaluator/qa.excerpt.jsonl",
)


# Keys holding the turns before a record's question: Prompt flow's `chat_history` (a list
# of {"inputs", "outputs"} pairs, or of messages) and Giskard's `conversation_history`.
HISTORY_KEYS = ("chat_history", "conversation_history")


def _pair_side_text(side: Any, field_key: str) -> Any:
    """The text of one side of a Prompt flow turn: the key that names the field, else the
    only value (`{"question": ...}`, `{"answer": ...}`, `{"ground_truth": ...}`)."""
    if not isinstance(side, dict) or not side:
        return side
    named = [value for key, value in side.items() if field_for(key) == field_key]
    if named:
        return named[0]
    return next(iter(side.values())) if len(side) == 1 else side


def _history(values: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
    """The earlier turns a record's question follows, as chat messages, and their key."""
    key = next((k for k in HISTORY_KEYS if isinstance(values.get(k), list) and values[k]), None)
    if key is None:
        return None
    messages: list[Any] = []
    for turn in values[key]:
        if isinstance(turn, dict) and not _is_message(turn) and "inputs" in turn:
            messages.append({"role": "user", "content": _pair_side_text(turn["inputs"], "prompt")})
            if "outputs" in turn:
                content = _pair_side_text(turn["outputs"], "expected")
                messages.append({"role": "assistant", "content": content})
        else:
            messages.append(turn)
    return key, messages
