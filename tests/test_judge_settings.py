"""Each JUDGE_* setting the README lists, read from the environment as the site reads it
(`contextevals.settings.judge_config`) and tried against the real judge server on
127.0.0.1 through "Try an answer": what the server received, and what the person sees.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.urls import reverse

from contextevals.settings import judge_config
from datasets_app.models import Criterion, SiteSettings, Task
from tests.verifiers.conftest import judge_server  # noqa: F401 - the library's fixture
from tests.verifiers.judge_server import Fault

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
JUDGED = {"kind": "llm_judge", "outputType": "boolean", "instructions": "{{criterion}} {{output}}"}
README = Path(__file__).resolve().parents[1] / "README.md"


def readme_judge_settings() -> list[str]:
    text = README.read_text()
    section = text[text.index("### Judges") :]
    section = section[: section.index("\n## ")]
    return re.findall(r"^\| `(JUDGE_[A-Z_]+)` \|", section, re.MULTILINE)


# What each test below tries; a setting added to the README fails the first test until it
# is tried here too.
TRIED = {
    "JUDGE_BASE_URL",
    "JUDGE_API_KEY",
    "JUDGE_MODEL",
    "JUDGE_TIMEOUT_SECONDS",
    "JUDGE_CONCURRENCY",
    "JUDGE_TEMPERATURE",
    "JUDGE_SEED",
    "JUDGE_VERDICT_MODE",
    "JUDGE_MAX_RETRIES",
}


def test_every_judge_setting_the_readme_lists_is_tried_here():
    assert set(readme_judge_settings()) == TRIED


@pytest.fixture
def site(settings, judge_server):  # noqa: F811 - the fixture imported above
    """Configure the site's judge from environment variables, pointed at the server."""
    settings.RATELIMIT_TRIES = "1000/m"

    def configure(**env: str) -> None:
        base = {"JUDGE_BASE_URL": judge_server.base_url, "JUDGE_MODEL": "local-judge"}
        settings.JUDGE = judge_config({**base, **env})

    return configure


def judged_task(make_dataset, criteria: int = 1) -> Task:
    dataset = make_dataset(name="Judged")
    task = Task.objects.create(dataset=dataset, task_id="essay", prompt="Summarise it.")
    for position in range(criteria):
        Criterion.objects.create(
            dataset=dataset,
            task=task,
            criterion_id=f"c{position + 1}",
            text=f"Criterion {position + 1}",
            verifier=JUDGED,
            position=position,
        )
    return task


def try_it(client, task: Task, answer: str = "A correct summary.", **data: str) -> str:
    url = reverse("datasets_app:task_try", args=[task.dataset_id, task.pk])
    response = client.post(url, {"answer": answer, **data}, **HX)
    assert response.status_code == 200
    return response.content.decode()


def badges(page: str) -> list[str]:
    return re.findall(r'<span class="badge (?:passed|failed|scored|error|skipped)">([^<]+)', page)


def test_the_base_url_model_and_key_are_what_the_server_receives(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
):
    site(JUDGE_MODEL="judge-model-x", JUDGE_API_KEY="sk-test-123")
    page = try_it(auth_client, judged_task(make_dataset))

    assert badges(page) == ["Passed"]
    assert "<dt>Model</dt><dd><code>judge-model-x</code></dd>" in page
    assert judge_server.requests[0]["model"] == "judge-model-x"
    assert judge_server.headers[0]["authorization"] == "Bearer sk-test-123"
    assert "sk-test-123" not in page


def test_without_a_key_the_server_gets_a_placeholder(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
):
    site()
    assert badges(try_it(auth_client, judged_task(make_dataset))) == ["Passed"]
    assert judge_server.headers[0]["authorization"] == "Bearer not-needed"


def test_a_base_url_where_nothing_listens_is_unreachable(auth_client, make_dataset, site):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    site(JUDGE_BASE_URL=f"http://127.0.0.1:{port}/v1", JUDGE_MAX_RETRIES="0")
    page = try_it(auth_client, judged_task(make_dataset))

    assert badges(page) == ["Error"]
    assert "The judge could not be reached." in page
    assert "Weighted total: <strong>no score</strong>" in page


def test_a_reply_slower_than_the_timeout_is_given_up_on(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
):
    site(JUDGE_TIMEOUT_SECONDS="0.5", JUDGE_MAX_RETRIES="0")
    judge_server.fail(Fault(delay=3))
    started = time.monotonic()
    page = try_it(auth_client, judged_task(make_dataset))

    assert time.monotonic() - started < 2.5
    assert badges(page) == ["Error"]
    assert "The judge could not be reached." in page and "timed out" in page.lower()


@pytest.mark.parametrize("concurrency", [1, 3])
def test_concurrency_is_the_most_requests_the_server_sees_at_once(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
    concurrency,
):
    site(JUDGE_CONCURRENCY=str(concurrency))
    judge_server.latency = 0.2
    page = try_it(auth_client, judged_task(make_dataset, criteria=6))

    assert badges(page) == ["Passed"] * 6
    assert len(judge_server.requests) == 6
    assert judge_server.most_in_flight == concurrency


def test_temperature_is_sent_and_zero_by_default(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
):
    task = judged_task(make_dataset)
    site()
    try_it(auth_client, task)
    site(JUDGE_TEMPERATURE="0.7", JUDGE_SEED="42")
    try_it(auth_client, task)
    # Not deterministic at 0.7, even with a seed: the same try is asked again.
    again = try_it(auth_client, task)

    assert [r["temperature"] for r in judge_server.requests] == [0, 0.7, 0.7]
    assert "from the cache" not in again


def test_a_seed_is_sent_and_with_temperature_0_a_repeat_comes_from_the_cache(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
):
    task = judged_task(make_dataset)
    site()
    try_it(auth_client, task)
    try_it(auth_client, task)
    assert ["seed" in r for r in judge_server.requests] == [False, False]  # asked each time
    site(JUDGE_SEED="42")
    first = try_it(auth_client, task)
    again = try_it(auth_client, task)

    assert len(judge_server.requests) == 3 and judge_server.requests[2]["seed"] == 42
    assert "from the cache" not in first
    assert badges(again) == ["Passed"] and "from the cache" in again


@pytest.mark.parametrize("mode", ["json_schema", "tool_call", "json_in_reply"])
def test_the_verdict_mode_is_how_the_verdict_is_asked_for(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
    mode,
):
    site(JUDGE_VERDICT_MODE=mode)
    page = try_it(auth_client, judged_task(make_dataset))

    assert badges(page) == ["Passed"]
    sent = judge_server.requests[0]
    asked = {key for key in ("response_format", "tools", "tool_choice") if key in sent}
    if mode == "json_schema":
        assert asked == {"response_format"}
        assert sent["response_format"]["json_schema"]["strict"] is True
    elif mode == "tool_call":
        assert asked == {"tools", "tool_choice"}
    else:
        assert asked == set()
        assert "Reply with only one JSON object" in sent["messages"][-1]["content"]


@pytest.mark.parametrize("retries", [0, 2])
def test_max_retries_is_how_often_a_500_is_asked_again(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
    retries,
):
    site(JUDGE_MAX_RETRIES=str(retries))
    judge_server.fail(*[Fault(status=500)] * (retries + 1))
    page = try_it(auth_client, judged_task(make_dataset))

    assert len(judge_server.requests) == retries + 1
    assert badges(page) == ["Error"] and "HTTP 500" in page


# Looks for the judge's key everywhere a check might, and for the judge's server.
LOOKS_FOR_THE_KEY = """
from context_verifiers import Verdict

def verify(task, output):
    reached = []
    import os
    if any("KEY" in value for value in os.environ.values()):
        reached.append("its environment")
    for path in ("/proc/self/environ", "/proc/WEB/environ", "/proc/WEB/cmdline"):
        try:
            with open(path, "rb") as file:
                if b"KEY" in file.read():
                    reached.append(path)
        except OSError:
            pass
    try:
        import socket
        socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
        reached.append("the judge's server")
    except OSError:
        pass
    said = ", ".join(reached) or "nothing"
    return Verdict.boolean(passed=not reached, reasoning=f"reached: {said}")
"""


def test_the_key_is_never_reachable_from_a_python_check(
    auth_client,
    make_dataset,
    site,
    judge_server,  # noqa: F811
    monkeypatch,
):
    from context_verifiers.sandbox import sandbox_status

    if not sandbox_status()[0]:
        pytest.skip("the sandbox is unavailable here (its own tests say why)")
    key = "sk-judge-secret-4417"
    monkeypatch.setenv("JUDGE_API_KEY", key)  # in the web process's environment too
    site(JUDGE_API_KEY=key)
    SiteSettings.objects.update_or_create(pk=1, defaults={"python_checks_enabled": True})
    task = judged_task(make_dataset)
    port = judge_server.base_url.split(":")[2].split("/")[0]
    code = (
        LOOKS_FOR_THE_KEY.replace("KEY", key).replace("WEB", str(os.getpid())).replace("PORT", port)
    )
    Criterion.objects.create(
        dataset=task.dataset,
        task=task,
        criterion_id="snoop",
        text="Finds no key",
        verifier={"kind": "code_verifier", "code": code},
        position=1,
    )

    page = try_it(auth_client, task, criterion="snoop")

    assert badges(page) == ["Passed"]
    assert "reached: nothing" in page
    assert judge_server.requests == [] and judge_server.headers == []


def test_a_setting_that_cannot_be_read_stops_the_start_naming_it():
    env = {"PATH": "/usr/bin:/bin", "JUDGE_TIMEOUT_SECONDS": "soon"}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        capture_output=True,
        text=True,
        cwd=README.parent,
        env=env,
        timeout=60,
    )

    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "django.core.exceptions.ImproperlyConfigured: JUDGE_TIMEOUT_SECONDS: must be a "
        "number, not 'soon' (see the JUDGE_* settings in the README)"
    )
