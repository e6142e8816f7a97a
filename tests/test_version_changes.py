"""A version's page compared with the version before: tasks added, removed and changed with
their text differences, criteria for every task and settings; any saved task opened
read-only; export warnings folded into one line."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from datasets_app import selectors
from datasets_app.importing.spec import CriterionSpec
from datasets_app.models import Task, TaskFile
from datasets_app.services import datasets
from tests.test_task_lists import whole_snapshot_reads

pytestmark = pytest.mark.django_db


def get(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def edit(dataset, task_id: str, **changes) -> None:
    task = selectors.task_for(dataset, dataset.tasks.live().get(task_id=task_id).pk)
    datasets.task_save(
        dataset=dataset, task=task, spec=replace(selectors.task_spec(task), **changes)
    )


def shared(dataset, criteria, settings=None) -> None:
    datasets.dataset_settings_update(
        dataset=dataset,
        name=dataset.name,
        description="",
        settings=settings or {},
        criteria=criteria,
        require_review=False,
    )


@pytest.fixture
def two_versions(make_dataset, user):
    """v1 of t1…t4; v2 with t1's prompt edited, t2 removed, t5 added, t3 replaced by an
    identical row (as a Replace makes), a criterion for every task and a setting changed."""
    dataset = make_dataset(tasks=4)
    shared(dataset, [CriterionSpec(id="tone", criterion="Is polite", weight=2)])
    v1 = datasets.version_save(dataset=dataset, user=user)
    edit(dataset, "t1", prompt="Prompt 1, asked again in other words")
    datasets.task_remove(task=dataset.tasks.get(task_id="t2"))
    t3 = dataset.tasks.get(task_id="t3")
    datasets.task_remove(task=t3)
    copy = Task.objects.create(
        dataset=dataset,
        task_id="t3",
        name=t3.name,
        prompt=t3.prompt,
        expected_text=t3.expected_text,
        position=t3.position,
    )
    for criterion in t3.criteria.all():
        criterion.pk, criterion.task = None, copy
        criterion.save()
    Task.objects.create(dataset=dataset, task_id="t5", name="Task 5", prompt="Prompt 5", position=9)
    shared(
        dataset,
        [CriterionSpec(id="tone", criterion="Is polite and brief", weight=3)],
        {"defaultVerifier": {"kind": "exact_match"}},
    )
    v2 = datasets.version_save(dataset=dataset, user=user)
    return v1, v2


def test_the_version_page_says_what_changed_since_the_one_before(auth_client, two_versions):
    _v1, v2 = two_versions
    page = get(auth_client, v2.get_absolute_url())
    assert "Changes since v1" in page
    assert "1 task added, 1 removed, 1 changed, 2 unchanged." in page
    assert "Criteria for every task changed." in page and "Settings changed." in page
    added = re.search(r"<h3>Added</h3>(.*?)</ul>", page, re.S).group(1)
    removed = re.search(r"<h3>Removed</h3>(.*?)</ul>", page, re.S).group(1)
    changed = re.search(r"<h3>Changed</h3>(.*?)</details>", page, re.S).group(1)
    assert "<code>t5</code>" in added and "<code>t2</code>" in removed
    # t3 is a new row with the same content: unchanged.
    assert "<code>t1</code>" in changed and "t3" not in changed
    # The words that changed, and only those marked.
    assert "<summary><code>t1</code> Task 1: Prompt</summary>" in changed
    assert (
        '<ins><span class="visually-hidden">added: </span>, asked again in other words</ins>'
        in changed
    )
    # Criteria for every task, the settings in the Settings page's words.
    criteria = re.search(r"<h3>Criteria for every task</h3>(.*?)</div>", page, re.S).group(1)
    assert "Criterion tone" in criteria
    assert 'Is polite<ins><span class="visually-hidden">added: </span> and brief</ins>' in criteria
    assert "How criteria are graded when they name no verifier" in page


def test_each_changed_task_and_removed_one_opens_as_its_version_saved_it(auth_client, two_versions):
    _v1, v2 = two_versions
    page = get(auth_client, v2.get_absolute_url())
    old = re.search(r'href="([^"]+)">as v1 saved it</a>', page).group(1)
    new = re.search(r'href="([^"]+)">Open it as v2 saved it</a>', page).group(1)
    before, after = get(auth_client, old), get(auth_client, new)
    assert "Prompt 1</pre>" in before and "as saved in v1, read-only" in before
    assert "asked again in other words</pre>" in after
    assert "open it there" in after and "The dataset has changed or removed it since." in before
    assert "/edit/" not in before and "Mark reviewed" not in before
    removed = re.search(r'<h3>Removed</h3>.*?href="([^"]+)"', page, re.S).group(1)
    assert "Prompt 2</pre>" in get(auth_client, removed)


def test_the_first_version_has_nothing_to_compare_with(auth_client, two_versions):
    v1, _v2 = two_versions
    page = get(auth_client, v1.get_absolute_url())
    assert "The first version of Finance QA: every task is new." in page


def test_every_task_of_the_list_opens_read_only(auth_client, two_versions):
    v1, _v2 = two_versions
    page = get(auth_client, v1.get_absolute_url())
    links = re.findall(r'<td data-label="Name"><a href="([^"]+/v1/tasks/[^"]+/)">', page)
    assert len(links) == 4
    assert "Prompt 2</pre>" in get(auth_client, links[1])


def test_a_saved_task_page_shows_its_files_and_the_versions_criteria(
    auth_client, make_dataset, user
):
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    TaskFile.objects.create(task=task, role="expected", name="key.pdf", url="https://f.example/k")
    datasets.dataset_settings_update(
        dataset=dataset,
        name=dataset.name,
        description="",
        settings={},
        criteria=[CriterionSpec(id="tone", criterion="Is polite", weight=2)],
        require_review=False,
    )
    version = datasets.version_save(dataset=dataset, user=user)
    # Changed since: the version's page still shows what it saved.
    datasets.dataset_settings_update(
        dataset=dataset,
        name=dataset.name,
        description="",
        settings={},
        criteria=[],
        require_review=False,
    )
    url = reverse("datasets_app:version_task", args=[dataset.pk, version.number, task.task_id])
    page = get(auth_client, url)
    assert "key.pdf" in page and "Is polite" in page and "(every task)" in page


def test_a_task_the_version_does_not_hold_is_not_found(
    auth_client, two_versions, other_user, client
):
    v1, v2 = two_versions
    url = reverse("datasets_app:version_task", args=[v1.dataset_id, 1, "t5"])
    assert auth_client.get(url).status_code == 404
    client.force_login(other_user)
    url = reverse("datasets_app:version_task", args=[v2.dataset_id, 2, "t5"])
    assert client.get(url).status_code == 404


def test_changes_are_read_without_the_whole_version(auth_client, two_versions):
    _v1, v2 = two_versions
    selectors.version_export_notes(v2)  # worked out from the whole version once, then kept
    with CaptureQueriesContext(connection) as queries:
        get(auth_client, v2.get_absolute_url())
    assert whole_snapshot_reads(queries.captured_queries) == []


def test_export_warnings_fold_into_one_line(auth_client, make_dataset, user):
    dataset = make_dataset(tasks=2)
    Task.objects.filter(task_id="t1").update(evidence={"anchors": ["a"]})
    version = datasets.version_save(dataset=dataset, user=user)
    page = get(auth_client, version.get_absolute_url())
    notes = selectors.version_export_notes(version)
    count = sum(len(n.warnings) for n in notes)
    assert count
    summary = re.search(r'<details class="export-warnings">\s*<summary>(.*?)</summary>', page, re.S)
    assert summary.group(1).startswith(f"Some formats leave things out: {count} warning")
    # Every warning is inside it, none above it.
    above = page[: page.index('<details class="export-warnings">')]
    assert all(warning not in above for n in notes for warning in n.warnings)
    # The dataset's own export page still lists them under each format.
    export = get(auth_client, reverse("datasets_app:dataset_export_page", args=[dataset.pk]))
    first = next(warning for n in notes for warning in n.warnings)
    assert "export-warnings" not in export and first in export


def test_a_task_id_with_any_characters_opens(auth_client, make_dataset, user):
    dataset = make_dataset()
    Task.objects.create(dataset=dataset, task_id="q/1 ?#%", prompt="Odd id", position=0)
    version = datasets.version_save(dataset=dataset, user=user)
    page = get(auth_client, version.get_absolute_url())
    link = re.search(r'<td data-label="Name"><a href="([^"]+)">', page).group(1)
    assert "Odd id</pre>" in get(auth_client, link.replace("&amp;", "&"))


def test_a_saved_tasks_link_stays_when_the_task_is_edited(auth_client, two_versions):
    _v1, v2 = two_versions
    before = get(auth_client, v2.get_absolute_url())
    edit(v2.dataset, "t4", prompt="Prompt 4, edited after v2")
    after = get(auth_client, v2.get_absolute_url())
    links = re.findall(r'href="([^"]+/v2/tasks/[^"]+/)"', before)
    assert links == re.findall(r'href="([^"]+/v2/tasks/[^"]+/)"', after)
    assert "Prompt 4</pre>" in get(auth_client, links[-2])


def test_a_changed_metadata_value_is_a_change(auth_client, make_dataset, user):
    dataset = make_dataset(tasks=1)
    Task.objects.filter(task_id="t1").update(metadata={"category": "math", "level": 2})
    datasets.version_save(dataset=dataset, user=user)
    edit(dataset, "t1", metadata={"category": "algebra", "level": 2})
    v2 = datasets.version_save(dataset=dataset, user=user)
    page = get(auth_client, v2.get_absolute_url())
    assert "<summary><code>t1</code> Task 1: Metadata category</summary>" in page
    assert "algebra" in page
    task_page = get(auth_client, reverse("datasets_app:version_task", args=[dataset.pk, 1, "t1"]))
    assert "math" in task_page
