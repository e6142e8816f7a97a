"""The HTTP API for pipelines, at /api/v1/: check a file, import it, save and export
versions, read datasets and tasks; django-ninja, with its OpenAPI schema and docs page.

Like the pages, it only translates HTTP: every endpoint calls the services and selectors the
pages call. Requests authenticate with a personal API token (`Authorization: Bearer …`),
never with a session cookie, so CSRF does not apply; a token can do what its owner can.
Every error has one shape, `{"error": {"code", "message", "details"}}`.
"""

from __future__ import annotations

from datasets_app.api.endpoints import api, urlpatterns

__all__ = ["api", "urlpatterns"]
