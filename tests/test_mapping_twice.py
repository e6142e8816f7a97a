"""A field mapped twice is a problem naming both sources, in the import dialog's mapping
step, in `--map` and in the API's `map`; what these echo back is cut short."""

from __future__ import annotations

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from datasets_app import forms
from datasets_app.importing import shapes
from datasets_app.models import Upload
from datasets_app.services import tokens
from tests.api.conftest import bearer, error_of
from tests.conftest import FILES
from tests.test_import_mapping_views import TRIAGE, check

TRIAGE_PATH = FILES / "real" / "ragas" / "support_triage.csv"
LONG = "q" * 5000


@pytest.fixture
def api(user):
    return bearer(tokens.api_token_create(user=user, name="CI")[1])


def test_map_options_refuse_a_field_mapped_twice_naming_both_sources():
    _mapping, errors = shapes.parse_map_options(["prompt=text", "expected=labels", "prompt=id"])
    assert errors == [shapes.MAP_FIELD_TWICE.format(key="prompt", first="text", second="id")]
    assert "prompt twice, to text and to id" in errors[0]
    # The same source twice is no conflict.
    assert shapes.parse_map_options(["prompt=text", "prompt=text"]) == ({"prompt": "text"}, [])


def test_map_options_echo_long_values_cut_short():
    _mapping, errors = shapes.parse_map_options([f"prompt={LONG}", f"prompt={LONG}x", LONG])
    assert errors and all(len(error) < 200 for error in errors)
    assert all("…" in error for error in errors)


def test_the_command_refuses_a_field_mapped_twice():
    with pytest.raises(CommandError, match="maps prompt twice, to text and to id"):
        call_command(
            "check_dataset_file", str(TRIAGE_PATH), "--map", "prompt=text", "--map", "prompt=id"
        )


@pytest.mark.django_db
def test_the_api_refuses_a_field_mapped_twice_naming_both(api):
    data = {"file": SimpleUploadedFile("t.csv", TRIAGE), "map": ["prompt=text", "prompt=id"]}
    response = api.post("/api/v1/check", data)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_map"
    assert error["details"] == [
        {
            "field": "form.map",
            "message": shapes.MAP_FIELD_TWICE.format(key="prompt", first="text", second="id"),
        }
    ]


@pytest.mark.django_db
def test_the_api_echoes_an_unknown_long_source_cut_short(api):
    data = {
        "file": SimpleUploadedFile("t.csv", TRIAGE),
        "map": [f"prompt={LONG}", "expected=labels"],
    }
    body = api.post("/api/v1/check", data).json()
    assert body["ok"] is False
    message = body["problems"][0]["message"]
    assert LONG not in message and "qqqq…" in message and len(message) < 300


def map_as_posted(client, dataset, **fields) -> tuple[Upload, str]:
    """Check the triage file in the dialog, then post its mapping step with `fields`."""
    check(client, dataset, "support_triage.csv", TRIAGE)
    upload = Upload.objects.get()
    url = reverse("datasets_app:import_map", args=[dataset.pk, upload.key])
    page = client.post(url, {"mode": "add", **fields}, HTTP_HX_REQUEST="true")
    return upload, page.content.decode()


@pytest.mark.django_db
def test_the_mapping_step_refuses_a_field_sent_twice_naming_both(auth_client, make_dataset):
    upload, page = map_as_posted(
        auth_client, make_dataset(), map_prompt=["text", "id"], map_expected="labels"
    )
    message = forms.MAPPING_FIELD_TWICE.format(label="Prompt", first="text", second="id")
    assert html.escape(message) in page
    upload.refresh_from_db()
    assert upload.mapping == {}, "nothing was checked again with either"


@pytest.mark.django_db
def test_the_mapping_step_does_not_echo_a_long_value_it_refuses(auth_client, make_dataset):
    _upload, page = map_as_posted(
        auth_client, make_dataset(), map_prompt=LONG, map_expected="labels"
    )
    assert html.escape(forms.MAPPING_NOT_A_COLUMN) in page and LONG not in page
