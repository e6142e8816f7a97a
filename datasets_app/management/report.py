"""How the commands print a checked file: the detected format, then every problem (one a
line, starting with its location) or the preview, its warnings and notes.

Both `check_dataset_file` and `import_dataset_file` print through here, from the check as
`checker.result_to_json` writes it (the form a worker stores on the upload).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import CommandError

from datasets_app import wording
from datasets_app.importing.shapes import LABELS
from datasets_app.importing.spec import Problem
from datasets_app.models import Dataset

NO_SUCH_DATASET = "There is no dataset named or numbered {value!r}."
SEVERAL_DATASETS = "{count} datasets are named {value!r}; give the id of the one you mean."
NO_SUCH_USER = "There is no user named {value!r}."
NO_SUPERUSER = "There is no superuser to act for; name a user with --user."


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
    result: dict[str, Any],
    extra_problems: Sequence[dict[str, Any]] = (),
) -> bool:
    """Print the check; True when the file can be imported."""
    problems = [Problem.from_json(p) for p in [*result.get("problems", []), *extra_problems]]
    write(result.get("detected", ""))
    mapping = result.get("mapping")
    if mapping and mapping.get("fields"):
        fields = ", ".join(
            f"{LABELS.get(key, key)} ← {source}" for key, source in mapping["fields"].items()
        )
        write(f"Mapping ({mapping.get('how', '')}): {fields}")
    if problems or not result.get("ok"):
        count = len(problems)
        write(f"{count} problem{'s' if count != 1 else ''}; nothing can be imported:")
        for problem in problems:
            write(f"{wording.full(problem.to_json())}: {problem.message}")
        return False
    for task in result.get("tasks", []):
        scored_by = "criteria" if task["scored_by"] == "criteria" else "expected answer"
        write(
            f"  {task['id']}  {task['name']}  scored by {scored_by}  "
            f"{task['criteria']} criteria  total weight {task['total_weight']:g}"
        )
    for warning in result.get("warnings", []):
        warning = Problem.from_json(warning)
        write(f"Warning: {wording.full(warning.to_json())}: {warning.message}")
    for note in result.get("notes", []):
        write(f"Note: {note}")
    return True
