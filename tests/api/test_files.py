"""Contract: POST /api/v1/check and imports (POST …/imports, GET /imports/{id}): the same
check, Celery tasks, all-or-nothing, limits and rate limits as the import dialog."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from datasets_app import guards, tasks
from datasets_app.api import endpoints
from datasets_app.api.schemas import CheckOut, ImportOut
from datasets_app.models import Criterion, Dataset, Task, Upload
from datasets_app.services import bulk, imports
from tests.api.conftest import error_of
from tests.conftest import FILES

EXPECTED_PATH = FILES / "json" / "expected_answers_template.json"
EXPECTED = EXPECTED_PATH.read_bytes()
# A file from another tool whose columns say nothing: the check guesses, `map` confirms.
OTHER_TOOL_CSV = b"qq,aa\nWhat is 2+2?,4\nCapital of France?,Paris\n"
IDLESS = b"prompt,expected_answer\nWhat is 2+2?,4\nCapital of France?,Paris\n"
BAD_JSONL = b'{"id": "a", "prompt": "p"}\n{"id": "a", "prompt": ""\n'


def file(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def imports_of(dataset: Dataset) -> str:
    return f"/api/v1/datasets/{dataset.pk}/imports"


def command_json(path) -> dict:
    out = io.StringIO()
    with contextlib.suppress(SystemExit):  # exit 1: the file has problems
        call_command("check_dataset_file", str(path), "--json", stdout=out)
    return json.loads(out.getvalue())


# --- POST /check ------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [EXPECTED_PATH, FILES / "json" / "bad_lines.jsonl", FILES / "csv" / "rubric.csv"],
    ids=lambda p: p.name,
)
def test_check_answers_exactly_what_the_command_prints(api, path):
    response = api.post("/api/v1/check", {"file": file(path.name, path.read_bytes())})
    assert response.status_code == 200
    assert response.json() == command_json(path)
    CheckOut.model_validate(response.json())  # and the schema the docs show holds it
    assert not Upload.objects.exists(), "a check writes nothing"


@pytest.mark.django_db
def test_check_lists_every_problem_with_its_place(api):
    body = api.post("/api/v1/check", {"file": file("bad.jsonl", BAD_JSONL)}).json()
    assert body["ok"] is False
    assert body["problems"] and all(p["file"] == "bad.jsonl" for p in body["problems"])
    assert {p["line"] for p in body["problems"]} <= {1, 2} and any(
        p["line"] for p in body["problems"]
    )
    assert all(p["code"] for p in body["problems"]), "every problem carries its stable code"


@pytest.mark.django_db
def test_check_needs_a_file(api):
    response = api.post("/api/v1/check", {"other": "x"})
    assert response.status_code == 400
    assert error_of(response)["message"] == endpoints.CHOOSE_A_FILE


@pytest.mark.django_db
def test_check_takes_map_as_the_command_takes_it(api, tmp_path):
    path = tmp_path / "other.csv"
    path.write_bytes(OTHER_TOOL_CSV)
    guessed = api.post("/api/v1/check", {"file": file("other.csv", OTHER_TOOL_CSV)}).json()
    assert guessed["ok"] is False and guessed["mapping"]["how"] == "guessed"
    assert guessed == command_json(path)

    response = api.post(
        "/api/v1/check",
        {"file": file("other.csv", OTHER_TOOL_CSV), "map": ["prompt=qq", "expected=aa"]},
    )
    out = io.StringIO()
    call_command(
        "check_dataset_file",
        str(path),
        "--json",
        "--map",
        "prompt=qq",
        "--map",
        "expected=aa",
        stdout=out,
    )
    assert response.json() == json.loads(out.getvalue())
    assert response.json()["ok"] is True and response.json()["mapping"]["how"] == "given"
    CheckOut.model_validate(response.json())


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["prompt", "colour=qq", "prompt="])
def test_a_map_that_is_not_field_equals_source_is_a_400(api, value):
    response = api.post("/api/v1/check", {"file": file("qa.json", EXPECTED), "map": value})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_map" and error["details"][0]["field"] == "form.map"


@pytest.mark.django_db
def test_a_check_past_the_time_limit_is_stopped_with_the_dialogs_problem(api, settings):
    # The limit the dialog's worker holds a check to (here none at all: any check is too
    # slow), not a web thread busy for as long as the file makes it take.
    settings.CHECK_TIME_LIMIT_SECONDS = 0
    many = {"tasks": [{"id": f"t{n}", "prompt": "p " * 200, "expected": "x"} for n in range(999)]}

    body = api.post("/api/v1/check", {"file": file("many.json", json.dumps(many).encode())}).json()

    assert body["ok"] is False and body["tasks"] == []
    (problem,) = body["problems"]
    assert problem["code"] == "check_too_slow"
    assert problem["message"].startswith("This file took too long to check (more than 0 seconds)")


@pytest.mark.django_db
def test_check_of_a_file_over_the_limit_is_a_413_before_it_is_read(api, settings):
    settings.MAX_UPLOAD_BYTES = 1024
    response = api.post("/api/v1/check", {"file": file("big.json", b" " * 4096)})
    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "too_large" and "larger than" in error["message"]


@pytest.mark.django_db
def test_a_json_body_over_the_form_limit_is_a_413_in_the_error_shape(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    body = json.dumps({"name": "x", "description": "d" * 4096})
    response = api.post("/api/v1/datasets", body, content_type="application/json")
    assert response.status_code == 413 and error_of(response)["code"] == "too_large"
    assert not Dataset.objects.exists()


@pytest.mark.django_db
def test_checks_are_rate_limited_with_the_dialogs_count(api, auth_client, make_dataset, settings):
    settings.RATELIMIT_CHECKS = "2/m"
    dataset = make_dataset()
    # One check in the dialog, one through the API: the third is over the rate.
    auth_client.post(f"/datasets/{dataset.pk}/import/check/", {"file": file("qa.json", EXPECTED)})
    assert api.post("/api/v1/check", {"file": file("qa.json", EXPECTED)}).status_code == 200
    response = api.post("/api/v1/check", {"file": file("qa.json", EXPECTED)})
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    error = error_of(response)
    assert error["code"] == "rate_limited" and error["message"] == guards.TOO_MANY_CHECKS


@pytest.mark.django_db
def test_check_needs_a_token(client):
    response = client.post("/api/v1/check", {"file": file("qa.json", EXPECTED)})
    assert response.status_code == 401


# --- Imports --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_import_answers_202_and_its_tasks_arrive_as_drafts(api, make_dataset):
    dataset = make_dataset()
    response = api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED)})
    assert response.status_code == 202
    body = response.json()
    ImportOut.model_validate(body)
    # Without a broker the workers' tasks run at once: the import is done already.
    assert body["state"] == "imported" and body["ok"] is True and body["mode"] == "add"
    assert [t["task_id"] for t in body["tasks"]] == ["yoy-growth", "q3-end-date"]
    assert set(dataset.tasks.values_list("state", flat=True)) == {"draft"}

    again = api.get(f"/api/v1/imports/{body['id']}").json()
    assert again["state"] == "imported" and again["tasks"] == body["tasks"]


@pytest.mark.django_db
def test_an_import_goes_through_the_dialogs_celery_tasks(api, make_dataset, monkeypatch):
    """With a broker: 202 while checking; the check task then claims and queues the import."""
    queued: list[tuple] = []
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: queued.append((task, args)))
    dataset = make_dataset()
    body = api.post(
        imports_of(dataset), {"file": file("qa.json", EXPECTED), "mode": "replace"}
    ).json()
    upload = Upload.objects.get(key=body["id"])
    assert body["state"] == "checking" and body["ok"] is None
    assert queued == [(tasks.check_upload, (upload.pk, "replace"))]

    tasks.check_upload(upload.pk, "replace")  # the worker
    assert api.get(f"/api/v1/imports/{body['id']}").json()["state"] == "importing"
    assert queued[-1] == (tasks.import_upload, (upload.pk, "replace"))

    tasks.import_upload(upload.pk, "replace")  # the worker
    done = api.get(f"/api/v1/imports/{body['id']}").json()
    assert done["state"] == "imported" and done["progress"] == {"done": 0, "total": 0}
    assert len(done["tasks"]) == 2


@pytest.mark.django_db
def test_an_import_takes_map_and_a_guess_imports_nothing(api, make_dataset):
    dataset = make_dataset()
    guessed = api.post(imports_of(dataset), {"file": file("other.csv", OTHER_TOOL_CSV)}).json()
    assert guessed["state"] == "failed" and guessed["mapping"]["needs_confirmation"]
    assert not dataset.tasks.exists()

    mapped = api.post(
        imports_of(dataset),
        {"file": file("other.csv", OTHER_TOOL_CSV), "map": ["prompt=qq", "expected=aa"]},
    ).json()
    assert mapped["state"] == "imported" and mapped["mapping"]["how"] == "given"
    assert list(dataset.tasks.values_list("prompt", "expected_text")) == [
        ("What is 2+2?", "4"),
        ("Capital of France?", "Paris"),
    ]


@pytest.mark.django_db
def test_a_file_with_problems_imports_nothing_and_says_where(api, make_dataset):
    dataset = make_dataset(tasks=1)
    body = api.post(imports_of(dataset), {"file": file("bad.jsonl", BAD_JSONL)}).json()
    assert body["state"] == "failed" and body["ok"] is False
    assert body["problems"] and body["problems"][0]["file"] == "bad.jsonl"
    assert body["tasks"] == []
    assert list(dataset.tasks.values_list("task_id", flat=True)) == ["t1"]


@pytest.mark.django_db
def test_add_refuses_ids_the_dataset_has_with_the_problem_on_its_line(api, make_dataset):
    dataset = make_dataset()
    api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED)})
    body = api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED)}).json()
    assert body["state"] == "failed" and body["error"] == imports.UPLOAD_HAS_PROBLEMS
    assert body["ok"] is False  # the state and the verdict never disagree
    assert {p["field"] for p in body["problems"]} == {"id"}
    assert all(p["code"] for p in body["problems"])
    assert all(p["line"] for p in body["problems"])
    assert dataset.tasks.count() == 2


@pytest.mark.django_db
def test_files_without_ids_are_added_one_after_the_other(api, make_dataset):
    dataset = make_dataset()
    for _ in range(2):
        body = api.post(imports_of(dataset), {"file": file("qa.csv", IDLESS)}).json()
        assert body["state"] == "imported" and body["ok"] is True, body["problems"]
    assert list(dataset.tasks.values_list("task_id", flat=True)) == [
        "task-1",
        "task-2",
        "task-3",
        "task-4",
    ]


@pytest.mark.django_db
def test_replace_archives_the_tasks_there_were(api, make_dataset):
    dataset = make_dataset(tasks=3)
    body = api.post(
        imports_of(dataset), {"file": file("qa.json", EXPECTED), "mode": "replace"}
    ).json()
    assert body["state"] == "imported"
    assert sorted(dataset.tasks.live().values_list("task_id", flat=True)) == [
        "q3-end-date",
        "yoy-growth",
    ]


@pytest.mark.django_db
def test_an_import_is_all_or_nothing(api, make_dataset, monkeypatch):
    dataset = make_dataset(tasks=1)

    written = bulk.insert_rows

    def fail(model, rows):
        # The tasks are written; their criteria are not.
        if model is Criterion:
            raise RuntimeError("disk full")
        return written(model, rows)

    monkeypatch.setattr(bulk, "insert_rows", fail)
    body = api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED)}).json()
    assert body["state"] == "failed" and body["error"] == tasks.IMPORT_FAILED
    assert list(dataset.tasks.values_list("task_id", flat=True)) == ["t1"]


@pytest.mark.django_db
@pytest.mark.parametrize("fields", [{"mode": "merge"}, {"colour": "red"}])
def test_an_import_refuses_unknown_fields_and_modes(api, make_dataset, fields):
    dataset = make_dataset()
    response = api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED), **fields})
    assert response.status_code == 400 and error_of(response)["code"] == "invalid"
    assert not Upload.objects.exists()


@pytest.mark.django_db
def test_an_import_into_someone_elses_dataset_is_a_404(api, make_dataset, other_user):
    theirs = make_dataset(owner=other_user)
    response = api.post(imports_of(theirs), {"file": file("qa.json", EXPECTED)})
    assert response.status_code == 404 and error_of(response)["code"] == "not_found"
    assert not Upload.objects.exists() and not Task.objects.exists()


@pytest.mark.django_db
def test_someone_elses_import_is_a_404(api, other_api, make_dataset):
    dataset = make_dataset()
    body = api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED)}).json()
    response = other_api.get(f"/api/v1/imports/{body['id']}")
    assert response.status_code == 404 and error_of(response)["code"] == "not_found"
    assert api.get("/api/v1/imports/00000000-0000-0000-0000-000000000000").status_code == 404
    assert api.get("/api/v1/imports/not-a-uuid").status_code in (400, 404)


@pytest.mark.django_db
def test_an_import_over_the_limit_is_a_413(api, make_dataset, settings):
    settings.MAX_UPLOAD_BYTES = 1024
    dataset = make_dataset()
    response = api.post(imports_of(dataset), {"file": file("big.json", b" " * 4096)})
    assert response.status_code == 413 and error_of(response)["code"] == "too_large"
    assert not Upload.objects.exists()


@pytest.mark.django_db
def test_imports_are_rate_limited_like_the_dialogs(api, make_dataset, settings):
    settings.RATELIMIT_IMPORTS = "1/m"
    dataset = make_dataset()
    assert api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED)}).status_code == 202
    response = api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED), "mode": "replace"})
    assert response.status_code == 429 and response["Retry-After"]
    assert error_of(response)["message"] == guards.TOO_MANY_IMPORTS
    assert Upload.objects.count() == 1


@pytest.mark.django_db
def test_the_storage_quota_bounds_imports_but_not_checks_which_keep_nothing(
    api, make_dataset, settings
):
    settings.STORAGE_QUOTA_BYTES = 100
    dataset = make_dataset()
    assert api.post("/api/v1/check", {"file": file("qa.json", EXPECTED)}).status_code == 200
    response = api.post(imports_of(dataset), {"file": file("qa.json", EXPECTED)})
    assert response.status_code == 413 and error_of(response)["code"] == "too_large"
    assert not Upload.objects.exists() and not dataset.tasks.exists()


GBK_ENGLISH = (
    "id,prompt,expected\n1,Maxwell’s equations — what’s “curl”?,Ampere’s law\n"
    "2,It’s “quoted” here,the answer’s fine\n"
).encode("gbk")


@pytest.mark.django_db
def test_check_and_import_take_encoding_as_the_commands_take_it(api, make_dataset, tmp_path):
    path = tmp_path / "physics.csv"
    path.write_bytes(GBK_ENGLISH)
    unsure = api.post("/api/v1/check", {"file": file("physics.csv", GBK_ENGLISH)}).json()
    assert unsure["ok"] is False and unsure["problems"][0]["code"] == "csv_encoding_unsure"

    response = api.post(
        "/api/v1/check", {"file": file("physics.csv", GBK_ENGLISH), "encoding": "gb18030"}
    )
    out = io.StringIO()
    call_command("check_dataset_file", str(path), "--json", "--encoding", "gb18030", stdout=out)
    assert response.json() == json.loads(out.getvalue())
    assert response.json()["ok"] is True

    dataset = make_dataset()
    made = api.post(
        imports_of(dataset), {"file": file("physics.csv", GBK_ENGLISH), "encoding": "gb18030"}
    ).json()
    assert made["state"] == "imported"
    assert dataset.tasks.get(task_id="1").prompt == "Maxwell’s equations — what’s “curl”?"


@pytest.mark.django_db
def test_an_unknown_encoding_is_a_400_naming_the_field(api, make_dataset):
    response = api.post("/api/v1/check", {"file": file("a.csv", b"p,e\n"), "encoding": "ebcdic"})
    assert response.status_code == 400
    assert error_of(response)["details"][0]["field"] == "form.encoding"
    dataset = make_dataset()
    response = api.post(imports_of(dataset), {"file": file("a.csv", b"p,e\n"), "encoding": "x"})
    assert response.status_code == 400
    assert error_of(response)["details"][0]["field"] == "form.encoding"


@pytest.mark.django_db
def test_number_tasks_imports_a_file_whose_ids_repeat(api, make_dataset, tmp_path):
    lines = [
        {"id": "q1", "prompt": "What is 2+2?", "expected": "4"},
        {"id": "q1", "prompt": "Capital of France?", "expected": "Paris"},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    path = tmp_path / "generated.jsonl"
    path.write_bytes(data)
    refused = api.post("/api/v1/check", {"file": file("generated.jsonl", data)}).json()
    assert refused["problems"][0]["code"] == "duplicate_task_id"

    numbered = api.post(
        "/api/v1/check", {"file": file("generated.jsonl", data), "number_tasks": "true"}
    ).json()
    out = io.StringIO()
    call_command("check_dataset_file", str(path), "--json", "--number-tasks", stdout=out)
    assert numbered == json.loads(out.getvalue())
    assert numbered["ok"] is True
    assert [w["code"] for w in numbered["warnings"]] == ["tasks_numbered"]

    dataset = make_dataset()
    made = api.post(
        imports_of(dataset), {"file": file("generated.jsonl", data), "number_tasks": "true"}
    ).json()
    assert made["state"] == "imported"
    assert sorted(dataset.tasks.values_list("task_id", flat=True)) == ["task-1", "task-2"]


@pytest.mark.django_db
def test_header_row_reads_a_csv_whose_columns_are_below_other_lines(api, tmp_path):
    data = b"Quarterly eval,,\nowner,team-a,\nid,prompt,expected\nq1,What is 2+2?,4\n"
    path = tmp_path / "q.csv"
    path.write_bytes(data)
    body = api.post("/api/v1/check", {"file": file("q.csv", data), "header_row": "3"}).json()
    out = io.StringIO()
    call_command("check_dataset_file", str(path), "--json", "--header-row", "3", stdout=out)
    assert body == json.loads(out.getvalue())
    assert body["ok"] is True and body["tasks"][0]["id"] == "q1"
    response = api.post("/api/v1/check", {"file": file("q.csv", data), "header_row": "zero"})
    assert response.status_code == 400
    assert error_of(response)["details"][0]["field"] == "form.header_row"
