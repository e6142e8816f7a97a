"""Create a local administrator on first run, printing its sign-in once, framed."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

RULE = "=" * 64


class Command(BaseCommand):
    help = "Create the administrator 'admin' with a generated password if no superuser exists."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--url", default="", help="Where the app is, to say where to sign in.")

    def handle(self, *args, username: str, url: str, **options) -> None:
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            if url:
                self.stdout.write(f"Context Evals is at {url}")
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        where = f"  Sign in at {url}\n" if url else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"\n{RULE}\n  Your administrator, shown once:\n{where}"
                f"    user name: {username}\n    password:  {password}\n"
                "  Add the people who may sign in on its People page.\n"
                "  Change the password once signed in, or with\n"
                f"  'python manage.py changepassword {username}'.\n{RULE}\n"
            )
        )
