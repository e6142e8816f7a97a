"""`python -m context_verifiers grade DATASET_FILE OUTPUTS.jsonl [--json] [--allow-python]`:
grade an agent's outputs locally or in CI, on the same code as the app, without the app.

The dataset file is read by the importer's checker (any file it reads); each line of the
outputs file is `{"task": "<task id>", "output": "<text>"}`. A task with no line is graded
as not answered (the agent's failure). Exit status: 0 graded, 1 the files had problems
(each named, as `check_dataset_file` names them) or a JUDGE_* setting cannot be read, 2 some
criteria ended in errors.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from context_verifiers.grading import DatasetResult, Graders, TaskResult, grade_tasks
from context_verifiers.judges import Judge, JudgeConfig, JudgeConfigError
from context_verifiers.views import MAX_FILE_VIEW_BYTES
from datasets_app import wording
from datasets_app.importing.checker import check_file
from datasets_app.importing.spec import (
    MAX_FILE_BYTES,
    MAX_TEXT_CHARS,
    CheckOptions,
    DatasetSpec,
    FileSpec,
    Problem,
    Rule,
)

EXIT_GRADED = 0
EXIT_PROBLEMS = 1
EXIT_ERRORS = 2

UNREADABLE = Rule("unreadable_file", "The file could not be read: {detail}.")
OUTPUTS_TOO_BIG = Rule("file_too_big", "The outputs file is larger than {limit} MiB.")
NOT_A_LINE_OBJECT = Rule(
    "not_an_output_line",
    'This line is not {{"task": "<task id>", "output": "<text>"}}: {detail}.',
)
UNKNOWN_TASK = Rule("unknown_task", "The dataset has no task {task}.")
REPEATED_TASK = Rule("repeated_task", "Task {task} already has an output, on line {first}.")
OUTPUT_TOO_LONG = Rule(
    "output_too_long", "This output is longer than {limit} characters; cut it or attach it."
)

_STATUS_MARKS = {"passed": "✓", "failed": "✗", "scored": "~", "error": "!", "skipped": "-"}


def _read_line(raw: str, number: int, name: str) -> tuple[str, str | None] | Problem:
    """One line's task id and output, or its problem."""
    try:
        item = json.loads(raw)
    except ValueError as exc:
        return NOT_A_LINE_OBJECT.at(name, line=number, detail=f"not JSON ({exc})")
    if not isinstance(item, dict) or not isinstance(item.get("task"), str):
        detail = '"task" must be the task\'s id, as text'
        return NOT_A_LINE_OBJECT.at(name, line=number, detail=detail)
    output = item.get("output")
    if output is not None and not isinstance(output, str):
        return NOT_A_LINE_OBJECT.at(name, line=number, detail='"output" must be text or null')
    if isinstance(output, str) and len(output) > MAX_TEXT_CHARS:
        return OUTPUT_TOO_LONG.at(name, line=number, limit=MAX_TEXT_CHARS)
    return item["task"], output


def read_outputs(
    source: IO[bytes], name: str, task_ids: Sequence[str]
) -> tuple[dict[str, str | None], list[Problem]]:
    """The outputs by task id, and every problem in the file (each on its line)."""
    data = source.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        return {}, [OUTPUTS_TOO_BIG.at(name, limit=MAX_FILE_BYTES >> 20)]
    known = set(task_ids)
    outputs: dict[str, str | None] = {}
    lines: dict[str, int] = {}
    problems: list[Problem] = []
    for number, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not raw.strip():
            continue
        read = _read_line(raw, number, name)
        if isinstance(read, Problem):
            problems.append(read)
            continue
        task_id, output = read
        if task_id not in known:
            problems.append(UNKNOWN_TASK.at(name, line=number, task=json.dumps(task_id)))
        elif task_id in lines:
            first = lines[task_id]
            problems.append(
                REPEATED_TASK.at(name, line=number, task=json.dumps(task_id), first=first)
            )
        else:
            lines[task_id] = number
            outputs[task_id] = output
    return outputs, problems


def zip_reader(path: Path) -> Callable[[FileSpec], bytes | None]:
    """Reads a task's attached files from the dataset's zip (links are not fetched)."""

    def read(spec: FileSpec) -> bytes | None:
        if spec.path is None or path.suffix.lower() != ".zip":
            return None
        # The checker bounded each member (10 MiB); a verifier sees the first 1 MiB.
        with zipfile.ZipFile(path) as archive, archive.open(spec.path) as member:
            return member.read(MAX_FILE_VIEW_BYTES + 1)

    return read


def _percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def _score(value: float | None) -> str:
    return "no score" if value is None else f"{value:.2f}"


def write_task(write: Callable[[str], None], task: TaskResult) -> None:
    write(
        f"{task.task}: score {_score(task.score.value)}, coverage {_percent(task.score.coverage)}"
    )
    for result in task.criteria:
        outcome = result.outcome
        mark = _STATUS_MARKS[outcome.status]
        score = f" {outcome.score:g}" if outcome.status == "scored" else ""
        code = f" [{outcome.code}]" if outcome.code and not outcome.graded else ""
        write(
            f"  {mark} {result.id} (weight {wording.weight(result.weight)}) "
            f"{outcome.status}{score}{code}: {outcome.reasoning}"
        )
        if outcome.detail and not outcome.graded:
            write(f"      {outcome.detail.splitlines()[-1][:300]}")
        for warning in outcome.warnings:
            write(f"      Warning: {warning}")


def write_total(write: Callable[[str], None], result: DatasetResult) -> None:
    count = len(result.tasks)
    write(
        f"Total: score {_score(result.score.value)}, coverage {_percent(result.score.coverage)}, "
        f"{count:,} task{'s' if count != 1 else ''}"
        + (f", {result.errors:,} criteria in error" if result.errors else "")
    )


def _problems(write: Callable[[str], None], problems: Sequence[Problem]) -> int:
    count = len(problems)
    write(f"{count:,} problem{'s' if count != 1 else ''}; nothing was graded:")
    for problem in problems:
        write(f"{wording.full(problem.to_json())}: {problem.message}")
    return EXIT_PROBLEMS


def _plan(path: Path, allow_python: bool) -> tuple[DatasetSpec | None, list[Problem]]:
    try:
        with path.open("rb") as source:
            checked = check_file(
                source, path.name, options=CheckOptions(python_checks_enabled=allow_python)
            )
    except OSError as exc:
        return None, [UNREADABLE.at(path.name, detail=exc.strerror or exc)]
    return checked.plan, list(checked.problems)


def grade(arguments: argparse.Namespace, write: Callable[[str], None]) -> int:
    dataset_path, outputs_path = Path(arguments.dataset), Path(arguments.outputs)
    plan, problems = _plan(dataset_path, arguments.allow_python)
    if plan is None:
        return _problems(write, problems)
    try:
        with outputs_path.open("rb") as source:
            outputs, problems = read_outputs(
                source, outputs_path.name, [task.id for task in plan.tasks]
            )
    except OSError as exc:
        problems = [UNREADABLE.at(outputs_path.name, detail=exc.strerror or exc)]
    if problems:
        return _problems(write, problems)
    try:
        config = JudgeConfig.from_env()
    except JudgeConfigError as exc:
        write(f"Cannot read the judge's settings: {exc}.")
        return EXIT_PROBLEMS
    graders = Graders(
        judge=Judge(config) if config.configured else None,
        allow_python=arguments.allow_python,
        read_file=zip_reader(dataset_path),
        concurrency=config.concurrency,
    )
    result = grade_tasks(
        plan, [(task, outputs.get(task.id)) for task in plan.tasks], graders=graders
    )
    if arguments.json:
        write(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        for task in result.tasks:
            write_task(write, task)
        write_total(write, result)
    return EXIT_ERRORS if result.errors else EXIT_GRADED


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="python -m context_verifiers")
    commands = main.add_subparsers(dest="command", required=True)
    command = commands.add_parser(
        "grade", help="Grade an agent's outputs against a dataset file's criteria."
    )
    command.add_argument("dataset", help="The dataset file (.json, .jsonl, .csv, .xlsx, .zip).")
    command.add_argument(
        "outputs", help='The outputs, one JSON line each: {"task": "<id>", "output": "<text>"}.'
    )
    command.add_argument("--json", action="store_true", help="Print one JSON document.")
    command.add_argument(
        "--allow-python",
        action="store_true",
        help="Run the dataset's Python checks (only ever in the sandbox).",
    )
    return main


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)

    def write(line: str) -> None:
        sys.stdout.write(line + "\n")

    return grade(arguments, write)
