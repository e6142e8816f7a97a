"""A local storage that is slow to store task files (for the worker tests only)."""

import time

from django.core.files.storage import FileSystemStorage

SECONDS_PER_FILE = 0.2


class SlowStorage(FileSystemStorage):
    def _save(self, name, content):
        if name.startswith("task-files/"):
            time.sleep(SECONDS_PER_FILE)
        return super()._save(name, content)
