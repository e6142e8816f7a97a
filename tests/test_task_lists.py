"""The dataset and version pages' task lists, as a person uses them: a page at a time, the
search box, filters, sorts, and acting on many tasks at once."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from datasets_app import selectors
from datasets_app.models import Criterion, RunResult, Task, TaskFile, TaskState, Version
from datasets_app.services import datasets
from tests.as_rendered import form_data
from tests.runs import run_outputs

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def add_tasks(dataset, count: int, *, start: int = 0, **fields) -> list[Task]:
    """`count` tasks t<start+1>… in one insert: lists are tested at sizes a loop would
    take a while to make."""
    return Task.objects.bulk_create(
        Task(
            dataset=dataset,
            task_id=f"t{index + 1}",
            name=f"Task {index + 1:04}",
            prompt=f"Prompt {index + 1}",
            expected_text=f"Answer {index + 1}",
            position=index,
            **fields,
        )
        for index in range(start, start + count)
    )


def ids_on(page: str) -> list[str]:
    return re.findall(r'data-label="Id"><code>(.*?)</code>', page)


def get(client, url: str, **params) -> str:
    response = client.get(url, params)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def big(make_dataset):
    dataset = make_dataset()
    add_tasks(dataset, 120)
    return dataset


# --- Paging ---------------------------------------------------------------------------------


def test_the_dataset_page_shows_50_tasks_a_page_with_exact_counts(auth_client, big):
    page = get(auth_client, big.get_absolute_url())
    assert ids_on(page) == [f"t{n}" for n in range(1, 51)]
    assert '<span class="count">120</span>' in page
    assert "Showing 1–50 of 120." in page
    assert 'href="?page=2"' in page and 'rel="next"' in page and 'rel="prev"' not in page

    last = get(auth_client, big.get_absolute_url(), page=3)
    assert ids_on(last) == [f"t{n}" for n in range(101, 121)]
    assert "Showing 101–120 of 120." in last
    assert 'aria-current="page">3<' in last and 'rel="next"' not in last


def test_a_page_size_is_chosen_and_kept_by_the_page_links(auth_client, big):
    page = get(auth_client, big.get_absolute_url(), per_page=25, page=2)
    assert ids_on(page) == [f"t{n}" for n in range(26, 51)]
    assert 'href="?per_page=25&amp;page=3"' in page
    assert '<option value="25" selected>25</option>' in page


def test_a_page_number_or_size_that_makes_no_sense_shows_a_page_anyway(auth_client, big):
    assert ids_on(get(auth_client, big.get_absolute_url(), page=99))[-1] == "t120"
    assert len(ids_on(get(auth_client, big.get_absolute_url(), per_page=7, page="x"))) == 50


def test_thousands_are_written_with_a_comma_in_the_counts(auth_client, make_dataset):
    dataset = make_dataset()
    add_tasks(dataset, 1_200)
    page = get(auth_client, dataset.get_absolute_url(), page=24)
    assert '<span class="count">1,200</span>' in page
    assert "Showing 1,151–1,200 of 1,200." in page
    assert 'data-label="#">1,200<' in page


def test_with_htmx_a_page_link_swaps_in_the_task_list_alone(auth_client, big):
    response = auth_client.get(big.get_absolute_url(), {"page": 2}, **HTMX)
    text = response.content.decode()
    assert text.lstrip().startswith('<div id="task-list"')
    assert "<h1" not in text and "Versions" not in text
    assert ids_on(text)[0] == "t51"
    assert "HX-Request" in response["Vary"]
    # Each link carries its plain twin, and puts its URL in the address bar.
    assert 'href="?page=3" hx-get="?page=3"' in text and 'hx-push-url="true"' in text


def test_the_address_bar_gets_the_lists_own_url_not_every_field(auth_client, big):
    # What htmx sends from the form: every field, most of them empty.
    fields = {"q": "Task", "state": "", "scored_by": "", "sort": "", "per_page": "50"}
    response = auth_client.get(big.get_absolute_url(), fields, **HTMX)
    assert response["HX-Push-Url"] == big.get_absolute_url() + "?q=Task"
    # The selects show what is listed: 50 a page unless the URL says otherwise.
    assert '<option value="50" selected>50</option>' in response.content.decode()


def test_going_back_to_a_page_htmx_forgot_gets_the_whole_page(auth_client, big):
    restore = {**HTMX, "HTTP_HX_HISTORY_RESTORE_REQUEST": "true"}
    text = auth_client.get(big.get_absolute_url(), {"page": 2}, **restore).content.decode()
    assert "<h1" in text and ids_on(text)[0] == "t51"


def test_the_page_costs_the_same_queries_at_any_size(
    auth_client, make_dataset, django_assert_max_num_queries
):
    small, large = make_dataset(), make_dataset(name="Large")
    add_tasks(small, 3)
    add_tasks(large, 600)
    params = {"q": "Prompt", "has_files": "no", "verifier": "llm_judge", "page": 2}
    counts = []
    for dataset in (small, large):
        with CaptureQueriesContext(connection) as queries:
            get(auth_client, dataset.get_absolute_url(), **params)
        counts.append(len(queries))
    assert counts[0] == counts[1]
    with django_assert_max_num_queries(15):
        get(auth_client, large.get_absolute_url(), **params)


# --- Search ---------------------------------------------------------------------------------


@pytest.fixture
def searchable(make_dataset):
    dataset = make_dataset()
    add_tasks(dataset, 60)
    Task.objects.filter(task_id="t7").update(prompt="How many apples does Ada have left?")
    Task.objects.filter(task_id="t8").update(expected_text="Twelve PEARS")
    Task.objects.filter(task_id="t9").update(name="Tom <b>&</b> Jerry")
    Criterion.objects.create(
        dataset=dataset,
        task=Task.objects.get(task_id="t10"),
        criterion_id="c1",
        text="Mentions the plum tree",
    )
    return dataset


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("apples", ["t7"]),  # a word of a prompt
        ("APPLES DOES", ["t7"]),  # in any case, words together
        ("pears", ["t8"]),  # the expected answer
        ("plum", ["t10"]),  # a criterion's text
        ("t59", ["t59"]),  # an id
        ("Task 003", [f"t{n}" for n in range(30, 40)]),  # part of a name
    ],
)
def test_the_search_box_finds_tasks_by_id_name_prompt_answer_or_criterion(
    auth_client, searchable, query, found
):
    page = get(auth_client, searchable.get_absolute_url(), q=query)
    assert [re.sub("</?mark>", "", cell) for cell in ids_on(page)] == found
    assert f"{len(found)} of 60 tasks" in page


def test_a_search_marks_what_matched_and_shows_where(auth_client, searchable):
    page = get(auth_client, searchable.get_absolute_url(), q="apples")
    assert '<input type="search" id="task-search" name="q" value="apples"' in page
    assert "Prompt:</span> How many <mark>apples</mark> does Ada have left?" in page


def test_a_search_marks_matches_in_escaped_text(auth_client, searchable):
    page = get(auth_client, searchable.get_absolute_url(), q="<b>&")
    assert "Tom <mark>&lt;b&gt;&amp;</mark>&lt;/b&gt; Jerry" in page
    assert "<b>&" not in page


def test_a_search_that_matches_nothing_says_so(auth_client, searchable):
    page = get(auth_client, searchable.get_absolute_url(), q="durian")
    assert "0 of 60 tasks match “durian”." in page
    assert "No task matches." in page and 'href="' in page


def test_a_search_stays_in_the_page_links(auth_client, searchable):
    page = get(auth_client, searchable.get_absolute_url(), q="Prompt", per_page=25)
    assert 'href="?q=Prompt&amp;per_page=25&amp;page=2"' in page


def test_a_search_longer_than_the_box_allows_is_not_run(auth_client, searchable):
    page = get(auth_client, searchable.get_absolute_url(), q="x" * 500)
    assert len(ids_on(page)) == 50  # read as no search at all


# --- Filters and sorts ----------------------------------------------------------------------


def test_the_state_filter_lists_drafts_reviewed_saved_or_archived(auth_client, make_dataset):
    dataset = make_dataset()
    add_tasks(dataset, 2, state=TaskState.DRAFT)
    add_tasks(dataset, 1, start=2, state=TaskState.SAVED)
    add_tasks(dataset, 1, start=3, state=TaskState.ARCHIVED)
    later = timezone.now() + timezone.timedelta(minutes=1)
    Task.objects.filter(task_id="t2").update(reviewed_at=later)
    url = dataset.get_absolute_url()
    assert ids_on(get(auth_client, url)) == ["t1", "t2", "t3"]
    assert ids_on(get(auth_client, url, state="draft")) == ["t1"]
    reviewed = get(auth_client, url, state="reviewed")
    assert ids_on(reviewed) == ["t2"] and 'class="badge reviewed">Reviewed' in reviewed
    assert ids_on(get(auth_client, url, state="saved")) == ["t3"]
    archived = get(auth_client, url, state="archived")
    assert ids_on(archived) == ["t4"] and '<span class="count">3</span>' in archived


def test_filters_by_what_scores_a_task_its_verifier_and_its_files(auth_client, make_dataset):
    dataset = make_dataset()
    t1, t2, t3 = add_tasks(dataset, 3)
    Criterion.objects.create(dataset=dataset, task=t2, criterion_id="c", text="Polite")
    Criterion.objects.create(
        dataset=dataset, task=t3, criterion_id="c", text="Runs", verifier={"kind": "code_verifier"}
    )
    Task.objects.filter(pk=t3.pk).update(expected_text="")
    TaskFile.objects.create(task=t1, role="input", name="a.pdf", url="https://x.test/a.pdf")
    url = dataset.get_absolute_url()
    assert ids_on(get(auth_client, url, scored_by="criteria")) == ["t2", "t3"]
    assert ids_on(get(auth_client, url, scored_by="expected_answer")) == ["t1"]
    # t1 and t2's answers go to the default agent judge; t2's criterion to the LLM judge.
    assert ids_on(get(auth_client, url, verifier="agent_judge")) == ["t1", "t2"]
    assert ids_on(get(auth_client, url, verifier="llm_judge")) == ["t2"]
    assert ids_on(get(auth_client, url, verifier="code_verifier")) == ["t3"]
    assert ids_on(get(auth_client, url, verifier="exact_match")) == []
    assert ids_on(get(auth_client, url, has_files="yes")) == ["t1"]
    assert ids_on(get(auth_client, url, has_files="no", scored_by="criteria")) == ["t2", "t3"]


def test_criteria_for_every_task_score_and_grade_every_task(auth_client, make_dataset):
    dataset = make_dataset()
    add_tasks(dataset, 2)
    Criterion.objects.create(
        dataset=dataset, criterion_id="s", text="Short", verifier={"kind": "exact_match"}
    )
    url = dataset.get_absolute_url()
    assert ids_on(get(auth_client, url, scored_by="criteria")) == ["t1", "t2"]
    assert ids_on(get(auth_client, url, scored_by="expected_answer")) == []
    assert ids_on(get(auth_client, url, verifier="exact_match")) == ["t1", "t2"]


def test_tasks_sort_by_position_name_or_last_change(auth_client, make_dataset):
    dataset = make_dataset()
    add_tasks(dataset, 3)
    Task.objects.filter(task_id="t1").update(name="Zebra", updated_at=timezone.now())
    Task.objects.filter(task_id="t3").update(name="Aardvark")
    url = dataset.get_absolute_url()
    assert ids_on(get(auth_client, url)) == ["t1", "t2", "t3"]
    assert ids_on(get(auth_client, url, sort="name")) == ["t3", "t2", "t1"]
    assert ids_on(get(auth_client, url, sort="changed"))[0] == "t1"


# --- Bulk actions ---------------------------------------------------------------------------


def bulk_url(dataset) -> str:
    return reverse("datasets_app:tasks_bulk", args=[dataset.pk])


def test_mark_reviewed_asks_with_the_count_then_marks_the_ticked_drafts(
    auth_client, make_dataset, user
):
    dataset = make_dataset()
    t1, _t2, t3 = add_tasks(dataset, 3)
    Task.objects.filter(pk=t3.pk).update(state=TaskState.SAVED)
    page = get(auth_client, dataset.get_absolute_url())
    data = form_data(page, having="sort")
    data |= {"task": [str(t1.pk), str(t3.pk)], "action": ["mark_reviewed"]}
    question = auth_client.post(bulk_url(dataset), data).content.decode()
    assert "Mark 1 draft reviewed?" in question
    assert "Of the 2 tasks you chose, 1 is a draft." in question
    assert "The other chosen tasks are not drafts" in question
    assert not Task.objects.filter(reviewed_at__isnull=False).exists(), "asking marks nothing"

    response = auth_client.post(bulk_url(dataset), form_data(question, having="confirm"))
    assert response.status_code == 302
    assert response.url == dataset.get_absolute_url() + "?"
    assert list(Task.objects.filter(reviewed_at__isnull=False)) == [t1]
    assert Task.objects.get(pk=t1.pk).reviewed_by == user
    done = auth_client.get(response.url).content.decode()
    assert "Marked 1 draft reviewed." in done


def test_delete_drafts_acts_on_all_tasks_that_match_never_on_held_ones(
    auth_client, make_dataset, user
):
    dataset = make_dataset()
    add_tasks(dataset, 130)
    Task.objects.filter(task_id__in=["t1", "t2"]).update(prompt="keep me")
    saved = datasets.version_save(dataset=dataset, user=user)
    add_tasks(dataset, 5, start=130)  # new drafts, in no version
    Task.objects.filter(task_id="t131").update(prompt="keep me")
    graded = Task.objects.get(task_id="t132")
    run = run_outputs(saved, user, {"t1": "Answer 1"})
    Version.tasks.through.objects.create(version=saved, task=graded)
    RunResult.objects.create(run=run, task=graded, score=1)

    listing = get(auth_client, dataset.get_absolute_url(), state="draft")
    assert "5 of 135 tasks match." in listing
    data = form_data(listing, having="sort") | {"all": ["1"], "action": ["delete_drafts"]}
    question = auth_client.post(bulk_url(dataset), data).content.decode()
    assert "Delete 4 drafts?" in question
    assert "Of the 5 tasks that match, 4 are drafts in no version and no run." in question
    assert "1 chosen draft is held by a version or a run: it is never deleted." in question

    auth_client.post(bulk_url(dataset), form_data(question, having="confirm"))
    left = set(dataset.tasks.values_list("task_id", flat=True))
    assert "t132" in left
    assert not {"t131", "t133", "t134", "t135"} & left
    assert len(left) == 131


def test_all_that_match_is_the_search_not_the_whole_dataset(auth_client, make_dataset):
    dataset = make_dataset()
    add_tasks(dataset, 80)
    Task.objects.filter(task_id__in=["t3", "t70"]).update(prompt="an unusual word")
    listing = get(auth_client, dataset.get_absolute_url(), q="unusual")
    assert "All 2 tasks that match" in listing
    data = form_data(listing, having="sort") | {"all": ["1"], "action": ["delete_drafts"]}
    question = auth_client.post(bulk_url(dataset), data).content.decode()
    assert "Delete 2 drafts?" in question
    response = auth_client.post(bulk_url(dataset), form_data(question, having="confirm"))
    assert response.url == dataset.get_absolute_url() + "?q=unusual"
    assert dataset.tasks.count() == 78


def test_a_bulk_action_with_nothing_chosen_says_so(auth_client, make_dataset):
    dataset = make_dataset()
    add_tasks(dataset, 2)
    response = auth_client.post(bulk_url(dataset), {"action": "delete_drafts"}, follow=True)
    assert "Choose the tasks first" in response.content.decode()
    assert dataset.tasks.count() == 2


def test_bulk_actions_need_the_csrf_token_and_the_dataset(user, other_user, make_dataset):
    dataset = make_dataset()
    (task,) = add_tasks(dataset, 1)
    data = {"action": "delete_drafts", "task": task.pk, "confirm": "1"}
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(bulk_url(dataset), data).status_code == 403
    stranger = Client()
    stranger.force_login(other_user)
    assert stranger.post(bulk_url(dataset), data).status_code == 404
    assert stranger.get(bulk_url(dataset)).status_code == 405
    assert Task.objects.filter(pk=task.pk).exists()


def test_ticked_tasks_of_another_dataset_are_never_touched(auth_client, make_dataset):
    mine, other = make_dataset(), make_dataset(name="Other")
    add_tasks(mine, 1)
    (theirs,) = add_tasks(other, 1)
    data = {"action": "delete_drafts", "task": theirs.pk, "confirm": "1"}
    auth_client.post(bulk_url(mine), data)
    assert Task.objects.filter(pk=theirs.pk).exists()


# --- The version page -----------------------------------------------------------------------


@pytest.fixture
def version(make_dataset, user):
    dataset = make_dataset()
    tasks = add_tasks(dataset, 70)
    Criterion.objects.bulk_create(
        Criterion(dataset=dataset, task=task, criterion_id="c", text=f"Says {task.task_id}")
        for task in tasks
    )
    Task.objects.filter(task_id="t64").update(prompt="Where do penguins live?")
    return datasets.version_save(dataset=dataset, user=user)


def test_the_version_page_pages_and_searches_its_tasks(auth_client, version):
    url = version.get_absolute_url()
    page = get(auth_client, url)
    assert ids_on(page) == [f"t{n}" for n in range(1, 51)]
    assert '<span class="count">70</span>' in page and "Showing 1–50 of 70." in page
    assert "Download" in page and "JSON (.json)" in page
    assert ids_on(get(auth_client, url, page=2))[0] == "t51"
    found = get(auth_client, url, q="penguins")
    assert ids_on(found) == ["t64"] and "<mark>penguins</mark>" in found
    assert ids_on(get(auth_client, url, q="Says t7")) == ["t7", "t70"]
    assert 'name="state"' not in page, "a version's tasks are all saved"
    partial = auth_client.get(url, {"page": 2}, **HTMX).content.decode()
    assert partial.lstrip().startswith('<div id="task-list"') and "Download" not in partial


def test_the_version_page_shows_what_was_saved_not_what_changed_since(auth_client, version, user):
    task = version.dataset.tasks.get(task_id="t3")
    edited = replace(selectors.task_spec(task), name="Renamed", prompt="Changed")
    datasets.task_save(dataset=version.dataset, task=task, spec=edited)
    page = get(auth_client, version.get_absolute_url())
    assert "Task 0003" in page and "Renamed" not in page


def whole_snapshot_reads(queries) -> list[str]:
    """Queries that read a version's snapshot whole, not one of its keys."""
    column = '"datasets_app_version"."snapshot"'
    reads = []
    for query in queries:
        sql = query["sql"]
        for found in re.finditer(re.escape(column), sql):
            # One key of it: `JSON_EXTRACT(col, '$."name"')` on SQLite, `col -> 'name'` on
            # PostgreSQL.
            if not sql[found.end() :].startswith((", '$", " ->")):
                reads.append(sql)
    return reads


def test_the_version_page_never_reads_the_whole_version(auth_client, version, make_dataset):
    url = version.get_absolute_url()
    get(auth_client, url)  # what each format leaves out: worked out once, then kept
    with CaptureQueriesContext(connection) as queries:
        get(auth_client, url, page=2, q="Prompt")
    assert whole_snapshot_reads(queries.captured_queries) == []
    with CaptureQueriesContext(connection) as queries:
        get(auth_client, version.dataset.get_absolute_url())
    assert whole_snapshot_reads(queries.captured_queries) == []
