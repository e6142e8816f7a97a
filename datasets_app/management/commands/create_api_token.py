"""`manage.py create_api_token USER [--name NAME] [--expires-days N]`: a personal API token
for provisioning CI without a browser. Prints the token once; only its fingerprint is kept."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from datasets_app.services import limits, tokens

NO_SUCH_USER = "There is no user named {value!r}."
DAYS_POSITIVE = "--expires-days must be a whole number of days, 1 or more."


class Command(BaseCommand):
    help = "Create a personal API token for USER and print it (once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("user", help="The user name the token acts as.")
        parser.add_argument("--name", default="CI", help="What the token is for (default: CI).")
        parser.add_argument(
            "--expires-days",
            type=int,
            default=None,
            help="Days until it stops working; default: until revoked.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(NO_SUCH_USER.format(value=options["user"]))
        days = options["expires_days"]
        if days is not None and days < 1:
            raise CommandError(DAYS_POSITIVE)
        try:
            token, secret = tokens.api_token_create(
                user=user, name=options["name"], expires_days=days
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        except limits.LimitReached as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write(
            f"Created the API token “{token.name}” for {user.get_username()}"
            + (f", expiring {token.expires_at:%Y-%m-%d %H:%M} UTC" if token.expires_at else "")
            + ". It is shown once:"
        )
        self.stdout.write(secret)
