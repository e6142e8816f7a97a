"""The check an upload keeps is one typed object (`StoredCheck`) with a version: what a
request stores, a later request, the API and the commands read back the same."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import checked
from datasets_app.checked import FileDataset, StoredCheck
from datasets_app.models import Upload
from tests.conftest import FILES

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
TRIAGE = (FILES / "real" / "ragas" / "support_triage.csv").read_bytes()
DATASET = json.dumps(
    {
        "name": "Dates",
        "settings": {"defaultVerifier": {"kind": "llm_judge", "outputType": "boolean"}},
        "criteria": [{"id": "brief", "criterion": "Is brief.", "weight": 2}],
        "tasks": [
            {"id": "t1", "prompt": "Last day of Q3?", "expected": "2025-09-30"},
            {"id": "t2", "prompt": "Is it?", "criteria": [{"id": "c", "criterion": "Yes."}]},
        ],
    }
).encode()


def checked_upload(client, dataset, name: str, data: bytes) -> Upload:
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    client.post(url, {"file": SimpleUploadedFile(name, data)}, **HTMX)
    return Upload.objects.get(dataset=dataset)


def test_a_checked_file_is_kept_with_its_version_and_reads_back_the_same(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    upload = checked_upload(auth_client, dataset, "dates.json", DATASET)

    kept = upload.stored_check
    assert upload.result["version"] == checked.VERSION
    assert StoredCheck.from_json(kept.to_json()) == kept
    assert (kept.ok, kept.format, kept.task_count, kept.file_ids) == (True, "json", 2, ["t1", "t2"])
    assert kept.dataset == FileDataset(
        name="Dates",
        settings={"defaultVerifier": {"kind": "llm_judge", "outputType": "boolean"}},
        criteria=("brief",),
        criteria_weight=2.0,
    )
    # Each task is graded by the file's criterion for every task too: t1 as a rubric in
    # which matching its expected answer is one criterion.
    assert [(t.id, t.criteria, t.total_weight) for t in kept.added_tasks or ()] == [
        ("t1", 2, 3.0),
        ("t2", 2, 3.0),
    ]
    assert kept.texts[0][:2] == ["Last day of Q3?", 15]


def test_a_guessed_mapping_is_kept_typed_and_the_dialog_asks_for_it(auth_client, make_dataset):
    dataset = make_dataset()
    upload = checked_upload(auth_client, dataset, "support_triage.csv", TRIAGE)

    kept = upload.stored_check
    assert kept.mapping is not None and kept.mapping.how == "guessed"
    assert kept.mapping_step_due and not kept.ok
    assert StoredCheck.from_json(kept.to_json()) == kept


def test_a_file_with_problems_keeps_them_with_their_codes_and_no_dataset(auth_client, make_dataset):
    dataset = make_dataset()
    upload = checked_upload(auth_client, dataset, "bad.json", b'{"tasks": [{"id": "a"}]}')

    kept = upload.stored_check
    assert not kept.ok and kept.dataset is None and kept.task_count == 0
    assert kept.problems and all(problem["code"] for problem in kept.problems)
    assert kept.codes >= {problem["code"] for problem in kept.problems}


def test_a_check_kept_before_the_version_reads_as_far_as_it_goes():
    # The form uploads kept before StoredCheck: no version, no dataset for a file with
    # problems, whole weights as integers.
    old = {
        "ok": True,
        "format": "csv",
        "task_count": 1,
        "detected": "CSV",
        "problems": [],
        "warnings": [{"code": "x", "message": "m", "file": "f.csv"}],
        "mapping": None,
        "tasks": [
            {"id": "a", "name": "A", "scored_by": "criteria", "criteria": 2, "total_weight": 3}
        ],
    }

    kept = StoredCheck.from_json(old)

    assert kept.ok and kept.task_count == 1 and kept.first_task_number == 1
    assert kept.tasks[0].total_weight == 3 and kept.added_tasks is None
    assert kept.codes == {"x"}
    assert StoredCheck.from_json({}) == StoredCheck()


def test_the_check_is_read_again_once_the_upload_holds_a_new_one(auth_client, make_dataset):
    dataset = make_dataset()
    upload = checked_upload(auth_client, dataset, "bad.json", b'{"tasks": [{"id": "a"}]}')
    assert upload.stored_check is upload.stored_check  # read once for one result
    assert not upload.stored_check.ok

    Upload.objects.filter(pk=upload.pk).update(result=StoredCheck(ok=True, task_count=3).to_json())
    upload.refresh_from_db()

    assert upload.stored_check.ok and upload.stored_check.task_count == 3
