"""Settings for the gunicorn and Celery worker that tests/api/test_recipes.py starts: the
app's own, on a queue of the test's own, so that runs on one Redis never take each other's
tasks."""

import os

from contextevals.settings import *  # noqa: F403

CELERY_TASK_DEFAULT_QUEUE = os.environ["RECIPE_QUEUE"]
# Runs that call a judge on the same queue, unless the test names a judges' queue of its own.
JUDGE_QUEUE = os.environ.get("RECIPE_JUDGE_QUEUE", CELERY_TASK_DEFAULT_QUEUE)
# Every version the recipes save is exported through a worker (a 202, then the export's
# own address), as a version of more than 10,000 tasks is.
EXPORT_IN_REQUEST_TASKS = 1
# Redis hands an unacknowledged task out again past the visibility timeout, at kombu's next
# sweep: every 100 s by default, every second here, so a test waiting on it waits seconds.
# The sweep takes one lock shared by every worker on the Redis, which a worker killed while
# it held it keeps for 300 s by default: the tests kill workers, so here it lasts 3 s.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,  # noqa: F405
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
    "unacked_mutex_expire": 3,
}
