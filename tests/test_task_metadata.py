"""A task's metadata through the app: imported from a sheet's columns, shown on the task
page, edited in the task form, frozen in a saved version, exported and imported back."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import selectors
from datasets_app.models import Dataset, Upload
from datasets_app.services import datasets, tokens
from tests.as_rendered import form_data
from tests.datasets import import_file
from tests.test_export_roundtrip import comparable

pytestmark = pytest.mark.django_db

SHEET = b"prompt,expected_answer,category,metadata.level\nWhat is 2+2?,4,math,3\nHi,Hello,,\n"


@pytest.fixture
def dataset(auth_client, user) -> Dataset:
    dataset = Dataset.objects.create(owner=user, name="Quiz")
    import_file(auth_client, dataset, "quiz.csv", SHEET)
    return dataset


def test_a_sheet_s_category_is_the_task_s_metadata_on_its_page(auth_client, dataset):
    task = dataset.tasks.get(task_id="task-1")
    assert task.metadata == {"category": "math", "level": 3}

    page = auth_client.get(task.get_absolute_url()).content.decode()

    assert '<h2 id="metadata-heading">Metadata</h2>' in page
    assert "<dt>category</dt><dd>math</dd>" in page and "<dt>level</dt><dd>3</dd>" in page
    other = auth_client.get(dataset.tasks.get(task_id="task-2").get_absolute_url())
    assert "metadata-heading" not in other.content.decode()


def edit(client, task, metadata: str):
    url = reverse("datasets_app:task_edit", args=[task.dataset_id, task.pk])
    data = form_data(client.get(url).content.decode())
    data["metadata"] = [metadata]
    return client.post(url, data)


def test_the_task_form_edits_metadata_as_a_json_object(auth_client, dataset, user):
    task = dataset.tasks.get(task_id="task-1")
    datasets.version_save(dataset=dataset, user=user)

    response = edit(auth_client, task, '{"category": "arithmetic", "split": "test"}')

    assert response.status_code == 302
    task = dataset.tasks.live().get(task_id="task-1")
    assert task.metadata == {"category": "arithmetic", "split": "test"}
    version = dataset.versions.get()
    assert selectors.version_spec(version).tasks[0].metadata == {"category": "math", "level": 3}
    assert version.tasks.get(task_id="task-1").metadata == {"category": "math", "level": 3}


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ('["math"]', "Write the metadata as one JSON object"),
        ("{category: math}", "Enter a valid JSON."),
        ('{" padded": 1}', "a key is one line of 1 to 100 characters"),
    ],
)
def test_metadata_that_is_not_an_object_of_good_keys_is_refused_with_why(
    auth_client, dataset, typed, message
):
    task = dataset.tasks.get(task_id="task-1")

    response = edit(auth_client, task, typed)

    assert response.status_code == 200 and message in response.content.decode()
    assert dataset.tasks.get(task_id="task-1").metadata == {"category": "math", "level": 3}


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "json", "zip", "evalset"])
def test_metadata_is_exported_and_imported_back_the_same(auth_client, dataset, user, fmt):
    url = reverse("datasets_app:dataset_export", args=[dataset.pk, fmt])
    data = b"".join(auth_client.get(url).streaming_content)
    copy = Dataset.objects.create(owner=user, name="Copy")

    # The contextgrid eval set is a .jsonl, its items' meta holding the metadata.
    import_file(auth_client, copy, f"copy.{'jsonl' if fmt == 'evalset' else fmt}", data)

    assert [t.metadata for t in copy.tasks.all()] == [{"category": "math", "level": 3}, {}]
    if fmt == "json":
        assert json.loads(data)["tasks"][0]["metadata"] == {"category": "math", "level": 3}


def listed(client, dataset, **query) -> list[str]:
    page = client.get(dataset.get_absolute_url(), query).content.decode()
    return [task_id for task_id in ("task-1", "task-2", "task-3") if f">{task_id}<" in page]


def test_the_dataset_page_filters_and_searches_by_metadata(auth_client, dataset, user):
    import_file(
        auth_client, dataset, "more.csv", b"prompt,expected_answer,difficulty\nBye,Goodbye,3\n"
    )

    assert listed(auth_client, dataset, metadata="category=math") == ["task-1"]
    assert listed(auth_client, dataset, metadata="level=3") == ["task-1"], "3 and '3' alike"
    assert listed(auth_client, dataset, metadata="difficulty") == ["task-3"]
    assert listed(auth_client, dataset, metadata="category=other") == []
    assert listed(auth_client, dataset, q="math") == ["task-1"]
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert 'name="metadata"' in page and 'placeholder="key=value"' in page


# Another tool's records (OpenAI evals' lines, a LangSmith-style split beside them).
EVALS_LINES = (
    b'{"input": "What is 2+2?", "ideal": "4", "category": "math", "split": "test"}\n'
    b'{"input": "Hi", "ideal": "Hello", "tags": ["greeting"], "notes": "x"}\n'
)


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("quiz.csv", SHEET, "<code>category</code>, <code>level</code>."),
        (
            "evals.jsonl",
            EVALS_LINES,
            "<code>category</code>, <code>split</code>, <code>tags</code>.",
        ),
    ],
)
def test_the_preview_says_which_keys_become_metadata(auth_client, user, name, data, said):
    dataset = Dataset.objects.create(owner=user, name="Quiz")
    auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile(name, data)},
        HTTP_HX_REQUEST="true",
    )
    upload = Upload.objects.get(dataset=dataset)
    url = reverse("datasets_app:import_status", args=[dataset.pk, upload.key])

    page = auth_client.get(url).content.decode()

    assert f"Kept as each task’s metadata: {said}" in page


def test_the_api_s_task_has_its_metadata(client, dataset, user):
    _row, secret = tokens.api_token_create(user=user, name="ci")
    headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    task = dataset.tasks.get(task_id="task-1")

    body = client.get(f"/api/v1/tasks/{task.pk}", **headers).json()

    assert body["metadata"] == {"category": "math", "level": 3}
    listing = client.get(f"/api/v1/datasets/{dataset.pk}/tasks", **headers).json()
    assert [t["metadata"] for t in listing] == [{"category": "math", "level": 3}, {}]


# Issue 27: a sheet's `tags` column was named as not imported, while a `tags` key beside
# another tool's prompt was kept: one list of names now says what is metadata in both.
TAGGED = (
    b"prompt,expected_answer,Tags,category\n"
    b'What is 2+2?,4,"[""arithmetic"", ""easy""]",math\n'
    b"Hi,Hello,greeting,\n"
)
TAGGED_METADATA = [
    {"tags": ["arithmetic", "easy"], "category": "math"},
    {"tags": "greeting"},
]


def _export(client, dataset, fmt: str) -> bytes:
    url = reverse("datasets_app:dataset_export", args=[dataset.pk, fmt])
    return b"".join(client.get(url).streaming_content)


def test_a_sheet_s_tags_column_is_kept_as_a_jsonl_tags_key_is(auth_client, user):
    lines = (
        b'{"input": "What is 2+2?", "ideal": "4", "tags": ["arithmetic", "easy"],'
        b' "category": "math"}\n{"input": "Hi", "ideal": "Hello", "Tags": "greeting"}\n'
    )
    for name, data in (("tagged.csv", TAGGED), ("tagged.jsonl", lines)):
        dataset = Dataset.objects.create(owner=user, name=name)
        upload = import_file(auth_client, dataset, name, data)

        assert [t.metadata for t in dataset.tasks.all()] == TAGGED_METADATA, name
        assert sorted(upload.result["metadata_keys"]) == ["category", "tags"], name
        assert not upload.result["warnings"], name


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "json", "zip"])
def test_a_tags_column_exports_and_imports_back_to_the_same_export(auth_client, user, fmt):
    dataset = Dataset.objects.create(owner=user, name="Tagged")
    import_file(auth_client, dataset, "tagged.csv", TAGGED)
    first = _export(auth_client, dataset, fmt)
    copy = Dataset.objects.create(owner=user, name="Tagged")

    import_file(auth_client, copy, f"copy.{fmt}", first)

    assert [t.metadata for t in copy.tasks.all()] == TAGGED_METADATA
    assert comparable(fmt, _export(auth_client, copy, fmt)) == comparable(fmt, first)
