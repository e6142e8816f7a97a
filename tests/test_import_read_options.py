"""Read options in the import dialog and on the New dataset page: a CSV's encoding, found
from its text and said with a sample, or chosen by the person when the check cannot tell;
the header row of a CSV or a workbook; numbering the tasks."""

from __future__ import annotations

import io
import json
from html import escape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from openpyxl import Workbook

from datasets_app.importing import columns, csv_format
from datasets_app.models import Task, Upload
from tests.conftest import FILES

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
# An English file saved as GBK: its quotes and dashes read as Big5 or EUC-KR too.
GBK_ENGLISH = (
    "id,prompt,expected\n1,Maxwell’s equations — what’s “curl”?,Ampere’s law\n"
    "2,It’s “quoted” here,the answer’s fine\n"
).encode("gbk")
MEDICAL = (FILES / "real" / "chinese_medical_dialogue" / "im_sample.excerpt.csv").read_bytes()


def check(client, dataset, name: str, data: bytes, *, htmx: bool = True):
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    return client.post(url, {"file": SimpleUploadedFile(name, data)}, **(HTMX if htmx else {}))


def read_again(client, dataset, upload, *, htmx: bool = True, **options: str):
    """Read options' "Read the file again", with `options` as the form sends them."""
    url = reverse("datasets_app:import_read", args=[dataset.pk, upload.key])
    return client.post(url, {"mode": "add", **options}, **(HTMX if htmx else {}))


def read_as(client, dataset, upload, encoding: str, *, htmx: bool = True):
    return read_again(client, dataset, upload, htmx=htmx, encoding=encoding)


def test_a_file_whose_encoding_cannot_be_told_asks_and_imports_once_chosen(
    auth_client, make_dataset
):
    dataset = make_dataset()
    page = check(auth_client, dataset, "physics.csv", GBK_ENGLISH).content.decode()
    assert "reads equally well in 4 encodings" in page
    assert "Fix it and choose the file again, or change the Read options below." in page
    assert '<details class="read-options" open>' in page
    assert '<option value="gb18030">GBK (Simplified Chinese)</option>' in page
    assert 'disabled aria-disabled="true">Import tasks</button>' in page

    upload = Upload.objects.get()
    page = read_as(auth_client, dataset, upload, "gb18030").content.decode()
    assert "Import 2 tasks" in page
    assert "Maxwell’s equations — what’s “curl”?" in page
    assert '<option value="gb18030" selected>' in page
    upload.refresh_from_db()
    assert upload.read_options == {"encoding": "gb18030"}

    commit = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    auth_client.post(commit, {"mode": "add"}, **HTMX)
    assert sorted(Task.objects.values_list("prompt", flat=True)) == [
        "It’s “quoted” here",
        "Maxwell’s equations — what’s “curl”?",
    ]


def test_a_found_code_page_is_said_with_a_sample_and_read_options_open(auth_client, make_dataset):
    dataset = make_dataset()
    data = "prompt;expected\nWie heißt die Straße?;Schöne Grüße\n".encode("cp1252")
    page = check(auth_client, dataset, "de.csv", data).content.decode()
    assert "Detected: CSV, Windows-1252, &#x27;;&#x27;-delimited" in page
    assert "read as Windows-1252 (Western European)" in page
    assert "Wie heißt die Straße?;Schöne Grüße" in page
    assert '<details class="read-options" open>' in page
    assert "Import 1 task" in page


def test_an_encoding_that_does_not_read_the_file_names_the_byte(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "medical.csv", MEDICAL)
    page = read_as(auth_client, dataset, Upload.objects.get(), "utf-8").content.decode()
    expected = csv_format.NOT_IN_ENCODING.format(encoding="UTF-8", byte="0xD0", line_number=2)
    assert expected in page


def test_a_utf8_file_keeps_read_options_closed_and_json_offers_no_encoding(
    auth_client, make_dataset
):
    dataset = make_dataset()
    page = check(auth_client, dataset, "qa.csv", b"prompt,expected\nQ,A\n").content.decode()
    assert '<details class="read-options">' in page and 'name="encoding"' in page
    page = check(auth_client, dataset, "qa.jsonl", b'{"prompt": "Q", "expected": "A"}\n')
    page = page.content.decode()
    assert '<details class="read-options">' in page and 'name="encoding"' not in page
    assert 'name="number_tasks"' in page


# A generated QA set whose ids collide: different questions under one id.
COLLIDING = b"".join(
    json.dumps({"id": task_id, "prompt": prompt, "expected": answer}).encode() + b"\n"
    for task_id, prompt, answer in [
        ("q1", "What is 2+2?", "4"),
        ("q1", "Capital of France?", "Paris"),
        ("q2", "Largest planet?", "Jupiter"),
    ]
)


def test_ids_that_collide_open_read_options_and_numbering_imports_every_task(
    auth_client, make_dataset
):
    dataset = make_dataset()
    page = check(auth_client, dataset, "generated.jsonl", COLLIDING).content.decode()
    assert "Task id &quot;q1&quot; is already used by task 1 of the file." in page
    assert '<details class="read-options" open>' in page

    upload = Upload.objects.get()
    page = read_again(auth_client, dataset, upload, number_tasks="on").content.decode()
    assert "Import 3 tasks" in page
    assert (
        "The tasks are numbered task-1 to task-3, as you asked: 3 ids of the file were "
        "replaced, 1 of them a repeat of an id above it."
    ) in page
    assert 'id="id_number_tasks" checked>' in page

    commit = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    auth_client.post(commit, {"mode": "add"}, **HTMX)
    assert list(Task.objects.order_by("position").values_list("task_id", "prompt")) == [
        ("task-1", "What is 2+2?"),
        ("task-2", "Capital of France?"),
        ("task-3", "Largest planet?"),
    ]


def test_read_options_work_without_javascript_and_on_the_new_dataset_page(client, user):
    client.force_login(user)
    url = reverse("datasets_app:dataset_create_check")
    page = client.post(url, {"file": SimpleUploadedFile("p.csv", GBK_ENGLISH)}).content.decode()
    upload = Upload.objects.get()
    action = reverse("datasets_app:dataset_create_read", args=[upload.key])
    assert f'formaction="{action}"' in page

    page = client.post(action, {"name": "Physics", "encoding": "gb18030"}).content.decode()
    assert "<html" in page and "Maxwell’s equations" in page
    assert "Create dataset and import 2 tasks" in page


def test_another_persons_upload_cannot_be_read_again(client, other_user, user, make_dataset):
    client.force_login(user)
    dataset = make_dataset(owner=user)
    check(client, dataset, "physics.csv", GBK_ENGLISH)
    client.force_login(other_user)
    response = read_as(client, dataset, Upload.objects.get(), "gb18030")
    assert response.status_code == 404


def test_the_header_row_a_person_says_is_read_as_the_columns(auth_client, make_dataset):
    # Two lines above the header that do not look like a title: nothing is found alone.
    data = b"Quarterly eval,,\nowner,team-a,\nid,prompt,expected\nq1,What is 2+2?,4\n"
    dataset = make_dataset()
    page = check(auth_client, dataset, "q.csv", data).content.decode()
    assert "This file has no prompt column. Found: Quarterly eval." in page
    assert "Fix it and choose the file again.\n" in page  # Read options closed, unnamed

    upload = Upload.objects.get()
    page = read_again(auth_client, dataset, upload, header_row="3").content.decode()
    assert "Import 1 task" in page and "What is 2+2?" in page
    assert 'name="header_row" value="3"' in page
    upload.refresh_from_db()
    assert upload.read_options == {"header_row": 3}

    page = read_again(auth_client, dataset, upload, header_row="9").content.decode()
    assert columns.NO_HEADER_THERE.format(number=9, rows=4) in page
    assert '<details class="read-options" open>' in page


def test_a_header_row_that_is_not_a_row_number_is_said_on_the_field(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "q.csv", b"prompt,expected\nQ,A\n")
    upload = Upload.objects.get()
    page = read_again(auth_client, dataset, upload, header_row="0").content.decode()
    assert "Ensure this value is greater than or equal to 1." in page
    upload.refresh_from_db()
    assert upload.read_options == {}


def workbook(*rows: tuple[str, ...]) -> bytes:
    sheet_book = Workbook()
    for row in rows:
        sheet_book.active.append(row)
    buffer = io.BytesIO()
    sheet_book.save(buffer)
    return buffer.getvalue()


def test_a_workbook_takes_its_header_row_from_read_options_and_offers_no_encoding(
    auth_client, make_dataset
):
    # A sheet with a report's two-cell heading above its table: not a title line, so the
    # heading is taken for the columns, and the person says where the header is.
    data = workbook(
        ("Quarterly eval", "team-a"),
        ("id", "prompt", "expected"),
        ("q1", "What is 2+2?", "4"),
        ("q2", "Capital of France?", "Paris"),
    )
    dataset = make_dataset()
    page = check(auth_client, dataset, "q.xlsx", data).content.decode()
    assert "Which column is which?" in page and ">team-a</option>" in page
    assert 'name="header_row"' in page and 'name="encoding"' not in page

    upload = Upload.objects.get()
    page = read_again(auth_client, dataset, upload, header_row="2").content.decode()
    assert "Import 2 tasks" in page and "Capital of France?" in page
    commit = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    auth_client.post(commit, {"mode": "add"})
    assert sorted(dataset.tasks.values_list("task_id", "expected_text")) == [
        ("q1", "4"),
        ("q2", "Paris"),
    ]


def test_a_workbook_exported_with_a_title_line_is_read_below_it_and_says_so(
    auth_client, make_dataset
):
    data = workbook(
        ("Exported from EvalTool on 2026-01-01",),
        (),
        ("id", "prompt", "expected"),
        ("q1", "What is 2+2?", "4"),
    )
    dataset = make_dataset()
    page = check(auth_client, dataset, "q.xlsx", data).content.decode()
    assert "Import 1 task" in page
    above = "rows 1 to 2 above it are"
    assert escape(columns.HEADER_BELOW_PREAMBLE.format(above=above)) in page
    assert '<details class="read-options" open>' in page
