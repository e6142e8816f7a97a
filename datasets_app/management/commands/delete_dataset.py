"""`manage.py delete_dataset NAME_OR_ID [--user NAME] [--yes]`.

Deletes a dataset from the command line through the same service as its Settings page and
the admin (`services.deletion.dataset_delete`): its results, runs and versions, then its
tasks, criteria and files, in one transaction, and its stored files once that commits. A
shell's `dataset.delete()` would stop at what versions hold, or leave the files on disk.
Without --yes it says what would go and deletes nothing.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from datasets_app.management.report import command_dataset, command_user
from datasets_app.services import deletion

WOULD_DELETE = "Would delete “{name}” (id {id}): {what}. Run again with --yes to delete it."
DELETED = "Deleted “{name}” (id {id}): {what}."


class Command(BaseCommand):
    help = "Delete a dataset with its tasks, versions, runs and files (asks for --yes)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dataset", help="The dataset's id or name.")
        parser.add_argument(
            "--user",
            default="",
            help="Who deletes it (its owner, or someone allowed to delete any dataset); "
            "default: the first superuser.",
        )
        parser.add_argument("--yes", action="store_true", help="Delete it, without asking.")

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = command_dataset(options["dataset"])
        user = command_user(options["user"])
        about = {"name": dataset.name, "id": dataset.pk}
        if not options["yes"]:
            what = deletion.dataset_contents(dataset).described
            self.stdout.write(WOULD_DELETE.format(what=what, **about))
            return
        try:
            contents = deletion.dataset_delete(dataset=dataset, user=user)
        except deletion.DeleteRefused as refused:
            raise CommandError(str(refused)) from refused
        self.stdout.write(DELETED.format(what=contents.described, **about))
