"""`manage.py check_dataset_file PATH [--json] [--map FIELD=SOURCE]...`: check a dataset file
as the import dialog does.

`--map prompt=question` says which column (or key, `inputs.question` for a nested one) fills
a field, as the dialog's mapping step does; `--json` then says in "mapping" what was
applied, recognised or guessed.

Prints the preview (or every problem) and exits 0 when the file can be imported, 1 when it
has problems; 2 when PATH cannot be read. Writes nothing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from datasets_app.checked import StoredCheck
from datasets_app.importing.checker import check_file, result_to_json
from datasets_app.importing.shapes import parse_map_options
from datasets_app.importing.spec import CheckOptions, CheckResult
from datasets_app.management.report import add_read_options, read_options, write_check
from datasets_app.selectors import checker_options

# Exit codes: a file with problems is an answer, not an error; an unreadable path is.
EXIT_PROBLEMS = 1
EXIT_UNREADABLE = 2


class Command(BaseCommand):
    help = "Check a dataset file (.json, .jsonl, .csv, .xlsx or .zip) without importing it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The dataset file to check.")
        parser.add_argument(
            "--json", action="store_true", help="Print the result as one JSON object."
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="FIELD=SOURCE",
            help="Which column or key fills a field (id, name, prompt, expected, criterion, "
            "weight), e.g. --map prompt=question; repeat for each field.",
        )
        add_read_options(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        mapping, errors = parse_map_options(options["map"])
        if errors:
            raise CommandError(" ".join(errors))
        try:
            settings = checker_options()
        except DatabaseError:
            # A pipeline may check files on a machine whose database was never migrated;
            # the only setting read there is the administrator's, which defaults to off.
            settings = CheckOptions()
            self.stderr.write(
                "The database is not set up (run 'manage.py migrate'): Python checks are "
                "taken as off."
            )
        settings = replace(settings, mapping=mapping or None).read_as(read_options(options))
        try:
            with path.open("rb") as source:
                result = check_file(source, path.name, options=settings)
        except OSError as exc:
            raise CommandError(
                f"Cannot read {path}: {exc.strerror or exc}", returncode=EXIT_UNREADABLE
            ) from exc

        if options["json"]:
            self.stdout.write(json.dumps(result_to_json(result), ensure_ascii=False, indent=2))
        else:
            self._print(result)
        if not result.ok:
            raise SystemExit(EXIT_PROBLEMS)

    def _print(self, result: CheckResult) -> None:
        if write_check(self.stdout.write, StoredCheck.of(result)):
            count = result.task_count
            self.stdout.write(
                self.style.SUCCESS(f"Ready to import {count} task{'s' if count != 1 else ''}.")
            )
