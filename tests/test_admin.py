"""The admin, where an administrator reviews drafts."""

import pytest
from django.urls import reverse

from datasets_app import wording
from datasets_app.models import Criterion, SiteSettings, Task, TaskState
from datasets_app.services import datasets
from tests.runs import run_outputs

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(client, admin_user):
    client.force_login(admin_user)
    return client


def test_every_admin_page_loads(admin_client_, make_dataset, user):
    from datasets_app.services import datasets

    dataset = make_dataset(tasks=2)
    version = datasets.version_save(dataset=dataset, user=user)
    run = run_outputs(version, user, {"t1": "Answer 1"})
    task = Task.objects.first()
    SiteSettings.load()
    urls = [
        reverse("admin:index"),
        reverse("admin:datasets_app_dataset_changelist"),
        reverse("admin:datasets_app_dataset_change", args=[dataset.pk]),
        reverse("admin:datasets_app_task_changelist") + "?state__exact=draft",
        reverse("admin:datasets_app_task_changelist") + "?q=Prompt",
        reverse("admin:datasets_app_task_change", args=[task.pk]),
        reverse("admin:datasets_app_version_changelist"),
        reverse("admin:datasets_app_version_change", args=[version.pk]),
        reverse("admin:datasets_app_run_changelist"),
        reverse("admin:datasets_app_run_change", args=[run.pk]),
        reverse("admin:datasets_app_sitesettings_change", args=[1]),
        reverse("admin:datasets_app_upload_changelist"),
    ]
    for url in urls:
        assert admin_client_.get(url).status_code == 200, url


def test_the_admin_action_saves_selected_datasets_as_their_next_version(
    admin_client_, make_dataset
):
    dataset = make_dataset(tasks=2)
    response = admin_client_.post(
        reverse("admin:datasets_app_dataset_changelist"),
        {"action": "save_as_next_version", "_selected_action": [dataset.pk]},
        follow=True,
    )
    assert "saved as v1" in response.content.decode()
    assert dataset.versions.get().number == 1
    assert not dataset.tasks.filter(state=TaskState.DRAFT).exists()


def test_versions_and_runs_are_read_only_in_the_admin(admin_client_):
    assert admin_client_.get(reverse("admin:datasets_app_version_add")).status_code == 403
    assert admin_client_.get(reverse("admin:datasets_app_run_add")).status_code == 403


def test_an_administrator_turns_python_checks_on(admin_client_):
    from context_verifiers.sandbox import SelfTestReport
    from datasets_app.services import sandbox

    # The switch turns on only while the last sandbox self-test passed (tests/verifiers/
    # test_sandbox_switch.py has the rest).
    sandbox.sandbox_self_test_record(report=SelfTestReport(passed=True, probes=()))
    admin_client_.post(
        reverse("admin:datasets_app_sitesettings_change", args=[1]),
        {"python_checks_enabled": "on"},
    )
    assert SiteSettings.load().python_checks_enabled is True


# --- Reviewing drafts (issue 13) ------------------------------------------------------------

CODE = "from context_verifiers import Verdict\n\ndef verify(task, output):\n    return 1\n"


def post_as_rendered(client, url: str, **changes):
    from tests.as_rendered import form_data

    data = form_data(client.get(url).content.decode())
    for name, value in changes.items():
        data[name] = [value]
    return client.post(url, data)


def test_verifiers_are_structured_fields_with_code_in_a_monospace_box(admin_client_, make_dataset):
    import html

    dataset = make_dataset(tasks=2)
    criterion = Criterion.objects.get()
    criterion.verifier = {"kind": "code_verifier", "code": CODE}
    criterion.save()
    page = admin_client_.get(
        reverse("admin:datasets_app_task_change", args=[criterion.task_id])
    ).content.decode()
    # Kind and output type are choices; the code is real lines in a monospace textarea.
    assert 'name="criteria-0-verifier_0"' in page and 'name="criteria-0-verifier_1"' in page
    assert '<option value="code_verifier" selected>' in page
    code_box = page[page.index('name="criteria-0-verifier_3"') :]
    assert 'class="verifier-code"' in page
    assert html.escape(CODE, quote=True).replace("&#x27;", "'") in code_box.replace("&#x27;", "'")
    assert "\\n" not in code_box[: code_box.index("</textarea>")]
    assert "css/admin.css" in page

    # Saved unchanged, the verifier is kept byte for byte; changed, it is valid JSON.
    url = reverse("admin:datasets_app_task_change", args=[criterion.task_id])
    assert post_as_rendered(admin_client_, url).status_code == 302
    criterion.refresh_from_db()
    assert criterion.verifier == {"kind": "code_verifier", "code": CODE}
    response = post_as_rendered(
        admin_client_,
        url,
        **{"criteria-0-verifier_0": "llm_judge", "criteria-0-verifier_1": "boolean",
           "criteria-0-verifier_2": "Pass if {{output}} is kind.\r\nBe strict.",
           "criteria-0-verifier_3": ""},
    )  # fmt: skip
    assert response.status_code == 302
    criterion.refresh_from_db()
    assert criterion.verifier == {
        "kind": "llm_judge",
        "outputType": "boolean",
        "instructions": "Pass if {{output}} is kind.\nBe strict.",
    }
    assert dataset.tasks.count() == 2


def test_a_verifier_with_code_and_no_kind_is_refused(admin_client_, make_dataset):
    dataset = make_dataset(tasks=2)
    task = dataset.tasks.get(task_id="t1")
    url = reverse("admin:datasets_app_task_change", args=[task.pk])
    response = post_as_rendered(admin_client_, url, expected_verifier_3="def verify(t, o): ...")
    assert response.status_code == 200
    assert "Choose a kind for these instructions or this code." in response.content.decode()
    task.refresh_from_db()
    assert task.expected_verifier is None


def test_dataset_settings_are_two_verifiers_and_other_keys_stay(admin_client_, make_dataset):
    dataset = make_dataset()
    dataset.settings = {"defaultVerifier": {"kind": "llm_judge"}, "futureKey": [1, 2]}
    dataset.save()
    url = reverse("admin:datasets_app_dataset_change", args=[dataset.pk])
    page = admin_client_.get(url).content.decode()
    assert wording.EXPECTED_ANSWER_SETTING in page and 'name="settings"' not in page
    assert post_as_rendered(admin_client_, url).status_code == 302
    dataset.refresh_from_db()
    assert dataset.settings == {"defaultVerifier": {"kind": "llm_judge"}, "futureKey": [1, 2]}
    post_as_rendered(admin_client_, url, expected_answer_verifier_0="exact_match")
    dataset.refresh_from_db()
    assert dataset.settings["expectedAnswerVerifier"] == {"kind": "exact_match"}
    post_as_rendered(admin_client_, url, default_verifier_0="")
    dataset.refresh_from_db()
    assert "defaultVerifier" not in dataset.settings and dataset.settings["futureKey"] == [1, 2]


def test_criteria_inlines_are_stacked_not_a_wide_table(admin_client_, make_dataset):
    dataset = make_dataset(tasks=2)
    task = dataset.tasks.get(task_id="t2")
    page = admin_client_.get(
        reverse("admin:datasets_app_task_change", args=[task.pk])
    ).content.decode()
    criteria_group = page[page.index('id="criteria-group"') :]
    criteria_group = criteria_group[: criteria_group.index("</fieldset>")]
    assert "<table" not in criteria_group  # one block per criterion, not a wide row
    assert "inline-related" in criteria_group and 'name="criteria-0-text"' in criteria_group


def test_the_dataset_filter_says_whose_dataset_it_is(admin_client_, make_dataset, other_user):
    mine = make_dataset(tasks=1)
    theirs = make_dataset(owner=other_user, tasks=1)
    page = admin_client_.get(reverse("admin:datasets_app_task_changelist")).content.decode()
    assert f"Finance QA (ada, #{mine.pk})" in page
    assert f"Finance QA ({other_user.get_username()}, #{theirs.pk})" in page
    filtered = admin_client_.get(
        reverse("admin:datasets_app_task_changelist") + f"?dataset={theirs.pk}"
    )
    assert filtered.context["cl"].result_count == 1
    assert next(iter(filtered.context["cl"].result_list)).dataset == theirs


def test_a_datasets_admin_page_lists_its_tasks_with_state_and_links(
    admin_client_, make_dataset, user
):
    dataset = make_dataset(tasks=3)
    datasets.version_save(dataset=dataset, user=user)
    draft = Task.objects.create(dataset=dataset, task_id="t4", prompt="p", expected_text="e")
    page = admin_client_.get(
        reverse("admin:datasets_app_dataset_change", args=[dataset.pk])
    ).content.decode()
    for task in dataset.tasks.all():
        assert reverse("admin:datasets_app_task_change", args=[task.pk]) in page
        assert task.get_absolute_url() in page
    assert page.count("<td>Saved</td>") == 3 and page.count("<td>Draft</td>") == 1
    assert f"?dataset={dataset.pk}&amp;state__exact=draft" in page
    assert draft.task_id in page


def test_bulk_actions_for_drafts(admin_client_, make_dataset, user):
    dataset = make_dataset(tasks=3)
    datasets.version_save(dataset=dataset, user=user)
    drafts = [
        Task.objects.create(dataset=dataset, task_id=f"d{i}", prompt="p", expected_text="e")
        for i in range(3)
    ]
    saved = dataset.tasks.get(task_id="t1")
    changelist = reverse("admin:datasets_app_task_changelist")

    def act(action: str, tasks) -> str:
        response = admin_client_.post(
            changelist,
            {"action": action, "_selected_action": [t.pk for t in tasks]},
            follow=True,
        )
        return response.content.decode()

    page = act("mark_reviewed", [drafts[0], drafts[1], saved])
    assert "Marked 2 drafts reviewed." in page and "1 task not a draft" in page
    reviewed = admin_client_.get(changelist + "?reviewed=yes").context["cl"].result_list
    assert {t.task_id for t in reviewed} == {"d0", "d1"}
    # A change after the review means looking at it again.
    drafts[1].prompt = "changed"
    drafts[1].save()
    reviewed = admin_client_.get(changelist + "?reviewed=yes").context["cl"].result_list
    assert {t.task_id for t in reviewed} == {"d0"}

    page = act("delete_drafts", [drafts[2], saved])
    assert "Deleted 1 draft." in page
    assert not Task.objects.filter(pk=drafts[2].pk).exists()
    saved.refresh_from_db()
    assert saved.state == TaskState.SAVED

    page = act("save_datasets_as_next_version", [drafts[0]])
    assert "saved as v2" in page
    assert dataset.versions.count() == 2
    assert not dataset.tasks.filter(state=TaskState.DRAFT).exists()


def test_delete_drafts_on_all_that_match_deletes_every_dataset_s_drafts(
    admin_client_, make_dataset, user, django_assert_max_num_queries
):
    first, second = make_dataset(tasks=3), make_dataset(name="Second", tasks=40)
    datasets.version_save(dataset=first, user=user)
    Task.objects.create(dataset=first, task_id="d1", prompt="p", expected_text="e")
    changelist = reverse("admin:datasets_app_task_changelist")

    # Every task that matches the list (all of them), not only the page's selected rows.
    # About a dozen statements a dataset (two here), never some for each of the 41 drafts.
    with django_assert_max_num_queries(35):
        admin_client_.post(
            changelist,
            {"action": "delete_drafts", "select_across": "1", "_selected_action": ["0"]},
        )
    page = admin_client_.get(changelist).content.decode()
    assert "Deleted 41 drafts." in page and "Left as they were: 3 tasks not a draft." in page
    assert not second.tasks.exists()
    assert sorted(first.tasks.values_list("task_id", flat=True)) == ["t1", "t2", "t3"]


def test_runs_are_seen_per_version_read_only_with_their_results(admin_client_, make_dataset, user):
    dataset = make_dataset(tasks=2)
    dataset.settings = {"expectedAnswerVerifier": {"kind": "exact_match"}}
    dataset.save()
    version = datasets.version_save(dataset=dataset, user=user)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Not it"})
    url = reverse("admin:datasets_app_version_change", args=[version.pk])
    page = admin_client_.get(url).content.decode()
    assert "runs of this version" in page.lower()
    assert reverse("admin:datasets_app_run_change", args=[run.pk]) in page
    assert "0.50" in page  # the mean of its two results: right, then wrong
    runs_group = page[page.index('id="runs-group"') :]
    runs_group = runs_group[: runs_group.index("</fieldset>")]
    assert "<textarea" not in runs_group and 'type="text"' not in runs_group  # read-only
    run_page = admin_client_.get(
        reverse("admin:datasets_app_run_change", args=[run.pk])
    ).content.decode()
    assert "0.5" in run_page and "t2" in run_page
    assert admin_client_.post(url, {}).status_code == 403
    runs = admin_client_.get(
        reverse("admin:datasets_app_run_changelist") + f"?dataset={dataset.pk}"
    )
    assert runs.context["cl"].result_count == 1


def test_the_admin_shows_weights_as_people_write_them(admin_client_, make_dataset):
    dataset = make_dataset(tasks=2)
    Criterion.objects.update(weight=20)
    task = dataset.tasks.get(task_id="t2")
    page = admin_client_.get(reverse("admin:datasets_app_task_change", args=[task.pk]))
    assert 'name="criteria-0-weight" value="20"' in page.content.decode()
    Criterion.objects.update(weight=2.5)
    page = admin_client_.get(reverse("admin:datasets_app_task_change", args=[task.pk]))
    assert 'name="criteria-0-weight" value="2.5"' in page.content.decode()


def post_link(client, task, url: str):
    change = reverse("admin:datasets_app_task_change", args=[task.pk])
    files = {"TOTAL_FORMS": "1", "0-role": "input", "0-name": "a.csv", "0-url": url}
    return post_as_rendered(client, change, **{f"files-{k}": v for k, v in files.items()})


@pytest.mark.parametrize("url", ["http://example.com/a.csv", "ftp://example.com/a.csv"])
def test_the_admin_refuses_a_task_link_the_importer_refuses(admin_client_, make_dataset, url):
    from datasets_app.importing import document
    from datasets_app.models import TaskFile

    response = post_link(admin_client_, make_dataset(tasks=1).tasks.get(), url)
    assert response.status_code == 200
    page = response.content.decode().replace("&quot;", '"')
    assert document.LINK_NOT_HTTPS.format(url=f'"{url}"') in page
    assert not TaskFile.objects.exists()


def test_the_admin_keeps_an_https_task_link(admin_client_, make_dataset):
    from datasets_app.models import TaskFile

    response = post_link(admin_client_, make_dataset(tasks=1).tasks.get(), "https://e.com/a.csv")
    assert response.status_code == 302
    assert TaskFile.objects.get().url == "https://e.com/a.csv"


def test_the_task_and_criterion_lists_cost_the_same_queries_at_any_size(
    admin_client_, make_dataset
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for size in (3, 60):
        dataset = make_dataset(name=f"Size {size}")
        tasks = Task.objects.bulk_create(
            Task(dataset=dataset, task_id=f"t{n}", prompt="p", position=n) for n in range(size)
        )
        Criterion.objects.bulk_create(
            Criterion(dataset=dataset, task=task, criterion_id="c", text="Is right")
            for task in tasks
        )
        for name in ("task", "criterion"):
            url = reverse(f"admin:datasets_app_{name}_changelist") + f"?dataset={dataset.pk}"
            with CaptureQueriesContext(connection) as queries:
                response = admin_client_.get(url)
            assert response.status_code == 200
            # No count of every row beside the filtered one ("60 results (120 total)").
            assert " total)" not in response.content.decode()
            counts.append(len(queries))
    assert counts[:2] == counts[2:]


def test_a_criterion_is_found_in_the_admin_and_opens_its_task(admin_client_, make_dataset):
    dataset = make_dataset(tasks=2)  # t2 has "Is right"
    page = admin_client_.get(
        reverse("admin:datasets_app_criterion_changelist") + "?q=right"
    ).content.decode()
    task = dataset.tasks.get(task_id="t2")
    assert f'href="{reverse("admin:datasets_app_task_change", args=[task.pk])}">t2<' in page
    change = reverse("admin:datasets_app_criterion_change", args=[Criterion.objects.get().pk])
    assert admin_client_.post(change, {"text": "Changed"}).status_code == 403


def test_a_big_datasets_admin_page_lists_its_first_tasks_and_links_the_rest(
    admin_client_, make_dataset
):
    dataset = make_dataset()
    Task.objects.bulk_create(
        Task(dataset=dataset, task_id=f"t{n}", prompt="p", position=n) for n in range(1, 1_201)
    )
    page = admin_client_.get(
        reverse("admin:datasets_app_dataset_change", args=[dataset.pk])
    ).content.decode()
    assert "<td>Draft</td>" in page and page.count("<td>Draft</td>") == 100
    assert "The first 100 of its 1,200 tasks" in page
    assert f'?dataset={dataset.pk}">see them all</a>' in page
