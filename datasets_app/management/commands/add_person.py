"""Add a person who may sign in, for a team without an administrator's browser at hand:
`manage.py add_person NAME [--email E] [--staff] [--invite [--url URL]]`. Prints their
password once, or (with --invite) the link with which they choose their own, as the People
page does."""

from __future__ import annotations

from urllib.parse import urljoin

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from datasets_app.services import people

# Where `make run` serves the app; a team elsewhere says its own address with --url.
DEFAULT_URL = "http://127.0.0.1:8000/"


class Command(BaseCommand):
    help = (
        "Add a person who may sign in, with a generated password printed once, or with "
        "--invite an invite link with which they choose their own."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--staff", action="store_true", help="May add people and open the admin."
        )
        parser.add_argument(
            "--invite",
            action="store_true",
            help="Print an invite link (valid once) instead of a password.",
        )
        parser.add_argument(
            "--url",
            default=DEFAULT_URL,
            help=f"The app's address, which the invite link starts with (default {DEFAULT_URL}).",
        )

    def handle(
        self, *args, username: str, email: str, staff: bool, invite: bool, url: str, **options
    ) -> None:
        add = people.person_invite if invite else people.person_add
        try:
            person, secret = add(username=username, email=email, is_staff=staff)
        except ValidationError as exc:
            messages = [m for field in exc.message_dict.values() for m in field]
            raise CommandError(" ".join(messages)) from exc
        name = person.get_username()
        if invite:
            days = settings.PASSWORD_RESET_TIMEOUT // 86400
            self.stdout.write(
                f"Invited {name}.\n  invite link: {urljoin(url, secret)}\n(Shown once: send "
                f"it to them. It lets them choose their password once, within {days} "
                f"day{'s' if days != 1 else ''}.)"
            )
            return
        self.stdout.write(
            f"Added {name}.\n  user name: {name}\n  password:  {secret}\n(Shown once: pass it "
            "on. They can change it after signing in.)"
        )
