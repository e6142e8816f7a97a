"""Two imports into one dataset at the same moment, on PostgreSQL: the dataset's row lock
puts one after the other, so both land whole, positions unique and in order."""

from __future__ import annotations

import json
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from datasets_app.models import Dataset, Upload
from datasets_app.services import imports


def _upload(user, dataset, prefix: str) -> Upload:
    document = {
        "tasks": [
            {"id": f"{prefix}-{n}", "prompt": f"Question {n}?", "expected": "yes"}
            for n in range(50)
        ]
    }
    upload = imports.upload_create(
        owner=user,
        dataset=dataset,
        uploaded_file=SimpleUploadedFile(f"{prefix}.json", json.dumps(document).encode()),
    )
    return imports.upload_check(upload=upload)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_imports_into_one_dataset_at_once_both_land_in_order(make_dataset, user):
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL; this runs in the PostgreSQL pass of make test")
    dataset = make_dataset(tasks=2)
    uploads = [_upload(user, dataset, prefix) for prefix in ("first", "second")]
    barrier = threading.Barrier(2)
    errors: list[Exception] = []

    def run(upload: Upload) -> None:
        try:
            barrier.wait()
            imports.import_run(upload=Upload.objects.get(pk=upload.pk), mode="add")
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(upload,)) for upload in uploads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert errors == []
    rows = list(Dataset.objects.get(pk=dataset.pk).tasks.order_by("position"))
    positions = [task.position for task in rows]
    assert positions == list(range(102)), "unique, with no gap"
    ids = [task.task_id for task in rows]
    assert ids[:2] == ["t1", "t2"]
    # Each import's tasks arrive together and in the file's order, one import after the other.
    blocks = [ids[2:52], ids[52:]]
    assert sorted(block[0].split("-")[0] for block in blocks) == ["first", "second"]
    for block in blocks:
        prefix = block[0].split("-")[0]
        assert block == [f"{prefix}-{n}" for n in range(50)]
