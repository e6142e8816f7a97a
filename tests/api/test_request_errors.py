"""Every request Django refuses while reading it (too many fields or files, a body too
large, a Host we do not serve, a broken form) is a 4xx: the API's one error shape under
/api/, a plain page elsewhere. Never a 500."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from datasets_app import request_errors
from tests.api.conftest import error_of

CSV = b"id,prompt,expected answer\nt1,What is 2+2?,4\n"


def many_fields(count: int) -> dict:
    return {f"field{index}": "x" for index in range(count)}


@pytest.mark.django_db
def test_a_check_with_more_form_fields_than_the_limit_is_a_400_in_the_error_shape(api):
    data = {**many_fields(2001), "file": SimpleUploadedFile("a.csv", CSV)}
    response = api.post("/api/v1/check", data)
    assert response.status_code == 400
    assert error_of(response)["code"] == "too_many_fields"
    assert error_of(response)["message"] == request_errors.TOO_MANY_FIELDS.format(limit=2000)
    assert "2,000 form fields" in error_of(response)["message"]


@pytest.mark.django_db
def test_a_check_with_more_files_than_the_limit_is_a_400_in_the_error_shape(api, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    data = {f"f{index}": SimpleUploadedFile(f"{index}.csv", CSV) for index in range(4)}
    response = api.post("/api/v1/check", data)
    assert response.status_code == 400
    assert error_of(response)["code"] == "too_many_files"


@pytest.mark.django_db
def test_a_form_field_larger_than_the_form_limit_is_a_413_in_the_error_shape(api, settings):
    # The check's route takes a large body (a file); a field of the form itself may not be.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    data = {"map": "prompt=" + "q" * 5000, "file": SimpleUploadedFile("a.csv", CSV)}
    response = api.post("/api/v1/check", data)
    assert response.status_code == 413
    assert error_of(response)["code"] == "too_large"


@pytest.mark.django_db
def test_a_broken_multipart_body_is_a_400_in_the_error_shape(api):
    response = api.generic(
        "POST",
        "/api/v1/check",
        b'--x\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n',
        content_type="multipart/form-data; boundary=",
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


@pytest.mark.django_db
def test_a_host_we_do_not_serve_is_a_400_in_the_error_shape_on_the_api(api):
    response = api.get("/api/v1/datasets", headers={"host": "evil.example"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "unknown_host"


@pytest.mark.django_db
def test_a_page_with_more_form_fields_than_the_limit_is_a_plain_400_page(auth_client, make_dataset):
    dataset = make_dataset()
    response = auth_client.post(f"/datasets/{dataset.pk}/settings/", many_fields(2001))
    assert response.status_code == 400
    assert response.templates[0].name == "400.html"
    text = response.content.decode()
    assert "2,000 form fields" in text and "Traceback" not in text


@pytest.mark.django_db
def test_a_host_we_do_not_serve_is_a_plain_400_page(client):
    response = client.get("/accounts/login/", headers={"host": "evil.example"})
    assert response.status_code == 400
    assert request_errors.UNKNOWN_HOST in response.content.decode()


@pytest.mark.django_db
def test_a_missing_page_is_a_plain_404_page_and_json_under_the_api(auth_client, api):
    page = auth_client.get("/no-such-page/")
    assert page.status_code == 404 and page.templates[0].name == "404.html"
    assert error_of(api.get("/api/nothing"))["code"] == "not_found"
