"""Remove uploads past their expiry (a day), with their files: for a cron job where no
Celery beat runs; the worker's beat does the same every hour."""

from django.core.management.base import BaseCommand

from datasets_app.services import imports


class Command(BaseCommand):
    help = "Delete uploads older than a day and the files they left in the storage."

    def handle(self, *args, **options) -> None:
        count = imports.uploads_delete_expired()
        self.stdout.write(f"Deleted {count} expired upload{'' if count == 1 else 's'}.")
