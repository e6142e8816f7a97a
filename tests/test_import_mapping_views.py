"""The import dialog's mapping step: which column is which, when the file does not say."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import forms
from datasets_app.models import Task, Upload
from tests.conftest import FILES

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
TRIAGE = (FILES / "real" / "ragas" / "support_triage.csv").read_bytes()
NQ = (FILES / "real" / "nq_open" / "NQ-open.dev.excerpt.jsonl").read_bytes()


def check(client, dataset, name: str, data: bytes, *, htmx: bool = True):
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    return client.post(url, {"file": SimpleUploadedFile(name, data)}, **(HTMX if htmx else {}))


def map_columns(client, dataset, upload, mapping: dict, *, htmx: bool = True):
    url = reverse("datasets_app:import_map", args=[dataset.pk, upload.key])
    data = {"mode": "add", "upload": str(upload.key)}
    data |= {f"map_{key}": source for key, source in mapping.items()}
    return client.post(url, data, **(HTMX if htmx else {}))


def selected(page: str, field: str) -> str:
    select = page.split(f'name="map_{field}"', 1)[1].split("</select>", 1)[0]
    if " selected>" not in select:
        return ""
    return select.split(" selected>", 1)[0].rsplit('value="', 1)[1].split('"', 1)[0]


def test_columns_that_do_not_say_show_one_select_per_field_with_the_guess(
    auth_client, make_dataset
):
    dataset = make_dataset()
    page = check(auth_client, dataset, "support_triage.csv", TRIAGE).content.decode()

    assert "Which column is which?" in page
    for label in ("Id", "Name", "Prompt", "Expected answer", "Criterion", "Weight"):
        assert f">{label}</label>" in page
    assert (selected(page, "prompt"), selected(page, "expected")) == ("text", "labels")
    assert selected(page, "id") == "id" and selected(page, "name") == ""
    assert forms.NOT_IN_FILE in page
    # The first rows as they would import, and no Import button to press yet.
    assert "The first rows as they would import" in page
    assert "Billing;RefundCancel" in page
    assert 'disabled aria-disabled="true">Import tasks</button>' in page
    assert not Task.objects.exists()


def test_using_the_columns_checks_again_and_shows_the_usual_preview(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "support_triage.csv", TRIAGE)
    upload = Upload.objects.get()

    response = map_columns(
        auth_client, dataset, upload, {"id": "id", "prompt": "text", "expected": "labels"}
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "Which column is which?" not in page
    assert "Import 20 tasks" in page
    upload.refresh_from_db()
    assert upload.mapping == {"id": "id", "prompt": "text", "expected": "labels"}
    assert upload.result["mapping"]["how"] == "given"


def test_the_mapping_step_works_without_javascript(client, user, make_dataset):
    client.force_login(user)
    dataset = make_dataset(owner=user)
    page = check(client, dataset, "support_triage.csv", TRIAGE, htmx=False).content.decode()
    assert "<html" in page and "Which column is which?" in page
    action = reverse("datasets_app:import_map", args=[dataset.pk, Upload.objects.get().key])
    assert f'formaction="{action}"' in page

    upload = Upload.objects.get()
    page = map_columns(
        client, dataset, upload, {"prompt": "text", "expected": "labels"}, htmx=False
    ).content.decode()

    assert "<html" in page and "Import 20 tasks" in page


def test_a_mapping_without_a_prompt_or_an_answer_says_what_is_missing(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "support_triage.csv", TRIAGE)
    upload = Upload.objects.get()

    page = map_columns(auth_client, dataset, upload, {"id": "text"}).content.decode()

    assert forms.MAPPING_NEEDS_PROMPT in page
    assert forms.MAPPING_NEEDS_GRADING in page
    upload.refresh_from_db()
    assert upload.mapping == {} and upload.state == Upload.State.CHECKED


def test_a_column_that_is_not_in_the_file_is_refused(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "support_triage.csv", TRIAGE)
    upload = Upload.objects.get()

    page = map_columns(
        auth_client, dataset, upload, {"prompt": "nope", "expected": "labels"}
    ).content.decode()

    assert "Select a valid choice" in page
    upload.refresh_from_db()
    assert upload.mapping == {}


def test_the_dataset_offers_the_same_columns_for_the_next_file_of_that_shape(
    auth_client, make_dataset
):
    dataset = make_dataset()
    check(auth_client, dataset, "support_triage.csv", TRIAGE)
    upload = Upload.objects.get()
    map_columns(auth_client, dataset, upload, {"prompt": "priority", "expected": "labels"})
    url = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    auth_client.post(url, {"mode": "add"}, **HTMX)
    assert Task.objects.count() == 20

    page = check(auth_client, dataset, "triage-2.csv", TRIAGE).content.decode()

    assert "a file you imported into this dataset before" in page
    assert (selected(page, "prompt"), selected(page, "expected")) == ("priority", "labels")


def test_a_recognised_shape_needs_no_mapping_step(auth_client, make_dataset):
    dataset = make_dataset()
    page = check(auth_client, dataset, "nq.jsonl", NQ).content.decode()

    assert "Which key is which?" not in page
    assert "Detected: JSON Lines, NQ-open (question + answers), UTF-8" in page
    assert "Import 12 tasks" in page


def test_another_persons_upload_cannot_be_mapped(client, other_user, user, make_dataset):
    client.force_login(user)
    dataset = make_dataset(owner=user)
    check(client, dataset, "support_triage.csv", TRIAGE)
    upload = Upload.objects.get()
    client.force_login(other_user)

    response = map_columns(client, dataset, upload, {"prompt": "text", "expected": "labels"})

    assert response.status_code == 404
    upload.refresh_from_db()
    assert upload.mapping == {}


def test_the_help_page_lists_the_one_list_of_names_and_the_shapes(auth_client):
    from django.utils.html import escape

    from datasets_app.importing import aliases, shapes

    page = auth_client.get(reverse("datasets_app:help_files")).content.decode()

    for field in aliases.FIELDS:
        for spelling in field.spellings:
            assert f"<code>{escape(spelling)}</code>" in page
    for shape in shapes.SHAPES:
        assert escape(shape.name) in page
    # Each shape's decision as the registry writes it, marked up, and each refusal.
    assert "<code>canonical_solution</code> is the expected answer" in page
    assert "BEIR qrels on their own (query-id, corpus-id, score)" in page
    assert "--map prompt=question" in page


def test_the_new_dataset_page_has_the_same_mapping_step(auth_client):
    url = reverse("datasets_app:dataset_create_check")
    upload_file = SimpleUploadedFile("support_triage.csv", TRIAGE)
    page = auth_client.post(url, {"file": upload_file}, **HTMX).content.decode()
    upload = Upload.objects.get()
    assert "Which column is which?" in page
    assert (selected(page, "prompt"), selected(page, "expected")) == ("text", "labels")

    map_url = reverse("datasets_app:dataset_create_map", args=[upload.key])
    page = auth_client.post(
        map_url, {"upload": str(upload.key), "map_prompt": "text", "map_expected": "labels"}, **HTMX
    ).content.decode()

    assert "Which column is which?" not in page
    assert "Create dataset and import 20 tasks" in page
    create = auth_client.post(
        reverse("datasets_app:dataset_create"), {"name": "Triage", "upload": str(upload.key)}
    )
    assert create.status_code == 302
    assert Task.objects.count() == 20


def test_the_new_dataset_mapping_step_works_without_javascript(auth_client):
    url = reverse("datasets_app:dataset_create")
    page = auth_client.post(
        url, {"name": "Triage", "file": SimpleUploadedFile("t.csv", TRIAGE)}
    ).content.decode()
    upload = Upload.objects.get()
    assert "<html" in page and "Which column is which?" in page

    map_url = reverse("datasets_app:dataset_create_map", args=[upload.key])
    data = {"name": "Triage", "upload": str(upload.key)}
    page = auth_client.post(
        map_url, data | {"map_prompt": "text", "map_expected": "labels"}
    ).content.decode()

    assert "<html" in page and 'value="Triage"' in page
    assert "Create dataset and import 20 tasks" in page


def test_a_promptfoo_file_grades_itself_so_the_step_asks_only_for_the_prompt(
    auth_client, make_dataset
):
    dataset = make_dataset()
    data = b"language,body,__expected\nFrench,Hello world,equals:Bonjour\n"
    check(auth_client, dataset, "tests.csv", data)
    upload = Upload.objects.get()

    page = map_columns(auth_client, dataset, upload, {"prompt": "body"}).content.decode()

    assert forms.MAPPING_NEEDS_GRADING not in page
    assert "Import 1 task" in page


def test_ids_the_dataset_has_are_named_on_their_row_of_a_mapped_file(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "support_triage.csv", TRIAGE)
    upload = Upload.objects.get()
    map_columns(auth_client, dataset, upload, {"id": "id", "prompt": "text", "expected": "labels"})
    auth_client.post(
        reverse("datasets_app:import_commit", args=[dataset.pk, upload.key]), {"mode": "add"}
    )

    check(auth_client, dataset, "again.csv", TRIAGE)
    again = Upload.objects.latest("pk")
    page = map_columns(
        auth_client, dataset, again, {"id": "id", "prompt": "text", "expected": "labels"}
    ).content.decode()

    assert "Task id &#x27;1&#x27; is already one of this dataset&#x27;s tasks" in page
    assert "again.csv, row 2" in page
