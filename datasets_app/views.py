"""Views translate HTTP: validate a form, call one service or selector, pick a template.

Every view needs a login (LoginRequiredMiddleware); a dataset the person may not see is a
404, never a 403, so ids can't be probed. Every htmx request has a plain twin: without
JavaScript the same URLs answer with whole pages.
"""

from __future__ import annotations

import posixpath
import uuid
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import content_disposition_header, url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh, push_url
from django_htmx.middleware import HtmxDetails

from datasets_app import comparing, exporting, guards, metadata_keys, selectors, tries, wording
from datasets_app.forms import (
    FILE_ACCEPT,
    PAGE_SIZES,
    SETTINGS_KEYS,
    ApiTokenForm,
    ImportFileForm,
    ImportModeForm,
    MappingForm,
    NewDatasetForm,
    PersonForm,
    ReadOptionsForm,
    RunColumnsForm,
    RunOutputsForm,
    RunTaskListForm,
    SettingsEditor,
    TaskEditor,
    TaskListForm,
    TryAnswerForm,
)
from datasets_app.importing import (
    aliases,
    columns,
    csv_format,
    document,
    outputs_zip,
    shapes,
    starters,
)
from datasets_app.importing.outputs import AMBIGUOUS_COLUMN
from datasets_app.importing.shapes import describe
from datasets_app.importing.spec import counted, limits_for_people
from datasets_app.models import (
    Dataset,
    ExportJob,
    ImportMode,
    Run,
    RunState,
    Task,
    TaskFile,
    TaskState,
    Upload,
    Version,
)
from datasets_app.services import (
    datasets,
    deletion,
    exports,
    imports,
    limits,
    runs,
    sharing,
    tokens,
)
from datasets_app.services import people as people_service


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
    # LoginRequiredMiddleware lets no one in without logging in: every view's person is a
    # user, never AnonymousUser.
    user: User


def _redirect(request: HtmxHttpRequest, url: str) -> HttpResponse:
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


# --- Datasets -------------------------------------------------------------------------------


def dataset_list(request: HtmxHttpRequest) -> HttpResponse:
    visible = selectors.datasets_for(request.user).select_related("owner")
    return render(request, "datasets_app/dataset_list.html", {"datasets": visible})


def _swaps_task_list(request: HtmxHttpRequest) -> bool:
    """Whether to answer with the task list alone: an htmx page, search or sort link. Going
    back to a page htmx no longer holds asks for the whole page (a history restore)."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def _task_list_response(request: HtmxHttpRequest, template: str, context: dict) -> HttpResponse:
    partial = _swaps_task_list(request)
    response = render(request, f"{template}#task_list" if partial else template, context)
    if partial:
        # The address bar gets the list's own URL (defaults and empty fields left out),
        # not the form's every field.
        push_url(response, request.path + context["page"].listing.params())
    # One URL, two bodies: no cache may answer a whole-page visit with the list alone.
    patch_vary_headers(response, ["HX-Request"])
    return response


def _task_list_form(
    request: HtmxHttpRequest, *, with_state: bool = True, keys_url: str = ""
) -> TaskListForm:
    """The list's form as the URL asks, shown with what is listed: a value missing or not
    valid shows as its default (50 a page), never as the first choice of its select."""
    listing = TaskListForm(request.GET, with_state=with_state).listing()
    return TaskListForm(listing.fields(), with_state=with_state, keys_url=keys_url)


def dataset_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    keys_url = reverse("datasets_app:dataset_metadata_keys", args=[dataset.pk])
    form = _task_list_form(request, keys_url=keys_url)
    task_page = selectors.dataset_task_page(dataset, form.listing())
    if _swaps_task_list(request):
        context = {"dataset": dataset, "form": form, "page": task_page}
        return _task_list_response(request, "datasets_app/dataset_detail.html", context)
    drafts = selectors.draft_counts(dataset)
    context = {
        "dataset": dataset,
        "form": form,
        "page": task_page,
        # A draft is a change: asked again only of a dataset without one.
        "has_changes": bool(drafts.drafts)
        or selectors.unsaved_changes(dataset, live_count=task_page.total),
        "draft_counts": drafts,
        "next_version": selectors.next_version_number(dataset),
        "shared_criteria": selectors.dataset_criteria(dataset),
        "versions": selectors.versions_of(dataset),
        "runs": selectors.runs_of(dataset),
        "imports_in_progress": selectors.imports_in_progress(dataset),
    }
    return _task_list_response(request, "datasets_app/dataset_detail.html", context)


BULK_ACTIONS = {"mark_reviewed": "Mark reviewed", "delete_drafts": "Delete drafts"}
NOTHING_CHOSEN = "Choose the tasks first: tick them in the list, or choose all that match."


def _chosen_tasks(request: HtmxHttpRequest, dataset: Dataset) -> QuerySet[Task]:
    """The tasks a bulk action was asked for: those ticked, or every task the list's search
    and filters leave ("all N tasks that match")."""
    if request.POST.get("all"):
        return selectors.dataset_tasks_listed(dataset, TaskListForm(request.POST).listing())
    ticked = [int(v) for v in request.POST.getlist("task")[: PAGE_SIZES[-1]] if v.isdigit()]
    return dataset.tasks.filter(pk__in=ticked)


@require_POST
def tasks_bulk(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Mark reviewed or delete drafts, for the tasks chosen on the dataset page: first a page
    that says how many it changes, then (confirmed) one transaction."""
    dataset = selectors.dataset_for(request.user, pk)
    listing = TaskListForm(request.POST).listing()
    back = dataset.get_absolute_url() + listing.params()
    action = request.POST.get("action", "")
    chosen = _chosen_tasks(request, dataset)
    if action not in BULK_ACTIONS or not chosen.exists():
        messages.warning(request, NOTHING_CHOSEN)
        return redirect(back)
    if request.POST.get("confirm"):
        if action == "mark_reviewed":
            marked = datasets.tasks_mark_reviewed(tasks=chosen, user=request.user)
            messages.success(request, f"Marked {counted(marked, 'draft')} reviewed.")
        else:
            deleted = datasets.tasks_delete_drafts(dataset=dataset, tasks=chosen)
            messages.success(request, f"Deleted {counted(deleted, 'draft')}.")
        return redirect(back)
    drafts = chosen.filter(state=TaskState.DRAFT).count()
    acts_on = drafts if action == "mark_reviewed" else selectors.tasks_deletable(chosen).count()
    context = {
        "dataset": dataset,
        "action": action,
        "action_label": BULK_ACTIONS[action],
        "chosen": chosen.count(),
        "acts_on": acts_on,
        "drafts": drafts,
        # Drafts that a version or run holds: never deleted.
        "held": drafts - acts_on,
        "ticked": request.POST.getlist("task")[: PAGE_SIZES[-1]],
        "all": bool(request.POST.get("all")),
        "listing": listing,
        "back": back,
    }
    return render(request, "datasets_app/tasks_bulk.html", context)


@require_POST
def version_save(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    try:
        version = datasets.version_save(dataset=dataset, user=request.user)
    except (datasets.NothingToSave, datasets.NotAllReviewed) as exc:
        messages.warning(request, str(exc))
    else:
        messages.success(request, f"Saved {dataset.name} as {version.label}.")
    return _redirect(request, dataset.get_absolute_url())


# --- Reviewing drafts one at a time --------------------------------------------------------

REVIEW_ALL = "all"


def _review_url(dataset: Dataset, *, task_pk: int | None, show: str) -> str:
    """The review page at a draft (none: the first walked), walking all drafts or those not
    reviewed yet (the default)."""
    params = {key: value for key, value in (("task", task_pk), ("show", show)) if value}
    return reverse("datasets_app:dataset_review", args=[dataset.pk]) + (
        f"?{urlencode(params)}" if params else ""
    )


def _review_show(value: str | None) -> str:
    return REVIEW_ALL if value == REVIEW_ALL else ""


@require_GET
def dataset_review(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The dataset's drafts one at a time, with Mark reviewed, Edit and Delete (and their
    keys: j, k, r, e, d)."""
    dataset = selectors.dataset_for(request.user, pk)
    show = _review_show(request.GET.get("show"))
    task_pk = request.GET.get("task", "")
    step = selectors.review_step(
        dataset,
        task_pk=int(task_pk) if task_pk.isdigit() else None,
        unreviewed_only=show != REVIEW_ALL,
    )
    context: dict = {"dataset": dataset, "step": step, "show": show}
    if step is not None:
        task = step.task

        def url(task_pk: int | None) -> str:
            return _review_url(dataset, task_pk=task_pk, show=show)

        context |= {
            "task": task,
            "task_files": selectors.task_files(task),
            "shared_criteria": selectors.dataset_criteria(dataset),
            "python_checks_enabled": selectors.checker_options().python_checks_enabled,
            "here": url(task.pk),
            "previous_url": url(step.previous) if step.previous else None,
            "next_url": url(step.next) if step.next else None,
            # Where Delete comes back to: the draft after it (gone, it has no place).
            "after_delete": url(step.next or step.previous),
            "other_show": _review_url(
                dataset, task_pk=task.pk, show="" if show == REVIEW_ALL else REVIEW_ALL
            ),
        }
    else:
        context["has_drafts"] = selectors.draft_counts(dataset).drafts > 0
    context["next_version"] = selectors.next_version_number(dataset)
    return render(request, "datasets_app/dataset_review.html", context)


@require_POST
def task_review(request: HtmxHttpRequest, pk: int, task_pk: int) -> HttpResponse:
    """Mark reviewed on the review page: the draft is marked, and the page moves on to the
    next draft it walks."""
    dataset = selectors.dataset_for(request.user, pk)
    task = get_object_or_404(dataset.tasks.filter(state=TaskState.DRAFT), pk=task_pk)
    show = _review_show(request.POST.get("show"))
    step = selectors.review_step(dataset, task_pk=task.pk, unreviewed_only=show != REVIEW_ALL)
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.filter(pk=task.pk), user=request.user)
    messages.success(request, f"Marked {task.task_id} reviewed.")
    following = step.next if step is not None else None
    return redirect(_review_url(dataset, task_pk=following, show=show))


def _next_url(request: HtmxHttpRequest) -> str | None:
    """The `next` page a link asked to come back to: a path on this site, or None."""
    url = request.GET.get("next", "")
    if url.startswith("/") and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return None


# --- Import from a file ---------------------------------------------------------------------


def _import_context(dataset: Dataset | None, upload: Upload | None, mode: str) -> dict:
    context = {
        "dataset": dataset,
        "upload": upload,
        "mode": mode,
        "mode_form": ImportModeForm(initial={"mode": mode}),
        "starters": starters.STARTERS,
        "max_upload_mib": settings.MAX_UPLOAD_BYTES // (1024 * 1024),
        "accept": FILE_ACCEPT,
        "worker_stopped": selectors.worker_stopped(upload) if upload else "",
    }
    if upload is not None and upload.state != Upload.State.CHECKING:
        context.update(selectors.import_preview(upload=upload, mode=mode))
        context.update(_mapping_context(upload))
        context.update(_read_options_context(upload))
    return context


def _read_options_context(upload: Upload) -> dict:
    """Read options, for a checked file (its encoding for a .csv or .tsv): open when how it
    was read is in question (its encoding found, not said, or not told; its ids repeat)."""
    if upload.state != Upload.State.CHECKED or not upload.result:
        return {}
    result = upload.stored_check
    form = ReadOptionsForm(initial=upload.read_options, table=result.format)
    opened = result.codes & READ_OPTION_CODES or upload.read_options
    return {"read_form": form, "read_open": bool(opened)}


# What a check says that Read options answer.
READ_OPTION_CODES = {
    csv_format.ENCODING_DETECTED.code,
    csv_format.ENCODING_UNSURE.code,
    csv_format.NOT_IN_ENCODING.code,
    csv_format.NOT_TEXT.code,
    columns.HEADER_BELOW_PREAMBLE.code,
    columns.NO_HEADER_THERE.code,
    document.DUPLICATE_TASK_ID.code,
}


def _mapping_context(upload: Upload) -> dict:
    """The mapping step, when it is due: the guess (or the person's last choice) to confirm
    or change, one select per field."""
    result = upload.stored_check
    if upload.state != Upload.State.CHECKED or not result.mapping_step_due:
        return {}
    return {"mapping_form": MappingForm.for_mapping(result.mapping), "mapping": result.mapping}


def _render_import(
    request: HtmxHttpRequest,
    dataset: Dataset,
    upload: Upload | None,
    mode: str,
    *,
    whole_dialog: bool = False,
    **extra,
) -> HttpResponse:
    context = _import_context(dataset, upload, mode) | extra | {"whole_dialog": whole_dialog}
    template = "datasets_app/import.html"
    if request.htmx:
        # Opening the dialog swaps in all of it; later requests swap in its result.
        partial = "dialog" if whole_dialog else "result"
        return render(request, f"{template}#{partial}", context)
    return render(request, template, context)


def import_dialog(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Add tasks > Import from a file: the dialog (htmx) or its page (no JavaScript).

    A person who closed the dialog while a file was being checked, or before importing it,
    comes back to that file (its state is on the upload); `?new=1` starts afresh.
    """
    dataset = selectors.dataset_for(request.user, pk)
    upload = None
    if not request.GET.get("new"):
        upload = selectors.unfinished_upload(user=request.user, dataset=dataset)
    mode = upload.mode if upload else ImportMode.ADD
    return _render_import(request, dataset, upload, mode, whole_dialog=True)


def _refuse_check(request: HtmxHttpRequest, message: str, pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    return _render_import(request, dataset, None, ImportMode.ADD, file_errors=[message])


@require_POST
@guards.guard_upload(rate=guards.CHECKS, refuse=_refuse_check)
def import_check(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Keep the chosen file and check it; writes nothing but the upload."""
    dataset = selectors.dataset_for(request.user, pk)
    form = ImportFileForm(request.POST, request.FILES, max_bytes=settings.MAX_UPLOAD_BYTES)
    mode = _mode(request.POST.get("mode"))
    if not form.is_valid():
        errors = form.errors.get("file") or ["Choose a file."]
        return _render_import(request, dataset, None, mode, file_errors=errors)
    upload = imports.upload_create(
        owner=request.user, dataset=dataset, uploaded_file=form.cleaned_data["file"], mode=mode
    )
    imports.upload_check_start(upload=upload)
    return _render_import(request, dataset, upload, mode)


def _mode(value: str | None) -> str:
    return value if value in ImportMode.values else ImportMode.ADD


def _upload_for(request: HtmxHttpRequest, key: str, dataset: Dataset | None = None) -> Upload:
    """An upload of this person's (404 for anyone else's), fresh from the database."""
    upload = selectors.upload_of(request.user, key)
    if dataset is not None and upload.dataset_id != dataset.pk:
        raise Http404
    return upload


@require_GET
def import_status(request: HtmxHttpRequest, pk: int, key: str) -> HttpResponse:
    """The checked upload's preview or problems for a mode; polled every second while it is
    being checked or imported (the progress is on the upload's row, so the dialog can be
    closed and opened again), and the dataset page once the import is done."""
    dataset = selectors.dataset_for(request.user, pk)
    upload = _upload_for(request, key, dataset)
    if upload.state == Upload.State.IMPORTED:
        messages.success(request, selectors.imported_message(upload))
        return _redirect(request, dataset.get_absolute_url())
    if request.GET.get("banner") and request.htmx:
        # The dataset page's line about an import running on a worker.
        context = {"upload": upload}
        return render(request, "datasets_app/dataset_detail.html#import_progress", context)
    return _render_import(request, dataset, upload, _mode(request.GET.get("mode") or upload.mode))


def _refuse_import(request: HtmxHttpRequest, message: str, pk: int, key: str) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    upload = _upload_for(request, key, dataset)
    mode = _mode(request.POST.get("mode"))
    return _render_import(request, dataset, upload, mode, file_errors=[message])


@require_POST
@guards.guard_upload(rate=guards.IMPORTS, check_size=False, refuse=_refuse_import)
def import_commit(request: HtmxHttpRequest, pk: int, key: str) -> HttpResponse:
    """Import tasks: the checked upload, all or nothing, then back to the dataset."""
    dataset = selectors.dataset_for(request.user, pk)
    upload = _upload_for(request, key, dataset)
    mode = _mode(request.POST.get("mode"))
    # Replace archives what the dialog listed or nothing: the import itself decides, under
    # the dataset's lock, and an out-of-date list comes back as the upload's error.
    listed = request.POST.get("archives", "")[:64]
    imports.upload_import_start(upload=upload, mode=mode, archives_listed=listed)
    if upload.state == Upload.State.IMPORTED:
        messages.success(request, selectors.imported_message(upload))
        return _redirect(request, dataset.get_absolute_url())
    return _render_import(request, dataset, upload, mode)


@require_POST
@guards.guard_upload(rate=guards.CHECKS, check_size=False, refuse=_refuse_import)
def import_map(request: HtmxHttpRequest, pk: int, key: str) -> HttpResponse:
    """The mapping step: check the file again with the columns the person chose."""
    dataset = selectors.dataset_for(request.user, pk)
    upload = _upload_for(request, key, dataset)
    mode = _mode(request.POST.get("mode"))
    form = MappingForm.for_mapping(upload.stored_check.mapping, request.POST)
    if upload.state != Upload.State.CHECKED or not form.is_valid():
        return _render_import(request, dataset, upload, mode, mapping_form=form)
    upload = imports.upload_map(upload=upload, mapping=form.mapping())
    return _render_import(request, dataset, upload, mode)


@require_POST
@guards.guard_upload(rate=guards.CHECKS, check_size=False, refuse=_refuse_import)
def import_read(request: HtmxHttpRequest, pk: int, key: str) -> HttpResponse:
    """Read options: check the file again, read as the person said."""
    dataset = selectors.dataset_for(request.user, pk)
    upload = _upload_for(request, key, dataset)
    mode = _mode(request.POST.get("mode"))
    form = ReadOptionsForm(request.POST)
    if upload.state != Upload.State.CHECKED or not form.is_valid():
        return _render_import(request, dataset, upload, mode, read_form=form, read_open=True)
    upload = imports.upload_read(upload=upload, read_options=form.read_options())
    return _render_import(request, dataset, upload, mode)


@require_GET
def upload_problems(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Download the problems: the file's rows with a `problem` column, for a spreadsheet."""
    upload = _upload_for(request, key)
    body = imports.upload_problems_csv(upload=upload)
    response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    name = upload.original_name.rsplit(".", 1)[0] or "file"
    # The name comes from the person's upload: Django's helper quotes or percent-encodes it,
    # so no quote, semicolon or line break in it can add a parameter or a header.
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=f"{name}-problems.csv"
    )
    return response


@require_GET
def starter_download(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """One of the four templates to start from, as a download."""
    starter = starters.starter(slug)
    if starter is None:
        raise Http404
    response = HttpResponse(starter.build(), content_type=starter.content_type)
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=starter.file_name
    )
    return response


# --- New dataset, optionally with a file ----------------------------------------------------


def _refuse_new_dataset(request: HtmxHttpRequest, message: str) -> HttpResponse:
    return _render_new_dataset(request, NewDatasetForm(), None, file_errors=[message])


@guards.guard_upload(rate=guards.DATASETS, refuse=_refuse_new_dataset)
def dataset_create(request: HtmxHttpRequest) -> HttpResponse:
    """New dataset; with a file, its tasks are imported as drafts once it is created.

    The file is checked and imported by the same Celery tasks as the import dialog's: with
    JavaScript it was checked when chosen (its upload key comes with the form); without, it
    is checked now and its preview shown, with the key, for a second Create. A file still
    being checked, or with problems, shows the form again: nothing is created unseen.
    """
    if request.method == "POST" and request.POST.get("another"):
        # Choose another file: the form again, as typed, without the file chosen before.
        typed = {key: request.POST.get(key, "") for key in ("name", "description")}
        return _render_new_dataset(request, NewDatasetForm(initial=typed), None, choose_again=True)
    form = NewDatasetForm(request.POST or None, request.FILES or None)
    upload = _new_dataset_upload(request) if request.method == "POST" else None
    if request.method != "POST" or not (form.is_valid() or (upload and _only_name_missing(form))):
        return _render_new_dataset(request, form, upload)
    try:
        return _create_dataset(request, form, upload)
    except limits.LimitReached as exc:
        form.add_error(None, str(exc))
        return _render_new_dataset(request, form, upload)


def _create_dataset(request: HtmxHttpRequest, form: NewDatasetForm, upload: Upload | None):
    data = form.cleaned_data
    if upload is None and data.get("file"):
        # A file sent with the form (no JavaScript, or Create pressed before the check that
        # choosing it started came back): check it and show its preview; nothing is created
        # until the person has seen it and presses Create again.
        upload = imports.upload_create(owner=request.user, dataset=None, uploaded_file=data["file"])
        upload = imports.upload_check_start(upload=upload)
        return _render_new_dataset(request, form, upload)
    if upload is None:
        dataset = datasets.dataset_create(
            owner=request.user, name=data["name"], description=data.get("description", "")
        )
        messages.success(request, f"Created {dataset.name}.")
        return _redirect(request, dataset.get_absolute_url())
    try:
        dataset = imports.dataset_create_with_file(
            owner=request.user,
            upload=upload,
            name=data.get("name", ""),
            description=data.get("description", ""),
        )
    except imports.ImportRefused as refused:
        # Said at the top of the file's part, where focus goes: why nothing was created. The
        # form as typed, without "give it a name" (the file may still name it).
        typed = NewDatasetForm(initial={key: data.get(key, "") for key in ("name", "description")})
        return _render_new_dataset(request, typed, upload, file_errors=[str(refused)])
    if upload.state == Upload.State.IMPORTED:
        messages.success(request, selectors.imported_message(upload))
    else:
        messages.info(request, f"Created {dataset.name}. Its tasks are being imported.")
    return _redirect(request, dataset.get_absolute_url())


def _new_dataset_upload(request: HtmxHttpRequest) -> Upload | None:
    """The upload the New dataset form names: this person's, and not in a dataset yet."""
    key = request.POST.get("upload")
    if not key:
        return None
    upload = _upload_for(request, key)
    if upload.dataset_id is not None:
        raise Http404
    return upload


def _render_new_dataset(request, form, upload: Upload | None, **extra) -> HttpResponse:
    context = {"form": form, "upload": upload, "accept": FILE_ACCEPT}
    context["worker_stopped"] = selectors.worker_stopped(upload) if upload else ""
    if upload is not None and upload.state != Upload.State.CHECKING:
        context |= selectors.import_preview(upload=upload, mode=ImportMode.ADD)
        context |= _mapping_context(upload)
        context |= _read_options_context(upload)
    context |= extra
    if request.htmx and form is None:
        return render(request, "datasets_app/dataset_create.html#check", context)
    return render(request, "datasets_app/dataset_create.html", context)


def _only_name_missing(form: NewDatasetForm) -> bool:
    # With a checked upload, the name may come from the file.
    return set(form.errors) <= {"name"}


def _refuse_new_dataset_check(request: HtmxHttpRequest, message: str) -> HttpResponse:
    return render(request, "datasets_app/dataset_create.html#check", {"file_errors": [message]})


@require_POST
@guards.guard_upload(rate=guards.CHECKS, refuse=_refuse_new_dataset_check)
def dataset_create_check(request: HtmxHttpRequest) -> HttpResponse:
    """New dataset page: check the chosen file at once and show its preview or problems."""
    form = ImportFileForm(request.POST, request.FILES, max_bytes=settings.MAX_UPLOAD_BYTES)
    if not form.is_valid():
        errors = form.errors.get("file") or ["Choose a file."]
        return render(request, "datasets_app/dataset_create.html#check", {"file_errors": errors})
    upload = imports.upload_create(
        owner=request.user, dataset=None, uploaded_file=form.cleaned_data["file"]
    )
    imports.upload_check_start(upload=upload)
    return _render_new_dataset(request, None, upload)


@require_POST
@guards.guard_upload(rate=guards.CHECKS, check_size=False, refuse=_refuse_new_dataset_check)
def dataset_create_map(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """New dataset page: the mapping step, as the import dialog's (`import_map`)."""
    upload = _upload_for(request, key)
    if upload.dataset_id is not None:
        raise Http404
    form = MappingForm.for_mapping(upload.stored_check.mapping, request.POST)
    extra = {"mapping_form": form}
    if upload.state == Upload.State.CHECKED and form.is_valid():
        upload = imports.upload_map(upload=upload, mapping=form.mapping())
        extra = {}
    page_form = None if request.htmx else NewDatasetForm(request.POST)
    return _render_new_dataset(request, page_form, upload, **extra)


@require_POST
@guards.guard_upload(rate=guards.CHECKS, check_size=False, refuse=_refuse_new_dataset_check)
def dataset_create_read(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """New dataset page: Read options, as the import dialog's (`import_read`)."""
    upload = _upload_for(request, key)
    if upload.dataset_id is not None:
        raise Http404
    form = ReadOptionsForm(request.POST)
    extra: dict = {"read_form": form, "read_open": True}
    if upload.state == Upload.State.CHECKED and form.is_valid():
        upload = imports.upload_read(upload=upload, read_options=form.read_options())
        extra = {}
    page_form = None if request.htmx else NewDatasetForm(request.POST)
    return _render_new_dataset(request, page_form, upload, **extra)


@require_GET
def dataset_create_status(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """New dataset page: the chosen file's check, polled while it runs on a worker."""
    upload = _upload_for(request, key)
    if upload.dataset_id is not None:
        raise Http404
    if request.htmx:
        return _render_new_dataset(request, None, upload)
    return _render_new_dataset(request, NewDatasetForm(), upload)


# --- Settings -------------------------------------------------------------------------------


def dataset_settings(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    editor = SettingsEditor(
        request.POST or None, dataset=dataset, options=selectors.checker_options()
    )
    if request.method == "POST" and editor.is_valid():
        data = editor.form.cleaned_data
        datasets.dataset_settings_update(
            dataset=dataset,
            name=data["name"],
            description=data["description"],
            settings=editor.form.settings_document(),
            criteria=editor.criteria_specs,
            require_review=data["require_review"],
        )
        messages.success(request, "Saved the settings.")
        return _redirect(request, dataset.get_absolute_url())
    context = {"dataset": dataset, "editor": editor, **_dataset_try_context(dataset)}
    return render(request, "datasets_app/dataset_settings.html", context)


# --- Tasks ----------------------------------------------------------------------------------


def task_detail(request: HtmxHttpRequest, pk: int, task_pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    task = selectors.task_for(dataset, task_pk)
    context = {
        "dataset": dataset,
        "task": task,
        "task_files": selectors.task_files(task),
        "shared_criteria": selectors.dataset_criteria(dataset),
        "python_checks_enabled": selectors.checker_options().python_checks_enabled,
        **_task_try_context(dataset, task),
    }
    return render(request, "datasets_app/task_detail.html", context)


def _task_editor(request: HtmxHttpRequest, dataset: Dataset, task=None) -> TaskEditor:
    return TaskEditor(
        request.POST or None,
        request.FILES or None,
        task=task,
        shared_criteria=selectors.shared_criteria_documents(dataset),
        options=selectors.checker_options(),
        taken_ids=selectors.live_task_ids(dataset, exclude=task),
    )


TASK_FORM_PAGE = "datasets_app/task_form.html"


def _task_form_page(request, dataset, editor, task=None) -> HttpResponse:
    if request.method == "POST" and editor.is_valid():
        try:
            saved = imports.task_save_with_files(
                dataset=dataset,
                task=task,
                spec=editor.spec,
                files=editor.new_files,
                user=request.user,
                remove=editor.removed_files,
            )
        except (datasets.TaskNotEditable, limits.LimitReached, imports.ImportRefused) as refused:
            # The form comes back with what the person typed and why it did not land.
            editor.form.add_error(None, str(refused))
        else:
            messages.success(
                request,
                f"Saved {saved.task_id} as a draft. Save as "
                f"{selectors.next_version_label(dataset)} to put it in the next version.",
            )
            return _redirect(request, _next_url(request) or saved.get_absolute_url())
    context = {"dataset": dataset, "task": task, "editor": editor, "next": _next_url(request)}
    context["task_files"] = selectors.task_files(task) if task is not None else []
    if task is not None:
        target = tries.Target.of(dataset, task)
        context |= _edit_urls(request, dataset, task) | {
            "try_form": _edits_try_form(target),
            "editing": True,
        }
    return render(request, TASK_FORM_PAGE, context)


def _edit_urls(request: HtmxHttpRequest, dataset: Dataset, task: Task) -> dict:
    """Where the edit page's buttons post: Save as draft to the edit page, Try it to the
    try's URL, both with the `next` page the edit page was opened for (the review's), so
    that saving after a try, with or without JavaScript, still goes back there."""
    back_to = _next_url(request)
    back = f"?{urlencode({'next': back_to})}" if back_to else ""
    return {
        "next": back_to,
        "save_url": reverse("datasets_app:task_edit", args=[dataset.pk, task.pk]) + back,
        "try_url": reverse("datasets_app:task_try_edits", args=[dataset.pk, task.pk]) + back,
    }


def _refuse_task_form(request: HtmxHttpRequest, message: str, pk: int, task_pk=None):
    # The body was not read (too large): the form again, fresh, with why.
    dataset = selectors.dataset_for(request.user, pk)
    task = selectors.task_for(dataset, task_pk) if task_pk is not None else None
    editor = TaskEditor(
        task=task,
        shared_criteria=selectors.shared_criteria_documents(dataset),
        options=selectors.checker_options(),
        taken_ids=set(),
    )
    editor.form.add_error(None, message)
    return render(request, TASK_FORM_PAGE, {"dataset": dataset, "task": task, "editor": editor})


# The task form attaches files: a body up to MAX_UPLOAD_BYTES, refused before it is read past
# that, as the import dialog's (`guards.guard_upload`); the files' storage is counted as
# they are stored, in the dataset owner's quota (`imports.task_save_with_files`).
@guards.guard_upload(refuse=_refuse_task_form, kept=False)
def task_create(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Add tasks > New task: the task form, empty."""
    dataset = selectors.dataset_for(request.user, pk)
    return _task_form_page(request, dataset, _task_editor(request, dataset))


@guards.guard_upload(refuse=_refuse_task_form, kept=False)
def task_edit(request: HtmxHttpRequest, pk: int, task_pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    task = selectors.task_for(dataset, task_pk)
    if task.state == TaskState.ARCHIVED and request.method != "POST":
        raise Http404
    editor = _task_editor(request, dataset, task)
    if task.state == TaskState.ARCHIVED:
        # An edit sent after a Replace archived the task: say so first (its id may be a
        # new task's now), with the form as the person typed it. An edit that was still
        # live here is decided again under the lock, by `task_save`.
        editor.is_valid()
        editor.form.add_error(None, datasets.TASK_ARCHIVED_MEANWHILE)
        context = {"dataset": dataset, "task": task, "editor": editor}
        return render(request, "datasets_app/task_form.html", context)
    return _task_form_page(request, dataset, editor, task)


@require_http_methods(["GET", "POST"])
def task_delete(request: HtmxHttpRequest, pk: int, task_pk: int) -> HttpResponse:
    """Delete a draft (GET asks first, a page of its own, so it works without JavaScript)
    or remove a saved task (archived: versions and runs keep it)."""
    dataset = selectors.dataset_for(request.user, pk)
    task = selectors.task_for(dataset, task_pk)
    if task.state == TaskState.ARCHIVED:
        raise Http404
    if request.method == "GET":
        context = {
            "dataset": dataset,
            "task": task,
            "deletes": datasets.task_remove_deletes(task),
            "next": _next_url(request),
        }
        return render(request, "datasets_app/task_delete.html", context)
    datasets.task_remove(task=task)
    messages.success(request, f"Removed {task.task_id}.")
    return _redirect(request, _next_url(request) or dataset.get_absolute_url())


@require_GET
def task_file_download(request: HtmxHttpRequest, pk: int, task_pk: int, file_pk: int):
    """A task's stored file, always as a download (never rendered inline).

    A linked file is shown as a link on the task page; this URL never redirects to it, so
    our origin is no open redirect to whatever host a file named.
    """
    dataset = selectors.dataset_for(request.user, pk)
    task_file = get_object_or_404(TaskFile, pk=file_pk, task__pk=task_pk, task__dataset=dataset)
    if task_file.url or not task_file.file:
        raise Http404
    # FileResponse names the type from the file's name (application/octet-stream when it
    # can't); attachment + nosniff + a sandbox keep a browser from ever rendering it here.
    response = FileResponse(task_file.file.open("rb"), as_attachment=True, filename=task_file.name)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


# --- Try an answer -------------------------------------------------------------------------


def _task_try_context(dataset: Dataset, task: Task, data=None, **initial) -> dict:
    """The task's "Try an answer" form on its page, `task` with its criteria and files
    prefetched (`selectors.task_for`)."""
    return _try_context(tries.Target.of(dataset, task), data, **initial)


def _try_context(target: tries.Target, data=None, **initial) -> dict:
    """The task's "Try an answer" form (its page, a try's result, a try's own page)."""
    form = TryAnswerForm(data, checks=target.choices(), initial=initial)
    url = reverse("datasets_app:task_try", args=[target.dataset.pk, target.task.pk])
    return {"try_form": form, "try_url": url, "try_target": target}


def _dataset_try_context(dataset: Dataset, data=None) -> dict:
    """The Settings page's form: a criterion for every task, tried against a chosen task."""
    criteria = selectors.dataset_criteria(dataset)
    tasks = [
        (t.pk, f"{t.task_id} · {t.name}" if t.name else t.task_id) for t in dataset.tasks.live()
    ]
    if not tasks or not criteria:
        return {}
    form = TryAnswerForm(
        data,
        checks=[(c.criterion_id, c.text) for c in criteria],
        tasks=tasks,
        every_label="All the task's criteria",
    )
    url = reverse("datasets_app:dataset_try", args=[dataset.pk])
    return {"try_form": form, "try_url": url, "try_every_task": True}


def _render_try(
    request: HtmxHttpRequest, context: dict, page: str = "datasets_app/try_answer.html"
) -> HttpResponse:
    """A try's result in place (htmx), or its page (no JavaScript): the try's own, or the
    edit page with the edits it tried."""
    context = {"judge_configured": settings.JUDGE.configured, **context}
    if request.htmx:
        return render(request, "datasets_app/try_answer.html#result", context)
    return render(request, page, context)


def _try(
    request: HtmxHttpRequest,
    target: tries.Target,
    context: dict,
    *,
    page: str = "datasets_app/try_answer.html",
    queue: bool = True,
) -> HttpResponse:
    """Grade the answer (or show the judges' prompts) and show the outcome; `queue`: a
    slow try may go to a worker."""
    form: TryAnswerForm = context["try_form"]
    dataset = target.dataset
    context = {"dataset": dataset, "task": target.task, **context}
    if not form.is_valid():
        return _render_try(request, context, page)
    answer, only = form.cleaned_data["answer"], form.only
    if request.POST.get("show") == "prompt":
        context["prompts"] = tries.judge_prompts(target=target, answer=answer, only=only)
        return _render_try(request, context, page)
    state = tries.try_start(target=target, answer=answer, only=only, user=request.user, queue=queue)
    if state.status == "running" and not request.htmx:
        return redirect("datasets_app:try_status", dataset.pk, state.key)
    return _render_try(request, context | {"state": state}, page)


EDITS_HAVE_PROBLEMS = (
    "The task's form has problems, so its edits cannot be tried: Save as draft shows them."
)


def _edits_try_form(target: tries.Target, data=None) -> TryAnswerForm:
    # Inside the editor's form: its fields are prefixed, and an empty answer must not stop
    # the browser from submitting Save as draft.
    return TryAnswerForm(data, checks=target.choices(), prefix="try", use_required_attribute=False)


def _edits_try_context(request: HtmxHttpRequest, dataset: Dataset, task: Task) -> dict:
    """The edit page's try: the task as its form has it (unsaved), and the try's fields
    (prefixed, beside the form's own)."""
    editor = _task_editor(request, dataset, task)
    target = tries.Target.of(dataset, task)
    if editor.is_valid() and editor.spec is not None:
        target = target.edited(editor.spec)
    form = _edits_try_form(target, request.POST)
    return _edit_urls(request, dataset, task) | {
        "editor": editor,
        "try_form": form,
        "try_target": target,
        "task_files": selectors.task_files(task),
        "editing": True,
        "refusal": None if editor.spec is not None else EDITS_HAVE_PROBLEMS,
    }


def _refuse_edits_try(request: HtmxHttpRequest, message: str, pk: int, task_pk: int):
    dataset = selectors.dataset_for(request.user, pk)
    task = selectors.task_for(dataset, task_pk)
    context = _edits_try_context(request, dataset, task) | {"refusal": message}
    return _render_try(request, {"dataset": dataset, "task": task, **context}, TASK_FORM_PAGE)


@require_POST
@guards.guard_upload(rate=guards.TRIES, check_size=False, refuse=_refuse_edits_try)
def task_try_edits(request: HtmxHttpRequest, pk: int, task_pk: int) -> HttpResponse:
    """Try an answer on the edit page, on the task as its form has it, before saving."""
    dataset = selectors.dataset_for(request.user, pk)
    task = selectors.task_for(dataset, task_pk)
    if task.state == TaskState.ARCHIVED:
        raise Http404
    context = _edits_try_context(request, dataset, task)
    if context["refusal"]:
        return _render_try(request, {"dataset": dataset, "task": task, **context}, TASK_FORM_PAGE)
    # Graded in this request: a worker could read only the saved task, not these edits.
    return _try(request, context["try_target"], context, page=TASK_FORM_PAGE, queue=False)


def _refuse_task_try(request: HtmxHttpRequest, message: str, pk: int, task_pk: int):
    target = tries.Target.read(user=request.user, pk=pk, task_pk=task_pk)
    context = {"dataset": target.dataset, "task": target.task, "refusal": message}
    return _render_try(request, context | _try_context(target, request.POST))


@require_POST
@guards.guard_upload(rate=guards.TRIES, check_size=False, refuse=_refuse_task_try)
def task_try(request: HtmxHttpRequest, pk: int, task_pk: int) -> HttpResponse:
    """Try an answer on the task's page: every criterion, or one alone."""
    target = tries.Target.read(user=request.user, pk=pk, task_pk=task_pk)
    return _try(request, target, _try_context(target, request.POST))


def _refuse_dataset_try(request: HtmxHttpRequest, message: str, pk: int):
    dataset = selectors.dataset_for(request.user, pk)
    context = _dataset_try_context(dataset, request.POST)
    return _render_try(request, {"dataset": dataset, "refusal": message, **context})


@require_POST
@guards.guard_upload(rate=guards.TRIES, check_size=False, refuse=_refuse_dataset_try)
def dataset_try(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Try a criterion for every task (the Settings page) against a task of the dataset."""
    dataset = selectors.dataset_for(request.user, pk)
    context = _dataset_try_context(dataset, request.POST)
    if not context:
        raise Http404
    form: TryAnswerForm = context["try_form"]
    if not form.is_valid():
        return _render_try(request, {"dataset": dataset, **context})
    target = tries.Target.read(user=request.user, pk=pk, task_pk=form.cleaned_data["task"])
    return _try(request, target, context)


@require_GET
def try_status(request: HtmxHttpRequest, pk: int, key: str) -> HttpResponse:
    """A try a worker grades: polled while it runs, then its outcome (also its page)."""
    dataset = selectors.dataset_for(request.user, pk)
    state = tries.try_state(key=key, user=request.user, dataset=dataset)
    if state is None:
        return _render_try(request, {"dataset": dataset, "gone": tries.TRY_GONE})
    target = tries.Target.read(user=request.user, pk=pk, task_pk=state.task_pk)
    context = _try_context(target, answer=state.answer, criterion=state.only or "")
    context |= {"dataset": dataset, "task": target.task, "state": state}
    return _render_try(request, context)


# --- Versions and exports -------------------------------------------------------------------


def version_detail(request: HtmxHttpRequest, pk: int, number: int) -> HttpResponse:
    """A saved version: its downloads, criteria for every task, and its tasks a page at a
    time (searched and filtered as the dataset page's)."""
    dataset = selectors.dataset_for(request.user, pk)
    version = selectors.version_for(dataset, number)
    head = selectors.version_head(version)
    keys_url = reverse("datasets_app:version_metadata_keys", args=[dataset.pk, version.number])
    form = _task_list_form(request, with_state=False, keys_url=keys_url)
    context = {
        "dataset": dataset,
        "version": version,
        "head": head,
        "form": form,
        "page": selectors.version_task_page(version, head, form.listing()),
    }
    if not _swaps_task_list(request):
        notes = selectors.version_export_notes(version)
        context["export_notes"] = notes
        context["export_warnings"] = sum(len(n.warnings) for n in notes)
        context |= _built_where(dataset, version)
        context["changes"] = comparing.version_changes(version)
        context["runs"] = selectors.runs_of_version(version)
    return _task_list_response(request, "datasets_app/version_detail.html", context)


@require_GET
def dataset_metadata_keys(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The metadata keys of the dataset's tasks and their common values: the filter's
    choices (a datalist, with htmx), or a page of them as filter links."""
    dataset = selectors.dataset_for(request.user, pk)
    context = {
        "dataset": dataset,
        "keys": metadata_keys.dataset_metadata_keys(dataset),
        "list_url": dataset.get_absolute_url(),
    }
    return _metadata_keys_response(request, context)


@require_GET
def version_metadata_keys(request: HtmxHttpRequest, pk: int, number: int) -> HttpResponse:
    """The same for a saved version's tasks."""
    dataset = selectors.dataset_for(request.user, pk)
    version = selectors.version_for(dataset, number)
    context = {
        "dataset": dataset,
        "version": version,
        "keys": metadata_keys.version_metadata_keys(version),
        "list_url": version.get_absolute_url(),
    }
    return _metadata_keys_response(request, context)


def _metadata_keys_response(request: HtmxHttpRequest, context: dict) -> HttpResponse:
    template = "datasets_app/metadata_keys.html"
    return render(request, f"{template}#datalist" if request.htmx else template, context)


@require_GET
def version_task(request: HtmxHttpRequest, pk: int, number: int, task_id: str) -> HttpResponse:
    """A task as a saved version holds it, read-only."""
    dataset = selectors.dataset_for(request.user, pk)
    version = selectors.version_for(dataset, number)
    task = selectors.version_task_for(version, task_id)
    head = selectors.version_head(version)
    context = {
        "dataset": dataset,
        "version": version,
        "head": head,
        "task": task,
        "task_files": selectors.task_files(task),
        "shared_criteria": selectors.version_shared_criteria(head),
        "python_checks_enabled": selectors.checker_options().python_checks_enabled,
        # The task as it is now, when this version's row is still the dataset's.
        "live": task.state == TaskState.SAVED,
    }
    return render(request, "datasets_app/version_task.html", context)


def _built_where(dataset: Dataset, version: Version | None) -> dict[str, Any]:
    """Whether the export links open a worker's job rather than download (`_export`)."""
    return {
        "built_by_worker": not exports.export_in_request(dataset=dataset, version=version),
        "in_request_tasks": settings.EXPORT_IN_REQUEST_TASKS,
    }


def _export(
    request: HtmxHttpRequest, dataset: Dataset, version: Version | None, slug: str
) -> HttpResponseBase:
    """The export as a download, built here. Past EXPORT_IN_REQUEST_TASKS tasks a worker
    builds it: a POST starts the job (or finds the one already building it) and opens its
    page; a GET opens the job that already answers for it, else asks to start one."""
    fmt = exporting.export_format(slug)
    if fmt is None:
        raise Http404
    if exports.export_in_request(dataset=dataset, version=version):
        if version is None:
            return exporting.export_response(
                selectors.dataset_spec_streamed(dataset), slug, dataset.name
            )
        return exporting.export_response(
            selectors.version_spec_streamed(version), slug, f"{dataset.name}-{version.label}"
        )
    found: ExportJob | None
    if request.method == "POST":
        found = exports.export_job_start(
            dataset=dataset, version=version, fmt=fmt, user=request.user
        )
    else:
        found = selectors.export_job_answering(
            dataset=dataset, version=version, fmt=fmt, user=request.user
        )
    if found is not None:
        return redirect(found.get_absolute_url())
    context = {
        "dataset": dataset,
        "version": version,
        "format": fmt,
        "tasks": exports.export_task_count(dataset=dataset, version=version),
        "in_request_tasks": settings.EXPORT_IN_REQUEST_TASKS,
    }
    return render(request, "datasets_app/export_start.html", context)


@require_http_methods(["GET", "POST"])
def version_export(request: HtmxHttpRequest, pk: int, number: int, fmt: str):
    dataset = selectors.dataset_for(request.user, pk)
    return _export(request, dataset, selectors.version_for(dataset, number), fmt)


@require_http_methods(["GET", "POST"])
def dataset_export(request: HtmxHttpRequest, pk: int, fmt: str = "") -> HttpResponseBase:
    """The dataset's live tasks (drafts included) as a file, or the page to choose one."""
    dataset = selectors.dataset_for(request.user, pk)
    if fmt:
        return _export(request, dataset, None, fmt)
    context = {
        "dataset": dataset,
        "export_notes": selectors.dataset_export_notes(dataset),
        **_built_where(dataset, None),
    }
    return render(request, "datasets_app/dataset_export.html", context)


@require_GET
def export_job(request: HtmxHttpRequest, key: uuid.UUID) -> HttpResponse:
    """An export a worker builds: its progress (polled with htmx), then its download."""
    job = selectors.export_job_for(request.user, key)
    fmt = exporting.export_format(job.format)
    if job.version is None:
        again = reverse("datasets_app:dataset_export", args=[job.dataset_id, job.format])
    else:
        again = reverse(
            "datasets_app:version_export", args=[job.dataset_id, job.version.number, job.format]
        )
    context = {
        "job": job,
        "dataset": job.dataset,
        "format": fmt,
        "file_name": posixpath.basename(job.stored_name),
        "again_url": again,
    }
    template = "datasets_app/export_job.html"
    return render(request, f"{template}#status" if request.htmx else template, context)


@require_GET
def export_job_download(request: HtmxHttpRequest, key: uuid.UUID) -> HttpResponseBase:
    """The built export; its page while it is not (or no longer) there to download."""
    job = selectors.export_job_for(request.user, key)
    fmt = exporting.export_format(job.format)
    if not job.downloadable or fmt is None:
        return redirect(job.get_absolute_url())
    return exporting.stored_export_response(job.stored_name, fmt)


def help_files(request: HtmxHttpRequest) -> HttpResponse:
    """What a dataset file holds: formats, each CSV column's names and what goes in it,
    limits, the field names and shapes read from other tools."""
    rows = [
        {"key": c.key, "spellings": c.spellings, "help": wording.COLUMN_HELP.get(c.key, "")}
        for c in columns.COLUMNS
    ]
    context = {
        "columns": rows,
        "limits": limits_for_people(),
        "fields": aliases.FIELDS,
        "shapes": [
            {"name": shape.name, "help_html": mark_safe(describe.as_html(shape.help))}
            for shape in shapes.SHAPES
        ],
        "refusals": [describe.refusal_words(refusal) for refusal in shapes.REFUSALS],
        "verifier_kinds": [
            {"key": key, "name": name, "help": wording.VERIFIER_KIND_HELP[key]}
            for key, name in wording.VERIFIER_KIND_NAMES.items()
        ],
        "settings_words": [
            {"key": key, "heading": heading, "blank": blank}
            for _prefix, key, heading, blank in SETTINGS_KEYS
        ],
    }
    return render(request, "datasets_app/help_files.html", context)


# --- Sharing --------------------------------------------------------------------------------


def dataset_sharing(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Who the dataset is shared with; its owner adds and removes people by user name."""
    dataset = selectors.dataset_for(request.user, pk)
    can_manage = sharing.can_manage_sharing(dataset, request.user)
    if request.method == "POST":
        try:
            if request.POST.get("remove"):
                sharing.dataset_unshare(
                    dataset=dataset, by=request.user, user_id=int(request.POST["remove"])
                )
                messages.success(request, "Stopped sharing with them.")
            else:
                person = sharing.dataset_share(
                    dataset=dataset, by=request.user, username=request.POST.get("username", "")
                )
                messages.success(request, f"Shared with {person.get_username()}.")
        except (sharing.ShareRefused, ValueError) as exc:
            messages.error(request, str(exc))
        return _redirect(request, reverse("datasets_app:dataset_sharing", args=[dataset.pk]))
    context = {
        "dataset": dataset,
        "can_manage": can_manage,
        "people": dataset.shared_with.order_by("username"),
    }
    return render(request, "datasets_app/dataset_sharing.html", context)


# --- API tokens -----------------------------------------------------------------------------


def _refuse_token(request: HtmxHttpRequest, message: str) -> HttpResponse:
    form = ApiTokenForm(request.POST)
    form.add_error(None, message)
    return _render_tokens(request, {"form": form})


@guards.guard_upload(rate=guards.TOKENS, check_size=False, refuse=_refuse_token)
def api_tokens(request: HtmxHttpRequest) -> HttpResponse:
    """The person's API tokens; a new one is shown on this response once, never again."""
    form = ApiTokenForm(request.POST or None)
    context: dict = {"form": form}
    if request.method == "POST" and form.is_valid():
        try:
            token, secret = tokens.api_token_create(
                user=request.user,
                name=form.cleaned_data["name"],
                expires_days=form.cleaned_data["expires_days"],
            )
        except limits.LimitReached as exc:
            form.add_error(None, str(exc))
        else:
            context = {"form": ApiTokenForm(), "new_token": token, "secret": secret}
    return _render_tokens(request, context)


def _render_tokens(request: HtmxHttpRequest, context: dict) -> HttpResponse:
    context["tokens"] = selectors.api_tokens_of(request.user)
    response = render(request, "datasets_app/api_tokens.html", context)
    # The page may hold a token: no cache keeps it.
    response["Cache-Control"] = "no-store"
    return response


@require_POST
def api_token_revoke(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(selectors.api_tokens_of(request.user), pk=pk)
    tokens.api_token_revoke(token=token)
    messages.success(request, f"Revoked the token “{token.name}”. It no longer opens the API.")
    return _redirect(request, reverse("datasets_app:api_tokens"))


# --- Deleting a dataset ---------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def dataset_delete(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Settings > Delete this dataset: a page naming what goes (GET), then the deletion."""
    dataset = selectors.dataset_for(request.user, pk)
    if not deletion.may_delete(dataset, request.user):
        return render(request, "403.html", {"message": deletion.ONLY_THE_OWNER}, status=403)
    if request.method == "POST":
        deletion.dataset_delete(dataset=dataset, user=request.user)
        messages.success(request, f"Deleted {dataset.name}.")
        return _redirect(request, reverse("datasets_app:dataset_list"))
    context = {"dataset": dataset, "contents": deletion.dataset_contents(dataset)}
    return render(request, "datasets_app/dataset_delete.html", context)


# --- People ---------------------------------------------------------------------------------


def people(request: HtmxHttpRequest) -> HttpResponse:
    """Administrators add the people who may sign in; a new person's password is shown on
    this response once, to pass on."""
    if not request.user.is_staff:
        raise PermissionDenied
    form = PersonForm(request.POST or None)
    context: dict = {"form": form}
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        invite = data.pop("how") == "invite"
        add = people_service.person_invite if invite else people_service.person_add
        try:
            person, secret = add(**data)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            shown = {"invite_link": request.build_absolute_uri(secret)} if invite else {}
            context = {"form": PersonForm(), "added": person, **(shown or {"password": secret})}
            context["invite_days"] = settings.PASSWORD_RESET_TIMEOUT // 86400
    context["people"] = selectors.people()
    response = render(request, "datasets_app/people.html", context)
    response["Cache-Control"] = "no-store"  # the page may hold a password
    return response


# --- Runs -------------------------------------------------------------------------------------


def _run_new_context(dataset: Dataset, form: RunOutputsForm, **extra) -> dict:
    return {
        "dataset": dataset,
        "form": form,
        "max_output_files": outputs_zip.MAX_FILES_PER_TASK,
        # The names an outputs file's columns are read by, from the one alias list.
        "run_fields": aliases.RUN_FIELDS,
        **extra,
    }


def _versions_to_run(dataset: Dataset) -> list[int]:
    return list(dataset.versions.order_by("-number").values_list("number", flat=True))


def _refuse_run_new(request: HtmxHttpRequest, message: str, pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    form = RunOutputsForm(versions=_versions_to_run(dataset), max_bytes=runs.MAX_OUTPUTS_BYTES)
    context = _run_new_context(dataset, form, refusal=message)
    return render(request, "datasets_app/run_new.html", context)


@require_http_methods(["GET", "POST"])
@guards.guard_upload(rate=guards.CHECKS, refuse=_refuse_run_new)
def run_new(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """New run: choose the outputs file (and the version); it is checked, then its preview
    (the run page, in `checking`) offers "Grade N tasks"."""
    dataset = selectors.dataset_for(request.user, pk)
    versions = _versions_to_run(dataset)
    if not versions:
        context = {"dataset": dataset, "no_version": runs.NO_VERSION}
        return render(request, "datasets_app/run_new.html", context)
    chosen = request.GET.get("version", "")
    initial = {
        "version": int(chosen) if chosen.isdigit() and int(chosen) in versions else versions[0]
    }
    if request.method != "POST":
        form = RunOutputsForm(initial=initial, versions=versions, max_bytes=runs.MAX_OUTPUTS_BYTES)
        return render(request, "datasets_app/run_new.html", _run_new_context(dataset, form))
    form = RunOutputsForm(
        request.POST, request.FILES, versions=versions, max_bytes=runs.MAX_OUTPUTS_BYTES
    )
    if not form.is_valid():
        return render(request, "datasets_app/run_new.html", _run_new_context(dataset, form))
    version = selectors.version_for(dataset, form.cleaned_data["version"])
    uploaded = form.cleaned_data["outputs"]
    plan, run = runs.run_prepare(
        version=version,
        user=request.user,
        data=uploaded.read(runs.MAX_OUTPUTS_BYTES + 1),
        file_name=uploaded.name or "outputs.jsonl",
        budget_judge_calls=form.cleaned_data["budget_judge_calls"],
    )
    if run is None:
        groups = selectors.group_problems([p.to_json() for p in plan.problems])
        context = _run_new_context(dataset, form, plan=plan, problem_groups=groups)
        return render(request, "datasets_app/run_new.html", context)
    if form.cleaned_data["name"]:
        runs.run_rename(run=run, name=form.cleaned_data["name"])
    if plan.mapping_due:
        question = RunColumnsForm(columns=plan.columns, chosen=_columns_chosen(plan))
        return render(request, "datasets_app/run_new.html", _columns_context(run, plan, question))
    return redirect(run.get_absolute_url())


def _columns_chosen(plan: runs.RunPlan) -> dict[str, str]:
    """The columns the select shows chosen: the person's (or the reader's) choice, else
    the likeliest of those asked about."""
    return {
        role: plan.mapping.get(role) or next(iter(plan.ask.get(role) or ()), "")
        for role in ("task", "output")
    }


def _outputs_form(run: Run) -> RunOutputsForm:
    """The New run form, empty, for another file to grade against the run's version."""
    return RunOutputsForm(
        initial={"version": run.version.number},
        versions=_versions_to_run(run.version.dataset),
        max_bytes=runs.MAX_OUTPUTS_BYTES,
    )


def _columns_context(run: Run, plan: runs.RunPlan, question: RunColumnsForm) -> dict:
    asked = [p for p in plan.problems if p.code == AMBIGUOUS_COLUMN.code]
    return _run_new_context(
        run.version.dataset,
        _outputs_form(run),
        kept=run,
        plan=plan,
        columns_form=question,
        asked=asked,
    )


def _refuse_run_columns(request: HtmxHttpRequest, message: str, pk: int, run_pk: int):
    return _refuse_run_new(request, message, pk)


@require_http_methods(["GET", "POST"])
@guards.guard_upload(rate=guards.CHECKS, refuse=_refuse_run_columns, check_size=False, kept=False)
def run_columns(request: HtmxHttpRequest, pk: int, run_pk: int) -> HttpResponse:
    """Which column of the kept outputs file is the task and which the output: asked when
    two could be, and offered again from the preview; then the preview, with that choice
    kept on the run until "Grade N tasks"."""
    dataset = selectors.dataset_for(request.user, pk)
    run = selectors.run_of(dataset, run_pk)
    plan = runs.RunPlan.from_json(run.plan or {})
    if run.state != RunState.CHECKING or plan is None or not plan.columns:
        return redirect(run.get_absolute_url())
    form = RunColumnsForm(request.POST or None, columns=plan.columns, chosen=_columns_chosen(plan))
    if request.method == "POST" and form.is_valid():
        mapping = {role: form.cleaned_data[role] for role in ("task", "output")}
        plan, kept = runs.run_map(run=run, mapping=mapping)
        if kept is None:
            groups = selectors.group_problems([p.to_json() for p in plan.problems])
            context = _run_new_context(
                dataset, _outputs_form(run), plan=plan, problem_groups=groups
            )
            return render(request, "datasets_app/run_new.html", context)
        if not plan.mapping_due:
            return redirect(kept.get_absolute_url())
        form = RunColumnsForm(columns=plan.columns, chosen=_columns_chosen(plan))
    return render(request, "datasets_app/run_new.html", _columns_context(run, plan, form))


def _run_context(dataset: Dataset, run: Run, request: HtmxHttpRequest) -> dict:
    summary = selectors.run_summary_of(run)
    criteria = [(c["id"], c["id"]) for c in summary.criteria] if summary else []
    form = RunTaskListForm(request.GET, criteria=criteria)
    context: dict[str, Any] = {
        "dataset": dataset,
        "run": run,
        "summary": summary,
        "plan": runs.RunPlan.from_json(run.plan or {}),
        "form": form,
    }
    if run.state != RunState.CHECKING:
        page = context["page"] = selectors.run_task_page(run, form.listing())
        # The table's cost columns, when the outputs said what any task on the page cost.
        context["costs_shown"] = any(
            row.latency_ms is not None or row.tokens is not None or row.cost is not None
            for row in page.rows
        )
    if summary is not None:
        context["score_bars"] = selectors.score_bars(summary)
        context["criterion_bars"] = selectors.criterion_bars(summary)
        context["previous"] = selectors.previous_run(run)
    return context


@require_GET
def run_detail(request: HtmxHttpRequest, pk: int, run_pk: int) -> HttpResponse:
    """A run: its preview before it starts, its progress while it grades (polled), then its
    score, criteria and tasks."""
    dataset = selectors.dataset_for(request.user, pk)
    run = selectors.run_of(dataset, run_pk)
    if request.htmx and request.GET.get("poll"):
        if run.ended:
            return HttpResponseClientRefresh()
        return render(request, "datasets_app/run_detail.html#progress", {"run": run})
    context = _run_context(dataset, run, request)
    if request.htmx and "page" in context:
        return render(request, "datasets_app/run_detail.html#run_tasks", context)
    return render(request, "datasets_app/run_detail.html", context)


@require_POST
def run_start(request: HtmxHttpRequest, pk: int, run_pk: int) -> HttpResponse:
    """Grade N tasks: the checked outputs, checked again, then to the workers."""
    dataset = selectors.dataset_for(request.user, pk)
    run = selectors.run_of(dataset, run_pk)
    try:
        runs.run_begin(run=run)
    except runs.RunRefused as refused:
        messages.error(request, str(refused))
    return redirect(run.get_absolute_url())


@require_POST
def run_stop(request: HtmxHttpRequest, pk: int, run_pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    run = selectors.run_of(dataset, run_pk)
    if runs.run_stop(run=run):
        messages.success(request, runs.RUN_STOPPED)
    return redirect(run.get_absolute_url())


@require_GET
def run_task(request: HtmxHttpRequest, pk: int, run_pk: int, result_pk: int) -> HttpResponse:
    """One task of a run: the agent's output and each criterion's verdict and reasoning."""
    dataset = selectors.dataset_for(request.user, pk)
    run = selectors.run_of(dataset, run_pk)
    result, outcomes = selectors.run_result_for(run, result_pk)
    context = {"dataset": dataset, "run": run, "result": result, "outcomes": outcomes}
    return render(request, "datasets_app/run_task.html", context)


@require_GET
def run_download(request: HtmxHttpRequest, pk: int, run_pk: int, fmt: str) -> HttpResponse:
    """The run's verdicts as a .csv (a row per task and criterion) or a .jsonl."""
    dataset = selectors.dataset_for(request.user, pk)
    run = selectors.run_of(dataset, run_pk)
    document = selectors.run_results_document(run)
    return exporting.run_results_response(document, fmt, f"{dataset.name}-run-{run.pk}")


@require_GET
def run_compare(request: HtmxHttpRequest, pk: int, run_pk: int, other_pk: int) -> HttpResponse:
    """Two runs of the dataset side by side: what got worse first."""
    dataset = selectors.dataset_for(request.user, pk)
    before = selectors.run_of(dataset, run_pk)
    after = selectors.run_of(dataset, other_pk)
    comparison = selectors.run_comparison(before, after)
    context = {"dataset": dataset, "before": before, "after": after, "comparison": comparison}
    return render(request, "datasets_app/run_compare.html", context)
