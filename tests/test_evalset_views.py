"""A contextgrid eval set through the import dialog, the task page, the export and the
check_dataset_file command."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from contextgrid import parse_jsonl_text
from contextgrid.evalset.io import BEIR_NOTE
from datasets_app.importing import evalset_format
from datasets_app.models import Task, Upload
from tests.conftest import SHARED

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
LEGALBENCH = SHARED / "realdata" / "legalbench_rag" / "meridian_privacy_qa.excerpt_fiverr_keep.json"
BEIR = SHARED / "realdata" / "beir" / "agentset_dbpedia"


def check(client, dataset, name: str, data: bytes):
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    return client.post(url, {"file": SimpleUploadedFile(name, data)}, **HTMX)


def commit(client, dataset, upload: Upload):
    url = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    return client.post(url, {"mode": "add", "upload": str(upload.key)}, **HTMX)


@pytest.mark.skipif(not LEGALBENCH.is_file(), reason="the shared LegalBench-RAG file is absent")
def test_a_legalbench_rag_file_previews_imports_and_shows_its_evidence(auth_client, make_dataset):
    dataset = make_dataset()
    page = check(auth_client, dataset, "privacy_qa.json", LEGALBENCH.read_bytes()).content.decode()
    assert (
        "Detected: contextgrid eval set (LegalBench-RAG), 56 questions, character-span gold" in page
    )
    note = evalset_format.NOTE_RETRIEVAL_CRITERION.format(count=56, total=56)
    assert note in page
    assert "Import 56 tasks" in page
    assert not Task.objects.exists(), "checking writes nothing but the upload"

    response = commit(auth_client, dataset, Upload.objects.get())
    assert response.status_code == 200
    task = dataset.tasks.live().get(task_id="privacy_qa-0000")
    assert task.prompt.startswith('Consider "Fiverr"\'s privacy policy')
    assert task.evidence["gold"][0] == {
        "source_id": "privacy_qa/Fiverr.txt",
        "start": 3873,
        "end": 4312,
        "grade": 2,
    }
    assert task.criteria.get().criterion_id == evalset_format.RETRIEVAL_CRITERION_ID

    detail = auth_client.get(task.get_absolute_url()).content.decode()
    assert "Retrieval evidence" in detail and "Gold spans" in detail
    assert "<code>privacy_qa/Fiverr.txt</code> characters 3873–4312" in detail


def test_an_eval_set_with_problems_names_the_file_and_line(auth_client, make_dataset):
    dataset = make_dataset()
    data = b'{"tests": [\n  {"query": "q", "snippets": [{"file_path": "a", "span": "1,2"}]}\n]}'
    page = check(auth_client, dataset, "bad.json", data).content.decode()
    assert "bad.json, line 2" in page
    assert "must be an array [start, end]" in page


def test_a_dataset_exports_as_an_eval_set_that_imports_back(auth_client, make_dataset):
    dataset = make_dataset()
    quiz = (
        b'{"_evalset": {"id": "quiz"}}\n'
        b'{"id": "q1", "question": "Notice period?", "answer": "30 days", "qtype": "factoid",'
        b' "anchors": [{"source_id": "handbook.pdf", "quote": "30 days written notice."}]}\n'
    )
    check(auth_client, dataset, "quiz.jsonl", quiz)
    commit(auth_client, dataset, Upload.objects.get())

    url = reverse("datasets_app:dataset_export", args=[dataset.pk, "evalset"])
    response = auth_client.get(url)
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    (item,) = parse_jsonl_text(body, name="export.jsonl").items
    assert (item.id, item.question, item.answer) == ("q1", "Notice period?", "30 days")
    assert item.anchors[0].quote == "30 days written notice."


@pytest.mark.skipif(not BEIR.is_dir(), reason="the shared BEIR files are absent")
def test_check_dataset_file_reads_a_beir_zip(tmp_path):
    path = tmp_path / "dbpedia.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(BEIR / "queries.jsonl", "queries.jsonl")
        archive.write(BEIR / "qrels" / "test.tsv", "qrels/test.tsv")
    out = io.StringIO()
    call_command("check_dataset_file", str(path), stdout=out)
    text = out.getvalue()
    assert "ZIP archive with contextgrid eval set (BEIR, queries.jsonl + qrels/test.tsv)" in text
    assert "40 questions, document-level gold" in text
    assert f"Note: {BEIR_NOTE}" in text
    assert "Ready to import 40 tasks." in text

    out = io.StringIO()
    call_command("check_dataset_file", str(path), "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["ok"] is True and result["task_count"] == 40
