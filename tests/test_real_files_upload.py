"""Real files from other tools through the dialog's service (`upload_check`): what the
importer recognises arrives as drafts, and what it refuses stores its reason, named by the
file's tool, and writes nothing."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from datasets_app.models import Upload
from datasets_app.services import imports
from tests.conftest import FILES

REAL = FILES / "real"


def _imported(user, dataset, relative: str) -> Upload:
    path = REAL / relative
    upload = imports.upload_create(
        owner=user, dataset=dataset, uploaded_file=SimpleUploadedFile(path.name, path.read_bytes())
    )
    upload = imports.upload_check_start(upload=upload, import_mode="add")
    upload.refresh_from_db()
    return upload


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("relative", "tasks", "tool"),
    [
        ("bedrock/golden.jsonl", 2, "Amazon Bedrock evaluation prompts"),
        ("bedrock/kb_ground_truth.jsonl", 15, "Amazon Bedrock knowledge base evaluation"),
        ("llamaindex/ipcc_eval_qr_dataset.json", 20, "LlamaIndex QueryResponseDataset"),
        ("llamaindex/aragog_rag_dataset.excerpt.json", 3, "LlamaIndex LabelledRagDataset"),
    ],
)
def test_a_recognised_real_file_arrives_as_drafts(user, make_dataset, relative, tasks, tool):
    dataset = make_dataset()

    upload = _imported(user, dataset, relative)

    assert upload.state == Upload.State.IMPORTED
    assert tool in upload.result["detected"]
    assert dataset.tasks.count() == tasks


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("relative", "words"),
    [
        ("autoevals/coqa_closed_qa.excerpt.json", "a grader's test set"),
        ("braintrust/coqa_factuality.excerpt.json", "a grader's test set"),
        ("llamaindex/finetune_embedding_val_dataset.excerpt.json", "a retriever's eval set"),
    ],
)
def test_a_refused_real_file_says_what_it_is_and_writes_nothing(
    user, make_dataset, relative, words
):
    dataset = make_dataset()

    upload = _imported(user, dataset, relative)

    assert upload.state == Upload.State.CHECKED
    [problem] = upload.result["problems"]
    assert problem["code"] == "not_a_dataset"
    assert words in problem["message"]
    assert not dataset.tasks.exists()
