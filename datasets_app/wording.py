"""Words people read: where a problem is, weights and counts, written once for every screen
and for the commands' output.

A problem's `field` is a path in the dataset document (`tasks[1].criteria[0].weight`), which
programs read in `--json` and the problems CSV; people read "task 2 (id b) › criterion 1 ›
weight", counted from 1, after the row or line. Pure Python, like the checker it words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from datasets_app.importing.spec import path_parts, shorten

SEPARATOR = " › "

# List keys of the dataset format, and what one item of each is called.
_ITEM_NAMES = {
    "tasks": "task",
    "criteria": "criterion",
    "inputFiles": "input file",
    "expectedFiles": "expected file",
    "anchors": "anchor",
    "gold": "gold span",
}

# The same lists, named as a whole.
_LIST_NAMES = {
    "tasks": "tasks",
    "criteria": "criteria",
    "inputFiles": "input files",
    "expectedFiles": "expected files",
    "anchors": "anchors",
    "gold": "gold spans",
}


def where(problem: Mapping[str, Any]) -> str:
    """The file and the row or line a problem is on: `quiz.csv, row 4`."""
    parts = [problem.get("file") or "the file"]
    if problem.get("row") is not None:
        parts.append(f"row {problem['row']:,}")
    if problem.get("line") is not None:
        parts.append(f"line {problem['line']:,}")
    return ", ".join(parts)


def place(problem: Mapping[str, Any]) -> str:
    """The value a problem is about, as a person counts: `task 2 (id b) › criterion 1 ›
    weight`, or a column's name; empty when the problem is about the whole row or file."""
    field = problem.get("field")
    if not field:
        return ""
    parts = path_parts(field)
    if parts is None:  # a column, as the file's header spells it
        return field
    words: list[str] = []
    for position, part in enumerate(parts):
        if isinstance(part, str):
            numbered = position + 1 < len(parts) and not isinstance(parts[position + 1], str)
            # A list named as a whole ("This task has 11 expected files") in words too.
            words.append(part if numbered else _LIST_NAMES.get(part, part))
            continue
        name = words.pop() if words and position and isinstance(parts[position - 1], str) else ""
        words.append(_item(name, part, problem, top_level=position == 1))
    return SEPARATOR.join(words)


def _item(name: str, index: int, problem: Mapping[str, Any], *, top_level: bool) -> str:
    noun = _ITEM_NAMES.get(name)
    if noun is None:
        return f"{name} item {index + 1:,}" if name else f"item {index + 1:,}"
    text = f"{noun} {index + 1:,}"
    if name == "tasks" and problem.get("task"):
        task_id = str(problem["task"])
        # An id can be 200 characters; enough of it to recognise the task.
        text += f" (id {shorten(task_id, 40, one_line=False)})"
    # Criteria at the top of the path are the dataset's for every task, unless the path was
    # written from inside a task: a .jsonl line, or an eval-set item (the problem then names
    # its task).
    file = str(problem.get("file") or "")
    inside_a_task = problem.get("task") or file.lower().endswith(".jsonl")
    if name == "criteria" and top_level and not inside_a_task:
        text += " for every task"
    return text


def full(problem: Mapping[str, Any]) -> str:
    """Where, then the value: `r.json, line 1 › task 2 (id b) › criterion 1 › weight`."""
    value = place(problem)
    return where(problem) + (SEPARATOR + value if value else "")


def weight(value: float | int | None) -> str:
    """A weight as every screen prints it: 20, 3.5, 0.33, 1,000 (two decimals at most)."""
    if value is None:
        return "1"
    text = f"{value:,.2f}".rstrip("0").rstrip(".")
    # A tiny positive weight still reads as itself, not as 0.
    return text if text != "0" or value == 0 else f"{value:g}"


# What goes in each spreadsheet column, as docs/csv-columns.md says it; the help page lists
# these beside each column's accepted names, and the import dialog links a problem about a
# column to its line there.
COLUMN_HELP: dict[str, str] = {
    "task_id": (
        "The task's id. Rows that repeat it one after another are one task. Blank: task-1, "
        "task-2, … in file order."
    ),
    "name": "The task's name. Blank: the first line of the prompt.",
    "prompt": "What the agent is asked. Required.",
    "expected": "The right answer, kept exactly as written (line breaks and spaces included).",
    "expected_verifier": (
        "How to check the expected answer: exact_match, llm_judge, agent_judge or "
        "code_verifier. Blank: an agent judge scores it from 0 to 1."
    ),
    "expected_verifier_output_type": "float (a score from 0 to 1) or boolean (pass or fail).",
    "expected_verifier_instructions": "Instructions for a judge of the expected answer.",
    "expected_verifier_code": "The Python check, for code_verifier: defines verify(task, output).",
    "input_files": (
        "Files given to the agent: one per line in the cell (not separated by |, which file "
        "names can contain). https:// links, or paths inside a .zip."
    ),
    "expected_files": "Files the answer should match, the same way as input files.",
    "criterion_id": "The criterion's id. Blank: c1, c2, …",
    "criterion": "What a good answer must do.",
    "weight": "A number; blank counts as 1. Write decimals with a point (0.5).",
    "verifier": (
        "How to check the criterion (exact_match, llm_judge, agent_judge or code_verifier). "
        "Blank: the default judge."
    ),
    "verifier_output_type": "float (a score from 0 to 1) or boolean (pass or fail).",
    "verifier_instructions": (
        "Instructions for a judge; may use {{criterion}}, {{prompt}}, {{output}} and {{expected}}."
    ),
    "verifier_code": "The Python check, for code_verifier: defines verify(task, output).",
}


# --- How tasks are graded, in people's words ---------------------------------------------
# The file's keys (`expectedAnswerVerifier`, `agent_judge`) are for programs; every screen
# (the settings page, the task form and page, the admin, the help page) says them this way.

# Each verifier kind: its name on screens, and what it does, said where it is chosen.
VERIFIER_KIND_NAMES: dict[str, str] = {
    "exact_match": "Exact match",
    "llm_judge": "LLM judge",
    "agent_judge": "Agent judge",
    "code_verifier": "Python check",
}
VERIFIER_KIND_HELP: dict[str, str] = {
    "exact_match": (
        "The answer passes only if it is the expected answer character for character "
        "(spaces and case included). No judge is asked."
    ),
    "llm_judge": (
        "A language model reads the answer with the instructions (by default: does the answer "
        "meet this criterion?) and says pass or fail, or gives a score from 0 to 1."
    ),
    "agent_judge": (
        "A model compares the answer with the expected answer (and the task's text files) "
        "and decides whether it says the same facts: all of them, fewer, more, or something "
        "that disagrees. Same facts score 1, fewer 0.4, more 0.6, a disagreement 0."
    ),
    "code_verifier": (
        "Your Python function verify(task, output) grades the answer, in a sandbox that "
        "reaches no network or file. Graded only while an administrator has Python checks on."
    ),
}
OUTPUT_TYPE_NAMES: dict[str, str] = {"float": "Score from 0 to 1", "boolean": "Pass or fail"}

# The dataset's two settings: a heading, and what grades when it is left blank.
EXPECTED_ANSWER_SETTING = "How answers are compared with the expected answer"
EXPECTED_ANSWER_SETTING_BLANK = (
    "Left as the default: an agent judge compares the answer with the expected one and "
    "scores it from 0 to 1."
)
DEFAULT_VERIFIER_SETTING = "How criteria are graded when they name no verifier"
DEFAULT_VERIFIER_SETTING_BLANK = (
    "Left as the default: an LLM judge decides, for each criterion, whether the answer meets "
    "it (pass or fail)."
)
# What the form's kind list calls "no kind of its own".
KIND_DEFAULT_FOR_DATASET = "Dataset default"
KIND_DEFAULT_FOR_SETTING = "Default"
# A task's or criterion's verifier left to the dataset: what the form says, and the task
# page after "Checked by".
ANSWER_LEFT_TO_DATASET = (
    f"Checked as the dataset’s Settings say under “{EXPECTED_ANSWER_SETTING}” (unless "
    "changed there: an agent judge, 0 to 1)."
)
CRITERION_LEFT_TO_DATASET = (
    f"Checked as the dataset’s Settings say under “{DEFAULT_VERIFIER_SETTING}” (unless "
    "changed there: an LLM judge, pass or fail)."
)


def verifier_kind(kind: str | None) -> str:
    """`agent_judge` as people read it: Agent judge (an unknown kind as it is written)."""
    return VERIFIER_KIND_NAMES.get(kind or "", kind or "")


def output_type(value: str | None) -> str:
    """`boolean` as people read it: Pass or fail."""
    return OUTPUT_TYPE_NAMES.get(value or "", value or "")
