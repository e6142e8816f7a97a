"""Celery tasks: each takes an id and calls a service.

Without a broker they run eagerly in the web process. With one, `acks_late` keeps a task on
the queue until it has finished, so a worker that dies mid-import hands it to another; the
upload's state in the database (claimed in the import's own transaction) makes the rerun
import once, not twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, connection
from kombu.exceptions import OperationalError

from datasets_app import tries
from datasets_app.models import Upload
from datasets_app.services import exports, imports, runs

logger = logging.getLogger(__name__)

CHECK_FAILED = "The file could not be checked. Nothing was written; try again, or tell us."
IMPORT_FAILED = "The import failed and nothing was written. Try again."


class UploadTask(Task):
    """A task on one upload (its id first) that records running out of time on the upload.

    The soft time limit raises SoftTimeLimitExceeded inside the task, which handles it. The
    hard limit kills the process running the task, so nothing in it runs again: the worker
    then calls `on_failure` here, in its own process, with TimeLimitExceeded. Either way the
    person sees that the file took too long, and the message is acknowledged, never handed
    to another worker (Celery's `task_acks_on_failure_or_timeout`, on by default).
    """

    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: Any):
        if isinstance(exc, TimeLimitExceeded) and args:
            logger.error("Upload %s ran past its hard time limit", args[0])
            imports.upload_timed_out(upload_id=args[0])


@contextmanager
def heartbeat(task: Task, upload_id: int) -> Iterator[None]:
    """While the task runs on a worker, note on the upload every UPLOAD_HEARTBEAT_SECONDS
    that the worker is alive, from a thread of its own (a long parse or a slow store writes
    no progress for a while). A worker killed mid-way stops beating, and the dialog says so
    within WORKER_STOPPED_AFTER_SECONDS instead of showing a frozen bar until the broker
    hands the task on. Not when run in the caller's process (eager, or called directly):
    the request waiting on it is the proof."""
    if task.request.is_eager or task.request.called_directly:
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        try:
            while True:
                try:
                    imports.upload_heartbeat(upload_id=upload_id)
                except DatabaseError:
                    logger.warning("Could not note the heartbeat of upload %s", upload_id)
                if stop.wait(settings.UPLOAD_HEARTBEAT_SECONDS):
                    return
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"heartbeat-{upload_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


@shared_task(
    base=UploadTask,
    bind=True,
    acks_late=True,
    soft_time_limit=settings.CHECK_TIME_LIMIT_SECONDS,
    time_limit=settings.CHECK_TIME_LIMIT_SECONDS + settings.TIME_LIMIT_GRACE_SECONDS,
)
def check_upload(self: Task, upload_id: int, import_mode: str | None = None) -> None:
    """Check the upload; with `import_mode`, then import a file that can be (the API's
    one-step import), claimed as the dialog's Import button claims it."""
    upload = Upload.objects.filter(pk=upload_id).first()
    if upload is None or upload.state != Upload.State.CHECKING:
        return
    try:
        with heartbeat(self, upload_id):
            imports.upload_check(upload=upload)
    except SoftTimeLimitExceeded:
        logger.warning("Checking upload %s ran past its time limit", upload_id)
        imports.upload_timed_out(upload_id=upload_id)
        return
    except Exception:
        logger.exception("Checking upload %s failed", upload_id)
        Upload.objects.filter(pk=upload_id).update(state=Upload.State.FAILED, error=CHECK_FAILED)
        return
    if import_mode and upload.stored_check.ok:
        imports.upload_import_start(upload=upload, mode=import_mode)


@shared_task(
    base=UploadTask,
    bind=True,
    acks_late=True,
    soft_time_limit=settings.IMPORT_TIME_LIMIT_SECONDS,
    time_limit=settings.IMPORT_TIME_LIMIT_SECONDS + settings.TIME_LIMIT_GRACE_SECONDS,
)
def import_upload(self: Task, upload_id: int, mode: str) -> None:
    upload = Upload.objects.filter(pk=upload_id).first()
    if upload is None or upload.state != Upload.State.IMPORTING:
        return
    try:
        with heartbeat(self, upload_id):
            imports.import_run(upload=upload, mode=mode)
    except SoftTimeLimitExceeded:
        # import_run has rolled its transaction back and removed the files it stored.
        logger.warning("Importing upload %s ran past its time limit", upload_id)
        imports.upload_timed_out(upload_id=upload_id)
    except imports.ImportRefused as exc:
        Upload.objects.filter(pk=upload_id).exclude(state=Upload.State.IMPORTED).update(
            state=Upload.State.CHECKED, error=str(exc)
        )
    except Exception:
        logger.exception("Importing upload %s failed", upload_id)
        Upload.objects.filter(pk=upload_id).exclude(state=Upload.State.IMPORTED).update(
            state=Upload.State.CHECKED, error=IMPORT_FAILED
        )


@shared_task(
    soft_time_limit=tries.TRY_TIME_LIMIT_SECONDS,
    time_limit=tries.TRY_TIME_LIMIT_SECONDS + settings.TIME_LIMIT_GRACE_SECONDS,
)
def try_answer(key: str) -> None:
    """Grade a try ("Try an answer") that calls a judge or runs a Python check."""
    try:
        tries.try_run(key=key)
    except SoftTimeLimitExceeded:
        logger.warning("Try %s ran past its time limit", key)
        tries.try_failed(key=key, error=tries.TRY_TOO_LONG)
    except Exception:
        logger.exception("Try %s failed", key)
        tries.try_failed(key=key, error=tries.TRY_FAILED)


@shared_task(acks_late=True)
def dispatch_run(run_id: int) -> None:
    """Start a queued run: hand each chunk of its tasks to the workers."""
    try:
        chunks = runs.run_dispatch(run_id=run_id)
    except Exception:
        logger.exception("Starting run %s failed", run_id)
        runs.run_fail(run_id=run_id)
        return
    # A run that calls a judge is graded on the judges' queue (its own workers, waiting on
    # the judge's server); the endpoint's limit holds however many of them there are.
    queue = runs.run_queue(run_id=run_id) if chunks else None
    for first, last in chunks:
        enqueue(grade_run_chunk, run_id, first, last, queue=queue)


@shared_task(
    bind=True,
    acks_late=True,
    max_retries=20,
    soft_time_limit=settings.RUN_CHUNK_TIME_LIMIT_SECONDS,
    time_limit=settings.RUN_CHUNK_TIME_LIMIT_SECONDS + settings.TIME_LIMIT_GRACE_SECONDS,
)
def grade_run_chunk(self: Task, run_id: int, first: int, last: int) -> None:
    """Grade a chunk of a run's tasks. Each attempt claims with a lease of its own and
    renews it while it grades (`beating`): a chunk the broker hands to a second worker
    while the first still grades it (Redis redelivers an unacknowledged message after its
    visibility timeout, alive or not) finds the claims held and waits; a dead worker's
    claims are no longer renewed, and another takes them over once the lease has run out."""
    lease = runs.new_lease()

    def renew() -> None:
        runs.run_claims_renew(run_id=run_id, lease=lease)

    try:
        with beating(self, runs.lease_seconds() / 4, renew, f"run-{run_id}-{first}"):
            graded = runs.run_grade_chunk(run_id=run_id, first=first, last=last, lease=lease)
    except SoftTimeLimitExceeded:
        logger.warning("Run %s, tasks %s to %s, ran past its time limit", run_id, first, last)
        runs.run_fail(run_id=run_id, error=runs.RUN_TOO_LONG)
        return
    except Exception:
        logger.exception("Run %s, tasks %s to %s, failed", run_id, first, last)
        runs.run_fail(run_id=run_id)
        return
    if graded.held_elsewhere and not self.request.is_eager:
        raise self.retry(countdown=graded.wait)


@shared_task
def delete_expired_uploads() -> int:
    """Remove uploads older than a day, with their files (hourly, from Celery beat)."""
    return imports.uploads_delete_expired()


class ExportTask(Task):
    """A task on one export job (its key first) that records running out of time on it:
    past the hard limit the process building it is killed, and the worker calls this."""

    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: Any):
        if isinstance(exc, TimeLimitExceeded) and args:
            logger.error("Export %s ran past its hard time limit", args[0])
            exports.export_job_fail(key=args[0], error=exports.export_too_long())


@contextmanager
def beating(task: Task, seconds: float, beat: Callable[[], None], name: str) -> Iterator[None]:
    """Call `beat` every `seconds` from a thread of its own while the body runs, on a worker:
    the body's own writes are in a transaction or a snapshot nobody else sees before it ends.
    In the caller's process (eager, or called directly) it never beats: nobody else looks."""
    if task.request.is_eager or task.request.called_directly:
        yield
        return
    stop = threading.Event()

    def beats() -> None:
        try:
            while not stop.wait(seconds):
                try:
                    beat()
                except DatabaseError:
                    logger.warning("The heartbeat of %s could not be written", name)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beats, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


@contextmanager
def export_progress(task: Task, key: str) -> Iterator[Callable[[int], None]]:
    """A `progress(done)` for `export_job_build`, noted on the job every
    UPLOAD_HEARTBEAT_SECONDS (`beating`): the build reads the tasks inside one snapshot of
    the database, whose writes nobody sees before it ends."""
    done, noted = [0], [0]

    def told(count: int) -> None:
        done[0] = count

    def note() -> None:
        if done[0] != noted[0]:
            exports.export_job_progress(key=key, done=done[0])
            noted[0] = done[0]

    with beating(task, settings.UPLOAD_HEARTBEAT_SECONDS, note, f"export-{key}"):
        yield told


@shared_task(
    base=ExportTask,
    bind=True,
    acks_late=True,
    soft_time_limit=settings.EXPORT_TIME_LIMIT_SECONDS,
    time_limit=settings.EXPORT_TIME_LIMIT_SECONDS + settings.TIME_LIMIT_GRACE_SECONDS,
)
def build_export(self: Task, key: str) -> None:
    """Build an export too large for a request into the storage (`ExportJob`)."""
    job = exports.export_job_claim(key=key)
    if job is None:
        return
    try:
        with export_progress(self, key) as progress:
            exports.export_job_build(job=job, progress=progress)
    except SoftTimeLimitExceeded:
        logger.warning("Export %s ran past its time limit", key)
        exports.export_job_fail(key=key, error=exports.export_too_long())
    except exports.ExportNotStored:
        logger.exception("Export %s could not be stored", key)
        exports.export_job_fail(key=key, error=exports.EXPORT_NOT_STORED)
    except Exception:
        logger.exception("Export %s failed", key)
        exports.export_job_fail(key=key, error=exports.EXPORT_FAILED)


@shared_task
def delete_expired_exports() -> int:
    """Remove exports past their expiry, with their files (hourly, from Celery beat)."""
    return exports.export_jobs_delete_expired()


def enqueue(task: Task, *args: object, queue: str | None = None) -> None:
    """Hand `task` to the workers (on `queue`, else its own); when the broker cannot be
    reached, run it here and now.

    A person who chose a file should see it checked even while Redis is down: the work is
    the same either way, only where it runs differs. Eager mode (no broker) runs it here too.
    """
    try:
        if queue:
            task.apply_async(args, queue=queue)
        else:
            task.delay(*args)
    except OperationalError:
        logger.warning("The broker did not answer; running %s in this process", task.name)
        task.apply(args=args)
