"""Add a person who may sign in, for a team without an administrator's browser at hand:
`manage.py add_person NAME [--email E] [--staff]`. Prints their password once."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from datasets_app.services import people


class Command(BaseCommand):
    help = "Add a person who may sign in, with a generated password printed once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--staff", action="store_true", help="May add people and open the admin."
        )

    def handle(self, *args, username: str, email: str, staff: bool, **options) -> None:
        try:
            person, password = people.person_add(username=username, email=email, is_staff=staff)
        except ValidationError as exc:
            messages = [m for field in exc.message_dict.values() for m in field]
            raise CommandError(" ".join(messages)) from exc
        self.stdout.write(
            f"Added {person.get_username()}.\n  user name: {person.get_username()}\n"
            f"  password:  {password}\n(Shown once: pass it on. They can change it after "
            "signing in.)"
        )
