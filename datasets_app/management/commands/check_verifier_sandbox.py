"""`manage.py check_verifier_sandbox [--no-record]`: run hostile programs through the sandbox
that Python checks run in, print what each tried and how it was stopped.

Exits 0 when every one was contained, 1 otherwise (or when this machine cannot sandbox a
check at all). The outcome is recorded for the admin's "Python checks" switch, which can be
on only while the last self-test passed; `--no-record` only prints (no database needed).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from context_verifiers.sandbox import self_test
from datasets_app.services import sandbox

EXIT_NOT_CONTAINED = 1


class Command(BaseCommand):
    help = "Run hostile programs through the Python checks' sandbox; exit 1 unless all contained."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-record",
            action="store_true",
            help="Only print the outcome; do not record it for the admin's switch.",
        )

    def handle(self, *args: object, **options: object) -> None:
        if options["no_record"]:
            report = self_test()
        else:
            report, _ = sandbox.sandbox_self_test_run()
            if not report.passed:
                self.stderr.write("Python checks are off until a self-test passes.")
        for line in report.lines():
            self.stdout.write(line)
        if not report.passed:
            raise SystemExit(EXIT_NOT_CONTAINED)
