"""Log records as one JSON object a line, for a log collector to search by field, or as
text; either way without a token a client sent in a URL (`redaction.redacted`): Django
logs the path of a refused request ("Not Found: /api/v1/cev_…/")."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from datasets_app.redaction import redacted


class JsonFormatter(logging.Formatter):
    """time, level, logger, message; the traceback as `exception`; for a request's error
    (django.request), its method, path and status."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request = getattr(record, "request", None)
        if request is not None and hasattr(request, "path"):
            entry["method"] = request.method
            entry["path"] = request.path
        if hasattr(record, "status_code"):
            entry["status"] = record.status_code
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return redacted(json.dumps(entry, ensure_ascii=False, default=str))


class TextFormatter(logging.Formatter):
    """logging's own text lines, redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redacted(super().format(record))
