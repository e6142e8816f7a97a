"""The admin's "Python checks" switch and `manage.py check_verifier_sandbox`: the switch turns
on only while the last sandbox self-test passed, and the admin says why otherwise."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from context_verifiers.sandbox import SelfTestReport, sandbox_status
from context_verifiers.sandbox.selftest import ProbeResult
from datasets_app.models import SiteSettings
from datasets_app.services import sandbox

pytestmark = pytest.mark.django_db
URL = reverse("admin:datasets_app_sitesettings_change", args=[1])
LEAKED = ProbeResult("network", "connect to 127.0.0.1", "refused", "escaped", False, "connected")
HELD = ProbeResult("fork", "os.fork()", "refused", "refused", True, "PermissionError")
LENGTH = {
    "kind": "code_verifier",
    "code": (
        "from context_verifiers import Verdict\n\n"
        "def verify(task, output):\n"
        "    return Verdict.boolean(passed=len(output.text.split()) <= 150, reasoning='')\n"
    ),
}


@pytest.fixture
def admin_client_(client, admin_user):
    client.force_login(admin_user)
    return client


def turn_on(client):
    return client.post(URL, {"python_checks_enabled": "on"})


def test_the_switch_stays_off_until_a_self_test_has_run(admin_client_):
    SiteSettings.load()
    page = turn_on(admin_client_).content.decode()
    assert SiteSettings.load().python_checks_enabled is False
    assert "has not run yet: run `manage.py check_verifier_sandbox`" in page
    assert "Can Python checks be on?" in admin_client_.get(URL).content.decode()


def test_the_switch_stays_off_after_a_failed_self_test_and_says_which_probe(admin_client_):
    sandbox.sandbox_self_test_record(report=SelfTestReport(passed=False, probes=(HELD, LEAKED)))
    page = turn_on(admin_client_).content.decode()
    assert SiteSettings.load().python_checks_enabled is False
    assert "the one on " in page
    assert "NOT CONTAINED  network: connect to 127.0.0.1 -&gt; escaped (connected)" in page


def test_the_switch_turns_on_after_a_passed_self_test(admin_client_):
    sandbox.sandbox_self_test_record(report=SelfTestReport(passed=True, probes=(HELD,)))
    turn_on(admin_client_)
    assert SiteSettings.load().python_checks_enabled is True
    page = admin_client_.get(URL).content.decode()
    assert "Yes: the last sandbox self-test passed." in page
    assert "1 of 1 hostile programs contained" in page


def test_a_failed_self_test_turns_python_checks_off():
    sandbox.sandbox_self_test_record(report=SelfTestReport(passed=True, probes=(HELD,)))
    SiteSettings.objects.filter(pk=1).update(python_checks_enabled=True)
    sandbox.sandbox_self_test_record(report=SelfTestReport(passed=False, probes=(LEAKED,)))
    settings = SiteSettings.load()
    assert settings.python_checks_enabled is False
    assert sandbox.python_checks_refusal(settings=settings).startswith(
        "Python checks can be turned on only while the last sandbox self-test passed"
    )


@pytest.mark.skipif(not sandbox_status()[0], reason="the sandbox is unavailable here")
def test_the_command_prints_each_probe_exits_0_and_records_the_pass(capsys):
    call_command("check_verifier_sandbox")
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1].startswith("passed: 20 of 20 hostile programs contained in ")
    assert any(line.strip().startswith("contained  kill the parent: ") for line in printed)
    settings = SiteSettings.load()
    assert settings.sandbox_self_test_passed is True
    assert settings.sandbox_self_test_report.splitlines() == printed


@pytest.mark.skipif(sandbox_status()[0], reason="the sandbox is available here")
def test_the_command_exits_1_where_the_sandbox_is_unavailable(capsys):
    with pytest.raises(SystemExit) as exit_:
        call_command("check_verifier_sandbox")
    assert exit_.value.code == 1
    assert capsys.readouterr().out.startswith("sandbox unavailable: ")


@pytest.mark.skipif(not sandbox_status()[0], reason="the sandbox is unavailable here")
def test_the_verifiers_queue_task_runs_the_check_in_the_same_sandbox():
    from datasets_app.verifier_tasks import QUEUE, verifier_code_check

    code = "from context_verifiers import Verdict\n\ndef verify(task, output):\n"
    code += "    return Verdict.score(0.5, reasoning=output.text)\n"
    task = {"id": "t", "name": "T", "prompt": "P"}
    result = verifier_code_check.delay(code, task, {"text": "half"}).get()
    assert result["verdict"] == {"kind": "score", "value": 0.5, "reasoning": "half"}
    assert result["code"] is None
    assert verifier_code_check.queue == QUEUE == "verifiers"


@pytest.mark.skipif(not sandbox_status()[0], reason="the sandbox is unavailable here")
def test_the_switch_turned_off_in_the_admin_holds_for_the_very_next_try(
    admin_user, auth_client, make_dataset
):
    # Tries read the switch from the cache (SiteSettings.load); the admin's save forgets it.
    admin = Client()
    admin.force_login(admin_user)
    sandbox.sandbox_self_test_record(report=SelfTestReport(passed=True, probes=(HELD,)))
    turn_on(admin)
    dataset = make_dataset()
    task = dataset.tasks.create(task_id="essay", prompt="Summarise the report.")
    task.criteria.create(dataset=dataset, criterion_id="length", text="Short", verifier=LENGTH)
    url = reverse("datasets_app:task_try", args=[dataset.pk, task.pk])

    def badge() -> str:
        page = auth_client.post(url, {"answer": "three words here"}, HTTP_HX_REQUEST="true")
        return page.content.decode().split('<span class="badge ', 1)[1].split('"', 1)[0]

    assert badge() == "passed"
    admin.post(URL, {})  # the checkbox unticked
    assert badge() == "skipped"
