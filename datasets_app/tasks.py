"""Celery tasks: each takes an id and calls a service.

Without a broker they run eagerly in the web process. With one, `acks_late` keeps a task on
the queue until it has finished, so a worker that dies mid-import hands it to another; the
upload's state in the database (claimed in the import's own transaction) makes the rerun
import once, not twice.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from kombu.exceptions import OperationalError

from datasets_app import services
from datasets_app.models import Upload

logger = logging.getLogger(__name__)

CHECK_FAILED = "The file could not be checked. Nothing was written; try again, or tell us."
IMPORT_FAILED = "The import failed and nothing was written. Try again."


@shared_task(acks_late=True)
def check_upload(upload_id: int, import_mode: str | None = None) -> None:
    """Check the upload; with `import_mode`, then import a file that can be (the API's
    one-step import), claimed as the dialog's Import button claims it."""
    upload = Upload.objects.filter(pk=upload_id).first()
    if upload is None or upload.state != Upload.State.CHECKING:
        return
    try:
        services.upload_check(upload=upload)
    except Exception:
        logger.exception("Checking upload %s failed", upload_id)
        Upload.objects.filter(pk=upload_id).update(state=Upload.State.FAILED, error=CHECK_FAILED)
        return
    if import_mode and upload.result.get("ok"):
        services.upload_import_start(upload=upload, mode=import_mode)


@shared_task(acks_late=True)
def import_upload(upload_id: int, mode: str) -> None:
    upload = Upload.objects.filter(pk=upload_id).first()
    if upload is None or upload.state != Upload.State.IMPORTING:
        return
    try:
        services.import_run(upload=upload, mode=mode)
    except services.ImportRefused as exc:
        Upload.objects.filter(pk=upload_id).exclude(state=Upload.State.IMPORTED).update(
            state=Upload.State.CHECKED, error=str(exc)
        )
    except Exception:
        logger.exception("Importing upload %s failed", upload_id)
        Upload.objects.filter(pk=upload_id).exclude(state=Upload.State.IMPORTED).update(
            state=Upload.State.CHECKED, error=IMPORT_FAILED
        )


@shared_task
def delete_expired_uploads() -> int:
    """Remove uploads older than a day, with their files (hourly, from Celery beat)."""
    return services.uploads_delete_expired()


def enqueue(task: Task, *args: object) -> None:
    """Hand `task` to the workers; when the broker cannot be reached, run it here and now.

    A person who chose a file should see it checked even while Redis is down: the work is
    the same either way, only where it runs differs. Eager mode (no broker) runs it here too.
    """
    try:
        task.delay(*args)
    except OperationalError:
        logger.warning("The broker did not answer; running %s in this process", task.name)
        task.apply(args=args)
