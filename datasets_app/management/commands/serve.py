"""`make run`'s server: Django's development server (with the static files), and once it
listens, the first administrator's sign-in, framed, as the last thing printed, below the
server's own lines, so that it is seen and not scrolled away."""

from __future__ import annotations

from django.contrib.staticfiles.management.commands.runserver import Command as RunServer
from django.core.management import call_command


class Command(RunServer):
    help = (
        "Run the development server; once it listens, create the first administrator if "
        "there is none and print its sign-in, framed, last."
    )

    def on_bind(self, server_port: int) -> None:
        super().on_bind(server_port)
        # Printed, not bound: runserver took the address from the command line.
        addr: str = self.addr  # type: ignore[attr-defined]  # set by runserver's handle()
        host = "0.0.0.0" if addr == "0" else addr  # noqa: S104
        url = f"{self.protocol}://{host}:{server_port}/"
        # Only the first start makes one: a restart after a code change prints just the address.
        call_command("ensure_admin", url=url, stdout=self.stdout)
        self.stdout.flush()
