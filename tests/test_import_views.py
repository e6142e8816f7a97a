"""Add tasks > Import from a file, through the Django test client (htmx and plain posts)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import selectors
from datasets_app.importing import checker
from datasets_app.models import Criterion, Task, TaskState, Upload
from datasets_app.services import datasets, imports
from tests.conftest import FILES
from tests.datasets import new_dataset_with_file
from tests.runs import run_outputs

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
RUBRIC = (FILES / "json" / "rubric_template.json").read_bytes()
EXPECTED = (FILES / "json" / "expected_answers_template.json").read_bytes()


def upload_file(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def check(client, dataset, name: str, data: bytes, *, htmx: bool = True):
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    return client.post(url, {"file": upload_file(name, data)}, **(HTMX if htmx else {}))


def commit(client, dataset, upload: Upload, mode: str = "add", *, htmx: bool = True):
    url = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    return client.post(url, {"mode": mode, "upload": str(upload.key)}, **(HTMX if htmx else {}))


def jsonl(*tasks: dict) -> bytes:
    return "".join(json.dumps(task) + "\n" for task in tasks).encode()


def test_the_dialog_opens_as_a_fragment_for_htmx_and_a_page_without(auth_client, make_dataset):
    dataset = make_dataset()
    url = reverse("datasets_app:import_dialog", args=[dataset.pk])
    fragment = auth_client.get(url, **HTMX).content.decode()
    assert "<html" not in fragment
    assert 'id="import-title">Import from a file' in fragment
    for title in ("Rubric criteria", "Expected answers", "Files in and out", "Blank"):
        assert title in fragment
    page = auth_client.get(url).content.decode()
    assert "<html" in page and "Import from a file" in page


def test_a_good_json_file_shows_its_preview_and_the_import_button(auth_client, make_dataset):
    dataset = make_dataset()
    response = check(auth_client, dataset, "rubric.json", RUBRIC)
    page = response.content.decode()
    assert response.status_code == 200
    assert "Import 1 task" in page and "Import 1 tasks" not in page
    assert "delayed-shipment" in page
    assert "Python checks" in page  # the code_verifier warning
    assert "disabled" not in page.split("Import 1 task")[0].rsplit("<button", 1)[1]
    assert not Task.objects.exists(), "checking writes nothing but the upload"
    assert Upload.objects.get().state == Upload.State.CHECKED


def test_the_button_counts_the_tasks(auth_client, make_dataset):
    dataset = make_dataset()
    page = check(auth_client, dataset, "qa.json", EXPECTED).content.decode()
    assert "Import 2 tasks" in page


@pytest.mark.parametrize(
    ("name", "data", "where"),
    [
        ("bad.json", b'{"tasks": [{"id": "a", "prompt": "p"}]}', "bad.json, line 1"),
        ("bad.jsonl", jsonl({"id": "a", "prompt": "p", "expected": "x"}, {"id": "b"}), "line 2"),
        ("bad.csv", b"prompt,expected_answer,weight\nhello,,\n", "bad.csv, row 2"),
    ],
)
def test_a_file_with_problems_lists_each_with_its_row_or_line(
    auth_client, make_dataset, name, data, where
):
    dataset = make_dataset()
    page = check(auth_client, dataset, name, data).content.decode()
    assert where in page
    assert "problem" in page and "Download the problems" in page
    button = page.split("Import tasks")[0].rsplit("<button", 1)[1]
    assert "disabled" in button


def test_the_problems_download_is_the_files_rows_with_a_problem_column(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "bad.csv", b"prompt,expected_answer\nhello,\nfine,yes\n")
    upload = Upload.objects.get()
    response = auth_client.get(reverse("datasets_app:upload_problems", args=[upload.key]))
    assert response["Content-Disposition"].startswith("attachment")
    lines = response.content.decode("utf-8-sig").splitlines()
    assert lines[0].endswith("problem")
    assert lines[1].startswith("hello,")
    assert lines[1] != "hello,,"


def test_the_problems_download_never_checks_the_file_in_the_web_request(
    auth_client, make_dataset, monkeypatch
):
    # It used to check the file again on every GET (10.6 s a request for a 1,048,576-row
    # sheet, unthrottled); the check (on a worker) now stores what the download serves.
    dataset = make_dataset()
    check(auth_client, dataset, "bad.csv", b"prompt,expected_answer\nhello,\nfine,yes\n")
    upload = Upload.objects.get()

    def no_check(*args, **kwargs):
        raise AssertionError("the download checked the file again")

    monkeypatch.setattr(checker, "check_file", no_check)
    response = auth_client.get(reverse("datasets_app:upload_problems", args=[upload.key]))

    lines = response.content.decode("utf-8-sig").splitlines()
    assert response.status_code == 200
    assert lines[0] == "prompt,expected_answer,problem_code,problem"
    assert lines[1].startswith("hello,,nothing_to_grade,")
    assert lines[2] == "fine,yes,,"
    # The stored check keeps each problem's code too.
    assert [p["code"] for p in upload.result["problems"]] == ["nothing_to_grade"]


def test_a_checked_file_without_problems_keeps_no_problems_file(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "qa.json", EXPECTED)

    assert not Upload.objects.get().problems_file


def test_importing_adds_drafts_after_the_datasets_own_and_says_what_to_save(
    auth_client, make_dataset, user
):
    dataset = make_dataset(tasks=2)
    datasets.version_save(dataset=dataset, user=user)
    check(auth_client, dataset, "rubric.json", RUBRIC)
    response = commit(auth_client, dataset, Upload.objects.get())
    assert response.status_code == 200
    assert response["HX-Redirect"] == dataset.get_absolute_url()

    tasks = list(dataset.tasks.live())
    assert [t.task_id for t in tasks] == ["t1", "t2", "delayed-shipment"]
    assert tasks[-1].state == TaskState.DRAFT
    assert tasks[-1].criteria.count() == 5
    assert dataset.criteria.filter(task__isnull=True).get().criterion_id == "no-invented-facts"

    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Imported 1 task as a draft. Check it, then Save as v2." in page
    assert "Save as v2" in page


def test_replace_archives_the_current_tasks_and_their_run_results_stay(
    auth_client, make_dataset, user
):
    dataset = make_dataset(tasks=2)
    Criterion.objects.create(dataset=dataset, criterion_id="old", text="Old shared", weight=1)
    version = datasets.version_save(dataset=dataset, user=user)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 0"})

    page = check(auth_client, dataset, "qa.json", EXPECTED).content.decode()
    upload = Upload.objects.get()
    replace_page = auth_client.get(
        reverse("datasets_app:import_status", args=[dataset.pk, upload.key]) + "?mode=replace",
        **HTMX,
    ).content.decode()
    assert "Added (2)" in replace_page and "Removed (2)" in replace_page
    assert "Added (2)" not in page

    commit(auth_client, dataset, upload, mode="replace")
    assert [t.task_id for t in dataset.tasks.live()] == ["yoy-growth", "q3-end-date"]
    assert set(dataset.tasks.filter(task_id__in=["t1", "t2"]).values_list("state", flat=True)) == {
        TaskState.ARCHIVED
    }
    assert run.results.count() == 2
    assert not dataset.criteria.filter(task__isnull=True, archived=False).exists()


def test_add_refuses_ids_the_dataset_already_has(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "qa.json", EXPECTED)
    commit(auth_client, dataset, Upload.objects.get())
    page = check(auth_client, dataset, "qa.json", EXPECTED).content.decode()
    assert "Task id &#x27;yoy-growth&#x27; is already one of this dataset&#x27;s tasks" in page
    second = Upload.objects.latest("pk")
    clashes = selectors.add_conflicts(dataset=dataset, upload=second)
    assert {(p["code"], p["field"]) for p in clashes} == {(selectors.TASK_ID_TAKEN.code, "id")}
    commit(auth_client, dataset, second)
    assert dataset.tasks.live().count() == 2


def test_ids_the_dataset_has_are_placed_by_the_check_not_by_each_page(
    auth_client, make_dataset, monkeypatch
):
    dataset = make_dataset()
    data = b"id,prompt,expected_answer\nfresh,Q1,A\nyoy-growth,Q2,B\n"
    check(auth_client, dataset, "first.csv", data)
    commit(auth_client, dataset, Upload.objects.get())
    check(auth_client, dataset, "again.csv", data)
    second = Upload.objects.latest("pk")

    def no_reading(*args, **kwargs):
        raise AssertionError("the page read the file again")

    monkeypatch.setattr(selectors.checker, "locate_tasks", no_reading)
    url = reverse("datasets_app:import_status", args=[dataset.pk, second.key])
    auth_client.get(url, **HTMX)
    clashes = selectors.add_conflicts(dataset=dataset, upload=second)

    assert [(p["row"], p["field"]) for p in clashes] == [(2, "id"), (3, "id")]


def test_an_import_is_all_or_nothing(auth_client, make_dataset, monkeypatch):
    dataset = make_dataset(tasks=1)
    check(auth_client, dataset, "qa.json", EXPECTED)

    def explode(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(imports, "_write_plan", explode)
    response = commit(auth_client, dataset, Upload.objects.get())
    assert "The import failed and nothing was written" in response.content.decode()
    assert [t.task_id for t in dataset.tasks.all()] == ["t1"]


def test_another_persons_upload_cannot_be_imported_or_seen(client, make_dataset, other_user, user):
    dataset = make_dataset()
    client.force_login(user)
    check(client, dataset, "qa.json", EXPECTED)
    upload = Upload.objects.get()
    theirs = make_dataset(owner=other_user, name="Theirs")
    client.force_login(other_user)
    assert commit(client, dataset, upload).status_code == 404
    assert commit(client, theirs, upload).status_code == 404
    url = reverse("datasets_app:upload_problems", args=[upload.key])
    assert client.get(url).status_code == 404
    assert not Task.objects.exists()


def test_an_expired_upload_is_not_imported(auth_client, make_dataset):
    from django.utils import timezone

    dataset = make_dataset()
    check(auth_client, dataset, "qa.json", EXPECTED)
    Upload.objects.update(expires_at=timezone.now())
    page = commit(auth_client, dataset, Upload.objects.get()).content.decode()
    assert "This upload has expired. Choose the file again." in page
    assert not Task.objects.exists()


def test_a_changed_upload_is_checked_again_not_imported_blind(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "qa.json", EXPECTED)
    upload = Upload.objects.get()
    with open(upload.file.path, "wb") as fh:
        fh.write(b'{"tasks": [{"id": "x"}]}')
    page = commit(auth_client, dataset, upload).content.decode()
    assert "The file changed since it was checked" in page
    assert not Task.objects.exists()


def test_importing_twice_does_not_import_twice(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "qa.json", EXPECTED)
    upload = Upload.objects.get()
    commit(auth_client, dataset, upload)
    commit(auth_client, dataset, upload)
    assert dataset.tasks.count() == 2


def test_it_works_without_javascript(auth_client, make_dataset):
    dataset = make_dataset()
    page = check(auth_client, dataset, "qa.json", EXPECTED, htmx=False).content.decode()
    assert "<html" in page and "Import 2 tasks" in page
    response = commit(auth_client, dataset, Upload.objects.get(), htmx=False)
    assert response.status_code == 302 and response.url == dataset.get_absolute_url()
    assert dataset.tasks.count() == 2


def test_htmx_posts_need_the_csrf_token(make_dataset, user):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    dataset = make_dataset()
    response = check(client, dataset, "qa.json", EXPECTED)
    assert response.status_code == 403
    page = client.get(dataset.get_absolute_url()).content.decode()
    token = page.split('"X-CSRFToken": "')[1].split('"')[0]
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    response = client.post(
        url, {"file": upload_file("qa.json", EXPECTED)}, HTTP_X_CSRFTOKEN=token, **HTMX
    )
    assert response.status_code == 200


def test_a_zip_imports_its_files_and_the_task_page_serves_them(auth_client, make_dataset):
    dataset = make_dataset()
    buffer = io.BytesIO()
    document = {
        "tasks": [
            {
                "id": "sum",
                "prompt": "Summarise the table.",
                "expected": "A summary",
                "inputFiles": ["data/table.csv"],
                "expectedFiles": [{"url": "https://example.com/summary.md", "name": "summary.md"}],
            }
        ]
    }
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dataset.json", json.dumps(document))
        archive.writestr("data/table.csv", "q,revenue\nQ1,10\n")
    check(auth_client, dataset, "set.zip", buffer.getvalue())
    commit(auth_client, dataset, Upload.objects.get())
    task = dataset.tasks.get()
    stored = task.files.get(role="input")
    assert stored.size == len(b"q,revenue\nQ1,10\n") and len(stored.sha256) == 64
    assert task.files.get(role="expected").url == "https://example.com/summary.md"
    response = auth_client.get(
        reverse("datasets_app:task_file_download", args=[dataset.pk, task.pk, stored.pk])
    )
    assert response["Content-Disposition"] == 'attachment; filename="table.csv"'
    assert b"".join(response.streaming_content) == b"q,revenue\nQ1,10\n"


def test_a_new_dataset_takes_its_name_and_settings_from_a_json_file(auth_client):
    page = auth_client.post(
        reverse("datasets_app:dataset_create"),
        {"name": "", "description": "", "file": upload_file("qa.json", EXPECTED)},
    ).content.decode()
    # Without JavaScript the file's preview comes first; nothing is made before it is seen.
    assert "Create dataset and import 2 tasks" in page and not Task.objects.exists()

    response = new_dataset_with_file(auth_client, "qa.json", EXPECTED)

    dataset = Task.objects.get(task_id="yoy-growth").dataset
    assert response.url == dataset.get_absolute_url()
    assert dataset.name == "Finance QA (expected answers)"
    assert dataset.settings["expectedAnswerVerifier"]["kind"] == "agent_judge"


def test_a_name_typed_on_new_dataset_wins_over_the_files(auth_client):
    new_dataset_with_file(auth_client, "qa.json", EXPECTED, typed_name="Mine")
    assert Task.objects.get(task_id="yoy-growth").dataset.name == "Mine"


def test_new_dataset_with_a_bad_file_creates_nothing(auth_client):
    from datasets_app.models import Dataset

    page = auth_client.post(
        reverse("datasets_app:dataset_create"),
        {"name": "X", "file": upload_file("bad.jsonl", b'{"id": "a"}\n')},
    ).content.decode()
    assert "line 1" in page
    assert not Dataset.objects.exists()


def test_new_dataset_with_a_file_uses_the_workers_and_shows_their_progress(
    auth_client, monkeypatch
):
    """With a broker, the check and the import run on workers: the pages wait for them."""
    from datasets_app import tasks
    from datasets_app.models import Dataset

    queued: list[tuple] = []
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: queued.append((task, args)))

    page = auth_client.post(
        reverse("datasets_app:dataset_create_check"),
        {"file": upload_file("qa.json", EXPECTED)},
        **HTMX,
    ).content.decode()
    upload = Upload.objects.get()
    assert "Checking…" in page and upload.state == Upload.State.CHECKING
    create = reverse("datasets_app:dataset_create")
    page = auth_client.post(create, {"name": "", "upload": str(upload.key)}).content.decode()
    assert "Checking…" in page and not Dataset.objects.exists()

    imports.upload_check(upload=upload)  # the worker's check
    response = auth_client.post(create, {"name": "", "upload": str(upload.key)})
    dataset = Dataset.objects.get()
    assert response.url == dataset.get_absolute_url()
    assert dataset.name == "Finance QA (expected answers)"
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Importing qa.json…" in page

    imports.import_run(upload=Upload.objects.get(), mode="add")  # the worker's import
    banner = reverse("datasets_app:import_status", args=[dataset.pk, upload.key]) + "?banner=1"
    response = auth_client.get(banner, **HTMX)
    assert response["HX-Redirect"] == dataset.get_absolute_url()
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Imported 2 tasks as drafts. Check them, then Save as v1." in page
    assert [task for task, _ in queued] == [tasks.check_upload, tasks.import_upload]


def test_a_dataset_with_files_exports_as_a_zip_that_imports_back_the_same(
    auth_client, make_dataset
):
    from datasets_app.importing import checker

    dataset = make_dataset()
    buffer = io.BytesIO()
    document = {
        "tasks": [
            {
                "id": "sum",
                "prompt": "Summarise the table.",
                "expected": "A summary",
                "inputFiles": ["data/table.csv", "https://example.com/notes.pdf"],
                "expectedFiles": ["expected/summary.md"],
            }
        ]
    }
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dataset.json", json.dumps(document))
        archive.writestr("data/table.csv", "q,revenue\nQ1,10\n")
        archive.writestr("expected/summary.md", "# Revenue grew\n")
    check(auth_client, dataset, "set.zip", buffer.getvalue())
    commit(auth_client, dataset, Upload.objects.get())

    response = auth_client.get(reverse("datasets_app:dataset_export", args=[dataset.pk, "zip"]))
    exported = b"".join(response.streaming_content)
    result = checker.check_file(exported, "export.zip")
    assert result.ok, result.problems
    (task,) = result.plan.tasks
    stored = {f.name: f.sha256 for f in dataset.tasks.get().files.all() if not f.url}
    assert {f.name: f.sha256 for f in task.input_files if f.path} == {
        "table.csv": stored["table.csv"]
    }
    assert [f.url for f in task.input_files if f.url] == ["https://example.com/notes.pdf"]
    assert [(f.name, f.sha256) for f in task.expected_files] == [
        ("summary.md", stored["summary.md"])
    ]


def test_closing_the_dialog_and_opening_it_again_comes_back_to_the_file(auth_client, make_dataset):
    dataset = make_dataset()
    url = reverse("datasets_app:import_dialog", args=[dataset.pk])
    check(auth_client, dataset, "qa.json", EXPECTED)
    page = auth_client.get(url, **HTMX).content.decode()
    assert "qa.json" in page and "Import 2 tasks" in page
    assert "hx-swap-oob" not in page
    fresh = auth_client.get(url + "?new=1", **HTMX).content.decode()
    assert "Choose the file" in fresh and "qa.json" not in fresh

    commit(auth_client, dataset, Upload.objects.get())
    assert "Choose the file" in auth_client.get(url, **HTMX).content.decode()
    check(auth_client, dataset, "bad.jsonl", b'{"id": "a"}\n')
    page = auth_client.get(url, **HTMX).content.decode()
    assert "Choose the file" in page, "a file with problems is chosen again, not resumed"


def test_an_id_the_dataset_already_has_is_shown_on_its_row(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)  # ids t1 and t2
    data = b"task_id,prompt,expected_answer\nnew,Fresh,yes\nt2,Again,no\n"
    page = check(auth_client, dataset, "more.csv", data).content.decode()
    assert "more.csv, row 3" in page
    assert "Task id &#x27;t2&#x27; is already one of this dataset&#x27;s tasks" in page
    replace = auth_client.get(
        reverse("datasets_app:import_status", args=[dataset.pk, Upload.objects.get().key])
        + "?mode=replace",
        **HTMX,
    ).content.decode()
    assert "already one of this dataset" not in replace and "Import 2 tasks" in replace
