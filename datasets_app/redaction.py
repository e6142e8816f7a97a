"""What must never reach a log: API tokens, wherever a client put them. Pure Python (the
gunicorn master imports it before Django is set up).

Only `Authorization: Bearer` opens the API, but clients send tokens the wrong way too: as
`?token=…`, as the user name of Basic auth, inside a path. A log line that names a request
passes through `redacted` first.
"""

from __future__ import annotations

import re
from typing import Any

API_TOKEN_PREFIX = "cev_"  # noqa: S105 - a marker, not a secret: scanners spot leaked tokens by it
REDACTED = "[redacted]"

# A value given under a name that says it is a secret (?token=, &api_key=, password=...).
_SECRET_PARAMETER = re.compile(
    r"(?i)(?P<name>(?:^|[?&;])[^=&;\s]*(?:token|key|secret|password|passwd|auth)[^=&;\s]*=)"
    r"(?P<value>[^&;\s\"]*)"
)
# One of our tokens, wherever it stands.
_OUR_TOKEN = re.compile(re.escape(API_TOKEN_PREFIX) + r"[A-Za-z0-9_\-%]+")


def redacted(text: str) -> str:
    """`text` (a request line, a query string, a referrer) with every secret parameter's
    value and every API token replaced by [redacted]."""
    text = _SECRET_PARAMETER.sub(lambda m: m.group("name") + REDACTED, text)
    return _OUR_TOKEN.sub(API_TOKEN_PREFIX + REDACTED, text)


def sentry_event_redacted(event: Any, hint: Any = None) -> Any:
    """Sentry's `before_send`: an error report carries the request's URL and query string
    (and, whatever `send_default_pii` says, its headers but cookies): redacted alike, and no
    Authorization header."""
    request = event.get("request")
    if isinstance(request, dict):
        for key in ("url", "query_string"):
            if isinstance(request.get(key), str):
                request[key] = redacted(request[key])
        headers = request.get("headers")
        if isinstance(headers, dict):
            for name in list(headers):
                if name.lower() in ("authorization", "cookie", "x-csrftoken"):
                    headers[name] = REDACTED
    return event
