"""Views translate HTTP: validate a form, call one service or selector, pick a template.

Every view needs a login (LoginRequiredMiddleware); a dataset the person may not see is a
404, never a 403, so ids can't be probed.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from datasets_app import selectors, services
from datasets_app.forms import DatasetForm


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def dataset_list(request: HtmxHttpRequest) -> HttpResponse:
    datasets = selectors.datasets_for(request.user).select_related("owner")
    return render(request, "datasets_app/dataset_list.html", {"datasets": datasets})


def dataset_create(request: HtmxHttpRequest) -> HttpResponse:
    form = DatasetForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        dataset = services.dataset_create(owner=request.user, **form.cleaned_data)
        messages.success(request, f"Created {dataset.name}.")
        return redirect(dataset)
    return render(request, "datasets_app/dataset_create.html", {"form": form})


def dataset_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    rows = selectors.task_rows(dataset)
    context = {
        "dataset": dataset,
        "rows": rows,
        "has_drafts": any(row.task.is_draft for row in rows),
        "next_version": services.next_version_number(dataset),
        "shared_criteria": selectors.dataset_criteria(dataset),
        "versions": selectors.versions_of(dataset),
        "runs": selectors.runs_of(dataset),
    }
    return render(request, "datasets_app/dataset_detail.html", context)


@require_POST
def version_save(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    dataset = selectors.dataset_for(request.user, pk)
    try:
        version = services.version_save(dataset=dataset, user=request.user)
    except services.NothingToSave as exc:
        messages.warning(request, str(exc))
    else:
        messages.success(request, f"Saved {dataset.name} as {version.label}.")
    if request.htmx:
        return HttpResponseClientRedirect(dataset.get_absolute_url())
    return redirect(dataset)
