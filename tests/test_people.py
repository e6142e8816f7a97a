"""The first hour (issue 27, item 10): an administrator adds people from the app or the
command line, without the admin site; the login page says where an account comes from."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from datasets_app.management.commands.serve import Command as Serve

pytestmark = pytest.mark.django_db
User = get_user_model()


def signs_in(username: str, password: str) -> bool:
    """Through the login page, as the person would."""
    client = Client()
    client.post(reverse("login"), {"username": username, "password": password})
    return client.get("/").status_code == 200


def test_an_administrator_adds_a_person_who_can_then_sign_in(admin_user):
    admin = Client()
    admin.force_login(admin_user)
    url = reverse("datasets_app:people")

    page = admin.post(url, {"username": "grace", "email": "grace@example.com"}).content.decode()

    assert "Added grace." in page
    password = re.search(r'id="new-password" type="text" readonly value="([^"]+)"', page)[1]
    assert signs_in("grace", password)
    assert "<td>grace@example.com</td>" in page
    again = admin.get(url).content.decode()
    assert password not in again, "the password is shown once"


def test_a_taken_user_name_is_a_message(admin_user, user):
    admin = Client()
    admin.force_login(admin_user)
    page = admin.post(reverse("datasets_app:people"), {"username": user.username}).content
    assert "A user with that username already exists." in page.decode()
    assert User.objects.filter(username=user.username).count() == 1


def test_only_administrators_see_the_people_page(auth_client):
    assert auth_client.get(reverse("datasets_app:people")).status_code == 403
    assert auth_client.post(reverse("datasets_app:people"), {"username": "x"}).status_code == 403
    assert not User.objects.filter(username="x").exists()
    assert "People</a>" not in auth_client.get("/").content.decode()


def test_add_person_prints_the_password_once(db):
    out = StringIO()
    call_command("add_person", "linus", "--staff", stdout=out)
    password = re.search(r"password:\s+(\S+)", out.getvalue())[1]
    assert signs_in("linus", password)
    assert User.objects.get(username="linus").is_staff
    with pytest.raises(CommandError, match="already exists"):
        call_command("add_person", "linus", stdout=StringIO())


def test_the_login_page_says_where_an_account_comes_from(client):
    page = client.get(reverse("login")).content.decode()
    assert "ask one of its administrators to add you" in page


def test_the_first_administrator_is_printed_framed(db):
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert lines[0] == lines[-1] == "=" * 64
    assert any(line.strip().startswith("password:") for line in lines)


def test_make_run_prints_the_administrator_last_below_the_servers_lines(db):
    out = StringIO()
    serve = Serve(stdout=out)
    serve.addr, serve.protocol, serve._raw_ipv6 = "127.0.0.1", "http", False
    serve.on_bind(8123)
    text = out.getvalue()
    assert text.index("Starting development server") < text.index("Your administrator")
    lines = text.strip().splitlines()
    assert lines[-1] == "=" * 64
    assert "  Sign in at http://127.0.0.1:8123/" in lines
    password = re.search(r"password:\s+(\S+)", text)[1]
    assert signs_in("admin", password)

    again = StringIO()
    serve = Serve(stdout=again)
    serve.addr, serve.protocol, serve._raw_ipv6 = "127.0.0.1", "http", False
    serve.on_bind(8123)
    assert again.getvalue().strip().splitlines()[-1] == "Context Evals is at http://127.0.0.1:8123/"
    assert password not in again.getvalue()


def test_an_invite_link_lets_the_person_choose_their_password_once(admin_user):
    admin = Client()
    admin.force_login(admin_user)
    page = admin.post(
        reverse("datasets_app:people"), {"username": "ada", "how": "invite"}
    ).content.decode()
    assert "Invited ada." in page and "password:" not in page
    link = re.search(r'id="invite-link" type="text" readonly value="([^"]+)"', page)[1]
    assert not User.objects.get(username="ada").has_usable_password()

    guest = Client()
    form = guest.get(link, follow=True)
    assert "You were invited to this Context Evals as" in form.content.decode()
    chosen = {"new_password1": "ada-chose-this-9", "new_password2": "ada-chose-this-9"}
    response = guest.post(form.redirect_chain[-1][0], chosen, follow=True)
    assert "Welcome, ada: you are signed in." in response.content.decode()
    assert signs_in("ada", "ada-chose-this-9")
    again = Client().get(link, follow=True).content.decode()
    assert "This invite link has already been used" in again


def test_add_person_invite_prints_a_link_the_person_chooses_a_password_with(db):
    out = StringIO()
    call_command("add_person", "hedy", "--invite", "--url", "http://evals.example.com/", stdout=out)
    printed = out.getvalue()
    assert "Invited hedy." in printed and "password:" not in printed
    assert "within 3 days" in printed
    link = re.search(r"invite link: (\S+)", printed)[1]
    assert link.startswith("http://evals.example.com/")
    assert not User.objects.get(username="hedy").has_usable_password()

    guest = Client()
    form = guest.get(link.removeprefix("http://evals.example.com"), follow=True)
    assert "You were invited to this Context Evals as" in form.content.decode()
    chosen = {"new_password1": "hedy-chose-this-9", "new_password2": "hedy-chose-this-9"}
    response = guest.post(form.redirect_chain[-1][0], chosen, follow=True)
    assert "Welcome, hedy: you are signed in." in response.content.decode()
    assert signs_in("hedy", "hedy-chose-this-9")
