"""How the commands print a checked file: the detected format, then every problem (one a
line, starting with its location) or the preview, its warnings and notes.

Both `check_dataset_file` and `import_dataset_file` print through here, from the check as
`checker.result_to_json` writes it (the form a worker stores on the upload).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import CommandError, CommandParser

from datasets_app import wording
from datasets_app.checked import StoredCheck
from datasets_app.importing.encodings import CHOICES as ENCODINGS
from datasets_app.importing.encodings import ENCODING_HELP
from datasets_app.importing.shapes import LABELS
from datasets_app.importing.spec import MAX_HEADER_ROW, Problem
from datasets_app.models import Dataset

NO_SUCH_DATASET = "There is no dataset named or numbered {value!r}."
SEVERAL_DATASETS = "{count} datasets are named {value!r}; give the id of the one you mean."
NO_SUCH_USER = "There is no user named {value!r}."
NO_SUPERUSER = "There is no superuser to act for; name a user with --user."


def add_read_options(parser: CommandParser) -> None:
    """The dialog's Read options as flags (`READ_OPTIONS`), for both commands."""
    parser.add_argument(
        "--encoding", choices=list(ENCODINGS), metavar="ENCODING", help=ENCODING_HELP
    )
    parser.add_argument(
        "--header-row",
        type=_row_number,
        metavar="ROW",
        help="The row of a CSV's or a workbook's column names (from 1), when it is not the first.",
    )
    parser.add_argument(
        "--number-tasks",
        action="store_true",
        help="Number the tasks task-1, task-2... instead of using the file's ids (for a "
        "file whose ids repeat).",
    )


def _row_number(value: str) -> int:
    if not (value.isdigit() and 1 <= int(value) <= MAX_HEADER_ROW):
        raise argparse.ArgumentTypeError(f"a row from 1 to {MAX_HEADER_ROW:,}")
    return int(value)


def read_options(options: dict[str, Any]) -> dict[str, Any]:
    """The Read options the flags of `add_read_options` say, as an upload keeps them."""
    return {
        "encoding": options["encoding"],
        "header_row": options["header_row"],
        "number_tasks": options["number_tasks"],
    }


def command_user(username: str) -> User:
    """The user a command acts for: `--user`, else the first superuser."""
    users = get_user_model().objects
    if username:
        user = users.filter(username=username).first()
        if user is None:
            raise CommandError(NO_SUCH_USER.format(value=username))
        return user
    user = users.filter(is_superuser=True).order_by("pk").first()
    if user is None:
        raise CommandError(NO_SUPERUSER)
    return user


def command_dataset(value: str) -> Dataset:
    """The dataset `--dataset` names, by id or by name (one of that name)."""
    if value.isdigit() and (dataset := Dataset.objects.filter(pk=int(value)).first()):
        return dataset
    named = list(Dataset.objects.filter(name=value)[:2])
    if not named:
        raise CommandError(NO_SUCH_DATASET.format(value=value))
    if len(named) > 1:
        count = Dataset.objects.filter(name=value).count()
        raise CommandError(SEVERAL_DATASETS.format(count=count, value=value))
    return named[0]


def write_check(
    write: Callable[[str], None],
    result: StoredCheck,
    extra_problems: Sequence[dict[str, Any]] = (),
) -> bool:
    """Print the check; True when the file can be imported."""
    problems = [Problem.from_json(p) for p in [*result.problems, *extra_problems]]
    write(result.detected)
    mapping = result.mapping
    if mapping is not None and mapping.fields:
        fields = ", ".join(
            f"{LABELS.get(key, key)} ← {source}" for key, source in mapping.fields.items()
        )
        write(f"Mapping ({mapping.how}): {fields}")
    if problems or not result.ok:
        count = len(problems)
        write(f"{count} problem{'s' if count != 1 else ''}; nothing can be imported:")
        for problem in problems:
            write(f"{wording.full(problem.to_json())}: {problem.message}")
        return False
    for task in result.tasks:
        scored_by = "criteria" if task.scored_by == "criteria" else "expected answer"
        write(
            f"  {task.id}  {task.name}  scored by {scored_by}  "
            f"{task.criteria} criteria  total weight {task.total_weight:g}"
        )
    for stored in result.warnings:
        warning = Problem.from_json(stored)
        write(f"Warning: {wording.full(warning.to_json())}: {warning.message}")
    for note in result.notes:
        write(f"Note: {note}")
    return True
