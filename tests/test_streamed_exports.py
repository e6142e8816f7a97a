"""Exports are written as the tasks are read, a chunk at a time (`selectors.TaskStream`):
what they hold is what the writers make of the whole dataset in memory, byte for byte, for
the dataset and for a version, in every format."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.urls import reverse

from datasets_app import exporting, selectors
from datasets_app.importing import csv_format, evalset_format, json_format, xlsx_format
from datasets_app.models import Criterion, TaskFile
from datasets_app.services import datasets

pytestmark = pytest.mark.django_db


def contents(data: bytes, slug: str) -> dict[str, bytes] | bytes:
    """A zip's (or workbook's) members by name, leaving out when it was written."""
    if slug not in ("zip", "xlsx"):
        return data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n != "docProps/core.xml"}


def in_memory(spec, slug: str) -> bytes:
    flat = exporting.links_only(spec)
    if slug == "json":
        return json_format.write(flat)
    if slug == "csv":
        return csv_format.write(flat)[0]
    if slug == "xlsx":
        return xlsx_format.write(flat)[0]
    return evalset_format.write(spec)


@pytest.fixture
def dataset(make_dataset, monkeypatch):
    monkeypatch.setattr(selectors, "STREAM_CHUNK", 2)
    dataset = make_dataset(tasks=7)
    Criterion.objects.create(dataset=dataset, criterion_id="all", text="=Clear.", weight=2)
    for task in dataset.tasks.all()[:3]:
        Criterion.objects.create(dataset=dataset, task=task, criterion_id="c", text="+Cites.")
        TaskFile.objects.create(task=task, role="input", name="a.csv", url="https://e.com/a")
    return dataset


@pytest.mark.parametrize("slug", ["json", "csv", "xlsx", "evalset"])
def test_a_streamed_export_is_what_the_whole_dataset_makes(dataset, user, slug):
    fmt = exporting.export_format(slug)
    whole = selectors.dataset_spec(dataset=dataset)
    version = datasets.version_save(dataset=dataset, user=user)

    for streamed in (
        selectors.dataset_spec_streamed(dataset),
        selectors.version_spec_streamed(version),
    ):
        stream = exporting.export(streamed, fmt)
        assert contents(stream.read(), slug) == contents(in_memory(whole, slug), slug)


def test_a_streamed_zip_holds_the_same_dataset_file(dataset, user):
    version = datasets.version_save(dataset=dataset, user=user)
    whole = selectors.version_spec(version)

    stream = exporting.export(
        selectors.version_spec_streamed(version), exporting.export_format("zip")
    )
    with zipfile.ZipFile(stream) as archive:
        assert archive.read("dataset.json") == json_format.write(whole)


def test_the_download_is_the_export(auth_client, dataset, user):
    version = datasets.version_save(dataset=dataset, user=user)
    url = reverse("datasets_app:version_export", args=[dataset.pk, version.number, "json"])

    response = auth_client.get(url)
    body = b"".join(response.streaming_content)
    assert body == json_format.write(selectors.version_spec(version))
    assert '"id": "t7"' in body.decode()
