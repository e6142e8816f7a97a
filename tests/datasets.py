"""Datasets for view tests, made the way a person makes them: a file imported through the
import dialog's views. And the whole of what a dataset holds, to compare before and after.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app.importing import zip_format
from datasets_app.importing.spec import DatasetSpec, FileSpec
from datasets_app.models import Dataset, Upload


def file_bytes(attached: FileSpec) -> bytes:
    """The bytes a generated zip holds for an attached file (different per path)."""
    return f"contents of {attached.path}\n".encode() * 3


def spec_zip(spec: DatasetSpec) -> bytes:
    """`spec` as a .zip with a dataset.json and the bytes of every file it attaches."""
    out = io.BytesIO()
    zip_format.write(spec, out, open_file=lambda attached: io.BytesIO(file_bytes(attached)))
    return out.getvalue()


def import_file(client, dataset: Dataset, name: str, data: bytes, *, mode: str = "add") -> Upload:
    """Choose the file in the import dialog and click Import, as a person would.

    The rate limits count in the cache: a property test imports many files a minute.
    """
    cache.clear()
    client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile(name, data), "mode": mode},
    )
    upload = Upload.objects.filter(dataset=dataset).latest("pk")
    assert upload.result.get("ok"), upload.result.get("problems")
    client.post(
        reverse("datasets_app:import_commit", args=[dataset.pk, upload.key]), {"mode": mode}
    )
    upload.refresh_from_db()
    assert upload.state == Upload.State.IMPORTED, upload.error
    return upload


def dataset_state(dataset: Dataset) -> dict[str, Any]:
    """Everything a person saved in the dataset, with row ids: equal means untouched."""
    dataset = Dataset.objects.get(pk=dataset.pk)

    def criteria(rows) -> list[tuple]:
        return [
            (c.pk, c.criterion_id, c.text, c.weight, c.verifier, c.position, c.archived)
            for c in rows
        ]

    tasks = []
    for task in dataset.tasks.order_by("pk").prefetch_related("criteria", "files"):
        files = [
            (f.pk, f.role, f.name, f.file.name, f.url, f.size, f.sha256, f.position)
            for f in task.files.all()
        ]
        tasks.append(
            {
                "pk": task.pk,
                "id": task.task_id,
                "name": task.name,
                "prompt": task.prompt,
                "expected": (task.expected_text, task.expected_verifier),
                "state": task.state,
                "position": task.position,
                "evidence": task.evidence,
                "criteria": criteria(task.criteria.all()),
                "files": files,
                "versions": sorted(task.versions.values_list("number", flat=True)),
            }
        )
    return {
        "name": dataset.name,
        "description": dataset.description,
        "settings": dataset.settings,
        "owner": dataset.owner_id,
        "shared_with": sorted(dataset.shared_with.values_list("pk", flat=True)),
        "criteria": criteria(dataset.criteria.filter(task__isnull=True).order_by("pk")),
        "tasks": tasks,
        "versions": list(dataset.versions.order_by("number").values_list("number", "snapshot")),
    }


def new_dataset_with_file(client, name: str, data: bytes, *, typed_name: str = ""):
    """New dataset with a file, without JavaScript: the form with the file shows its
    preview; Create again (the form as rendered, with the upload's key) makes the dataset.
    Returns the second response."""
    from tests.as_rendered import form_data

    cache.clear()
    url = reverse("datasets_app:dataset_create")
    page = client.post(
        url, {"name": typed_name, "description": "", "file": SimpleUploadedFile(name, data)}
    ).content.decode()
    return client.post(url, form_data(page, having="upload"))


# --- A saved version, read two ways that must agree (issue 22) ------------------------------


@contextmanager
def _api_client(user) -> Iterator[Any]:
    """A client with a token of `user`'s, revoked after (a person may hold only so many)."""
    from django.test import Client

    from datasets_app.services import tokens

    token, secret = tokens.api_token_create(user=user, name="reads a version")
    try:
        yield Client(headers={"authorization": f"Bearer {secret}"})
    finally:
        tokens.api_token_revoke(token=token)


def version_through_the_api(api, dataset: Dataset, number: int) -> list[tuple]:
    """Each task of version `number` as `GET /api/v1/datasets/{id}/tasks?version=N` answers
    (`api`: a client with a token): id, name, prompt, expected answer and verifier,
    criteria, files and metadata."""
    response = api.get(f"/api/v1/datasets/{dataset.pk}/tasks?version={number}")
    assert response.status_code == 200, response.content
    return [
        (
            t["task_id"],
            t["name"],
            t["prompt"],
            t["expected_answer"],
            t["expected_verifier"],
            [(c["id"], c["criterion"], c["weight"], c["verifier"]) for c in t["criteria"]],
            sorted((f["role"], f["name"], f["url"], f["sha256"]) for f in t["files"]),
            t["metadata"],
        )
        for t in response.json()
    ]


def version_as_exported(api, dataset: Dataset, number: int) -> list[tuple]:
    """The same of version `number` as its export (`…/versions/N/export`) holds it: the
    .zip, which holds everything (a flat format cannot hold stored files), its dataset.json
    read back by the app's own reader and each stored file's bytes hashed."""
    import hashlib
    import zipfile

    from datasets_app.importing import json_format

    response = api.get(f"/api/v1/datasets/{dataset.pk}/versions/{number}/export?format=zip")
    assert response.status_code == 200, response.content
    body = b"".join(response.streaming_content) if response.streaming else response.content
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        spec = json_format.from_document(json.loads(archive.read("dataset.json")))
        digests = {
            f.path: hashlib.sha256(archive.read(f.path)).hexdigest()
            for t in spec.tasks
            for f in (*t.input_files, *t.expected_files)
            if f.path
        }

    def verifier(v) -> dict | None:
        return v.to_json() if v is not None else None

    def files(role: str, specs) -> list[tuple]:
        return [(role, f.name, f.url, digests.get(f.path or "")) for f in specs]

    return [
        (
            t.id,
            t.name,
            t.prompt,
            t.expected_text,
            verifier(t.expected_verifier),
            [(c.id, c.criterion, c.weight, verifier(c.verifier)) for c in t.criteria],
            sorted(files("input", t.input_files) + files("expected", t.expected_files)),
            dict(t.metadata),
        )
        for t in spec.tasks
    ]


def assert_version_reads_as_exported(user, dataset: Dataset, number: int) -> list[tuple]:
    """`?version=N` over the API reads exactly what the version's export holds; returns it."""
    with _api_client(user) as api:
        read = version_through_the_api(api, dataset, number)
        exported = version_as_exported(api, dataset, number)
    assert read == exported, f"?version={number} reads {read}, its export holds {exported}"
    return read
