"""The import dialog says what an import will do before Import: tasks added and archived,
the file's criteria for every task and what share of the dataset's tasks' score their
expected answer keeps, settings changed, what is not imported; and each task's texts."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import wording
from datasets_app.models import Dataset, Upload
from tests.conftest import FILES
from tests.datasets import import_file

pytestmark = pytest.mark.django_db

RUBRIC = (FILES / "json" / "rubric_template.json").read_bytes()
EXPECTED = (FILES / "json" / "expected_answers_template.json").read_bytes()
HTMX = {"HTTP_HX_REQUEST": "true"}


def dialog_for(client, dataset: Dataset, name: str, data: bytes, mode: str = "add") -> str:
    """The dialog's result for the file, as the browser shows it once checked."""
    client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile(name, data), "mode": mode},
        **HTMX,
    )
    upload = Upload.objects.filter(dataset=dataset).latest("pk")
    url = reverse("datasets_app:import_status", args=[dataset.pk, upload.key])
    return client.get(url, {"mode": mode}, **HTMX).content.decode()


def effects_of(html: str) -> str:
    """The "What this import does" box, as text on one line."""
    start = html.index('id="effects-heading"')
    end = html.index("</section>", start)
    return " ".join(html[start:end].split())


def test_a_rubric_added_to_answer_tasks_says_what_their_answer_keeps(auth_client, user):
    dataset = Dataset.objects.create(owner=user, name="Finance")
    import_file(auth_client, dataset, "answers.json", EXPECTED)

    said = effects_of(dialog_for(auth_client, dataset, "rubric.json", RUBRIC))

    assert "Adds 1 task as drafts." in said
    assert (
        "1 criterion for every task joins the dataset’s (<code>no-invented-facts</code>; " in said
    )
    assert "total weight 20)" in said
    assert "will also grade the dataset’s 2 tasks already there" in said
    # 1 of 1 + 20: the answer's criterion is weight 1, the file's criterion weight 20.
    assert "the expected answer will count for <strong>5%</strong> of their score" in said
    assert "Setting" not in said, "the file's settings are what the dataset has already"


def test_what_is_said_happens(auth_client, user):
    dataset = Dataset.objects.create(owner=user, name="Finance")
    import_file(auth_client, dataset, "answers.json", EXPECTED)
    import_file(auth_client, dataset, "rubric.json", RUBRIC)

    task = dataset.tasks.get(task_id="yoy-growth")
    own = [(c.criterion_id, c.weight) for c in task.criteria.all()]
    assert own == [("matches-expected-answer", 1.0)]
    assert list(dataset.criteria.filter(task=None).values_list("weight", flat=True)) == [20]


EXACT = json.dumps(
    {
        "settings": {"expectedAnswerVerifier": {"kind": "exact_match"}},
        "tasks": [{"id": "sum", "prompt": "2 + 2?", "expected": "4"}],
    }
).encode()


def test_replace_says_what_it_archives_and_which_settings_change(auth_client, user):
    dataset = Dataset.objects.create(owner=user, name="Support")
    import_file(auth_client, dataset, "rubric.json", RUBRIC)

    said = effects_of(dialog_for(auth_client, dataset, "exact.json", EXACT, "replace"))

    assert "Adds 1 task as drafts, and archives the dataset’s 1 task." in said
    assert "joins" not in said, "Replace: nothing joins, the file's criteria take the place"
    assert (
        f"Setting “{wording.EXPECTED_ANSWER_SETTING}”: Agent judge (score from 0 to 1) → "
        "<strong>Exact match</strong>." in said
    )


def test_add_fills_in_only_settings_the_dataset_has_not_set(auth_client, user):
    dataset = Dataset.objects.create(
        owner=user, name="Set", settings={"expectedAnswerVerifier": {"kind": "llm_judge"}}
    )
    said = effects_of(dialog_for(auth_client, dataset, "exact.json", EXACT))
    assert "Setting" not in said
    dataset.settings = {}
    dataset.save()
    said = effects_of(dialog_for(auth_client, dataset, "exact.json", EXACT))
    assert "Agent judge (score from 0 to 1) → <strong>Exact match</strong>" in said


def test_columns_not_imported_are_said_at_the_top(auth_client, user):
    dataset = Dataset.objects.create(owner=user, name="Quiz")
    rows = "".join(f"Question {n}?,{n},note {n}\n" for n in range(1, 31))
    html = dialog_for(
        auth_client, dataset, "quiz.csv", f"prompt,expected_answer,notes\n{rows}".encode()
    )

    said = effects_of(html)
    assert "Not imported:" in said and "These columns are not imported: notes." in said
    assert html.index("These columns are not imported") < html.index("Question 1?")
    assert html.count("These columns are not imported") == 1, "not said again below"


def test_each_task_shows_its_prompt_and_answer_shortened_with_the_rest_a_click_away(
    auth_client, user
):
    dataset = Dataset.objects.create(owner=user, name="Long")
    prompt = "Summarise the quarter. " * 20
    data = json.dumps({"tasks": [{"id": "long", "prompt": prompt, "expected": "Short <b>"}]})

    html = dialog_for(auth_client, dataset, "long.json", data.encode())

    assert '<details class="text"><summary>Summarise the quarter. Summarise' in html
    assert f"<div>{prompt}</div></details>" in html, "the whole prompt, one click away"
    assert '<td data-label="Expected answer" class="text">Short &lt;b&gt;</td>' in html
