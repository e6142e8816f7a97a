"""An upload handler that stops reading a request body past the size an import accepts.

Django's own limits (DATA_UPLOAD_MAX_MEMORY_SIZE) leave file parts out; the views refuse an
oversized body from its Content-Length before reading it, and this handler stops a body
that did not say its length (chunked) once it passes the same limit, instead of spooling
it all to disk.
"""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload


class UploadTooLarge(StopUpload):
    pass


class LimitedUploadHandler(FileUploadHandler):
    """Counts the bytes of every file in the request; aborts past MAX_UPLOAD_BYTES."""

    def __init__(self, request=None) -> None:
        super().__init__(request)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > settings.MAX_UPLOAD_BYTES:
            if self.request is not None:
                self.request.upload_too_large = True  # type: ignore[attr-defined]
            raise UploadTooLarge(connection_reset=False)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None
