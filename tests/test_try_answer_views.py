"""Try an answer, through the real views: htmx (the result in place) and plain forms (a
result page), graded by the library as a run grades, with a real judge server on
127.0.0.1 and the real sandbox."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from context_verifiers.judges import JudgeConfig
from datasets_app import guards, tasks, tries, views
from datasets_app.models import Criterion, JudgeCall, SiteSettings, Task
from tests.as_rendered import form_data
from tests.verifiers.conftest import judge_server  # noqa: F401 - the library's fixture
from tests.verifiers.judge_server import Fault

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
EXACT = {"kind": "exact_match"}
JUDGED = {"kind": "llm_judge", "outputType": "boolean", "instructions": "{{criterion}}\n{{output}}"}
LENGTH = {
    "kind": "code_verifier",
    "code": (
        "from context_verifiers import Verdict\n\n"
        "def verify(task, output):\n"
        "    words = len(output.text.split())\n"
        "    return Verdict.boolean(passed=words <= 150, reasoning=f'{words} words')\n"
    ),
}


@pytest.fixture(autouse=True)
def no_judge(settings):
    settings.JUDGE = JudgeConfig()


@pytest.fixture
def site_judge(settings, judge_server):  # noqa: F811
    settings.JUDGE = JudgeConfig(base_url=judge_server.base_url, model="local-judge", seed=7)
    return judge_server


def python_checks(on: bool) -> None:
    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": on})


@pytest.fixture
def capital(make_dataset):
    dataset = make_dataset(name="Geography")
    return Task.objects.create(
        dataset=dataset,
        task_id="capital",
        prompt="What is the capital of France?",
        expected_text="Paris",
        expected_verifier=EXACT,
    )


@pytest.fixture
def essay(make_dataset):
    dataset = make_dataset(name="Writing")
    task = Task.objects.create(dataset=dataset, task_id="essay", prompt="Summarise the report.")
    for position, (cid, text, verifier, weight) in enumerate(
        [("good", "Is a good summary", JUDGED, 2), ("length", "Is 150 words or fewer", LENGTH, 1)]
    ):
        Criterion.objects.create(
            dataset=dataset,
            task=task,
            criterion_id=cid,
            text=text,
            verifier=verifier,
            weight=weight,
            position=position,
        )
    return task


def try_url(task: Task) -> str:
    return reverse("datasets_app:task_try", args=[task.dataset_id, task.pk])


def outcomes(page: str) -> list[str]:
    """Each criterion's badge, in order, as the page shows it."""
    return re.findall(r'<span class="badge (?:passed|failed|scored|error|skipped)">([^<]+)', page)


def test_the_task_page_offers_a_try_with_each_criterion_alone(auth_client, essay):
    page = auth_client.get(essay.get_absolute_url()).content.decode()
    assert "Try an answer" in page
    assert f'action="{try_url(essay)}"' in page and f'hx-post="{try_url(essay)}"' in page
    assert '<option value="good">Is a good summary</option>' in page
    assert '<option value="length">Is 150 words or fewer</option>' in page


def test_an_exact_match_passes_and_fails_in_place_with_htmx(auth_client, capital):
    passed = auth_client.post(try_url(capital), {"answer": "Paris"}, **HX).content.decode()
    assert "<html" not in passed and 'id="try-result"' in passed
    assert outcomes(passed) == ["Passed"]
    assert "Weighted total: <strong>1.00</strong>" in passed and "<strong>100%</strong>" in passed
    failed = auth_client.post(try_url(capital), {"answer": "paris"}, **HX).content.decode()
    assert outcomes(failed) == ["Failed"]
    assert "differs from the expected answer only in case" in failed
    assert "Weighted total: <strong>0.00</strong>" in failed


def test_without_javascript_the_form_posts_to_a_result_page(auth_client, capital):
    response = auth_client.post(try_url(capital), {"answer": "Paris\r\n"})
    page = response.content.decode()
    assert response.status_code == 200 and "<html" in page
    assert "<h1>Try an answer: capital</h1>" in page
    # The line break a browser sends as CRLF is the agent's LF: "Paris\n" is not "Paris".
    assert outcomes(page) == ["Failed"]
    # The answer, kept in the form to change and try again.
    assert re.search(r'<textarea name="answer"[^>]*>\nParis', page)


def test_an_empty_answer_is_asked_for(auth_client, capital):
    page = auth_client.post(try_url(capital), {"answer": ""}, **HX).content.decode()
    assert "Paste an answer to try." in page and outcomes(page) == []


def test_a_judge_grades_with_its_raw_reply_one_click_away_and_the_call_kept(
    auth_client, essay, site_judge, user
):
    data = {"answer": "A correct summary.", "criterion": "good"}
    page = auth_client.post(try_url(essay), data, **HX).content.decode()
    # One criterion alone: the Python check is not listed, nor run.
    assert outcomes(page) == ["Passed"] and "Is 150 words" not in page
    assert "The answer is correct." in page
    assert "<summary>Raw reply, tokens and latency</summary>" in page
    assert "100 in, 20 out" in page and "chatcmpl-local" in page
    call = JudgeCall.objects.get()
    assert (call.created_by, call.dataset, call.model) == (user, essay.dataset, "local-judge")
    again = auth_client.post(try_url(essay), data, **HX).content.decode()
    assert "from the cache" in again
    assert len(site_judge.requests) == 1  # the same answer again cost nothing


def test_show_the_prompt_shows_the_exact_messages_and_calls_nothing(auth_client, essay, site_judge):
    data = {"answer": "<script>alert(1)</script> {{criterion}}", "show": "prompt"}
    page = auth_client.post(try_url(essay), data, **HX).content.decode()
    assert site_judge.requests == [] and JudgeCall.objects.count() == 0
    assert "What the judges would be sent" in page
    assert "You are a strict grader" in page  # the system message
    assert "Is a good summary\n```answer\n" in page  # the criterion, then the fenced answer
    assert "&lt;script&gt;alert(1)&lt;/script&gt; {{criterion}}" in page  # escaped, literal
    assert "<script>alert" not in page


def test_without_a_judge_judge_criteria_are_skipped_and_the_page_says_how(auth_client, essay):
    python_checks(False)
    page = auth_client.post(try_url(essay), {"answer": "A summary."}, **HX).content.decode()
    assert outcomes(page) == ["Skipped", "Skipped"]
    assert "set <code>JUDGE_BASE_URL</code>" in page and "<code>JUDGE_MODEL</code>" in page
    assert "<code>JUDGE_API_KEY</code>" in page
    assert "An administrator turns them on in the admin" in page
    assert "Weighted total: <strong>no score</strong>" in page and "<strong>0%</strong>" in page


def test_a_python_check_counts_words_in_the_sandbox(auth_client, essay):
    python_checks(True)
    for words, badge in ((149, "Passed"), (151, "Failed")):
        data = {"answer": " ".join(["word"] * words), "criterion": "length"}
        page = auth_client.post(try_url(essay), data, **HX).content.decode()
        assert outcomes(page) == [badge]
        assert f"{words} words" in page


def test_a_crashing_check_is_an_error_with_its_traceback_not_a_zero(auth_client, essay):
    python_checks(True)
    Criterion.objects.filter(criterion_id="length").update(
        verifier={"kind": "code_verifier", "code": "def verify(task, output):\n    1 / 0\n"}
    )
    data = {"answer": "Some words.", "criterion": "length"}
    page = auth_client.post(try_url(essay), data, **HX).content.decode()
    assert outcomes(page) == ["Error"]
    assert "The Python check raised an exception." in page and "ZeroDivisionError" in page
    assert "Weighted total: <strong>no score</strong>" in page


@pytest.fixture
def with_workers(settings, tmp_path):
    """A broker and workers: Celery not eager, and a cache every process shares."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "cache"),
        }
    }


def test_a_try_a_worker_grades_is_polled_until_done(
    auth_client, essay, site_judge, with_workers, monkeypatch
):
    handed = []
    # The worker is busy: the message waits on the queue until the test hands it over.
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: handed.append(args))
    response = auth_client.post(try_url(essay), {"answer": "A correct one.", "criterion": "good"})
    (key,) = handed[0]
    status = reverse("datasets_app:try_status", args=[essay.dataset_id, key])
    assert response.status_code == 302 and response.url == status
    waiting = auth_client.get(status).content.decode()
    assert "Grading…" in waiting and '<meta http-equiv="refresh" content="2">' in waiting
    polled = auth_client.get(status, **HX).content.decode()
    assert f'hx-get="{status}"' in polled and 'hx-trigger="load delay:1s"' in polled
    tasks.try_answer(key)  # the worker
    done = auth_client.get(status, **HX).content.decode()
    assert outcomes(done) == ["Passed"] and "hx-get" not in done


def test_with_celery_eager_a_judge_try_is_graded_in_the_request(
    auth_client, essay, site_judge, monkeypatch
):
    monkeypatch.setattr(tasks, "enqueue", lambda task, *args: pytest.fail("sent to a worker"))
    data = {"answer": "A correct one.", "criterion": "good"}
    page = auth_client.post(try_url(essay), data).content.decode()
    assert outcomes(page) == ["Passed"]


def test_a_try_is_the_persons_own_and_its_dataset_is_theirs_to_see(auth_client, other_user, essay):
    other = Client()
    other.force_login(other_user)
    assert other.post(try_url(essay), {"answer": "x"}).status_code == 404
    # Someone else's try of this task (they had access once): not shown to this person.
    tries.TryState(
        key="k1", user_id=other_user.pk, dataset_id=essay.dataset_id, task_pk=essay.pk, answer="x"
    ).save()
    page = auth_client.get(reverse("datasets_app:try_status", args=[essay.dataset_id, "k1"]))
    assert tries.TRY_GONE in page.content.decode()


def test_someone_it_is_shared_with_tries_it_and_no_other_dataset_lends_its_task(
    other_user, make_dataset, capital
):
    shared = Client()
    shared.force_login(other_user)
    assert shared.post(try_url(capital), {"answer": "Paris"}).status_code == 404
    capital.dataset.shared_with.add(other_user)
    page = shared.post(try_url(capital), {"answer": "Paris"}, **HX).content.decode()
    assert outcomes(page) == ["Passed"]
    # Their own dataset's number with this task's: not this task.
    theirs = make_dataset(owner=other_user, name="Theirs")
    url = reverse("datasets_app:task_try", args=[theirs.pk, capital.pk])
    assert shared.post(url, {"answer": "Paris"}).status_code == 404


def test_a_try_needs_the_csrf_token(user, capital):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(try_url(capital), {"answer": "Paris"}).status_code == 403


def test_tries_are_rate_limited(auth_client, capital, settings):
    settings.RATELIMIT_TRIES = "2/m"
    for _ in range(2):
        assert auth_client.post(try_url(capital), {"answer": "Paris"}, **HX).status_code == 200
    refused = auth_client.post(try_url(capital), {"answer": "Paris"}, **HX)
    assert refused.status_code == 429 and refused["Retry-After"]
    assert guards.TOO_MANY_TRIES in refused.content.decode()


def test_a_criterion_for_every_task_is_tried_against_a_chosen_task(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)
    Criterion.objects.create(
        dataset=dataset, criterion_id="short", text="Is one word", verifier=LENGTH
    )
    python_checks(False)
    settings_page = auth_client.get(reverse("datasets_app:dataset_settings", args=[dataset.pk]))
    page = settings_page.content.decode()
    assert "Try a criterion for every task" in page and '<option value="short">' in page
    second = dataset.tasks.get(task_id="t2")
    url = reverse("datasets_app:dataset_try", args=[dataset.pk])
    data = {"task": second.pk, "answer": "Answer 2", "criterion": "short"}
    result = auth_client.post(url, data, **HX).content.decode()
    assert "How it grades: t2" in result
    assert outcomes(result) == ["Skipped"] and "Is one word" in result
    assert "Python checks are off" in result


def test_the_edit_page_has_the_try_beside_the_criteria(auth_client, essay):
    page = auth_client.get(reverse("datasets_app:task_edit", args=[essay.dataset_id, essay.pk]))
    assert "with your edits, before you save them" in page.content.decode()


def test_an_administrator_is_sent_to_the_switch_and_sees_the_calls(
    client, admin_user, essay, site_judge
):
    client.force_login(admin_user)
    essay.dataset.shared_with.add(admin_user)
    python_checks(False)
    page = client.post(try_url(essay), {"answer": "A correct one."}, **HX).content.decode()
    switch = reverse("admin:datasets_app_sitesettings_change", args=[1])
    assert f'<a href="{switch}">Open the site settings</a>' in page
    calls = client.get(reverse("admin:datasets_app_judgecall_changelist")).content.decode()
    assert "local-judge" in calls and "Writing" in calls


def edit_page(client, task: Task) -> str:
    return client.get(
        reverse("datasets_app:task_edit", args=[task.dataset_id, task.pk])
    ).content.decode()


def test_on_the_edit_page_the_edits_are_tried_before_they_are_saved(auth_client, capital):
    page = edit_page(auth_client, capital)
    tried = reverse("datasets_app:task_try_edits", args=[capital.dataset_id, capital.pk])
    assert f'formaction="{tried}" hx-post="{tried}"' in page
    data = form_data(page, having="try-answer") | {"expected_text": "Lyon", "try-answer": "Lyon"}
    result = auth_client.post(tried, data | {"show": "outcome"}, **HX).content.decode()
    assert outcomes(result) == ["Passed"]
    # Without JavaScript: the edit page again, its edits kept, with the outcome.
    page = auth_client.post(tried, data | {"show": "outcome"}).content.decode()
    assert "<h1>Edit capital</h1>" in page and ">\nLyon</textarea>" in page
    assert outcomes(page) == ["Passed"]
    capital.refresh_from_db()
    assert capital.expected_text == "Paris"  # nothing saved


def test_edits_with_problems_are_not_tried(auth_client, capital):
    page = edit_page(auth_client, capital)
    tried = reverse("datasets_app:task_try_edits", args=[capital.dataset_id, capital.pk])
    data = form_data(page, having="try-answer") | {"prompt": "", "try-answer": "Paris"}
    result = auth_client.post(tried, data, **HX).content.decode()
    assert html.escape(views.EDITS_HAVE_PROBLEMS) in result and outcomes(result) == []


def test_saving_the_edit_page_is_not_stopped_by_the_empty_answer(auth_client, capital):
    page = edit_page(auth_client, capital)
    assert 'name="try-answer"' in page and 'name="try-answer" required' not in page
    response = auth_client.post(
        reverse("datasets_app:task_edit", args=[capital.dataset_id, capital.pk]),
        form_data(page, having="try-answer") | {"expected_text": "Lyon"},
    )
    assert response.status_code == 302
    capital.refresh_from_db()
    assert capital.expected_text == "Lyon"


def test_a_judge_that_fails_is_an_error_with_why_never_a_zero(
    auth_client,
    essay,
    judge_server,  # noqa: F811 - the fixture imported above
    settings,
):
    settings.JUDGE = JudgeConfig(base_url=judge_server.base_url, model="local-judge", max_retries=0)
    judge_server.fail(Fault(status=500))
    data = {"answer": "A correct summary.", "criterion": "good"}
    page = auth_client.post(try_url(essay), data, **HX).content.decode()
    assert outcomes(page) == ["Error"]
    assert "The judge could not be reached." in page and "HTTP 500" in page
    assert "Weighted total: <strong>no score</strong>" in page
    assert "judge_unreachable: HTTP 500" in JudgeCall.objects.get().error
