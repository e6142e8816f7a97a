"""How grading is worded on the screens (issue 27, item 7): settings in people's words, the
verifier kinds explained where they are chosen, no Criteria columns that could only say 0
on datasets graded by their answers, and the help page in sections with a contents list."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from datasets_app import wording
from datasets_app.services import datasets
from tests.datasets import import_file
from tests.test_import_views import EXPECTED, RUBRIC, check

pytestmark = pytest.mark.django_db

# What only a program should read: the file's keys and kinds as the file spells them.
FILE_SPELLINGS = re.compile(r"expectedAnswerVerifier|defaultVerifier|agent_judge|llm_judge")


def visible_text(page: str) -> str:
    """The page's words, without its tags, attributes and scripts."""
    page = re.sub(r"<(script|style)\b.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_the_settings_page_names_each_setting_in_peoples_words(auth_client, make_dataset):
    dataset = make_dataset()
    dataset.settings = {"defaultVerifier": {"kind": "llm_judge", "outputType": "float"}}
    dataset.save()
    page = auth_client.get(reverse("datasets_app:dataset_settings", args=[dataset.pk]))
    text = visible_text(page.content.decode())

    assert wording.EXPECTED_ANSWER_SETTING in text
    assert wording.DEFAULT_VERIFIER_SETTING in text
    assert not FILE_SPELLINGS.search(text), FILE_SPELLINGS.search(text)
    # The setting left as it comes says what grades then; the one set says what its kind does.
    assert wording.EXPECTED_ANSWER_SETTING_BLANK in text
    assert wording.VERIFIER_KIND_HELP["llm_judge"] in text


def test_each_kind_is_explained_where_it_is_chosen(auth_client, make_dataset):
    dataset = make_dataset()
    page = auth_client.get(reverse("datasets_app:task_create", args=[dataset.pk])).content.decode()
    for kind, explanation in wording.VERIFIER_KIND_HELP.items():
        option = re.search(rf'<option value="{kind}" data-help="([^"]*)"', page)
        assert option and html.unescape(option[1]) == explanation
    assert "What each kind does" in page
    assert wording.ANSWER_LEFT_TO_DATASET in html.unescape(page)
    # What an agent judge is, in words: it compares facts with the expected answer.
    agent_judge = wording.VERIFIER_KIND_HELP["agent_judge"]
    assert "compares the answer with the expected answer" in agent_judge


def test_the_task_page_names_kinds_as_people_do(auth_client, make_dataset, user):
    dataset = make_dataset()
    import_file(auth_client, dataset, "expected.json", EXPECTED)
    task = dataset.tasks.get(task_id="q3-end-date")
    text = visible_text(auth_client.get(task.get_absolute_url()).content.decode())
    assert "Checked by: Exact match" in " ".join(text.split())
    assert "exact_match" not in text


def test_a_dataset_graded_by_answers_shows_no_criteria_columns(auth_client, make_dataset, user):
    answers = make_dataset(name="Answers")
    import_file(auth_client, answers, "expected.json", EXPECTED)
    datasets.version_save(dataset=answers, user=user)
    rubric = make_dataset(name="Rubric")
    import_file(auth_client, rubric, "rubric.json", RUBRIC)

    page = auth_client.get(answers.get_absolute_url()).content.decode()
    assert "Total weight" not in page and 'data-label="Criteria"' not in page
    assert "expected answer" in page  # what scores them, in the Scored by column
    version = auth_client.get(answers.versions.get().get_absolute_url()).content.decode()
    assert "Total weight" not in version and 'data-label="Criteria"' not in version

    graded = auth_client.get(rubric.get_absolute_url()).content.decode()
    assert "Total weight" in graded and 'data-label="Criteria"' in graded


def test_the_help_page_has_a_contents_list_of_its_sections(auth_client):
    page = auth_client.get(reverse("datasets_app:help_files")).content.decode()
    contents = re.search(r'<nav id="contents".*?</nav>', page, re.S)[0]
    anchors = re.findall(r'href="#([\w-]+)"', contents)
    assert len(anchors) >= 5
    for anchor in anchors:
        assert re.search(rf'<section id="{anchor}" aria-labelledby="{anchor}-heading">', page)
    assert page.count("<section ") == len(anchors)
    text = visible_text(page)
    for kind, name in wording.VERIFIER_KIND_NAMES.items():
        assert name in text and wording.VERIFIER_KIND_HELP[kind] in text


def test_the_import_preview_of_answers_alone_has_no_criteria_columns(auth_client, make_dataset):
    answers = check(auth_client, make_dataset(name="A"), "e.json", EXPECTED).content.decode()
    assert "Preview: 2 tasks" in answers
    assert "Total weight" not in answers and 'data-label="Criteria"' not in answers
    rubric = check(auth_client, make_dataset(name="R"), "r.json", RUBRIC).content.decode()
    assert "Total weight" in rubric and 'data-label="Criteria"' in rubric
