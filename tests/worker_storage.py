"""A local storage that is slow with task files (for the worker tests only): storing one (an
import) or opening one (a .zip export) takes 0.2 s, so that a test can see a worker mid-way."""

import time

from django.core.files.storage import FileSystemStorage

SECONDS_PER_FILE = 0.2


class SlowStorage(FileSystemStorage):
    def _save(self, name, content):
        if name.startswith("task-files/"):
            time.sleep(SECONDS_PER_FILE)
        return super()._save(name, content)

    def _open(self, name, mode="rb"):
        if name.startswith("task-files/"):
            time.sleep(SECONDS_PER_FILE)
        return super()._open(name, mode)
