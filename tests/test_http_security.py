"""What reaches a browser over HTTP (issue 15): headers on every answer, download names,
links to other sites, who may see others' datasets, login throttling, bodies, password reset."""

from __future__ import annotations

import stat

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from contextevals.settings import local_secret_key
from datasets_app.importing.columns import neutralize_formula, unneutralize_formula
from datasets_app.models import TaskFile, Upload
from tests.conftest import FILES

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
EXPECTED = (FILES / "json" / "expected_answers_template.json").read_bytes()


# --- Headers on every answer ----------------------------------------------------------------


def _assert_framing_and_csp(response) -> None:
    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_the_bad_host_answer_carries_csp_and_frame_options(client, settings):
    settings.DEBUG = False
    response = client.get("/accounts/login/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    _assert_framing_and_csp(response)


def test_the_redirect_to_https_carries_csp_and_frame_options(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    response = client.get("/accounts/login/")
    assert response.status_code == 301
    assert response["Location"].startswith("https://")
    _assert_framing_and_csp(response)


def test_the_local_secret_key_file_is_readable_by_its_owner_only(tmp_path):
    path = tmp_path / ".local-secret-key"
    key = local_secret_key(path)
    assert len(key) >= 50
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # A file an older version left world-readable is closed, and keeps its key.
    path.chmod(0o644)
    assert local_secret_key(path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "cell",
    [" =1+1", "  +SUM(A1)", "\n=HYPERLINK(1)", "\n-1+2", " \n@SUM(A1)", "＝1+1", "＋1", " ＠A1"],
)
def test_cells_that_a_spreadsheet_would_run_after_blanks_or_full_width_are_guarded(cell):
    assert neutralize_formula(cell) == "'" + cell
    assert unneutralize_formula(neutralize_formula(cell)) == cell


@pytest.mark.parametrize("cell", [" plain", "\nline", "a=b", "'quoted", " 1-2"])
def test_other_cells_are_left_as_typed(cell):
    assert neutralize_formula(cell) == cell
    assert unneutralize_formula(cell) == cell


# --- Downloads and links --------------------------------------------------------------------


def test_an_upload_name_cannot_add_to_the_problems_download_header(auth_client, make_dataset):
    dataset = make_dataset()
    auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("x.json", b'{"tasks": [{"prompt": 1}]}')},
        **HTMX,
    )
    # The name as a hand-made multipart body can deliver it (a test client's encoder would
    # let Django read the smuggled filename* instead).
    Upload.objects.update(original_name="x\"; filename*=UTF-8''evil.html;\r\nX-A: b.json")
    upload = Upload.objects.get()
    response = auth_client.get(reverse("datasets_app:upload_problems", args=[upload.key]))
    assert response.status_code == 200
    header = response["Content-Disposition"]
    # One parameter only: the whole name, percent-encoded, with nothing smuggled after it.
    assert header.startswith("attachment; filename*=utf-8''x%22%3B%20filename%2A%3DUTF-8")
    assert header.count(";") == 1
    assert header.endswith("-problems.csv")


def test_a_plain_upload_name_stays_readable_in_the_download(auth_client, make_dataset):
    dataset = make_dataset()
    auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("my tasks.json", b'{"tasks": [{"prompt": 1}]}')},
        **HTMX,
    )
    upload = Upload.objects.get()
    response = auth_client.get(reverse("datasets_app:upload_problems", args=[upload.key]))
    assert response["Content-Disposition"] == 'attachment; filename="my tasks-problems.csv"'


def test_a_linked_file_is_a_link_on_the_page_never_a_redirect_of_ours(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    link = TaskFile.objects.create(
        task=task, role="input", name="report.pdf", url="https://elsewhere.example/report.pdf"
    )
    download = reverse("datasets_app:task_file_download", args=[dataset.pk, task.pk, link.pk])
    assert auth_client.get(download).status_code == 404
    page = auth_client.get(task.get_absolute_url()).content.decode()
    assert (
        '<a href="https://elsewhere.example/report.pdf" rel="noopener noreferrer nofollow">'
        "report.pdf</a>"
    ) in page
    assert download not in page


def test_only_an_https_link_is_a_link(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    task = dataset.tasks.get()
    TaskFile.objects.create(task=task, role="input", name="a.pdf", url="http://plain.example/a")
    page = auth_client.get(task.get_absolute_url()).content.decode()
    assert "plain.example" not in page
    assert "a.pdf" in page


# --- Who sees others' datasets --------------------------------------------------------------


@pytest.fixture
def staff_user(db, django_user_model):
    return django_user_model.objects.create_user(
        username="sam", password="pw-sam-12345", is_staff=True
    )


def test_staff_status_alone_opens_no_one_elses_dataset(client, staff_user, make_dataset):
    dataset = make_dataset(tasks=1)
    client.force_login(staff_user)
    assert client.get(dataset.get_absolute_url()).status_code == 404
    assert client.post(reverse("datasets_app:version_save", args=[dataset.pk])).status_code == 404
    sharing = reverse("datasets_app:dataset_sharing", args=[dataset.pk])
    assert client.post(sharing, {"username": "sam"}).status_code == 404
    assert "Finance QA" not in client.get(reverse("datasets_app:dataset_list")).content.decode()
    assert not dataset.shared_with.exists()
    assert not dataset.versions.exists()
    # Nor does the admin show it to them.
    assert client.get(reverse("admin:datasets_app_dataset_changelist")).status_code == 403


def test_the_admins_change_permission_opens_every_dataset(client, staff_user, make_dataset):
    from django.contrib.auth.models import Permission

    dataset = make_dataset(tasks=1)
    staff_user.user_permissions.add(Permission.objects.get(codename="change_dataset"))
    client.force_login(staff_user)
    assert client.get(dataset.get_absolute_url()).status_code == 200
    assert client.get(reverse("admin:datasets_app_dataset_changelist")).status_code == 200
    sharing = reverse("datasets_app:dataset_sharing", args=[dataset.pk])
    client.post(sharing, {"username": "sam"})
    assert dataset.shared_with.filter(username="sam").exists()


# --- Bodies ---------------------------------------------------------------------------------


class _Unreadable:
    """A request body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the body was read")

    readline = read


def _post_declaring(client, url: str, size: int | str, **extra):
    """POST a multipart body that says it has `size` bytes and must not be read."""
    return client.generic(
        "POST",
        url,
        b"",
        content_type="multipart/form-data; boundary=xyz",
        CONTENT_LENGTH=str(size),
        **{"wsgi.input": _Unreadable(), **extra},
    )


def test_a_large_post_to_the_login_page_is_refused_before_it_is_read(client):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    response = _post_declaring(client, "/accounts/login/", 600 * 1024 * 1024)
    assert response.status_code == 413
    assert "larger than 10.0\xa0MB, the most a form here takes" in response.content.decode()


def test_a_form_body_over_the_small_cap_is_refused_for_a_person_too(auth_client, make_dataset):
    dataset = make_dataset()
    url = reverse("datasets_app:dataset_settings", args=[dataset.pk])
    assert _post_declaring(auth_client, url, 11 * 1024 * 1024).status_code == 413


def test_an_upload_over_the_limit_gets_the_dialogs_message_before_csrf_reads_it(
    user, make_dataset, settings
):
    from django.test import Client

    settings.MAX_UPLOAD_BYTES = 1024 * 1024
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    dataset = make_dataset()
    url = reverse("datasets_app:import_check", args=[dataset.pk])
    response = _post_declaring(client, url, 600 * 1024 * 1024, **HTMX)
    assert response.status_code == 200
    assert "This file is larger than 1 MiB, the most one import takes." in (
        response.content.decode()
    )
    assert not Upload.objects.exists()
    # Someone not logged in gets a plain refusal, not the dialog; and as the page would only
    # send them to log in, a body past the form cap is not read for them either (CSRF would
    # read it to look for its token).
    client.logout()
    assert _post_declaring(client, url, 600 * 1024 * 1024).status_code == 413
    assert _post_declaring(client, url, 20 * 1024 * 1024).status_code == 413


def test_an_upload_within_the_limit_still_passes_the_small_cap(auth_client, make_dataset):
    dataset = make_dataset()
    big = b'{"tasks": [{"prompt": "p", "expected": "y"}]}' + b" " * (11 * 1024 * 1024)
    response = auth_client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile("big.json", big)},
        **HTMX,
    )
    assert response.status_code == 200
    assert Upload.objects.exists()


def test_a_length_that_is_no_number_is_a_400(client):
    response = _post_declaring(client, "/accounts/login/", "lots")
    assert response.status_code == 400


# --- Login throttling -----------------------------------------------------------------------


@pytest.mark.parametrize("login_url", ["/accounts/login/", "/admin/login/"])
def test_ten_wrong_passwords_pause_logging_in_from_that_address(client, admin_user, login_url):
    wrong = {"username": "root", "password": "not-it"}
    for _ in range(9):
        assert client.post(login_url, wrong).status_code == 200  # the form, with its error
    locked = client.post(login_url, wrong)
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Logging in is paused" in page
    assert "There have been 10 failed logins from your network" in page
    assert "paused for 15 minutes" in page
    # Even the right password waits now ...
    right = {"username": "root", "password": "pw-root-12345"}
    assert client.post(login_url, right).status_code == 429
    # ... from that address only; another logs in, and other user names count there too.
    elsewhere = client.post(login_url, right, REMOTE_ADDR="10.0.0.9")
    assert elsewhere.status_code == 302


def test_guessing_at_many_user_names_counts_for_the_address(client, user):
    for index in range(10):
        client.post("/accounts/login/", {"username": f"user{index}", "password": "x"})
    response = client.post("/accounts/login/", {"username": "ada", "password": "pw-ada-12345"})
    assert response.status_code == 429


def test_a_forwarded_for_header_is_ignored_without_a_trusted_proxy(client, user):
    for index in range(10):
        client.post(
            "/accounts/login/",
            {"username": "ada", "password": "x"},
            HTTP_X_FORWARDED_FOR=f"10.1.1.{index}",
        )
    assert client.post("/accounts/login/", {"username": "ada", "password": "x"}).status_code == 429


def test_behind_a_trusted_proxy_the_address_it_saw_counts(client, user, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    for _ in range(10):
        client.post(
            "/accounts/login/",
            {"username": "ada", "password": "x"},
            HTTP_X_FORWARDED_FOR="spoofed, 203.0.113.7",
        )
    right = {"username": "ada", "password": "pw-ada-12345"}
    seen = client.post("/accounts/login/", right, HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert seen.status_code == 429
    other = client.post("/accounts/login/", right, HTTP_X_FORWARDED_FOR="203.0.113.8")
    assert other.status_code == 302


def test_a_successful_login_does_not_clear_the_count(client, user, other_user):
    # Else Bob could log in between guesses at Ada's password, and guess without end.
    for _ in range(5):
        client.post("/accounts/login/", {"username": "ada", "password": "x"})
    bob = {"username": "bob", "password": "pw-bob-12345"}
    assert client.post("/accounts/login/", bob).status_code == 302
    client.logout()
    for _ in range(4):
        assert (
            client.post("/accounts/login/", {"username": "ada", "password": "x"}).status_code == 200
        )
    assert client.post("/accounts/login/", {"username": "ada", "password": "x"}).status_code == 429


# --- Password reset -------------------------------------------------------------------------


def test_without_email_there_is_no_password_reset_to_offer(client, password_reset):
    password_reset(False)
    assert client.get("/accounts/password_reset/").status_code == 404
    assert "Forgotten your password?" not in client.get("/accounts/login/").content.decode()


def test_with_email_configured_the_reset_link_is_mailed(client, user, password_reset):
    from django.core import mail

    user.email = "ada@example.com"
    user.save()
    password_reset(True)
    login_page = client.get("/accounts/login/").content.decode()
    assert '<a href="/accounts/password_reset/">Forgotten your password?</a>' in login_page
    assert client.get("/accounts/password_reset/").status_code == 200
    response = client.post("/accounts/password_reset/", {"email": "ada@example.com"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["ada@example.com"]
    assert "/accounts/reset/" in mail.outbox[0].body
