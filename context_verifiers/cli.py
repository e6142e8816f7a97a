"""`python -m context_verifiers grade DATASET_FILE OUTPUTS.jsonl [--json] [--allow-python]`:
grade an agent's outputs locally or in CI, on the same code as the app, without the app.

The dataset file is read by the importer's checker (any file it reads); the outputs file
is read as a run reads it (`importing.outputs`): `.jsonl` lines `{"task": "<task id>",
"output": "<text>"}`, or a `.csv` with task and output columns. A task with no line is graded
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
from dataclasses import replace
from pathlib import Path

from context_verifiers.grading import (
    DatasetResult,
    Graders,
    TaskResult,
    grade_tasks,
    zipped_output,
)
from context_verifiers.judges import Judge, JudgeConfig, JudgeConfigError
from context_verifiers.views import MAX_FILE_VIEW_BYTES, OutputView
from datasets_app import wording
from datasets_app.importing.archive import open_archive
from datasets_app.importing.checker import check_file
from datasets_app.importing.outputs import OutputsFile
from datasets_app.importing.outputs_zip import read_outputs_file
from datasets_app.importing.spec import (
    MAX_FILE_BYTES,
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

_STATUS_MARKS = {"passed": "✓", "failed": "✗", "scored": "~", "error": "!", "skipped": "-"}


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


def _answers(read: OutputsFile, path: Path) -> dict[str, OutputView | str | None]:
    """Each task's answer: its text, with the files a zip of outputs gave it."""
    answers: dict[str, OutputView | str | None] = {}
    with_files = {task: output for task, output in read.outputs.items() if output.files}
    for task, output in read.outputs.items():
        answers[task] = output.output
    if not with_files:
        return answers
    with open_archive(path) as zf:
        for task, output in with_files.items():
            answers[task] = zipped_output(output.output or "", output.files, zf)
    return answers


def _with_costs(result: DatasetResult, read: OutputsFile) -> DatasetResult:
    """Each task with what its outputs line said the agent's run cost, as a run keeps it."""
    tasks = []
    for task in result.tasks:
        output = read.outputs.get(task.task)
        tasks.append(replace(task, agent=output.costs) if output else task)
    return replace(result, tasks=tuple(tasks))


def grade(arguments: argparse.Namespace, write: Callable[[str], None]) -> int:
    dataset_path, outputs_path = Path(arguments.dataset), Path(arguments.outputs)
    plan, problems = _plan(dataset_path, arguments.allow_python)
    if plan is None:
        return _problems(write, problems)
    try:
        with outputs_path.open("rb") as source:
            data = source.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return _problems(write, [UNREADABLE.at(outputs_path.name, detail=exc.strerror or exc)])
    read = read_outputs_file(data, outputs_path.name, {task.id for task in plan.tasks})
    if read.problems:
        return _problems(write, read.problems)
    outputs = _answers(read, outputs_path)
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
    result = _with_costs(result, read)
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
        "outputs",
        help='The outputs: .jsonl lines {"task": "<id>", "output": "<text>"}, or a .csv.',
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
