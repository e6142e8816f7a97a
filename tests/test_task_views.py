"""Checking the drafts in the app: task pages, the task form, settings, versions, exports."""

from __future__ import annotations

import hashlib
import html
import io
import json
import zipfile

import pytest
from django.urls import reverse

from datasets_app import selectors
from datasets_app.importing import checker, document
from datasets_app.models import Criterion, Task, TaskState
from datasets_app.services import datasets
from tests.as_rendered import form_data
from tests.runs import run_outputs

pytestmark = pytest.mark.django_db


def task_form(**fields) -> dict:
    """The task form's POST: fields, then the criteria formset (one per dict)."""
    criteria = fields.pop("criteria", [])
    data = {
        "task_id": "t9",
        "name": "",
        "prompt": "What is 2 + 2?",
        "expected_text": "",
        "criteria-TOTAL_FORMS": str(len(criteria)),
        "criteria-INITIAL_FORMS": "0",
        "criteria-MIN_NUM_FORMS": "0",
        "criteria-MAX_NUM_FORMS": "200",
        **fields,
    }
    for index, criterion in enumerate(criteria):
        for key, value in criterion.items():
            data[f"criteria-{index}-{key}"] = value
    return data


def test_the_task_page_shows_prompt_answer_criteria_and_files(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)
    task = dataset.tasks.get(task_id="t2")
    page = auth_client.get(task.get_absolute_url()).content.decode()
    assert "Prompt 2" in page and "Answer 2" in page
    assert "Is right" in page and ">2<" in page  # its criterion and weight
    assert "Edit" in page and "Delete" in page


def test_new_task_adds_a_draft_at_the_end(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)
    url = reverse("datasets_app:task_create", args=[dataset.pk])
    assert "New task" in auth_client.get(url).content.decode()
    response = auth_client.post(
        url, task_form(criteria=[{"text": "Says 4", "weight": "3", "verifier_kind": ""}])
    )
    task = dataset.tasks.get(task_id="t9")
    assert response.url == task.get_absolute_url()
    assert task.state == TaskState.DRAFT and task.position == 2
    assert [(c.criterion_id, c.text, c.weight) for c in task.criteria.all()] == [
        ("criterion-1", "Says 4", 3.0)
    ]


def test_the_task_form_uses_the_files_rules(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    url = reverse("datasets_app:task_create", args=[dataset.pk])
    page = auth_client.post(url, task_form()).content.decode()
    assert html.escape(document.NOTHING_TO_GRADE.format(task='"t9"')) in page
    page = auth_client.post(
        url,
        task_form(
            criteria=[
                {
                    "text": "Judged",
                    "verifier_kind": "llm_judge",
                    "verifier_instructions": "Grade {{answer}}",
                }
            ]
        ),
    ).content.decode()
    assert "{{answer}}" in page
    page = auth_client.post(url, task_form(task_id="t1", expected_text="4")).content.decode()
    assert "Another task of this dataset has this id." in page
    assert dataset.tasks.count() == 1


def test_the_task_form_caps_text_as_a_file_does(auth_client, make_dataset):
    # What is typed here must export and import back: the same validator, the same cap.
    from datasets_app.importing.spec import MAX_TEXT_CHARS

    dataset = make_dataset(tasks=1)
    url = reverse("datasets_app:task_create", args=[dataset.pk])
    too_long = "p" * (MAX_TEXT_CHARS + 1)

    page = auth_client.post(url, task_form(prompt=too_long, expected_text="4")).content.decode()

    assert f"is {MAX_TEXT_CHARS + 1:,} characters long; the most it can be is" in page
    assert dataset.tasks.count() == 1


def test_editing_a_saved_task_makes_a_draft_and_the_version_keeps_the_old_one(
    auth_client, make_dataset, user
):
    dataset = make_dataset(tasks=2)
    version = datasets.version_save(dataset=dataset, user=user)
    run = run_outputs(version, user, {"t1": "Answer 1"})
    saved = dataset.tasks.get(task_id="t1")
    url = reverse("datasets_app:task_edit", args=[dataset.pk, saved.pk])
    page = auth_client.get(url).content.decode()
    assert "Your edit becomes a draft" in page and "Prompt 1" in page

    auth_client.post(url, task_form(task_id="t1", prompt="Prompt 1, clearer", expected_text="A1"))
    draft = dataset.tasks.live().get(task_id="t1")
    assert draft.pk == saved.pk, "the task page stays where it was"
    assert draft.state == TaskState.DRAFT and draft.prompt == "Prompt 1, clearer"
    kept = version.tasks.get(task_id="t1")
    assert kept.state == TaskState.ARCHIVED and kept.prompt == "Prompt 1"
    assert kept.position == draft.position
    assert run.results.get(task_key="t1").task == kept
    assert selectors.version_spec(version).tasks[0].prompt == "Prompt 1"
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Save as v2" in page


def test_deleting_a_draft_and_removing_a_saved_task(auth_client, make_dataset, user):
    dataset = make_dataset(tasks=2)
    datasets.version_save(dataset=dataset, user=user)
    draft = Task.objects.create(dataset=dataset, task_id="d", prompt="p", expected_text="x")
    auth_client.post(reverse("datasets_app:task_delete", args=[dataset.pk, draft.pk]))
    assert not Task.objects.filter(pk=draft.pk).exists()

    saved = dataset.tasks.get(task_id="t1")
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Save as v2" not in page, "nothing changed since v1"
    auth_client.post(reverse("datasets_app:task_delete", args=[dataset.pk, saved.pk]))
    saved.refresh_from_db()
    assert saved.state == TaskState.ARCHIVED, "a task a version holds is archived, not deleted"
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "Save as v2" in page, "removing a saved task is a change to save"
    v2 = datasets.version_save(dataset=dataset, user=user)
    assert list(v2.tasks.values_list("task_id", flat=True)) == ["t2"]


def test_the_settings_form_saves_verifiers_and_criteria_for_every_task(
    auth_client, make_dataset, user
):
    dataset = make_dataset(tasks=1)
    datasets.version_save(dataset=dataset, user=user)
    url = reverse("datasets_app:dataset_settings", args=[dataset.pk])
    assert "Criteria for every task" in auth_client.get(url).content.decode()
    response = auth_client.post(
        url,
        {
            "name": "Renamed",
            "description": "About",
            "expected_kind": "exact_match",
            "default_kind": "",
            "criteria-TOTAL_FORMS": "1",
            "criteria-INITIAL_FORMS": "0",
            "criteria-MIN_NUM_FORMS": "0",
            "criteria-MAX_NUM_FORMS": "200",
            "criteria-0-criterion_id": "polite",
            "criteria-0-text": "Is polite.",
            "criteria-0-weight": "5",
        },
    )
    assert response.status_code == 302
    dataset.refresh_from_db()
    assert dataset.name == "Renamed"
    assert dataset.settings == {"expectedAnswerVerifier": {"kind": "exact_match"}}
    shared = Criterion.objects.get(dataset=dataset, task__isnull=True, archived=False)
    assert (shared.criterion_id, shared.weight) == ("polite", 5.0)
    assert "Save as v2" in auth_client.get(dataset.get_absolute_url()).content.decode()


def test_settings_refuse_a_bad_weight(auth_client, make_dataset):
    dataset = make_dataset()
    page = auth_client.post(
        reverse("datasets_app:dataset_settings", args=[dataset.pk]),
        {
            "name": "X",
            "criteria-TOTAL_FORMS": "1",
            "criteria-INITIAL_FORMS": "0",
            "criteria-MIN_NUM_FORMS": "0",
            "criteria-MAX_NUM_FORMS": "200",
            "criteria-0-text": "Is polite.",
            "criteria-0-weight": "-1",
        },
    ).content.decode()
    assert "positive number" in page
    assert not Criterion.objects.exists()


@pytest.mark.parametrize("fmt", ["json", "csv", "xlsx", "zip", "evalset"])
def test_a_version_downloads_in_each_format_and_imports_back(auth_client, make_dataset, user, fmt):
    dataset = make_dataset(tasks=3)
    version = datasets.version_save(dataset=dataset, user=user)
    page = auth_client.get(version.get_absolute_url()).content.decode()
    assert "Finance QA v1" in page and "<code>t3</code>" in page
    response = auth_client.get(reverse("datasets_app:version_export", args=[dataset.pk, 1, fmt]))
    assert response["Content-Disposition"].startswith("attachment")
    data = b"".join(response.streaming_content)
    name = response["Content-Disposition"].split('filename="')[1].rstrip('"')
    result = checker.check_file(data, name)
    assert result.ok, result.problems
    assert [t.id for t in result.plan.tasks] == ["t1", "t2", "t3"]
    assert [t.expected_text for t in result.plan.tasks] == ["Answer 1", "Answer 2", "Answer 3"]


def test_the_export_page_says_what_a_format_cannot_carry(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    dataset.description = "A description"
    dataset.save()
    page = auth_client.get(reverse("datasets_app:dataset_export_page", args=[dataset.pk]))
    assert "description" in page.content.decode().lower()


@pytest.mark.parametrize(
    "slug", ["rubric-criteria", "expected-answers", "files-in-and-out", "blank"]
)
def test_each_template_downloads(auth_client, slug):
    response = auth_client.get(reverse("datasets_app:starter_download", args=[slug]))
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment; filename=")
    if slug == "files-in-and-out":
        assert zipfile.ZipFile(io.BytesIO(response.content)).testzip() is None
    elif slug != "blank":
        assert json.loads(response.content)["tasks"]


def test_the_help_page_lists_the_csv_columns(auth_client):
    page = auth_client.get(reverse("datasets_app:help_files")).content.decode()
    assert "goldenOutput" in page and "expected_answer" in page and "criterion_id" in page


def test_the_help_page_states_the_limits_the_checker_applies(auth_client):
    page = auth_client.get(reverse("datasets_app:help_files")).content.decode()
    assert "can be up to 1,048,576 characters" in page
    assert "up to 52,428,800 characters of text and 20,000 criteria in all" in page
    assert "Ids can be up to 200 characters" in page
    assert "an attached file’s name up to 255 bytes, with no folder in it" in page


def test_add_another_criterion_shows_the_form_again_with_one_more(auth_client, make_dataset):
    """Without JavaScript: the button saves nothing, keeps what was typed, says no error
    about what is not typed yet, and the form then saves every criterion at once."""
    dataset = make_dataset()
    url = reverse("datasets_app:task_create", args=[dataset.pk])
    typed = task_form(prompt="", criteria=[{"text": "Names the total", "weight": "2"}])
    page = auth_client.post(url, {**typed, "add_criterion": "1"}).content.decode()
    assert not dataset.tasks.exists()
    assert "This field is required" not in page
    assert ">\nNames the total</textarea>" in page
    assert 'name="criteria-1-text"' in page and 'name="criteria-2-text"' not in page

    again = form_data(page)
    again.update(prompt=["What is 2 + 2?"], **{"criteria-1-text": ["Shows the sum"]})
    again = {**again, "add_criterion": ["1"]}
    page = auth_client.post(url, again).content.decode()
    assert 'name="criteria-2-text"' in page
    again = form_data(page)
    again["criteria-2-text"] = ["Says 4"]
    response = auth_client.post(url, again)
    assert response.status_code == 302
    task = dataset.tasks.get()
    assert [(c.text, c.weight) for c in task.criteria.order_by("position")] == [
        ("Names the total", 2),
        ("Shows the sum", 1),
        ("Says 4", 1),
    ]


def test_the_settings_page_adds_criteria_for_every_task_the_same_way(auth_client, make_dataset):
    dataset = make_dataset()
    url = reverse("datasets_app:dataset_settings", args=[dataset.pk])
    page = auth_client.get(url).content.decode()
    data = form_data(page)
    data["criteria-0-text"] = ["Is polite"]
    page = auth_client.post(url, {**data, "add_criterion": "1"}).content.decode()
    assert not dataset.criteria.exists() and 'name="criteria-1-text"' in page
    data = form_data(page)
    data["criteria-1-text"] = ["Is short"]
    assert auth_client.post(url, data).status_code == 302
    assert sorted(dataset.criteria.values_list("text", flat=True)) == ["Is polite", "Is short"]


def attached(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data)


def test_the_task_form_attaches_input_and_expected_files(auth_client, make_dataset):
    """Files chosen on the form are stored as an import stores a zip's: hashed, the same
    bytes kept once, and listed on the task."""
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    url = reverse("datasets_app:task_edit", args=[dataset.pk, task.pk])
    data = form_data(auth_client.get(url).content.decode())
    data["add_input_files"] = [attached("table.csv", b"q,rev\nQ1,10\n"), attached("b.txt", b"x")]
    data["add_expected_files"] = [attached("key.md", b"q,rev\nQ1,10\n")]
    assert auth_client.post(url, data).status_code == 302

    task = dataset.tasks.get(task_id="t1")
    files = {(f.role, f.name): f for f in task.files.all()}
    assert set(files) == {("input", "table.csv"), ("input", "b.txt"), ("expected", "key.md")}
    assert files["input", "table.csv"].sha256 == hashlib.sha256(b"q,rev\nQ1,10\n").hexdigest()
    # The same bytes twice are stored once.
    assert files["input", "table.csv"].file.name == files["expected", "key.md"].file.name
    page = auth_client.get(task.get_absolute_url()).content.decode()
    assert "table.csv" in page and "key.md" in page
    # Saved again untouched, the task keeps its files and adds none.
    data = form_data(auth_client.get(url).content.decode())
    auth_client.post(url, data)
    assert dataset.tasks.get(task_id="t1").files.count() == 3


def test_attached_files_keep_an_imports_limits(auth_client, make_dataset, settings):
    dataset = make_dataset()
    url = reverse("datasets_app:task_create", args=[dataset.pk])
    big = attached("big.pdf", b"x" * (10 * 1024 * 1024 + 1))
    page = html.unescape(
        auth_client.post(
            url, {**task_form(expected_text="4"), "add_input_files": [big]}
        ).content.decode()
    )
    assert '"big.pdf" is larger than 10 MiB' in page
    assert not dataset.tasks.exists()

    eleven = [attached(f"f{n}.txt", str(n).encode()) for n in range(11)]
    page = html.unescape(
        auth_client.post(
            url, {**task_form(expected_text="4"), "add_expected_files": eleven}
        ).content.decode()
    )
    assert "expected files: This task has 11 expected files" in page
    assert not dataset.tasks.exists()

    bad = attached("a.txt", b"x")
    settings.STORAGE_QUOTA_BYTES = 0
    page = html.unescape(
        auth_client.post(
            url, {**task_form(expected_text="4"), "add_input_files": [bad]}
        ).content.decode()
    )
    assert "Nothing was stored" in page and not dataset.tasks.exists()


def test_files_are_removed_on_the_form_and_a_saved_copy_keeps_them(auth_client, make_dataset, user):
    from django.core.files.storage import default_storage

    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    url = reverse("datasets_app:task_edit", args=[dataset.pk, task.pk])
    data = form_data(auth_client.get(url).content.decode())
    data["add_input_files"] = [attached("old.csv", b"a,b\n"), attached("keep.txt", b"k")]
    auth_client.post(url, data)
    datasets.version_save(dataset=dataset, user=user)
    old = dataset.tasks.get(task_id="t1").files.get(name="old.csv")

    data = form_data(auth_client.get(url).content.decode())
    data["remove_files"] = [str(old.pk)]
    data["add_expected_files"] = [attached("new.md", b"n")]
    assert auth_client.post(url, data).status_code == 302

    draft = dataset.tasks.get(task_id="t1", state=TaskState.DRAFT)
    assert sorted(draft.files.values_list("name", flat=True)) == ["keep.txt", "new.md"]
    # The version holds an archived copy that still has the file, so its bytes stay.
    saved = dataset.versions.get().tasks.get()
    assert sorted(saved.files.values_list("name", flat=True)) == ["keep.txt", "old.csv"]
    assert default_storage.exists(old.file.name)
    # A file only the draft held goes from the storage too.
    new = draft.files.get(name="new.md")
    data = form_data(auth_client.get(url).content.decode())
    data["remove_files"] = [str(new.pk)]
    auth_client.post(url, data)
    assert not default_storage.exists(new.file.name)
    assert list(draft.files.values_list("name", flat=True)) == ["keep.txt"]
