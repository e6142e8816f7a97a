"""The app's one way to grade: `graders()` from the site's settings (its judge, the
administrator's Python checks switch, the tasks' stored files), and the specs to grade.

Every grader in the app (a try, a run) is made here, so that a task grades the same way
wherever it is graded. What to grade comes from the selectors the pages use:
`dataset_spec_for_grading(dataset)` and `selectors.task_spec(task)` for a live task,
`selectors.version_spec(version)` for a saved version's tasks.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import default_storage

from context_verifiers.grading import Graders
from context_verifiers.judges import Judge, JudgeConfig
from context_verifiers.slots import Slots
from context_verifiers.views import MAX_FILE_VIEW_BYTES
from datasets_app import selectors
from datasets_app.importing.spec import DatasetSpec, FileSpec
from datasets_app.models import Dataset, SiteSettings

logger = logging.getLogger(__name__)

# A verifier sees at most MAX_FILE_VIEW_BYTES of a file (the view marks it cut): one byte
# more is read so that the cut shows, and never the rest of a 2 GiB attachment.
MAX_READ_BYTES = MAX_FILE_VIEW_BYTES + 1

# How long a deterministic reply is reused: long enough for an author's afternoon of
# tries and a run's retries; the key holds the prompt version, so a changed prompt is
# asked afresh anyway.
REPLY_CACHE_SECONDS = 7 * 24 * 3600


class CachedReplies:
    """The judges' ReplyCache in Django's cache (Redis with CACHE_URL, so every process
    shares it): a try of the same answer with temperature 0 and a seed costs nothing."""

    prefix = "judge-reply:"

    def get(self, key: str) -> str | None:
        reply = cache.get(self.prefix + key)
        return reply if isinstance(reply, str) else None

    def set(self, key: str, reply: str) -> None:
        cache.set(self.prefix + key, reply, REPLY_CACHE_SECONDS)


_judges: dict[tuple[JudgeConfig, str], Judge] = {}
_judges_lock = threading.Lock()


def judge_slots(config: JudgeConfig) -> Slots | None:
    """The site's limit on requests in flight to its judge: JUDGE_CONCURRENCY across every
    process when the broker is Redis (JUDGE_SLOTS_URL), else None (the judge counts in its
    own process). A slot is held at most as long as a request can take, its timeout twice
    over and a little, before it counts as a dead worker's."""
    url: str = settings.JUDGE_SLOTS_URL
    if not url:
        return None
    from datasets_app.judge_slots import RedisSlots

    return RedisSlots(
        url=url,
        endpoint=config.base_url or "",
        limit=config.concurrency,
        hold_seconds=2 * config.timeout_seconds + 10,
    )


def site_judge() -> Judge | None:
    """The judge settings.JUDGE describes, one per process (its client keeps its
    connections); None when no judge is configured."""
    config: JudgeConfig = settings.JUDGE
    if not config.configured:
        return None
    key = (config, settings.JUDGE_SLOTS_URL)
    with _judges_lock:
        judge = _judges.get(key)
        if judge is None:
            judge = _judges[key] = Judge(config, cache=CachedReplies(), slots=judge_slots(config))
        return judge


def read_task_file(file: FileSpec) -> bytes | None:
    """A stored task file's bytes, at most MAX_READ_BYTES; None for a link (never fetched:
    a grader makes no request to a host a file names) or a file the storage lost."""
    if not file.path:
        return None
    try:
        with default_storage.open(file.path, "rb") as handle:
            return handle.read(MAX_READ_BYTES)
    except OSError:
        logger.warning("Task file %s (%s) could not be read for grading", file.name, file.path)
        return None


def graders() -> Graders:
    """What the verifiers may use on this site: its judge (None: judge criteria are
    skipped, saying how to configure one), Python checks only while the administrator has
    them on (and then only in the sandbox, which the library asks), the stored files, and
    the judge's concurrency."""
    config: JudgeConfig = settings.JUDGE
    return Graders(
        judge=site_judge(),
        allow_python=SiteSettings.load().python_checks_enabled,
        read_file=read_task_file,
        concurrency=config.concurrency,
    )


def dataset_spec_for_grading(dataset: Dataset) -> DatasetSpec:
    """What grades every live task of `dataset`: its settings and its criteria for every
    task (its tasks are not read; grade each with `selectors.task_spec(task)`)."""
    return selectors.dataset_spec(dataset=dataset, tasks=())
