"""`manage.py run_outputs PATH --dataset NAME_OR_ID [--version N] [--wait] [--min-score X]
[--no-worse] [--json]`: grade an agent's outputs against a saved version, as a CI job does.

Through the runs service, as the page and the API: the outputs are checked (every problem
printed with its line or row, exit 1), then graded by the workers (in this process when no
broker is configured). With `--wait` it waits for the run to end and prints its score;
`--min-score` fails (exit 2) below a score, `--no-worse` below the previous run's of the
same dataset. Exit 1 too when the run failed or was stopped.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TextIO

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from datasets_app import selectors, wording
from datasets_app.management.commands.import_dataset_file import POLL_SECONDS, Progress
from datasets_app.management.report import command_dataset, command_user
from datasets_app.models import Run, RunState
from datasets_app.services import runs

EXIT_PROBLEMS = 1
EXIT_BELOW = 2

BELOW_THRESHOLD = "The score {score} is below --min-score {threshold}."
BELOW_PREVIOUS = "The score {score} is below the previous run's {previous} (run {run})."
DID_NOT_FINISH = "The run {state}: {error}"


def _score(value: float | None) -> str:
    return "no score" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = (
        "Grade an agent's outputs (.jsonl, .csv, or a .zip of one with the tasks' files) "
        "against a saved version of a dataset."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # `--version N` is the dataset's version here, not Django's: ours replaces it.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "path",
            help='The outputs: .jsonl {"task", "output"} lines, or .csv; or a .zip of one, '
            "each task's files under files/<task id>/.",
        )
        parser.add_argument("--dataset", required=True, help="The dataset's id or name.")
        parser.add_argument("--version", type=int, help="The version; default: the latest.")
        parser.add_argument("--name", default="", help="A name for the run.")
        parser.add_argument("--user", default="", help="Who runs it; default: the first superuser.")
        parser.add_argument("--wait", action="store_true", help="Wait for the run to end.")
        parser.add_argument(
            "--min-score", type=float, help="With --wait: exit 2 when the score is below this."
        )
        parser.add_argument(
            "--no-worse",
            action="store_true",
            help="With --wait: exit 2 when the score is below the previous run's.",
        )
        parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
        for role in ("task", "output"):
            parser.add_argument(
                f"--{role}-column",
                default="",
                metavar="NAME",
                help=f"The column (or key) that holds the {role}, when two names could.",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        user = command_user(options["user"])
        dataset = command_dataset(options["dataset"])
        if options["version"] is None:
            version = selectors.latest_version(dataset)
            if version is None:
                raise CommandError(runs.NO_VERSION, returncode=EXIT_PROBLEMS)
        else:
            version = dataset.versions.filter(number=options["version"]).first()
            if version is None:
                raise CommandError(f"{dataset.name} has no v{options['version']}.")
        previous = selectors.runs_of(dataset).filter(state__in=list(runs.ENDED_WELL)).first()
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror or exc}") from exc
        try:
            mapping = {
                role: options[f"{role}_column"]
                for role in ("task", "output")
                if options[f"{role}_column"]
            }
            run = runs.run_create(
                version=version,
                user=user,
                data=data,
                file_name=path.name,
                name=options["name"],
                mapping=mapping or None,
            )
        except runs.RunRefused as refused:
            count = len(refused.problems)
            self.stdout.write(f"{count:,} problem{'s' if count != 1 else ''}; nothing was graded:")
            for problem in refused.problems:
                self.stdout.write(f"{wording.full(problem.to_json())}: {problem.message}")
            if not refused.problems:
                self.stdout.write(str(refused))
            raise SystemExit(EXIT_PROBLEMS) from refused
        if not options["wait"]:
            self.stdout.write(f"Run {run.pk} of {dataset.name} v{version.number}: {run.state}.")
            return
        run = self._wait(run)
        self._report(run, options, previous)

    def _wait(self, run: Run) -> Run:
        stream: TextIO = self.stderr._out  # type: ignore[assignment]  # the command's stderr
        progress = Progress(stream, "Grading…", "criteria") if settings.CELERY_BROKER_URL else None
        while True:
            run.refresh_from_db()
            if progress is not None:
                progress.show(run.outcomes_done, run.outcome_count)
            if run.ended:
                if progress is not None:
                    progress.close()
                return run
            time.sleep(POLL_SECONDS)

    def _report(self, run: Run, options: dict[str, Any], previous: Run | None) -> None:
        summary = selectors.run_summary_of(run)
        if options["json"]:
            document = selectors.run_results_document(run)
            self.stdout.write(json.dumps(document, ensure_ascii=False, indent=2))
        score = summary.score.value if summary else None
        if summary is not None:
            self.stderr.write(_summary_line(run, summary))
        if run.state in (RunState.STOPPED, RunState.FAILED):
            self.stderr.write(
                DID_NOT_FINISH.format(state=run.get_state_display().lower(), error=run.error)
            )
            raise SystemExit(EXIT_PROBLEMS)
        threshold = options["min_score"]
        if _below(score, threshold):
            self.stderr.write(BELOW_THRESHOLD.format(score=_score(score), threshold=threshold))
            raise SystemExit(EXIT_BELOW)
        if options["no_worse"] and previous:
            self._fail_below_previous(score, previous)

    def _fail_below_previous(self, score: float | None, previous: Run) -> None:
        """Exit 2 when the score is below the previous run's (a run without one sets no bar)."""
        before = selectors.run_summary_of(previous)
        bar = before.score.value if before else None
        if _below(score, bar):
            self.stderr.write(
                BELOW_PREVIOUS.format(score=_score(score), previous=_score(bar), run=previous.pk)
            )
            raise SystemExit(EXIT_BELOW)


def _below(score: float | None, bar: float | None) -> bool:
    """Whether `score` fails `bar`: no bar fails nothing, and no score fails any bar."""
    return bar is not None and (score is None or score < bar)


def _summary_line(run: Run, summary: selectors.RunSummary) -> str:
    """The run's figures in one line, as the command prints them when the run ends."""
    stderr = f" ± {summary.score.stderr:.3f}" if summary.score.stderr is not None else ""
    return (
        f"Run {run.pk}: {run.get_state_display().lower()}, "
        f"score {_score(summary.score.value)}{stderr}, "
        f"coverage {summary.coverage * 100:.0f}%, {summary.tasks:,} tasks "
        f"({summary.failed_tasks:,} below 1, {summary.errored_tasks:,} with errors, "
        f"{summary.no_output:,} with no output)"
    )
