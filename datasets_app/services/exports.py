"""Exports too large to build within a request (`ExportJob`): started by the export link
or the API, built by a worker (`tasks.build_export`) with the request's own writer
(`exporting.export_to`) into the storage, downloaded until they expire, then removed."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from django.conf import settings as project_settings
from django.contrib.auth.models import User
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from datasets_app import exporting, selectors
from datasets_app.importing.spec import DatasetSpec, MappedTasks, TaskSpec, counted
from datasets_app.models import Dataset, ExportJob, Version, export_path

# Why an export failed, as its page and the API say it.
EXPORT_TOO_LONG = (
    "The export took longer than {limit} and was stopped. Try another format (.json and .csv "
    "build fastest), or tell us."
)
EXPORT_FAILED = "The export could not be built. Try again, or tell us."
EXPORT_NOT_STORED = "The export was built but could not be stored. Try again, or tell us."


class ExportNotStored(Exception):
    """The export was built, and the storage did not take it."""


def export_too_long() -> str:
    """Why an export past EXPORT_TIME_LIMIT_SECONDS failed, its limit in words."""
    seconds = project_settings.EXPORT_TIME_LIMIT_SECONDS
    limit = counted(seconds // 60, "minute") if seconds % 60 == 0 else counted(seconds, "second")
    return EXPORT_TOO_LONG.format(limit=limit)


def export_task_count(*, dataset: Dataset, version: Version | None) -> int:
    """How many tasks the export writes: what decides where it is built."""
    if version is not None:
        return selectors.version_task_count(version)
    return dataset.tasks.live().count()


def export_in_request(*, dataset: Dataset, version: Version | None) -> bool:
    """Whether the export is small enough to build within the request."""
    tasks = export_task_count(dataset=dataset, version=version)
    return tasks <= project_settings.EXPORT_IN_REQUEST_TASKS


def export_job_start(
    *, dataset: Dataset, version: Version | None, fmt: exporting.ExportFormat, user: User
) -> ExportJob:
    """The job building this export: the one that already answers for it
    (`selectors.export_job_answering`), else a new one, handed to the workers."""
    with transaction.atomic():
        job = selectors.export_job_answering(dataset=dataset, version=version, fmt=fmt, user=user)
        if job is not None:
            return job
        job = ExportJob(dataset=dataset, version=version, format=fmt.slug, requested_by=user)
        job.full_clean()
        job.save()
        key = str(job.key)
        transaction.on_commit(lambda: _enqueue_build(key))
    return job


def _enqueue_build(key: str) -> None:
    from datasets_app import tasks

    tasks.enqueue(tasks.build_export, key)


def export_job_claim(*, key: str) -> ExportJob | None:
    """The job, now building; None when it is not waiting for a worker. A job found
    building is taken again: the broker hands a task back only when the worker that had it
    died (the visibility timeout outlasts any build), and building a file twice writes
    nothing twice."""
    waiting = (ExportJob.State.QUEUED, ExportJob.State.BUILDING)
    claimed = ExportJob.objects.filter(pk=key, state__in=waiting).update(
        state=ExportJob.State.BUILDING, progress_done=0
    )
    if not claimed:
        return None
    return ExportJob.objects.select_related("dataset", "version").get(pk=key)


def _spec_and_stem(job: ExportJob) -> tuple[DatasetSpec, str]:
    if job.version is not None:
        return selectors.version_spec_streamed(job.version), (
            f"{job.dataset.name}-{job.version.label}"
        )
    return selectors.dataset_spec_streamed(job.dataset), job.dataset.name


def export_job_build(*, job: ExportJob, progress: Callable[[int], None] | None = None) -> None:
    """Build the job's export into the storage, then mark it ready.

    `progress(done)` is told the tasks written so far, as the writer reads them (from the
    database a chunk at a time, inside one snapshot: the caller records it elsewhere).
    """
    fmt = exporting.export_format(job.format)
    if fmt is None:
        raise ValueError(f"no export format {job.format!r}")
    spec, stem = _spec_and_stem(job)
    total = len(spec.tasks)
    ExportJob.objects.filter(pk=job.pk).update(progress_total=total)
    if progress is not None:
        told = progress

        def counted(index: int, task: TaskSpec) -> TaskSpec:
            told(index + 1)
            return task

        spec = replace(spec, tasks=MappedTasks(spec.tasks, counted))
    with tempfile.TemporaryFile() as out:
        exporting.export_to(spec, fmt, out)
        size = out.tell()
        out.seek(0)
        try:
            name = default_storage.save(
                export_path(job, exporting.download_name(stem, fmt)), File(out)
            )
        except Exception as exc:
            raise ExportNotStored from exc
    now = timezone.now()
    ready = ExportJob.objects.filter(pk=job.pk, state=ExportJob.State.BUILDING).update(
        state=ExportJob.State.READY,
        file=name,
        size=size,
        progress_done=total,
        finished_at=now,
        expires_at=now + timedelta(hours=project_settings.EXPORT_KEEP_HOURS),
    )
    if not ready:
        # The job went meanwhile (its dataset was deleted): so does what it built.
        default_storage.delete(name)


def export_job_progress(*, key: str, done: int) -> None:
    ExportJob.objects.filter(pk=key, state=ExportJob.State.BUILDING).update(progress_done=done)


def export_job_fail(*, key: str, error: str) -> None:
    """Record why the export stopped, and remove whatever of it reached the storage."""
    failed = ExportJob.objects.filter(
        pk=key, state__in=(ExportJob.State.QUEUED, ExportJob.State.BUILDING)
    ).update(state=ExportJob.State.FAILED, error=error, finished_at=timezone.now())
    if failed:
        _delete_stored(key)


def _delete_stored(key: str) -> None:
    folder = f"exports/{key}"
    try:
        _folders, names = default_storage.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        default_storage.delete(f"{folder}/{name}")


# An expired job's row stays this long, so that its page says it expired (and offers to
# build it again) rather than that it never existed.
EXPIRED_ROWS_KEPT = timedelta(days=7)


def export_jobs_delete_expired() -> int:
    """Remove the files of exports past their expiry (their jobs say so from then on),
    and the jobs that expired a week ago; returns how many files went. A job still building
    when it expires is left to finish: its expiry starts again when it is ready."""
    now = timezone.now()
    count = 0
    expired = ExportJob.objects.filter(expires_at__lte=now).exclude(
        state__in=(ExportJob.State.QUEUED, ExportJob.State.BUILDING, ExportJob.State.EXPIRED)
    )
    for job in expired.iterator():
        if job.stored_name:
            default_storage.delete(job.stored_name)
            count += 1
        ExportJob.objects.filter(pk=job.pk).update(state=ExportJob.State.EXPIRED, file="")
    ExportJob.objects.filter(expires_at__lte=now - EXPIRED_ROWS_KEPT).delete()
    return count
