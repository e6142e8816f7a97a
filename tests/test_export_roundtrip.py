"""Every export imports back unchanged: export -> import into a new dataset -> export gives
the same file, for each format, through the real export and New dataset views. The
datasets are generated with stored files, links, criteria for every task, verifiers,
settings and evidence; a flat format that cannot hold stored files says so on the export
page, offers the .zip, and its export still imports without a problem."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import reverse
from hypothesis import HealthCheck, given, settings

from datasets_app import exporting
from datasets_app.importing import (
    columns,
    csv_format,
    evalset_format,
    json_format,
    xlsx_format,
    zip_format,
)
from datasets_app.importing.spec import DatasetSpec
from datasets_app.models import Dataset, Upload
from datasets_app.services import datasets
from tests.datasets import file_bytes, import_file, new_dataset_with_file, spec_zip
from tests.importing.strategies import dataset_specs

pytestmark = pytest.mark.django_db


def download(client, dataset: Dataset, slug: str) -> tuple[str, bytes]:
    response = client.get(reverse("datasets_app:dataset_export", args=[dataset.pk, slug]))
    assert response.status_code == 200
    name = response["Content-Disposition"].split("filename=")[1].strip('"')
    return name, b"".join(response.streaming_content)


def new_dataset_from(client, name: str, data: bytes) -> Dataset:
    """New dataset with the file, the name left for the file to give."""
    cache.clear()  # the rate limits: a property test makes many datasets a minute
    before = set(Dataset.objects.values_list("pk", flat=True))
    response = new_dataset_with_file(client, name, data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    (dataset,) = Dataset.objects.exclude(pk__in=before)
    upload = Upload.objects.get(dataset=dataset)
    assert upload.state == Upload.State.IMPORTED, upload.error
    return dataset


def comparable(slug: str, data: bytes):
    """A zip's members carry the time they were written, a workbook its own: compare what
    they hold."""
    if slug not in ("zip", "xlsx"):
        return data
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    members.pop("docProps/core.xml", None)
    return members


def stored_files(spec: DatasetSpec) -> int:
    return sum(
        1
        for task in spec.tasks
        for attached in (*task.input_files, *task.expected_files)
        if attached.path is not None
    )


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=dataset_specs(with_paths=True, max_tasks=3))
def test_every_export_imports_back_unchanged(client, spec: DatasetSpec) -> None:
    owner = get_user_model().objects.get_or_create(username="owner")[0]
    client.force_login(owner)
    dataset = Dataset.objects.create(owner=owner, name="Generated")
    import_file(client, dataset, "generated.zip", spec_zip(spec))

    page = client.get(reverse("datasets_app:dataset_export_page", args=[dataset.pk]))
    notes = {n.format.slug: n for n in page.context["export_notes"]}
    for slug in exporting.FLAT_FORMATS:
        assert notes[slug].offer_zip == bool(stored_files(spec)), slug

    for fmt in exporting.EXPORT_FORMATS:
        if notes[fmt.slug].empty:
            continue  # nothing to write: the page shows the format without a link
        name, first = download(client, dataset, fmt.slug)
        copy = new_dataset_from(client, name, first)
        _name, again = download(client, copy, fmt.slug)
        assert comparable(fmt.slug, again) == comparable(fmt.slug, first), fmt.slug

    # The .zip carries everything, stored files' bytes included.
    _name, data = download(client, dataset, "zip")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        document = json.loads(zf.read("dataset.json"))
        held = [
            zf.read(attached["path"])
            for task in document["tasks"]
            for attached in (*task.get("inputFiles", []), *task.get("expectedFiles", []))
            if "path" in attached
        ]
    expected = [
        file_bytes(attached)
        for task in spec.tasks
        for attached in (*task.input_files, *task.expected_files)
        if attached.path is not None
    ]
    assert held == expected
    assert document["settings"] == spec.settings


def test_a_flat_export_of_stored_files_says_so_and_imports_back(auth_client, user):
    # The defect: .json, .csv and .xlsx wrote internal storage paths that the importer
    # refused, and the export page said nothing.
    document = {
        "tasks": [
            {
                "id": "t1",
                "prompt": "Summarise the report.",
                "expected": "Revenue grew.",
                "inputFiles": ["files/report.txt", "https://example.com/extra.pdf"],
            }
        ]
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("dataset.json", json.dumps(document))
        zf.writestr("files/report.txt", b"Revenue grew 25%.")
    dataset = Dataset.objects.create(owner=user, name="Reports")
    import_file(auth_client, dataset, "reports.zip", out.getvalue())

    page = auth_client.get(reverse("datasets_app:dataset_export_page", args=[dataset.pk]))
    text = page.content.decode()
    for extension in (".json", ".csv", ".xlsx"):
        assert f"cannot go in a {extension} file" in text
    assert "report.txt (task t1)" in text
    assert "Download the ZIP with files (.zip) instead" in text

    for slug in exporting.FLAT_FORMATS:
        name, data = download(auth_client, dataset, slug)
        copy = new_dataset_from(auth_client, name, data)
        (task,) = copy.tasks.all()
        assert [(f.name, f.url) for f in task.files.all()] == [
            ("extra.pdf", "https://example.com/extra.pdf")
        ], slug


def test_the_export_and_version_pages_do_not_build_the_exports(auth_client, user, monkeypatch):
    # Issue 15: a million criteria took the export page 104 s, because it built the .csv
    # and the .xlsx to list their warnings. The warnings come from the dataset itself.
    dataset = Dataset.objects.create(owner=user, name="Big", description="Kept in .json only")
    import_file(
        auth_client,
        dataset,
        "big.json",
        json.dumps(
            {
                "settings": {"expectedAnswerVerifier": {"kind": "exact_match"}},
                "tasks": [
                    {"id": "t1", "prompt": "Line one\r\nline two", "expected": "x"},
                    {"id": "t2", "prompt": "p", "criteria": [{"criterion": "Kind"}]},
                ],
            }
        ).encode(),
    )
    version = datasets.version_save(dataset=dataset, user=user)

    def refuse(*args, **kwargs):
        raise AssertionError("the page built an export")

    for module, name in (
        (csv_format, "write"),
        (csv_format, "write_to"),
        (xlsx_format, "write"),
        (xlsx_format, "write_to"),
        (json_format, "write"),
        (json_format, "write_to"),
        (evalset_format, "write"),
        (zip_format, "write"),
        (columns, "rows_from_spec"),
    ):
        monkeypatch.setattr(module, name, refuse)
    for url in (
        reverse("datasets_app:dataset_export_page", args=[dataset.pk]),
        version.get_absolute_url(),
    ):
        page = auth_client.get(url).content.decode()
        assert "CR line ends, in 1 cell" in page, url
        assert "Left out: 1 task graded by criteria only (t2)" in page, url
