"""The review page: a dataset's drafts one at a time, as a person walks them (without
JavaScript: every key is also a link or a button), and what the dataset page says of them."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from datasets_app.models import Criterion, Task, TaskFile, TaskState
from datasets_app.services import datasets, tokens
from tests.api.conftest import bearer, error_of
from tests.as_rendered import form_data

pytestmark = pytest.mark.django_db


def review_url(dataset, **params) -> str:
    url = reverse("datasets_app:dataset_review", args=[dataset.pk])
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return f"{url}?{query}" if query else url


def get(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def heading(page: str) -> str:
    return re.search(r"<h1>(.*?)</h1>", page, re.S).group(1).strip()


def link(page: str, rel: str) -> str | None:
    found = re.search(rf'href="([^"]+)" rel="{rel}"', page)
    return found.group(1).replace("&amp;", "&") if found else None


def mark_reviewed(client, page: str) -> str:
    """Press Mark reviewed as the page has it; returns the page it lands on."""
    action = re.search(r'<form method="post" action="([^"]+/reviewed/)"', page).group(1)
    response = client.post(action, form_data(page, having="show"))
    assert response.status_code == 302
    return get(client, response["Location"])


def test_the_review_page_walks_the_drafts_one_by_one(auth_client, make_dataset):
    dataset = make_dataset(tasks=3)
    page = get(auth_client, review_url(dataset))
    assert heading(page) == "Task 1"
    assert "Draft 1 of 3 not reviewed yet" in page
    assert "Prompt 1" in page and "Answer 1" in page
    assert link(page, "prev") is None
    page = get(auth_client, link(page, "next"))
    assert heading(page) == "Task 2" and "Draft 2 of 3" in page
    # Its criterion, with its weight and verifier.
    assert "Is right" in page and ">2<" in page and "as the dataset’s Settings say" in page
    page = get(auth_client, link(page, "next"))
    assert heading(page) == "Task 3" and link(page, "next") is None
    page = get(auth_client, link(page, "prev"))
    assert heading(page) == "Task 2"


def test_the_review_page_shows_files_and_criteria_for_every_task(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    TaskFile.objects.create(task=task, role="input", name="order.pdf", url="https://f.example/o")
    Criterion.objects.create(dataset=dataset, criterion_id="tone", text="Is polite", weight=4)
    page = get(auth_client, review_url(dataset))
    assert "order.pdf" in page and "Input file" in page
    assert "Is polite" in page and "(every task)" in page


def test_mark_reviewed_marks_the_draft_and_goes_on_to_the_next(auth_client, make_dataset, user):
    dataset = make_dataset(tasks=3)
    page = get(auth_client, review_url(dataset))
    page = mark_reviewed(auth_client, page)
    assert heading(page) == "Task 2"
    assert "Marked t1 reviewed." in page
    # Walking what is not reviewed yet: t1 has left the walk.
    assert "Draft 1 of 2 not reviewed yet" in page and link(page, "prev") is None
    task = Task.objects.get(task_id="t1")
    assert task.is_reviewed and task.reviewed_by == user
    page = mark_reviewed(auth_client, page)
    page = mark_reviewed(auth_client, page)
    assert "Every draft is reviewed." in page
    assert "See all drafts" in page


def test_all_drafts_walks_the_reviewed_ones_too(auth_client, make_dataset):
    dataset = make_dataset(tasks=3)
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.filter(task_id="t2"), user=dataset.owner)
    page = get(auth_client, review_url(dataset))
    assert heading(page) == "Task 1"
    # Not reviewed yet (the default) skips t2.
    assert heading(get(auth_client, link(page, "next"))) == "Task 3"
    page = get(auth_client, review_url(dataset, show="all"))
    page = get(auth_client, link(page, "next"))
    assert heading(page) == "Task 2" and "Draft 2 of 3" in page
    assert '<span class="badge reviewed">Reviewed</span> by ada' in page
    # Reviewed already: no Mark reviewed to press.
    assert "/reviewed/" not in page
    assert 'aria-current="page">All drafts <span class="count">3</span>' in page
    assert 'Not reviewed yet <span class="count">2</span>' in page


def test_a_draft_changed_since_its_review_is_to_be_looked_at_again(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.all(), user=dataset.owner)
    Task.objects.filter(pk=task.pk).update(updated_at=timezone.now())
    page = get(auth_client, review_url(dataset))
    assert heading(page) == "Task 1"
    assert "Changed since it was reviewed" in page


def test_edit_from_the_review_page_comes_back_to_it(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)
    page = get(auth_client, review_url(dataset))
    edit = re.search(r'href="([^"]+/edit/\?next=[^"]+)"', page).group(1).replace("&amp;", "&")
    form = get(auth_client, edit)
    data = form_data(form)
    data["prompt"] = "A better prompt"
    # Save as draft posts where its formaction says.
    action = re.search(r'formaction="([^"]+)"', form).group(1).replace("&amp;", "&")
    response = auth_client.post(action, data)
    assert response.status_code == 302
    page = get(auth_client, response["Location"])
    assert heading(page) == "Task 1" and "A better prompt" in page


def test_delete_from_the_review_page_comes_back_to_the_next_draft(auth_client, make_dataset):
    dataset = make_dataset(tasks=3)
    page = get(auth_client, link(get(auth_client, review_url(dataset)), "next"))
    delete = re.search(r'href="([^"]+/delete/\?next=[^"]+)"', page).group(1).replace("&amp;", "&")
    confirm = get(auth_client, delete)
    assert "Delete t2?" in confirm
    action = re.search(r'<form method="post" action="([^"]+/delete/[^"]*)"', confirm).group(1)
    response = auth_client.post(action.replace("&amp;", "&"))
    assert response.status_code == 302
    page = get(auth_client, response["Location"])
    assert heading(page) == "Task 3" and "Removed t2." in page
    assert not dataset.tasks.filter(task_id="t2").exists()


def test_a_next_page_elsewhere_is_never_followed(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    url = reverse("datasets_app:task_delete", args=[dataset.pk, task.pk])
    for elsewhere in ("https://elsewhere.example/", "//elsewhere.example/", "/\\elsewhere"):
        response = auth_client.get(f"{url}?next={elsewhere}")
        assert "elsewhere" not in response.content.decode()
    response = auth_client.post(f"{url}?next=//elsewhere.example/")
    assert response["Location"] == dataset.get_absolute_url()


def test_the_review_page_says_when_there_are_no_drafts(auth_client, make_dataset):
    dataset = make_dataset(tasks=2, state=TaskState.SAVED)
    assert "has no drafts" in get(auth_client, review_url(dataset))
    assert "has no drafts" in get(auth_client, review_url(dataset, show="all"))


def test_the_review_page_is_the_datasets_people_only(client, other_user, make_dataset):
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    client.force_login(other_user)
    assert client.get(review_url(dataset)).status_code == 404
    post = client.post(reverse("datasets_app:task_review", args=[dataset.pk, task.pk]))
    assert post.status_code == 404
    assert not Task.objects.get(pk=task.pk).reviewed_at


def test_mark_reviewed_needs_a_post_and_a_draft(auth_client, make_dataset):
    dataset = make_dataset(tasks=1, state=TaskState.SAVED)
    task = dataset.tasks.get()
    url = reverse("datasets_app:task_review", args=[dataset.pk, task.pk])
    assert auth_client.get(url).status_code == 405
    assert auth_client.post(url).status_code == 404


def test_a_step_costs_the_same_queries_at_any_size(auth_client, make_dataset):
    get(auth_client, review_url(make_dataset(name="Warm", tasks=1)))  # its site settings row
    counts = []
    for size in (3, 300):
        dataset = make_dataset(name=f"Size {size}")
        Task.objects.bulk_create(
            Task(dataset=dataset, task_id=f"t{n}", prompt=f"P{n}", position=n) for n in range(size)
        )
        middle = dataset.tasks.get(task_id="t2")
        with CaptureQueriesContext(connection) as queries:
            get(auth_client, review_url(dataset, task=middle.pk))
        counts.append(len(queries))
    assert counts[0] == counts[1]


# --- What the dataset page says of the drafts ----------------------------------------------


def test_save_as_says_how_many_drafts_are_not_reviewed(auth_client, make_dataset):
    dataset = make_dataset(tasks=3)
    page = get(auth_client, dataset.get_absolute_url())
    assert "None of its 3 drafts is reviewed yet." in page
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.filter(task_id="t1"), user=dataset.owner)
    page = get(auth_client, dataset.get_absolute_url())
    assert "2 of 3 drafts are not reviewed yet." in page
    assert reverse("datasets_app:dataset_review", args=[dataset.pk]) in page
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.all(), user=dataset.owner)
    page = get(auth_client, dataset.get_absolute_url())
    assert "reviewed yet" not in page and "Save as v1" in page


def test_the_task_table_shows_which_drafts_are_reviewed(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.filter(task_id="t2"), user=dataset.owner)
    page = get(auth_client, dataset.get_absolute_url())
    states = re.findall(r'<td data-label="State">(.*?)</td>', page)
    assert "not reviewed" in states[0] and "Reviewed" not in states[0]
    assert '<span class="badge reviewed">Reviewed</span>' in states[1]
    unreviewed = get(auth_client, dataset.get_absolute_url() + "?state=draft")
    assert "<code>t1</code>" in unreviewed and "<code>t2</code>" not in unreviewed
    assert "Drafts not reviewed" in page


def test_the_admin_keeps_reviewing_and_shows_prompts(client, admin_user, make_dataset):
    dataset = make_dataset(tasks=2)
    client.force_login(admin_user)
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.filter(task_id="t1"), user=admin_user)
    page = get(client, reverse("admin:datasets_app_task_changelist") + "?reviewed=no")
    assert "Prompt 2" in page and "Prompt 1" not in page
    page = get(client, review_url(dataset, show="all"))
    assert '<span class="badge reviewed">Reviewed</span> by root' in page


# --- A dataset that saves only once every draft is reviewed -------------------------------


def settings_data(client, dataset) -> tuple[str, dict]:
    url = reverse("datasets_app:dataset_settings", args=[dataset.pk])
    return url, form_data(get(client, url))


def test_require_review_is_a_setting_and_refuses_save_as_until_all_are(auth_client, make_dataset):
    dataset = make_dataset(tasks=3)
    url, data = settings_data(auth_client, dataset)
    assert "require_review" not in data
    data["require_review"] = ["on"]
    assert auth_client.post(url, data).status_code == 302
    dataset.refresh_from_db()
    assert dataset.require_review
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.filter(task_id="t1"), user=dataset.owner)
    page = get(auth_client, dataset.get_absolute_url())
    assert "This dataset saves only once every draft is reviewed." in page

    save = reverse("datasets_app:version_save", args=[dataset.pk])
    page = get(auth_client, auth_client.post(save)["Location"])
    assert datasets.NOT_ALL_REVIEWED.format(name="Finance QA", count="2 are") in page
    assert not dataset.versions.exists()
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.all(), user=dataset.owner)
    page = get(auth_client, auth_client.post(save)["Location"])
    assert "Saved Finance QA as v1." in page


def test_a_settings_page_saved_as_shown_keeps_require_review(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    dataset.require_review = True
    dataset.save()
    url, data = settings_data(auth_client, dataset)
    assert data["require_review"] == ["on"]
    auth_client.post(url, data)
    dataset.refresh_from_db()
    assert dataset.require_review
    del data["require_review"]
    data["name"] = ["Finance QA 2"]
    auth_client.post(url, data)
    dataset.refresh_from_db()
    assert not dataset.require_review
    # Renamed on its own: the name was once lost (compared with the form's changed copy).
    url, data = settings_data(auth_client, dataset)
    data["name"] = ["Finance QA 3"]
    auth_client.post(url, data)
    dataset.refresh_from_db()
    assert dataset.name == "Finance QA 3"


def test_without_the_setting_unreviewed_drafts_are_saved(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)
    save = reverse("datasets_app:version_save", args=[dataset.pk])
    page = get(auth_client, auth_client.post(save)["Location"])
    assert "Saved Finance QA as v1." in page


def test_the_api_answers_409_not_all_reviewed(make_dataset, user):
    api = bearer(tokens.api_token_create(user=user, name="CI")[1])
    dataset = make_dataset(tasks=2)
    url = f"/api/v1/datasets/{dataset.pk}"
    patched = api.patch(url, {"require_review": True}, content_type="application/json")
    assert patched.status_code == 200
    body = patched.json()
    assert body["require_review"] is True and body["unreviewed_drafts"] == 2
    assert [task["reviewed"] for task in body["tasks"]] == [False, False]
    response = api.post(f"{url}/versions")
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "not_all_reviewed"
    assert error["message"] == datasets.NOT_ALL_REVIEWED.format(name="Finance QA", count="2 are")
    datasets.tasks_mark_reviewed(tasks=dataset.tasks.all(), user=user)
    assert api.get(url).json()["unreviewed_drafts"] == 0
    assert api.post(f"{url}/versions").status_code == 201


def test_the_review_page_shows_a_drafts_metadata(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    Task.objects.filter(task_id="t1").update(metadata={"difficulty": "hard"})
    page = get(auth_client, review_url(dataset))
    assert "<dt>difficulty</dt>" in page and "hard" in page


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "no-javascript"])
def test_saving_after_a_try_on_the_edit_page_comes_back_to_the_review(
    auth_client, make_dataset, htmx
):
    dataset = make_dataset(tasks=2)
    page = get(auth_client, review_url(dataset))
    edit = re.search(r'href="([^"]+/edit/\?next=[^"]+)"', page).group(1).replace("&amp;", "&")
    form = get(auth_client, edit)
    data = form_data(form, having="try-answer") | {"prompt": "A better prompt"}
    tried = re.search(r'formaction="([^"]+/try/[^"]*)"', form).group(1).replace("&amp;", "&")
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    result = auth_client.post(tried, data | {"try-answer": "4", "show": "outcome"}, **headers)
    assert result.status_code == 200 and "try-result" in result.content.decode()
    # With htmx the try's outcome is swapped into the edit page, whose buttons stay; without,
    # the page after the try is the edit page again, with its own Save as draft.
    shown = form if htmx else result.content.decode()
    save = re.search(r'formaction="([^"]+/edit/[^"]*)"', shown).group(1).replace("&amp;", "&")
    response = auth_client.post(save, data)
    assert response.status_code == 302
    page = get(auth_client, response["Location"])
    assert heading(page) == "Task 1" and "A better prompt" in page
