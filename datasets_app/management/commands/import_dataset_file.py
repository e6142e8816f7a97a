"""`manage.py import_dataset_file PATH --dataset NAME_OR_ID [--mode add|replace] [--new]
[--map FIELD=SOURCE]...`.

Imports a dataset file from the command line through the import dialog's own steps: keep
the file as an upload, check it (the `check_upload` task), import it (the `import_upload`
task). With no broker the tasks run in this process; with CELERY_BROKER_URL set they run
on the workers, and this command waits for them with its progress on stderr: a tqdm bar on
a terminal, a plain line now and then in a log. Prints the problems as `check_dataset_file`
does and exits 1, or prints what was imported.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, TextIO

from django.conf import settings
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from datasets_app import selectors, tasks
from datasets_app.importing.shapes import parse_map_options
from datasets_app.management.report import (
    add_read_options,
    command_dataset,
    command_user,
    read_options,
    write_check,
)
from datasets_app.models import Dataset, ImportMode, Upload
from datasets_app.services import imports, limits

EXIT_PROBLEMS = 1
EXIT_UNREADABLE = 2
POLL_SECONDS = 0.2
# In a log (stderr not a terminal), a line when the counts change, at most this often.
LOG_EVERY_SECONDS = 5.0

DATASET_REQUIRED = "Name the dataset with --dataset, or create one with --new."


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


class Command(BaseCommand):
    help = "Import a dataset file (.json, .jsonl, .csv, .xlsx or .zip) into a dataset."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The dataset file to import.")
        parser.add_argument(
            "--dataset",
            default="",
            help="The dataset's id or name; with --new, the new dataset's name.",
        )
        parser.add_argument(
            "--mode", choices=ImportMode.values, default=ImportMode.ADD, help="add or replace."
        )
        parser.add_argument(
            "--new",
            action="store_true",
            help="Create the dataset (named by --dataset, else by the file).",
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="FIELD=SOURCE",
            help="Which column or key fills a field, e.g. --map prompt=question (as "
            "check_dataset_file takes it).",
        )
        add_read_options(parser)
        parser.add_argument(
            "--user",
            default="",
            help="Who imports (and owns a new dataset); default: the first superuser.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        mapping, errors = parse_map_options(options["map"])
        if errors:
            raise CommandError(" ".join(errors))
        owner = command_user(options["user"])
        dataset = None
        if not options["new"]:
            if not options["dataset"]:
                raise CommandError(DATASET_REQUIRED)
            dataset = command_dataset(options["dataset"])
        mode = ImportMode.ADD if options["new"] else options["mode"]
        try:
            with path.open("rb") as source:
                upload = imports.upload_create(
                    owner=owner,
                    dataset=dataset,
                    uploaded_file=File(source, name=path.name),
                    mode=mode,
                    mapping=mapping,
                    read_options=read_options(options),
                )
        except OSError as exc:
            raise CommandError(
                f"Cannot read {path}: {exc.strerror or exc}", returncode=EXIT_UNREADABLE
            ) from exc
        except imports.OverQuota as over:
            raise CommandError(str(over), returncode=EXIT_PROBLEMS) from over

        imports.upload_check_start(upload=upload)
        upload = self._wait(upload, Upload.State.CHECKING, "Checking…", "tasks")
        if upload.state == Upload.State.FAILED:
            self.stderr.write(upload.error)
            raise SystemExit(EXIT_PROBLEMS)
        if not self._print_check(upload, mode):
            raise SystemExit(EXIT_PROBLEMS)

        if options["new"]:
            try:
                dataset = imports.dataset_create_with_file(
                    owner=owner, upload=upload, name=options["dataset"]
                )
            except limits.LimitReached as exc:
                raise CommandError(str(exc), returncode=EXIT_PROBLEMS) from exc
        else:
            imports.upload_import_start(upload=upload, mode=mode)
        upload = self._wait(upload, Upload.State.IMPORTING, "Importing…", "files stored")
        if upload.state != Upload.State.IMPORTED:
            self.stderr.write(upload.error or tasks.IMPORT_FAILED)
            self._forget(upload, options["new"])
            raise SystemExit(EXIT_PROBLEMS)
        count = upload.stored_check.task_count
        dataset = upload.dataset
        assert dataset is not None  # imported into it
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {_plural(count, 'task')} into {dataset.name} (id {dataset.pk}) as "
                f"drafts. Save as {selectors.next_version_label(dataset)} to put them in a "
                "version."
            )
        )

    # --- Who and where ----------------------------------------------------------------

    def _forget(self, upload: Upload, created: bool) -> None:
        # A dataset this command created for a file that did not import goes again, so a
        # failed `--new` leaves nothing behind.
        if created and upload.dataset_id is not None:
            Dataset.objects.filter(pk=upload.dataset_id, tasks__isnull=True).delete()

    # --- Waiting and printing ---------------------------------------------------------

    def _wait(self, upload: Upload, state: str, label: str, unit: str) -> Upload:
        """Poll the upload's row until it leaves `state` (at once when tasks run eagerly)."""
        stream: TextIO = self.stderr._out  # type: ignore[assignment]  # the command's stderr
        progress = Progress(stream, label, unit) if settings.CELERY_BROKER_URL else None
        while True:
            upload.refresh_from_db()
            if progress is not None:
                progress.show(upload.progress_done, upload.progress_total)
            if upload.state != state:
                if progress is not None:
                    progress.close()
                return upload
            time.sleep(POLL_SECONDS)

    def _print_check(self, upload: Upload, mode: str) -> bool:
        """Print what `check_dataset_file` prints (plus Add's id clashes); True if it can
        be imported."""
        result = upload.stored_check
        clashes = []
        if mode == ImportMode.ADD and upload.dataset is not None and result.ok:
            clashes = selectors.add_conflicts(dataset=upload.dataset, upload=upload)
        return write_check(self.stdout.write, result, clashes)


class Progress:
    """How far a check or import on a worker is: a tqdm bar on a terminal; in a log, plain
    lines (no carriage returns), when the counts change and at most every LOG_EVERY_SECONDS."""

    def __init__(self, stream: TextIO, label: str, unit: str) -> None:
        self.stream, self.label, self.unit = stream, label, unit
        self.bar: tqdm | None = None
        if stream.isatty():
            self.bar = tqdm(desc=label, unit=f" {unit}", file=stream)
        self.shown: tuple[int, int] | None = None
        self.shown_at = 0.0

    def show(self, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.total = total or None
            self.bar.n = done
            self.bar.refresh()
            return
        now = time.monotonic()
        if (done, total) != self.shown and (
            self.shown is None or done == total or now - self.shown_at >= LOG_EVERY_SECONDS
        ):
            counts = f" {done:,} of {total:,} {self.unit}" if total else ""
            self.stream.write(f"{self.label}{counts}\n")
            self.stream.flush()
            self.shown, self.shown_at = (done, total), now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
