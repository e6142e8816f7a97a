"""The words people read on the screens: locations counted from 1, numbers and weights
printed one way, buttons and hints that say what is true for this file."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import selectors, wording
from datasets_app.importing import checker, columns
from datasets_app.models import Criterion, Task, TaskFile, Upload
from datasets_app.services import datasets
from tests.test_import_views import HTMX, RUBRIC, check
from tests.test_task_views import task_form

pytestmark = pytest.mark.django_db

# A 0-based path as the checker writes it for programs (`tasks[1]`, `criteria[0]`).
ZERO_BASED = re.compile(r"\w\[\d+\]")


def two_tasks(weight: object = -1) -> bytes:
    return json.dumps(
        {
            "tasks": [
                {"id": "a", "prompt": "p", "expected": "e"},
                {"id": "b", "prompt": "q", "criteria": [{"criterion": "c", "weight": weight}]},
            ]
        },
        indent=2,
    ).encode()


def test_a_problem_says_where_it_is_as_a_person_counts(auth_client, make_dataset):
    page = check(auth_client, make_dataset(), "d.json", two_tasks()).content.decode()
    assert "d.json, line 14" in page
    assert "task 2 (id b) › criterion 1 › weight" in page
    assert not ZERO_BASED.search(page)


def test_each_kind_of_location_in_words():
    json_problem = {"file": "d.json", "line": 3, "field": "tasks[1].criteria[0].weight"}
    assert wording.full(json_problem | {"task": "b"}) == (
        "d.json, line 3 › task 2 (id b) › criterion 1 › weight"
    )
    assert wording.place({"file": "d.json", "field": "criteria[2].verifier.kind"}) == (
        "criterion 3 for every task › verifier › kind"
    )
    assert wording.place({"file": "d.jsonl", "field": "criteria[0].weight"}) == (
        "criterion 1 › weight"
    )
    assert wording.place({"file": "set.json", "field": "criteria[0]", "task": "q1"}) == (
        "criterion 1"
    )
    assert wording.place({"file": "d.json", "field": "tasks[0].inputFiles[1]"}) == (
        "task 1 › input file 2"
    )
    assert wording.full({"file": "q.csv", "row": 1200, "field": "Expected Answer"}) == (
        "q.csv, row 1,200 › Expected Answer"
    )
    assert wording.full({"file": "q.csv"}) == "q.csv"


def test_parser_phrases_are_plain_words_in_the_dialog(auth_client, make_dataset):
    page = check(auth_client, make_dataset(), "d.json", b'{"tasks": ').content.decode()
    assert "the text ends in the middle of a value" in page
    assert "EOF" not in page


def test_numbers_read_with_separators(auth_client, make_dataset):
    tasks = [{"id": str(i), "prompt": "p", "expected": "e"} for i in range(1_000)]
    dataset = make_dataset()
    page = check(auth_client, dataset, "big.json", json.dumps({"tasks": tasks}).encode())
    assert "Import 1,000 tasks" in page.content.decode()
    assert "Preview: 1,000 tasks" in page.content.decode()
    tasks.append({"id": "x", "prompt": "p", "expected": "e"})
    page = check(auth_client, dataset, "big.json", json.dumps({"tasks": tasks}).encode())
    assert "1,001 tasks; one file can hold up to 1,000" in page.content.decode()


def test_one_imported_task_is_a_draft_in_the_singular(auth_client, make_dataset):
    dataset = make_dataset()
    check(auth_client, dataset, "rubric.json", RUBRIC)
    upload = Upload.objects.get()
    url = reverse("datasets_app:import_commit", args=[dataset.pk, upload.key])
    auth_client.post(url, {"mode": "add"}, **HTMX)
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Imported 1 task as a draft. Check it, then Save as v1." in page


def test_ids_the_dataset_has_leave_the_button_reading_import_tasks(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)
    data = json.dumps({"tasks": [{"id": "t1", "prompt": "p", "expected": "e"}]}).encode()
    page = check(auth_client, dataset, "d.json", data).content.decode()
    assert "1 problem to fix" in page
    button = re.search(r"<button[^>]*disabled[^>]*>([^<]*)</button>", page)
    assert button and button.group(1) == "Import tasks"
    assert "Import 1 task" not in page


def test_the_spreadsheet_hint_is_for_spreadsheets_only(auth_client, make_dataset):
    dataset = make_dataset()
    hint = "(a CSV to fix them in a spreadsheet)"
    page = check(auth_client, dataset, "d.json", two_tasks()).content.decode()
    assert "Download the problems" in page and hint not in page
    csv = b"task_id,prompt,criterion,weight\na,p,c,-1\n"
    assert hint in check(auth_client, dataset, "d.csv", csv).content.decode()


@pytest.mark.parametrize(
    ("name", "data", "detected"),
    [
        ("notes.txt", b"hello", "a .txt file, not read as a dataset"),
        ("binary.csv", b"\x00\x01\x02\x03" * 50, "a .csv file, not read as a dataset"),
        ("README", b"hello", "a file with no extension, not read as a dataset"),
    ],
)
def test_detected_is_never_blank(auth_client, make_dataset, name, data, detected):
    page = check(auth_client, make_dataset(), name, data).content.decode()
    assert f"Detected: {detected}" in page
    assert "Detected: <" not in page


def test_the_file_pickers_offer_only_what_the_importer_reads(auth_client, make_dataset):
    dataset = make_dataset()
    pages = [
        auth_client.get(reverse("datasets_app:import_dialog", args=[dataset.pk])),
        auth_client.get(reverse("datasets_app:dataset_create")),
    ]
    for page in pages:
        accepts = re.findall(r'type="file"[^>]*accept="([^"]*)"', page.content.decode())
        assert accepts, "the page has a file picker"
        for accept in accepts:
            assert sorted(accept.split(",")) == sorted(checker.FORMATS)


def test_the_help_page_says_what_goes_in_each_column(auth_client):
    page = auth_client.get(reverse("datasets_app:help_files")).content.decode()
    assert "What goes in it" in page
    for column in columns.COLUMNS:
        row = re.search(rf'<tr id="column-{column.key}">(.*?)</tr>', page, re.DOTALL)
        assert row, column.key
        assert wording.COLUMN_HELP[column.key].split(" (")[0] in row.group(1).replace("&#x27;", "'")
    assert "A number; blank counts as 1" in page


def test_a_problem_about_a_column_links_to_what_goes_in_it(auth_client, make_dataset):
    csv = b"task_id,prompt,criterion,Weight\na,p,c,-1\n"
    page = check(auth_client, make_dataset(), "d.csv", csv).content.decode()
    assert "d.csv, row 2" in page
    link = reverse("datasets_app:help_files") + "#column-weight"
    assert f'href="{link}"' in page
    assert "What goes in this column" in page


def rubric_dataset(make_dataset, user):
    dataset = make_dataset(tasks=2)
    Criterion.objects.create(dataset=dataset, criterion_id="s", text="Shared", weight=1.25)
    Criterion.objects.filter(task__isnull=False).update(weight=3.5)
    return dataset


def test_weights_print_the_same_everywhere(auth_client, make_dataset, user):
    dataset = rubric_dataset(make_dataset, user)
    version = datasets.version_save(dataset=dataset, user=user)
    task = dataset.tasks.get(task_id="t2")
    pages = {
        "dataset": auth_client.get(dataset.get_absolute_url()),
        "task": auth_client.get(task.get_absolute_url()),
        "version": auth_client.get(version.get_absolute_url()),
    }
    for name, response in pages.items():
        text = response.content.decode()
        assert "3.5" in text or "4.75" in text, name
        assert "3.50" not in text and "1.25" in text, name
    assert wording.weight(3.5) == "3.5" and wording.weight(20.0) == "20"
    assert wording.weight(1 / 3) == "0.33" and wording.weight(1000) == "1,000"


def test_the_version_page_counts_criteria_for_every_task(auth_client, make_dataset, user):
    dataset = rubric_dataset(make_dataset, user)
    version = datasets.version_save(dataset=dataset, user=user)
    page = auth_client.get(version.get_absolute_url()).content.decode()
    criteria = re.findall(r'data-label="Criteria" class="num">(\d+)<', page)
    dataset_page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert criteria == ["1", "2"]
    assert re.findall(r'data-label="Criteria" class="num">(\d+)<', dataset_page) == criteria
    assert [row.criteria for row in selectors.task_rows(dataset)] == [1, 2]


def test_the_task_page_lists_input_files_before_expected_files(auth_client, make_dataset):
    make_dataset(tasks=1)
    task = Task.objects.get()
    for role, name in (("expected", "answer.pdf"), ("input", "brief.pdf")):
        TaskFile.objects.create(task=task, role=role, name=name, url=f"https://x.test/{name}")
    page = auth_client.get(task.get_absolute_url()).content.decode()
    assert page.index("brief.pdf") < page.index("answer.pdf")


def test_the_task_form_names_a_problem_by_criterion_not_by_path(auth_client, make_dataset):
    dataset = make_dataset()
    url = reverse("datasets_app:task_create", args=[dataset.pk])
    data = task_form(
        criteria=[
            {"text": "Fine", "weight": "1"},
            {"text": "Judged", "verifier_kind": "llm_judge", "verifier_instructions": "{{x}}"},
        ]
    )
    page = auth_client.post(url, data).content.decode()
    assert "criterion 2 › verifier › instructions:" in page
    assert not ZERO_BASED.search(page)


def test_choose_another_file_keeps_the_name_and_description(auth_client):
    url = reverse("datasets_app:dataset_create")
    data = json.dumps({"tasks": [{"id": "a", "prompt": "p", "expected": "e"}]}).encode()
    auth_client.post(
        reverse("datasets_app:dataset_create_check"),
        {"file": SimpleUploadedFile("a.json", data)},
        **HTMX,
    )
    upload = Upload.objects.get()
    page = auth_client.get(url).content.decode()
    assert "Choose another file" not in page
    page = auth_client.post(
        url,
        {"name": "Typed name", "description": "Typed words", "upload": str(upload.key)},
        follow=False,
    )
    response = auth_client.post(
        url,
        {
            "name": "Typed name",
            "description": "Typed words",
            "upload": str(upload.key),
            "another": "1",
        },
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert 'value="Typed name"' in page and "Typed words</textarea>" in page
    assert 'type="file"' in page and 'name="upload"' not in page


def test_a_failed_save_keeps_every_typed_value(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    url = reverse("datasets_app:task_create", args=[dataset.pk])
    typed = {
        "task_id": "t1",  # taken: the save fails
        "name": "My name",
        "prompt": "Typed prompt",
        "expected_text": "Typed answer",
        "expected_verifier_kind": "llm_judge",
        "expected_verifier_output_type": "boolean",
        "expected_verifier_instructions": "Judge {{output}} kindly",
    }
    criterion = {
        "criterion_id": "c-typed",
        "text": "Typed criterion",
        "weight": "2.5",
        "verifier_kind": "code_verifier",
        "verifier_output_type": "float",
        "verifier_code": "def verify(task, output):\n    return 1\n",
    }
    page = auth_client.post(url, task_form(**typed, criteria=[criterion])).content.decode()
    assert "Another task of this dataset has this id." in page
    for value in [*typed.values(), *criterion.values()]:
        assert value.replace("\n", "") in page.replace("\n", "").replace("&#x27;", "'"), value

    settings_url = reverse("datasets_app:dataset_settings", args=[dataset.pk])
    settings = {
        "name": "Typed dataset name",
        "description": "Typed description",
        "default_kind": "llm_judge",
        "default_instructions": "Judge {{bad}}",
        "criteria-TOTAL_FORMS": "1",
        "criteria-INITIAL_FORMS": "0",
        "criteria-MIN_NUM_FORMS": "0",
        "criteria-MAX_NUM_FORMS": "200",
        "criteria-0-text": "Typed shared",
        "criteria-0-weight": "-1",
    }
    page = auth_client.post(settings_url, settings).content.decode()
    assert "positive number" in page
    for key in ("name", "description", "default_instructions", "criteria-0-text"):
        assert settings[key] in page, key
    assert 'value="-1"' in page


def test_no_template_comment_spans_lines():
    """`{# … #}` is one line only; a longer one is printed on the page as it is."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for template in [
        *root.glob("datasets_app/templates/**/*.html"),
        *root.glob("templates/**/*.html"),
    ]:
        for number, line in enumerate(template.read_text().splitlines(), 1):
            if "{#" in line:
                assert "#}" in line[line.index("{#") :], f"{template.name}:{number}"


def test_a_problem_about_the_columns_links_to_what_goes_in_each(auth_client, make_dataset):
    csv = b"task_id,prompt,expected_answer,expected_answer\na,p,e,f\n"
    page = check(auth_client, make_dataset(), "d.csv", csv).content.decode()
    assert "keep one of them" in page
    assert f'href="{reverse("datasets_app:help_files")}#columns"' in page
    assert "What goes in each column" in page


def test_counts_on_the_dataset_and_version_pages_read_1000_as_1_comma_000(
    auth_client, make_dataset, user
):
    dataset = make_dataset()
    Task.objects.bulk_create(
        Task(dataset=dataset, task_id=f"t{i}", prompt="p", expected_text="e", position=i)
        for i in range(1_000)
    )
    version = datasets.version_save(dataset=dataset, user=user)
    for url in (dataset.get_absolute_url(), version.get_absolute_url()):
        page = auth_client.get(url).content.decode()
        assert '<span class="count">1,000</span>' in page, url
        # 50 tasks a page: the thousandth is the last on page 20.
        last_page = auth_client.get(f"{url}?page=20").content.decode()
        assert 'data-label="#">1,000<' in last_page, url
