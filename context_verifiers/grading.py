"""How a task is graded: the page's rules, each in one place, and the one way to grade.

Which checks a task has comes from the importer's own rules (`graded_as_rubric`, the
settings' `expectedAnswerVerifier` and `defaultVerifier`), so that a task grades as it
imported. Each check runs the verifier its kind names (`VERIFIERS`, a table) and ends in
an `Outcome`; `scoring` makes the task's and the dataset's score of them.
"""

from __future__ import annotations

import threading
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from context_verifiers import outcome as reasons
from context_verifiers.judges import Judge, JudgeConfig, render_prompt
from context_verifiers.outcome import Outcome
from context_verifiers.scoring import Score, dataset_score, task_score
from context_verifiers.templates import UnknownPlaceholders
from context_verifiers.verdict import Verdict
from context_verifiers.views import (
    MAX_FILE_VIEW_BYTES,
    CriterionView,
    FileView,
    OutputView,
    TaskView,
)
from datasets_app.importing.outputs import OutputFile
from datasets_app.importing.outputs_zip import file_starts
from datasets_app.importing.spec import (
    EXPECTED_ANSWER_CRITERION_ID,
    EXPECTED_ANSWER_CRITERION_TEXT,
    DatasetSpec,
    FileSpec,
    TaskSpec,
    Verifier,
    default_verifier,
    expected_answer_verifier,
    graded_as_rubric,
)

# Reads an attached file's bytes for the verifiers (None when it cannot: a link).
FileReader = Callable[[FileSpec], bytes | None]


@dataclass(frozen=True, slots=True)
class Check:
    """One thing a task is graded by: a criterion, or its expected answer, with the
    verifier that grades it."""

    id: str
    text: str
    weight: float
    verifier: Verifier


def checks_for(dataset: DatasetSpec, task: TaskSpec) -> tuple[Check, ...]:
    """What grades `task` in `dataset`, in order.

    A task with criteria (its own or the dataset's for every task) is a rubric, in which
    an expected answer is the "Matches the expected answer" criterion; a task with only an
    expected answer is graded by that alone, listed under the same id. A criterion with no
    verifier is checked by the settings' defaultVerifier; an expected answer with none, by
    the settings' expectedAnswerVerifier (else an agent judge scoring 0 to 1).
    """
    settings = dataset.settings
    answer_verifier = task.expected_verifier or expected_answer_verifier(settings)
    graded = graded_as_rubric(
        task, shared_criteria=bool(dataset.criteria), expected_answer_verifier=answer_verifier
    )
    criteria = (*graded.criteria, *dataset.criteria)
    if not criteria:
        if task.expected_text is None:
            return ()
        return (
            Check(
                EXPECTED_ANSWER_CRITERION_ID, EXPECTED_ANSWER_CRITERION_TEXT, 1.0, answer_verifier
            ),
        )
    default = default_verifier(settings)
    return tuple(
        Check(
            id=criterion.id,
            text=criterion.criterion,
            weight=criterion.weight,
            verifier=criterion.verifier
            or (answer_verifier if criterion.id == EXPECTED_ANSWER_CRITERION_ID else default),
        )
        for criterion in criteria
    )


def _no_files(file: FileSpec) -> bytes | None:
    return None


@dataclass
class Graders:
    """What the verifiers may use here: a judge (None: judge criteria are skipped), whether
    Python checks are on (they then run only in the sandbox), and a reader of attached
    files. `concurrency` bounds the checks run at once (the judge's JUDGE_CONCURRENCY)."""

    judge: Judge | None = None
    allow_python: bool = False
    read_file: FileReader = _no_files
    concurrency: int = 1
    _sandbox: tuple[bool, str] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def sandbox(self) -> tuple[bool, str]:
        """Whether the sandbox can run checks here, asked once."""
        with self._lock:
            if self._sandbox is None:
                try:
                    from context_verifiers.sandbox import sandbox_status
                except ImportError as exc:
                    self._sandbox = (False, f"the sandbox is not installed ({exc})")
                else:
                    self._sandbox = sandbox_status()
            return self._sandbox


# --- The verifiers --------------------------------------------------------------------


def _first_difference(answer: str, expected: str) -> int:
    for index, (a, b) in enumerate(zip(answer, expected, strict=False)):
        if a != b:
            return index + 1
    return min(len(answer), len(expected)) + 1


def _only_spaces_or_case(answer: str, expected: str) -> str | None:
    def squeezed(text: str) -> str:
        return "".join(text.split())

    if squeezed(answer) == squeezed(expected):
        return "spaces"
    if answer.casefold() == expected.casefold():
        return "case"
    if squeezed(answer).casefold() == squeezed(expected).casefold():
        return "spaces and case"
    return None


def exact_match(
    verifier: Verifier, task: TaskView, output: OutputView, graders: Graders
) -> Outcome:
    """Character for character: the reasoning says when they differ only in spaces or
    case, the verdict does not change."""
    expected = task.expected
    if expected is None:
        return reasons.NO_EXPECTED_ANSWER.outcome(kind="exact_match")
    if output.text == expected:
        return Outcome.of(
            Verdict.boolean(passed=True, reasoning="The answer is the expected answer exactly.")
        )
    only = _only_spaces_or_case(output.text, expected)
    if only:
        reasoning = f"The answer differs from the expected answer only in {only}."
    else:
        at = _first_difference(output.text, expected)
        reasoning = f"The answer differs from the expected answer from character {at:,} on."
    return Outcome.of(Verdict.boolean(passed=False, reasoning=reasoning))


def judged(verifier: Verifier, task: TaskView, output: OutputView, graders: Graders) -> Outcome:
    """An llm_judge or agent_judge criterion, asked of the configured judge."""
    if verifier.kind == "agent_judge" and task.expected is None and not task.expected_files:
        return reasons.NO_EXPECTED_ANSWER.outcome(kind="agent_judge")
    if graders.judge is None:
        return reasons.NO_JUDGE_CONFIGURED.outcome()
    try:
        return graders.judge.grade(verifier, task, output)
    except UnknownPlaceholders as exc:
        return reasons.UNKNOWN_PLACEHOLDER.outcome(placeholder=", ".join(exc.names))


def python_check(
    verifier: Verifier, task: TaskView, output: OutputView, graders: Graders
) -> Outcome:
    """A code_verifier: only when Python checks are on, and only in the sandbox."""
    if not graders.allow_python:
        return reasons.PYTHON_CHECKS_OFF.outcome()
    available, why = graders.sandbox()
    if not available:
        return reasons.SANDBOX_UNAVAILABLE.outcome(detail=why, reason=why)
    from context_verifiers.sandbox import run_code_check

    result = run_code_check(verifier.code or "", task=task.to_json(), output=output.to_json())
    if result.verdict is not None:
        try:
            return Outcome.of(Verdict.from_json(result.verdict))
        except ValueError as exc:
            return reasons.CODE_BAD_RETURN.outcome(detail=str(exc))
    reason = reasons.SANDBOX_REASONS.get(result.code or "", reasons.CODE_CRASH)
    if reason is reasons.SANDBOX_UNAVAILABLE:
        return reason.outcome(detail=result.detail, reason=result.detail)
    return reason.outcome(detail=result.detail)


Grader = Callable[[Verifier, TaskView, OutputView, Graders], Outcome]

# Which function grades each verifier kind (`spec.VERIFIER_KINDS`).
VERIFIERS: dict[str, Grader] = {
    "exact_match": exact_match,
    "llm_judge": judged,
    "agent_judge": judged,
    "code_verifier": python_check,
}


# --- Grading --------------------------------------------------------------------------


@dataclass(frozen=True)
class CriterionResult:
    """One check's outcome, with what it checked."""

    id: str
    text: str
    weight: float
    kind: str
    outcome: Outcome

    def to_json(self) -> dict[str, Any]:
        """As `grade --json` prints it (and the app stores it)."""
        return {
            "id": self.id,
            "status": self.outcome.status,
            "score": self.outcome.score,
            "reasoning": self.outcome.reasoning,
            "code": self.outcome.code,
            "detail": self.outcome.detail,
            "weight": self.weight,
            "verifier": self.kind,
            "warnings": list(self.outcome.warnings),
        }


@dataclass(frozen=True)
class TaskResult:
    task: str
    score: Score
    criteria: tuple[CriterionResult, ...]
    # What the agent's run of it cost, as its outputs line said (`latency_ms`, `tokens`,
    # `cost`, `model`, `trace`): carried beside the verdicts, never graded.
    agent: Mapping[str, Any] | None = None

    @property
    def errors(self) -> int:
        return sum(result.outcome.status == "error" for result in self.criteria)

    def to_json(self) -> dict[str, Any]:
        data = {
            "task": self.task,
            **self.score.to_json(),
            "criteria": [result.to_json() for result in self.criteria],
        }
        if self.agent:
            data["agent"] = dict(self.agent)
        return data


@dataclass(frozen=True)
class DatasetResult:
    score: Score
    tasks: tuple[TaskResult, ...]

    @property
    def errors(self) -> int:
        return sum(task.errors for task in self.tasks)

    def to_json(self) -> dict[str, Any]:
        return {**self.score.to_json(), "tasks": [task.to_json() for task in self.tasks]}


def task_view(task: TaskSpec, check: Check | None, read_file: FileReader = _no_files) -> TaskView:
    """What a verifier of `check` sees of `task` (files it cannot read are left out)."""

    def files(specs: Sequence[FileSpec]) -> tuple[FileView, ...]:
        views = []
        for spec in specs:
            data = read_file(spec)
            if data is not None:
                views.append(FileView.of(spec.name, data))
        return tuple(views)

    return TaskView(
        id=task.id,
        name=task.name,
        prompt=task.prompt,
        expected=task.expected_text,
        criterion=CriterionView(id=check.id, text=check.text, weight=check.weight)
        if check
        else None,
        input_files=files(task.input_files),
        expected_files=files(task.expected_files),
    )


def zipped_output(text: str, files: Sequence[OutputFile], zf: zipfile.ZipFile) -> OutputView:
    """An answer whose files an outputs zip holds (`outputs_zip`), each read as far as a
    verifier is given it: how a run's workers and `grade` on a .zip see it."""
    starts = file_starts(zf, files, limit=MAX_FILE_VIEW_BYTES)
    views = tuple(
        FileView(file.name, data, size=file.size, truncated=file.size > len(data))
        for file, data in zip(files, starts, strict=True)
    )
    return OutputView(text=text, files=views)


def as_output(answer: OutputView | str | None) -> OutputView | None:
    if answer is None or isinstance(answer, OutputView):
        return answer
    return OutputView(text=answer)


def grade_check(
    check: Check, task: TaskView, output: OutputView | None, graders: Graders
) -> Outcome:
    """One check on one answer. No answer (missing, or empty with no files) is the agent's
    failure: failed, 0, whatever the verifier."""
    if output is None or (not output.text.strip() and not output.files):
        return Outcome.no_answer()
    grader = VERIFIERS.get(check.verifier.kind)
    if grader is None:
        return reasons.UNKNOWN_VERIFIER.outcome(kind=check.verifier.kind)
    return grader(check.verifier, task, output, graders)


_Job = tuple[int, Check, TaskSpec, OutputView | None]

# The verifiers that read a task's attached files; the others are not given them, so that
# a task's files are read only for the checks that look at them.
READS_FILES = frozenset({"agent_judge", "code_verifier"})


Job = tuple[Check, TaskSpec, OutputView | None]

# The verifiers that wait on another process (a judge's server, the sandbox): the ones
# worth a thread of their own.
JUDGE_KINDS = frozenset({"llm_judge", "agent_judge"})
WAITS = JUDGE_KINDS | {"code_verifier"}


def grade_checks(jobs: Sequence[Job], graders: Graders) -> list[Outcome]:
    """Each (check, task, answer)'s outcome, in order; up to `graders.concurrency` at once.
    `grade_tasks` grades through this, and so does a run, a chunk of its criteria at a time."""

    def run(job: Job) -> Outcome:
        # The task's view (with its files) is made as its check runs, not before: holding
        # every task's files at once would take up to 20 MiB a task.
        check, task, output = job
        reader = graders.read_file if check.verifier.kind in READS_FILES else _no_files
        return grade_check(check, task_view(task, check, reader), output, graders)

    # Only checks that wait (on a judge's server, on the sandbox) go to threads, and only
    # when two or more wait: a try's exact match beside one Python check starts none.
    waiting = [i for i, (check, _, _) in enumerate(jobs) if check.verifier.kind in WAITS]
    outcomes: list[Outcome | None] = [None] * len(jobs)
    if graders.concurrency > 1 and len(waiting) > 1:
        with ThreadPoolExecutor(max_workers=min(graders.concurrency, len(waiting))) as pool:
            for i, outcome in zip(waiting, pool.map(run, [jobs[i] for i in waiting]), strict=True):
                outcomes[i] = outcome
    pairs = zip(jobs, outcomes, strict=True)
    return [run(job) if outcome is None else outcome for job, outcome in pairs]


def grade_tasks(
    dataset: DatasetSpec,
    answers: Iterable[tuple[TaskSpec, OutputView | str | None]],
    *,
    graders: Graders,
    only: str | None = None,
) -> DatasetResult:
    """Grade each (task, answer); up to `graders.concurrency` checks run at once.

    `only` grades one criterion alone (by id), as "Try an answer" does for one criterion.
    """
    pairs = list(answers)
    jobs: list[_Job] = []
    for index, (task, answer) in enumerate(pairs):
        output = as_output(answer)
        for check in checks_for(dataset, task):
            if only is None or check.id == only:
                jobs.append((index, check, task, output))
    outcomes = grade_checks([(check, task, output) for _, check, task, output in jobs], graders)
    by_task: list[list[CriterionResult]] = [[] for _ in pairs]
    for (index, check, _, _), result in zip(jobs, outcomes, strict=True):
        by_task[index].append(
            CriterionResult(check.id, check.text, check.weight, check.verifier.kind, result)
        )
    tasks = tuple(
        TaskResult(
            task=task.id,
            score=task_score((result.weight, result.outcome) for result in results),
            criteria=tuple(results),
        )
        for (task, _), results in zip(pairs, by_task, strict=True)
    )
    return DatasetResult(score=dataset_score(task.score for task in tasks), tasks=tasks)


def grade_task(
    dataset: DatasetSpec,
    task: TaskSpec,
    answer: OutputView | str | None,
    *,
    graders: Graders,
    only: str | None = None,
) -> TaskResult:
    """Grade one answer to one task, exactly as a run grades it ("Try an answer")."""
    return grade_tasks(dataset, [(task, answer)], graders=graders, only=only).tasks[0]


def show_prompt(
    dataset: DatasetSpec,
    task: TaskSpec,
    answer: OutputView | str | None,
    *,
    criterion_id: str,
    config: JudgeConfig,
    read_file: FileReader = _no_files,
) -> dict[str, Any] | None:
    """ "Show the prompt": the exact request the judge of `criterion_id` would be sent for
    this answer, without calling it; None when that criterion is not graded by a judge.
    UnknownPlaceholders names placeholders its instructions use that are not ours."""
    check = next((c for c in checks_for(dataset, task) if c.id == criterion_id), None)
    if check is None or check.verifier.kind not in JUDGE_KINDS:
        return None
    reader = read_file if check.verifier.kind in READS_FILES else _no_files
    output = as_output(answer) or OutputView(text="")
    return render_prompt(check.verifier, task_view(task, check, reader), output, config)
