"""The OpenAPI schema: valid OpenAPI 3, exactly the issue's paths, and no change of shape
without a new API version (each version's schema is committed under tests/api/schema/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client
from openapi_spec_validator import validate

from datasets_app.api import errors
from datasets_app.api.endpoints import API_VERSION

SNAPSHOTS = Path(__file__).parent / "schema"
CHANGED = (
    "The API's schema changed shape while its version stayed {version}. Scripts written "
    "against {version} would break: bump API_VERSION in datasets_app/api/endpoints.py and "
    "write the new version's snapshot with `make api-schema` (keep the old one)."
)

# The issue's table: scripts written today keep working.
PATHS = {
    "/api/v1/datasets": {"get", "post"},
    "/api/v1/datasets/{dataset_id}": {"get", "patch"},
    "/api/v1/check": {"post"},
    "/api/v1/datasets/{dataset_id}/imports": {"post"},
    "/api/v1/imports/{import_id}": {"get"},
    "/api/v1/datasets/{dataset_id}/versions": {"get", "post"},
    "/api/v1/datasets/{dataset_id}/versions/{number}/export": {"get"},
    # Issue 24: a version too large to export within a request is built by a worker.
    "/api/v1/exports/{export_id}": {"get"},
    "/api/v1/exports/{export_id}/download": {"get"},
    "/api/v1/datasets/{dataset_id}/tasks": {"get"},
    "/api/v1/tasks/{task_id}": {"get"},
    "/api/v1/datasets/{dataset_id}/runs": {"get", "post"},
    "/api/v1/runs/{run_id}": {"get"},
    "/api/v1/runs/{run_id}/results": {"get"},
    "/api/v1/runs/{run_id}/stop": {"post"},
}


def _no_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    # json.loads keeps the last of two equal keys; the docs page's parser refuses the schema.
    keys = [key for key, _value in pairs]
    assert len(keys) == len(set(keys)), f"repeated keys: {keys}"
    return dict(pairs)


@pytest.fixture
def schema(api) -> dict:
    response = api.get("/api/v1/openapi.json")
    assert response.status_code == 200
    return json.loads(response.content, object_pairs_hook=_no_repeated_keys)


@pytest.mark.django_db
def test_the_schema_is_valid_openapi_3(schema):
    validate(schema)
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["version"] == API_VERSION


@pytest.mark.django_db
def test_the_schema_has_exactly_the_issues_paths(schema):
    assert {path: set(ops) for path, ops in schema["paths"].items()} == PATHS


@pytest.mark.django_db
def test_every_endpoint_says_its_errors_in_the_one_shape(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status in ("401", "404") if "{" in path else ("401",):
                content = operation["responses"][status]["content"]["application/json"]
                assert content["schema"] == {"$ref": "#/components/schemas/ErrorOut"}, (
                    f"{method} {path} {status}"
                )
            assert operation["security"] == [{"TokenAuth": []}]


def drift(schema: dict) -> str | None:
    """Why `schema` may not ship as it is: None when its version's snapshot holds it."""
    version = schema["info"]["version"]
    snapshot = SNAPSHOTS / f"openapi-{version}.json"
    if not snapshot.exists():
        return f"No snapshot for {version}: write it with `make api-schema`."
    if schema != json.loads(snapshot.read_text()):
        return CHANGED.format(version=version)
    return None


@pytest.mark.django_db
def test_the_schema_changes_shape_only_with_its_version(schema):
    assert drift(schema) is None, drift(schema)


@pytest.mark.django_db
def test_a_change_of_shape_under_the_same_version_is_caught(schema):
    del schema["components"]["schemas"]["VersionOut"]["properties"]["label"]
    assert drift(schema) == CHANGED.format(version=API_VERSION)


@pytest.mark.django_db
def test_a_new_version_needs_its_own_snapshot(schema):
    schema["info"]["version"] = "999.0.0"
    assert drift(schema) == "No snapshot for 999.0.0: write it with `make api-schema`."


@pytest.mark.django_db
def test_the_schema_needs_a_signed_in_person_or_a_token(auth_client):
    anonymous = Client().get("/api/v1/openapi.json")
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["message"] == errors.UNAUTHORIZED  # how to send one
    assert auth_client.get("/api/v1/openapi.json").status_code == 200


@pytest.mark.django_db
def test_the_docs_page_is_served_from_our_own_static_files(auth_client):
    page = auth_client.get("/api/v1/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in html and "cdn" not in html.lower()
    anonymous = Client().get("/api/v1/docs")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous.url
