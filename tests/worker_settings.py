"""Settings for the Celery worker the worker tests start: the app's own, plus a storage that
takes 0.2 s per task file, so that a test can kill the worker while it is storing files (or
watch an export's progress while it reads them)."""

from contextevals.settings import *  # noqa: F403

STORAGES = {
    **STORAGES,  # noqa: F405
    "default": {"BACKEND": "tests.worker_storage.SlowStorage"},
}
# A message a killed worker held comes back after 2 s, checked on every poll. Every worker
# on this Redis takes one lock to put such messages back, and a worker killed while it held
# the lock keeps it for `unacked_mutex_expire` (kombu's default: 300 s, during which no
# other worker of any test restores anything): the tests kill workers, so it lasts 3 s.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 2,
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
    "unacked_mutex_expire": 3,
}
