"""Create a local administrator on first run, printing its password once."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the administrator 'admin' with a generated password if no superuser exists."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options) -> None:
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        rule = "=" * 64
        self.stdout.write(
            self.style.SUCCESS(
                f"\n{rule}\n  Your administrator, shown once:\n"
                f"    user name: {username}\n    password:  {password}\n"
                "  Change the password once signed in, or with\n"
                f"  'python manage.py changepassword {username}'.\n{rule}\n"
            )
        )
