"""The Metadata filter's choices (issue 27): the keys of a dataset's or a version's tasks and
their common values, offered as a datalist when the field is first focused (htmx), or as a
page of filter links without JavaScript; bounded whatever the number of tasks, and worked
out again when the tasks change."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from datasets_app import metadata_keys
from datasets_app.models import Dataset, Task
from datasets_app.services import datasets
from tests.as_rendered import form_data
from tests.datasets import import_file
from tests.test_task_metadata import edit

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def tasks_with(dataset: Dataset, *metadata: dict) -> None:
    Task.objects.bulk_create(
        Task(
            dataset=dataset, task_id=f"t{n}", prompt="p", expected_text="a", position=n, metadata=m
        )
        for n, m in enumerate(metadata, start=1)
    )


def options(page: str) -> list[tuple[str, str]]:
    return [
        (html.unescape(value), html.unescape(label))
        for value, label in re.findall(r'<option value="([^"]*)" label="([^"]*)">', page)
    ]


@pytest.fixture
def quiz(user) -> Dataset:
    dataset = Dataset.objects.create(owner=user, name="Quiz")
    tasks_with(
        dataset,
        {"category": "billing", "difficulty": 3, "split": "test"},
        {"category": "billing", "difficulty": "3", "flag": True},
        {"category": "shipping", "tags": ["a", "b"], "notes": "x" * 200},
        {},
    )
    return dataset


def test_the_filter_offers_the_keys_and_their_values_as_it_is_focused(auth_client, quiz):
    page = auth_client.get(quiz.get_absolute_url()).content.decode()
    url = reverse("datasets_app:dataset_metadata_keys", args=[quiz.pk])
    assert 'list="metadata-choices"' in page and f'hx-get="{url}"' in page
    assert (
        'hx-trigger="focus once"' in page and '<datalist id="metadata-choices"></datalist>' in page
    )

    choices = options(auth_client.get(url, **HX).content.decode())

    assert choices[:4] == [
        ("category", "category: 3 tasks"),
        ("category=billing", "2 tasks"),
        ("category=shipping", "1 task"),
        ("difficulty", "difficulty: 2 tasks"),
    ]
    # 3 and "3" are two values, and difficulty=3 finds both (as typed, it is either).
    assert ("difficulty=3", "2 tasks") in choices and ('difficulty="3"', "1 task") in choices
    assert ("flag=true", "1 task") in choices
    # A list and a long text are keys to filter by, not values to pick.
    assert ("tags", "tags: 1 task") in choices and ("notes", "notes: 1 task") in choices
    assert not [value for value, _ in choices if value.startswith(("tags=", "notes="))]


def test_each_offered_filter_lists_the_tasks_it_says(auth_client, quiz):
    url = reverse("datasets_app:dataset_metadata_keys", args=[quiz.pk])
    for value, label in options(auth_client.get(url, **HX).content.decode()):
        page = auth_client.get(quiz.get_absolute_url(), {"metadata": value}).content.decode()
        listed = re.findall(r"<code>(t\d)</code>", page)
        tasks = int(label.rsplit(" ", 2)[-2])
        assert len(listed) == tasks, (value, listed)


def test_without_javascript_the_keys_are_a_page_of_filter_links(auth_client, quiz):
    page = auth_client.get(quiz.get_absolute_url()).content.decode()
    url = reverse("datasets_app:dataset_metadata_keys", args=[quiz.pk])
    assert f'<a class="field-help" href="{url}">Keys</a>' in page
    keys = auth_client.get(url).content.decode()
    assert "<h1>Metadata of Quiz’s tasks</h1>" in keys
    assert f'<a href="{quiz.get_absolute_url()}?metadata=category%3Dbilling">billing</a>' in keys
    assert "1 other value" in keys  # the long notes: counted, not offered


def test_the_values_offered_are_bounded(auth_client, user):
    dataset = Dataset.objects.create(owner=user, name="Many")
    tasks_with(dataset, *({"source": f"doc-{n}", "split": "dev"} for n in range(60)))
    url = reverse("datasets_app:dataset_metadata_keys", args=[dataset.pk])
    choices = options(auth_client.get(url, **HX).content.decode())
    sources = [value for value, _ in choices if value.startswith("source=")]
    assert len(sources) == metadata_keys.MAX_VALUES
    page = auth_client.get(url).content.decode()
    assert f"and {60 - metadata_keys.MAX_VALUES} other values" in page


def split_and_category(client, dataset: Dataset) -> list[tuple[str, str]]:
    url = reverse("datasets_app:dataset_metadata_keys", args=[dataset.pk])
    return [
        choice
        for choice in options(client.get(url, **HX).content.decode())
        if choice[0].startswith(("split", "category="))
    ]


def test_the_choices_follow_the_tasks_as_they_change(auth_client, quiz, user):
    """Each way the app writes tasks moves the stamp the choices are cached under: the task
    form, removing, an import (Add, then Replace) and the admin."""
    before = split_and_category(auth_client, quiz)
    assert ("split", "split: 1 task") in before
    task = quiz.tasks.get(task_id="t1")

    edit(auth_client, task, '{"category": "returns"}')
    choices = split_and_category(auth_client, quiz)
    assert "split" not in [value for value, _ in choices]
    assert ("category=returns", "1 task") in choices

    auth_client.post(reverse("datasets_app:task_delete", args=[quiz.pk, task.pk]))
    assert ("category=returns", "1 task") not in split_and_category(auth_client, quiz)

    import_file(auth_client, quiz, "more.csv", b"prompt,expected_answer,split\nQ,A,dev\n")
    assert ("split=dev", "1 task") in split_and_category(auth_client, quiz)

    sheet = b"prompt,expected_answer,category\nQ,A,travel\n"
    import_file(auth_client, quiz, "new.csv", sheet, mode="replace")
    assert split_and_category(auth_client, quiz) == [("category=travel", "1 task")]

    user.is_staff = user.is_superuser = True
    user.save()
    live = quiz.tasks.live().get()
    admin_url = reverse("admin:datasets_app_task_change", args=[live.pk])
    data = form_data(auth_client.get(admin_url).content.decode(), having="metadata")
    data["metadata"] = ['{"category": "admin"}']
    assert auth_client.post(admin_url, data).status_code == 302
    assert split_and_category(auth_client, quiz) == [("category=admin", "1 task")]


def test_a_version_offers_its_own_tasks_keys(auth_client, quiz, user):
    version = datasets.version_save(dataset=quiz, user=user)
    Task.objects.filter(dataset=quiz).exclude(pk__in=version.tasks.all()).delete()
    task = quiz.tasks.live().get(task_id="t1")
    datasets.task_keep_saved_copy(task=task)
    page = auth_client.get(version.get_absolute_url()).content.decode()
    url = reverse("datasets_app:version_metadata_keys", args=[quiz.pk, version.number])
    assert f'hx-get="{url}"' in page
    choices = options(auth_client.get(url, **HX).content.decode())
    assert ("split=test", "1 task") in choices


def test_the_keys_are_the_dataset_s_people_s_only(client, other_user, quiz):
    client.force_login(other_user)
    url = reverse("datasets_app:dataset_metadata_keys", args=[quiz.pk])
    assert client.get(url).status_code == 404
