"""Runs: an agent's outputs graded against a saved version, in the background, every verdict kept.

`run_check` reads an outputs file against the version (writing nothing) into a `RunPlan`;
`run_prepare` keeps a checked file for the page's "Grade N tasks"; `run_begin` checks it
again and writes the run's rows, all or nothing, then hands it to the workers; `run_create`
does both at once (the API, the command). `run_grade_chunk` grades a chunk of tasks: each
task is claimed by one worker (`RunResult.lease`), and its criteria's outcomes are inserted
once, with its score, in one transaction per chunk, so a worker killed mid-chunk leaves
nothing half-written. The run's figures are made in one place (`run_summary`, from
`context_verifiers.metrics`) when it ends.

Every run grades the version's frozen content (`selectors.version_spec`), never the live
tasks: editing or archiving a task later changes no run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.text import get_valid_filename

from context_verifiers.grading import (
    JUDGE_KINDS,
    Check,
    grade_checks,
    zipped_output,
)
from context_verifiers.judges import MAX_JUDGE_FILE_CHARS, MAX_JUDGE_FILES_CHARS
from context_verifiers.outcome import Outcome
from context_verifiers.scoring import task_score
from context_verifiers.views import OutputView
from datasets_app import grading, selectors
from datasets_app.importing import archive
from datasets_app.importing.outputs import AMBIGUOUS_COLUMN, AgentOutput, OutputFile, OutputsFile
from datasets_app.importing.outputs_zip import read_outputs_file
from datasets_app.importing.spec import MAX_FILE_BYTES, DatasetSpec, Problem, Rule, TaskSpec
from datasets_app.models import (
    Dataset,
    OutcomeStatus,
    Run,
    RunOutcome,
    RunResult,
    RunState,
    Version,
)
from datasets_app.selectors import FrozenVersion
from datasets_app.services import bulk
from datasets_app.services.judge_calls import judge_calls_record

# A judge asked about as many tokens as a criterion's instructions, the prompt, the answer
# and the expected answer hold (about 4 characters a token), plus the system message.
CHARS_PER_TOKEN = 4
JUDGE_OVERHEAD_TOKENS = 400

# The runs whose score means something: they graded everything.
ENDED_WELL = frozenset({RunState.DONE, RunState.DONE_WITH_ERRORS})
# An outputs file is bounded as a dataset file is (the reader's own limit).
MAX_OUTPUTS_BYTES = MAX_FILE_BYTES
NO_VERSION = "Save the dataset as v1 before running it: a run grades a saved version."
OVER_BUDGET_CALLS = Rule(
    "over_budget",
    "The run needs {needed} judge calls and its budget allows {budget}: raise the budget or "
    "grade fewer tasks.",
)
OVER_BUDGET_TOKENS = Rule(
    "over_budget",
    "The run needs about {needed} judge tokens and its budget allows {budget}: raise the "
    "budget or grade fewer tasks.",
)
RUN_FAILED = "The run failed; what it graded is kept. Start it again, or tell us."
RUN_TOO_LONG = (
    "Part of the run took longer than its time limit and the run was stopped there; what it "
    "graded is kept."
)
NOT_STARTABLE = "This run has already started."
RUN_STOPPED = "Stopped. What was graded is kept; nothing more is graded."


class RunRefused(Exception):
    """The outputs cannot be graded as they are: every problem, each with its place."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


@dataclass(frozen=True)
class RunPlan:
    """What a run of these outputs would do: the preview before "Grade N tasks"."""

    VERSION = 1

    version: int
    file_name: str
    tasks: int
    matched: int
    no_output: int
    outcomes: int
    judge_calls: int
    judge_tokens: int
    python_checks: int
    judge_available: bool
    judge_model: str
    python_available: bool
    labels: int
    problems: tuple[Problem, ...] = ()
    # The column (or key) each of task and output is read from, and, while the person has
    # yet to say, the roles two columns could each fill (`OutputsFile.ask`) and the columns.
    mapping: dict[str, str] = field(default_factory=dict)
    ask: dict[str, Sequence[str]] = field(default_factory=dict)
    columns: Sequence[str] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def mapping_due(self) -> bool:
        """Whether the only problems are columns for the person to choose."""
        return bool(self.ask) and all(p.code == AMBIGUOUS_COLUMN.code for p in self.problems)

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in vars(self).items() if k != "problems"}
        return {
            "plan_version": self.VERSION,
            **data,
            "problems": [p.to_json() for p in self.problems],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunPlan | None:
        if data.get("plan_version") != cls.VERSION:
            return None
        fields = {k: v for k, v in data.items() if k not in ("plan_version", "problems")}
        problems = tuple(Problem.from_json(p) for p in data.get("problems", []))
        return cls(**fields, problems=problems)


def _judge_tokens(check: Check, task: TaskSpec, output: AgentOutput) -> int:
    """About how many tokens a judge call of `check` sends: its instructions, the task and
    the answer, and for an agent judge as much of the files as it is shown."""
    text = (check.verifier.instructions or check.text or "") + task.prompt + (output.output or "")
    chars = len(text) + len(task.expected_text or "")
    if check.verifier.kind == "agent_judge":
        attached = [file.size or 0 for file in (*task.input_files, *task.expected_files)]
        chars += _judge_file_chars([*attached, *(file.size for file in output.files)])
    return JUDGE_OVERHEAD_TOKENS + chars // CHARS_PER_TOKEN


def _judge_file_chars(sizes: Iterable[int]) -> int:
    """At most how much of files of these sizes an agent judge is shown (a byte taken for a
    character): each cut at MAX_JUDGE_FILE_CHARS, MAX_JUDGE_FILES_CHARS in all."""
    return min(MAX_JUDGE_FILES_CHARS, sum(min(MAX_JUDGE_FILE_CHARS, size) for size in sizes))


def _budget_problems(
    plan: RunPlan, budget_judge_calls: int | None, budget_tokens: int | None
) -> list[Problem]:
    problems = []
    if budget_judge_calls is not None and plan.judge_calls > budget_judge_calls:
        problems.append(
            OVER_BUDGET_CALLS.at(plan.file_name, needed=plan.judge_calls, budget=budget_judge_calls)
        )
    if budget_tokens is not None and plan.judge_tokens > budget_tokens:
        problems.append(
            OVER_BUDGET_TOKENS.at(plan.file_name, needed=plan.judge_tokens, budget=budget_tokens)
        )
    return problems


def _columns_read(read: OutputsFile) -> dict[str, Any]:
    """What the plan keeps of the columns: read from, asked about, to choose from."""
    ask = {role: list(found) for role, found in read.ask.items()}
    return {"mapping": dict(read.mapping), "ask": ask, "columns": list(read.columns)}


@dataclass
class _GradingWork:
    """What grading a file of outputs takes: the outcomes it makes, the judge calls and
    their tokens, the Python checks."""

    outcomes: int = 0
    judge_calls: int = 0
    judge_tokens: int = 0
    python_checks: int = 0


def _grading_work(
    version: FrozenVersion, read: OutputsFile, *, judge: bool, python: bool
) -> _GradingWork:
    """Counted over the version's tasks; a check that cannot run here (no judge, no
    sandbox) makes an outcome but no call."""
    work = _GradingWork()
    for task in version.spec.tasks:
        output = read.outputs.get(task.id)
        checks = version.checks[task.id]
        work.outcomes += len(checks)
        if output is None or not output.answered:
            continue  # no answer: graded 0 without a call
        for check in checks:
            if check.verifier.kind in JUDGE_KINDS and judge:
                work.judge_calls += 1
                work.judge_tokens += _judge_tokens(check, task, output)
            elif check.verifier.kind == "code_verifier" and python:
                work.python_checks += 1
    return work


def run_check(
    *,
    version: Version,
    data: bytes,
    file_name: str,
    mapping: Mapping[str, str] | None = None,
    budget_judge_calls: int | None = None,
    budget_tokens: int | None = None,
) -> tuple[RunPlan, OutputsFile]:
    """Read `data` against `version`'s tasks: the preview, with every problem. Writes nothing."""
    content = selectors.frozen_version(version)
    read = read_outputs_file(data, file_name, set(content.tasks), mapping=mapping)
    graders = grading.graders()
    judge = graders.judge is not None
    python = graders.allow_python and graders.sandbox()[0]
    work = _grading_work(content, read, judge=judge, python=python)
    answered = sum(1 for o in read.outputs.values() if o.answered)
    plan = RunPlan(
        version=version.number,
        file_name=file_name,
        tasks=len(content.tasks),
        matched=len(read.outputs),
        no_output=len(content.tasks) - answered,
        outcomes=work.outcomes,
        judge_calls=work.judge_calls,
        judge_tokens=work.judge_tokens,
        python_checks=work.python_checks,
        judge_available=judge,
        judge_model=(graders.judge.config.model or "") if graders.judge else "",
        python_available=python,
        labels=sum(bool(o.labels) for o in read.outputs.values()),
        problems=tuple(read.problems),
        **_columns_read(read),
    )
    budget = _budget_problems(plan, budget_judge_calls, budget_tokens)
    if budget:
        plan = RunPlan(**{**vars(plan), "problems": (*plan.problems, *budget)})
    return plan, read


def run_prepare(
    *,
    version: Version,
    user: User,
    data: bytes,
    file_name: str,
    mapping: Mapping[str, str] | None = None,
    budget_judge_calls: int | None = None,
    budget_tokens: int | None = None,
) -> tuple[RunPlan, Run | None]:
    """Check the outputs; if they can be graded, keep the file as a run in `checking`, for
    the page's "Grade N tasks" to start (`run_begin`). Problems: nothing is written, but
    for columns the person has to choose (`plan.mapping_due`): the file is kept for
    `run_map` to read again with their answer."""
    plan, _ = run_check(
        version=version,
        data=data,
        file_name=file_name,
        mapping=mapping,
        budget_judge_calls=budget_judge_calls,
        budget_tokens=budget_tokens,
    )
    if not plan.ok and not plan.mapping_due:
        return plan, None
    budget = {"budget_judge_calls": budget_judge_calls, "budget_tokens": budget_tokens}
    run = _run_new(version=version, user=user, plan=plan, data=data, budget=budget)
    return plan, run


def _run_new(
    *,
    version: Version,
    user: User,
    plan: RunPlan,
    data: bytes,
    budget: Mapping[str, int | None],
    state: str = RunState.CHECKING,
    name: str = "",
) -> Run:
    """A run of `plan` (checked within `budget`), its outputs file kept."""
    run = Run(
        version=version,
        name=name[:200],
        state=state,
        **budget,
        outputs_name=plan.file_name[:255],
        plan=plan.to_json(),
        task_count=plan.tasks,
        outcome_count=plan.outcomes,
        judge_model=plan.judge_model,
        created_by=user,
    )
    stored = get_valid_filename(plan.file_name) or "outputs"
    run.outputs_file.save(stored, ContentFile(data), save=False)
    run.full_clean(exclude=["version", "created_by"])
    run.save()
    return run


def _rows(run: Run, spec: DatasetSpec, read: OutputsFile) -> None:
    """The run's results, every one to grade, in the version's order (their criteria's
    outcomes are made as they are graded)."""
    task_pks = dict(selectors.version_tasks(run.version).values_list("task_id", "pk"))
    results = []
    for position, task in enumerate(spec.tasks):
        output = read.outputs.get(task.id)
        results.append(
            RunResult(
                run_id=run.pk,
                task_id=task_pks[task.id],
                task_key=task.id,
                position=position,
                output=(output.output or "") if output else "",
                has_output=bool(output and output.output is not None),
                latency_ms=output.latency_ms if output else None,
                tokens=output.tokens if output else None,
                cost=output.cost if output else None,
                model=output.model if output else "",
                trace=output.trace if output else "",
                labels=dict(output.labels) if output else {},
                files=[file.to_json() for file in output.files] if output else [],
            )
        )
    bulk.insert_rows(RunResult, results)


def _check_kept(run: Run, mapping: Mapping[str, str] | None) -> tuple[RunPlan, OutputsFile]:
    """Check a run's kept outputs file again, read with `mapping`: the run must not have
    started (a started run's rows are written)."""
    if run.state != RunState.CHECKING:
        raise RunRefused(NOT_STARTABLE)
    with run.outputs_file.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    return run_check(
        version=run.version,
        data=data,
        file_name=run.outputs_name,
        mapping=mapping,
        budget_judge_calls=run.budget_judge_calls,
        budget_tokens=run.budget_tokens,
    )


def run_begin(*, run: Run) -> Run:
    """Check the kept outputs again and write the run's rows, all or nothing; then hand it
    to the workers. A run whose file now has problems is refused, with them."""
    kept = RunPlan.from_json(run.plan or {})
    plan, read = _check_kept(run, kept.mapping if kept else None)
    if not plan.ok:
        raise RunRefused("The outputs have problems.", plan.problems)
    with transaction.atomic():
        claimed = Run.objects.filter(pk=run.pk, state=RunState.CHECKING).update(
            state=RunState.QUEUED,
            plan=plan.to_json(),
            task_count=plan.tasks,
            outcome_count=plan.outcomes,
        )
        if not claimed:
            raise RunRefused(NOT_STARTABLE)
        _rows(run, selectors.frozen_version(run.version).spec, read)
        run_id = run.pk
        transaction.on_commit(lambda: _enqueue_dispatch(run_id))
    run.refresh_from_db()
    return run


def run_map(*, run: Run, mapping: Mapping[str, str]) -> tuple[RunPlan, Run | None]:
    """Read a kept run's outputs again with the columns the person chose. Still to choose,
    or ready: the run keeps the file, with the new plan. Other problems: the run and its
    file are gone, as if the file had been checked with these columns at first."""
    plan, _ = _check_kept(run, mapping)
    if not plan.ok and not plan.mapping_due:
        run_discard(run=run)
        return plan, None
    Run.objects.filter(pk=run.pk, state=RunState.CHECKING).update(plan=plan.to_json())
    run.refresh_from_db()
    return plan, run


def run_discard(*, run: Run) -> None:
    """A run that was never started, gone with its kept file."""
    if run.state != RunState.CHECKING:
        raise RunRefused(NOT_STARTABLE)
    stored = run.outputs_file.name
    storage = run.outputs_file.storage
    if Run.objects.filter(pk=run.pk, state=RunState.CHECKING).delete()[0] and stored:
        transaction.on_commit(lambda: storage.delete(stored))


def run_create(
    *,
    version: Version,
    user: User,
    data: bytes,
    file_name: str,
    name: str = "",
    mapping: Mapping[str, str] | None = None,
    budget_judge_calls: int | None = None,
    budget_tokens: int | None = None,
) -> Run:
    """Check the outputs and start grading them (the API's and the command's one step):
    checked once, and nothing stored unless they can be graded (columns to choose are a
    problem here: there is nobody to ask)."""
    plan, read = run_check(
        version=version,
        data=data,
        file_name=file_name,
        mapping=mapping,
        budget_judge_calls=budget_judge_calls,
        budget_tokens=budget_tokens,
    )
    if not plan.ok:
        raise RunRefused("The outputs have problems.", plan.problems)
    budget = {"budget_judge_calls": budget_judge_calls, "budget_tokens": budget_tokens}
    with transaction.atomic():
        run = _run_new(
            version=version,
            user=user,
            plan=plan,
            data=data,
            budget=budget,
            state=RunState.QUEUED,
            name=name,
        )
        _rows(run, selectors.frozen_version(version).spec, read)
        run_id = run.pk
        transaction.on_commit(lambda: _enqueue_dispatch(run_id))
    run.refresh_from_db()
    return run


def run_create_for_latest(*, dataset: Dataset, user: User, data: bytes, file_name: str) -> Run:
    """A run of the dataset's latest saved version, never its drafts."""
    version = selectors.latest_version(dataset)
    if version is None:
        raise RunRefused(NO_VERSION)
    return run_create(version=version, user=user, data=data, file_name=file_name)


def run_rename(*, run: Run, name: str) -> Run:
    run.name = name[:200]
    run.full_clean(exclude=["version", "created_by"])
    Run.objects.filter(pk=run.pk).update(name=run.name)
    return run


def _enqueue_dispatch(run_id: int) -> None:
    from datasets_app import tasks

    tasks.enqueue(tasks.dispatch_run, run_id)


# --- Grading, on the workers ------------------------------------------------------------


# A run none of whose checks waits (no judge to ask, no Python check to start: an exact
# match of 5,000 criteria takes 0.1 s) is graded in chunks this many times larger: a chunk's
# fixed cost (its message, its claim, a transaction that waits for the disk) would
# otherwise be most of the run's time.
INSTANT_CHUNK_FACTOR = 10


def run_chunks(*, run: Run) -> list[tuple[int, int]]:
    """The run's tasks as (first, last) positions, RUN_CHUNK_TASKS at a time, or
    INSTANT_CHUNK_FACTOR times as many when no check waits."""
    plan = RunPlan.from_json(run.plan or {})
    waits = plan is None or plan.judge_calls or plan.python_checks
    size = max(1, settings.RUN_CHUNK_TASKS) * (1 if waits else INSTANT_CHUNK_FACTOR)
    return [
        (first, min(first + size, run.task_count) - 1) for first in range(0, run.task_count, size)
    ]


def run_dispatch(*, run_id: int) -> list[tuple[int, int]]:
    """Queued → grading; the chunks to hand out (none when it was stopped or started)."""
    now = timezone.now()
    started = Run.objects.filter(pk=run_id, state=RunState.QUEUED).update(
        state=RunState.GRADING, started_at=now
    )
    run = Run.objects.get(pk=run_id)
    if not started:
        return []
    if run.outcome_count == 0:
        run_finish(run_id=run_id)
        return []
    return run_chunks(run=run)


def lease_seconds() -> float:
    """How long a claim holds without a word from the worker holding it: the worker renews
    its claims every quarter of this while it grades (`run_claims_renew`), so only a dead
    worker's claims ever go this long, and another then takes them over."""
    return float(settings.RUN_LEASE_SECONDS)


def run_claims_renew(*, run_id: int, lease: str) -> int:
    """Say that the worker holding `lease` is alive: its claims on the run's tasks are as
    new as now. How many it holds."""
    with transaction.atomic(), _claims_need_no_flush():
        return RunResult.objects.filter(run_id=run_id, graded=False, lease=lease).update(
            claimed_at=timezone.now()
        )


@dataclass
class ChunkGraded:
    """What one call of `run_grade_chunk` did: outcomes written, and the tasks another
    worker holds (the caller tries again after `wait` seconds)."""

    written: int = 0
    held_elsewhere: int = 0
    wait: float = 0.0
    ended: bool = False


RESULT_FIGURES = ["score", "coverage", "graded", "failed_count", "error_count"]


# A run's outcome rows as `_write` inserts them (`bulk.insert_values`).
OUTCOME_COLUMNS = [
    "run_id",
    "result_id",
    "position",
    "criterion_key",
    "text",
    "weight",
    "kind",
    "status",
    "score",
    "reasoning",
    "code",
    "detail",
    "warnings",
    "calls",
    "written_at",
]


def _outcome_row(
    result: RunResult, position: int, check: Check, outcome: Outcome, now: datetime
) -> tuple[Any, ...]:
    """`OUTCOME_COLUMNS` of the outcome of `check`, the criterion at `position`."""
    calls = [call.to_json() for call in outcome.calls]
    return (
        *(result.run_id, result.pk, position, check.id, check.text, check.weight),
        *(check.verifier.kind, outcome.status, outcome.score, outcome.reasoning),
        *(outcome.code or "", outcome.detail, list(outcome.warnings), calls, now),
    )


@contextmanager
def _claims_need_no_flush() -> Iterator[None]:
    """Within a transaction that only claims: PostgreSQL commits it without waiting for its
    log to reach the disk (5 ms a commit here, twice a chunk). A claim lost to a crash of
    the database costs nothing but work done again: the outcomes are written only by the
    lease that still holds the claim when they are (`_write`, which waits for the disk)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
    yield


def _claim(run: Run, first: int, last: int, lease: str) -> tuple[list[RunResult], int]:
    """Claim the tasks at positions first..last not graded yet (unclaimed, already ours,
    or held past the lease by a worker that died) in one update; then those this worker
    holds, and how many another holds."""
    now = timezone.now()
    chunk = RunResult.objects.filter(run_id=run.pk, position__range=(first, last), graded=False)
    free = Q(lease="") | Q(lease=lease) | Q(claimed_at__lt=now - timedelta(seconds=lease_seconds()))
    with transaction.atomic(), _claims_need_no_flush():
        chunk.filter(free).update(lease=lease, claimed_at=now)
    mine, held = [], 0
    for result in chunk.exclude(lease="").only(
        "pk", "run_id", "task_key", "output", "has_output", "files", "lease"
    ):
        if result.lease == lease:
            mine.append(result)
        else:
            held += 1
    return mine, held


def _scored(pk: int, weighted: Sequence[tuple[float, Outcome]]) -> dict[str, Any]:
    """A task's result row's figures, to write (`RESULT_FIGURES`)."""
    score = task_score(weighted)
    return {
        "pk": pk,
        "score": score.value,
        "coverage": score.coverage,
        "graded": True,
        "failed_count": sum(outcome.status == OutcomeStatus.FAILED for _, outcome in weighted),
        "error_count": sum(outcome.status == OutcomeStatus.ERROR for _, outcome in weighted),
    }


def run_grade_chunk(*, run_id: int, first: int, last: int, lease: str) -> ChunkGraded:
    """Grade the tasks at positions first..last: claim those not graded yet, grade their
    criteria (the library's `grade_checks`), and write each task's outcomes and score
    together, once. A fixed number of queries a chunk, whatever its size; the version's
    content is read through `selectors.frozen_version`, once a process."""
    run = (
        Run.objects.select_related("version__dataset", "created_by")
        .only("state", "version__created_at", "version__dataset", "created_by")
        .get(pk=run_id)
    )
    if run.state != RunState.GRADING:
        return ChunkGraded(ended=True)
    mine, held = _claim(run, first, last, lease)
    graded = ChunkGraded(held_elsewhere=held, wait=lease_seconds() if held else 0.0)
    if not mine:
        return graded
    content = selectors.frozen_version(run.version)
    answers = _answers(run, mine)
    jobs = [
        (check, content.tasks[result.task_key], answers.get(result.pk))
        for result in mine
        for check in content.checks[result.task_key]
    ]
    outcomes = grade_checks(jobs, grading.graders())
    graded.written = _write(run, mine, content, outcomes, lease)
    _after_write(run_id)
    return graded


def _answers(run: Run, results: Iterable[RunResult]) -> dict[int, OutputView]:
    """Each result's answer as its verifiers see it: the text, and the output files read
    from the run's kept zip (each cut at what a verifier is given), the zip opened once."""
    answers: dict[int, OutputView] = {}
    with_files: list[RunResult] = []
    for result in results:
        if result.pk in answers or not (result.has_output or result.files):
            continue
        answers[result.pk] = OutputView(text=result.output)
        if result.files:
            with_files.append(result)
    if not with_files:
        return answers
    with run.outputs_file.open("rb") as handle, archive.open_archive(handle) as zf:
        for result in with_files:
            files = [OutputFile(**file) for file in result.files]
            answers[result.pk] = zipped_output(result.output, files, zf)
    return answers


def _write(
    run: Run, claimed: list[RunResult], content: FrozenVersion, outcomes: list[Outcome], lease: str
) -> int:
    """Write the outcomes of the tasks still ours (nobody took an expired claim over
    meanwhile), each task's with its score, in one transaction: inserted once. `outcomes`
    are the claimed tasks' checks' (`content.checks`), in order."""
    now = timezone.now()
    graded = iter(outcomes)
    by_result = {
        result.pk: [(check, next(graded)) for check in content.checks[result.task_key]]
        for result in claimed
    }
    with transaction.atomic():
        ours = set(
            RunResult.objects.select_for_update()
            .filter(pk__in=list(by_result), graded=False, lease=lease)
            .values_list("pk", flat=True)
        )
        rows, scored = [], []
        for result in claimed:
            checked = by_result[result.pk] if result.pk in ours else []
            rows += [
                _outcome_row(result, position, check, outcome, now)
                for position, (check, outcome) in enumerate(checked)
            ]
            if checked:
                scored.append(_scored(result.pk, [(c.weight, o) for c, o in checked]))
        bulk.insert_values(RunOutcome, OUTCOME_COLUMNS, rows)
        bulk.update_rows(RunResult, scored, RESULT_FIGURES)
        calls = [call for outcome in outcomes for call in outcome.calls]
        if calls:
            judge_calls_record(calls=calls, dataset=run.version.dataset, user=run.created_by)
        if rows:
            Run.objects.filter(pk=run.pk).update(outcomes_done=F("outcomes_done") + len(rows))
    return len(rows)


def _after_write(run_id: int) -> None:
    """The last chunk ends the run; a write that lands after a stop updates its figures."""
    run = Run.objects.only("state", "outcomes_done", "outcome_count").get(pk=run_id)
    if run.state == RunState.GRADING and run.outcomes_done >= run.outcome_count:
        run_finish(run_id=run_id)
    elif run.ended:
        _summarise(run_id)


def _summarise(run_id: int) -> None:
    Run.objects.filter(pk=run_id).update(summary=selectors.run_summary(run_id=run_id).to_json())


def run_finish(*, run_id: int) -> bool:
    """Grading → done (or done with errors), with the run's figures; once."""
    summary = selectors.run_summary(run_id=run_id)
    state = RunState.DONE_WITH_ERRORS if summary.outcomes.get("error") else RunState.DONE
    return bool(
        Run.objects.filter(pk=run_id, state=RunState.GRADING).update(
            state=state, summary=summary.to_json(), finished_at=timezone.now()
        )
    )


def run_stop(*, run: Run) -> bool:
    """Stop a queued or grading run: no task is claimed after this; what was graded is
    kept (a chunk being graded still writes, and the figures follow it)."""
    stopped = Run.objects.filter(pk=run.pk, state__in=[RunState.QUEUED, RunState.GRADING]).update(
        state=RunState.STOPPED, finished_at=timezone.now()
    )
    if stopped:
        _summarise(run.pk)
    run.refresh_from_db()
    return bool(stopped)


def run_fail(*, run_id: int, error: str = RUN_FAILED) -> None:
    """A run that cannot go on: failed, saying so, keeping what it graded."""
    failed = Run.objects.filter(pk=run_id, state__in=[RunState.QUEUED, RunState.GRADING]).update(
        state=RunState.FAILED, error=error, finished_at=timezone.now()
    )
    if failed:
        _summarise(run_id)


def new_lease() -> str:
    return uuid.uuid4().hex


def run_queue(*, run_id: int) -> str | None:
    """The Celery queue of the run's chunks: the judges' (JUDGE_QUEUE) when it calls a judge,
    else the default one."""
    plan = RunPlan.from_json(Run.objects.only("plan").get(pk=run_id).plan or {})
    return settings.JUDGE_QUEUE if plan is None or plan.judge_calls else None
