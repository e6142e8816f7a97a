"""gunicorn's access log without secrets (gunicorn.conf.py's `logger_class`).

gunicorn's own atoms print the whole request line and query string (`?token=…`), the
referrer, and the user name of Basic auth (a token sent as one): each goes through
`redaction.redacted`, the user name never appears, and neither do request headers that
carry credentials, whatever `access_log_format` asks for.
"""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from datasets_app.redaction import REDACTED, redacted

# Atoms that may hold what a client sent in the URL or its referrer.
URL_ATOMS = ("r", "q", "U", "f", "{raw_uri}e", "{query_string}e", "{path_info}e", "{http_referer}e")
CREDENTIAL_ATOMS = (
    "{authorization}i",
    "{cookie}i",
    "{x-csrftoken}i",
    "{http_authorization}e",
    "{http_cookie}e",
    "{http_x_csrftoken}e",
)


class RedactingLogger(Logger):
    """gunicorn's Logger, its access-log atoms redacted."""

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> dict:
        atoms = super().atoms(resp, req, environ, request_time)
        atoms["u"] = "-"
        for name in URL_ATOMS:
            if isinstance(atoms.get(name), str):
                atoms[name] = redacted(atoms[name])
        for name in CREDENTIAL_ATOMS:
            if name in atoms:
                atoms[name] = REDACTED
        return atoms
