"""Contract: /api/v1/datasets — list, create, read, update; others' datasets are a 404."""

from __future__ import annotations

import pytest

from datasets_app.models import Criterion, Dataset
from tests.api.conftest import error_of

JSON = "application/json"
VERIFIER = {"kind": "llm_judge", "outputType": "float", "instructions": "Grade it."}


@pytest.mark.django_db
def test_the_list_holds_own_and_shared_datasets_only(api, make_dataset, user, other_user):
    mine = make_dataset(name="Mine")
    shared = make_dataset(owner=other_user, name="Shared with ada")
    shared.shared_with.add(user)
    make_dataset(owner=other_user, name="Bob's alone")
    body = api.get("/api/v1/datasets").json()
    assert sorted(d["name"] for d in body) == ["Mine", "Shared with ada"]
    assert {d["id"] for d in body} == {mine.pk, shared.pk}
    assert {d["owner"] for d in body} == {"ada", "bob"}


@pytest.mark.django_db
def test_create_with_settings(api, user):
    response = api.post(
        "/api/v1/datasets",
        {"name": "CI set", "description": "nightly", "settings": {"defaultVerifier": VERIFIER}},
        content_type=JSON,
    )
    assert response.status_code == 201
    body = response.json()
    dataset = Dataset.objects.get(pk=body["id"])
    assert dataset.owner == user and dataset.name == "CI set"
    assert body["settings"] == {"defaultVerifier": VERIFIER} == dataset.settings
    assert body["tasks"] == [] and body["latest_version"] is None and body["next_version"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "body.name"),
        ({"name": ""}, "body.name"),
        ({"name": "x" * 201}, "body.name"),
        ({"name": "ok", "colour": "red"}, "body.colour"),
        ({"name": "ok", "settings": []}, "body.settings"),
    ],
)
def test_create_refuses_bad_input_naming_the_field(api, payload, field):
    response = api.post("/api/v1/datasets", payload, content_type=JSON)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid"
    assert field in [d["field"] for d in error["details"]]
    assert not Dataset.objects.exists()


@pytest.mark.django_db
def test_create_refuses_settings_the_checker_refuses(api):
    response = api.post(
        "/api/v1/datasets",
        {"name": "x", "settings": {"defaultVerifier": {"kind": "oracle"}}},
        content_type=JSON,
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_settings"
    assert error["details"][0]["field"] == "settings.defaultVerifier.kind"
    assert "oracle" in error["details"][0]["message"]
    assert not Dataset.objects.exists()


@pytest.mark.django_db
def test_a_body_that_is_not_json_is_a_400(api):
    response = api.post("/api/v1/datasets", "{not json", content_type=JSON)
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid"


@pytest.mark.django_db
def test_read_has_settings_criteria_for_every_task_and_tasks_with_state(api, make_dataset):
    dataset = make_dataset(tasks=2)
    dataset.settings = {"defaultVerifier": VERIFIER}
    dataset.save()
    Criterion.objects.create(dataset=dataset, criterion_id="tone", text="Polite", weight=0.5)
    body = api.get(f"/api/v1/datasets/{dataset.pk}").json()
    assert body["settings"] == {"defaultVerifier": VERIFIER}
    assert body["criteria"] == [
        {"id": "tone", "criterion": "Polite", "weight": 0.5, "verifier": None}
    ]
    assert [(t["task_id"], t["state"]) for t in body["tasks"]] == [
        ("t1", "draft"),
        ("t2", "draft"),
    ]
    assert body["unsaved_changes"] is True


@pytest.mark.django_db
def test_others_datasets_and_missing_ones_are_a_404(api, make_dataset, other_user):
    theirs = make_dataset(owner=other_user)
    for response in (
        api.get(f"/api/v1/datasets/{theirs.pk}"),
        api.patch(f"/api/v1/datasets/{theirs.pk}", {"name": "mine now"}, content_type=JSON),
        api.get("/api/v1/datasets/999999"),
    ):
        assert response.status_code == 404
        assert error_of(response)["code"] == "not_found"
    theirs.refresh_from_db()
    assert theirs.name == "Finance QA"


@pytest.mark.django_db
def test_update_changes_only_what_is_sent(api, make_dataset):
    dataset = make_dataset(tasks=1)
    dataset.description = "keep me"
    dataset.settings = {"defaultVerifier": VERIFIER}
    dataset.save()
    Criterion.objects.create(dataset=dataset, criterion_id="tone", text="Polite")
    response = api.patch(f"/api/v1/datasets/{dataset.pk}", {"name": "Renamed"}, content_type=JSON)
    assert response.status_code == 200
    dataset.refresh_from_db()
    assert (dataset.name, dataset.description) == ("Renamed", "keep me")
    assert dataset.settings == {"defaultVerifier": VERIFIER}
    assert [c["id"] for c in response.json()["criteria"]] == ["tone"]


@pytest.mark.django_db
def test_an_unchanged_update_changes_nothing(api, make_dataset):
    dataset = make_dataset(tasks=1)
    dataset.settings = {"defaultVerifier": VERIFIER}
    dataset.save()
    before = api.get(f"/api/v1/datasets/{dataset.pk}").json()
    sent = {k: before[k] for k in ("name", "description", "settings")}
    after = api.patch(f"/api/v1/datasets/{dataset.pk}", sent, content_type=JSON).json()
    assert {k: after[k] for k in sent} == sent
    assert after["criteria"] == before["criteria"] and after["tasks"] == before["tasks"]


@pytest.mark.django_db
def test_update_refuses_bad_settings_and_changes_nothing(api, make_dataset):
    dataset = make_dataset()
    response = api.patch(
        f"/api/v1/datasets/{dataset.pk}",
        {
            "name": "x",
            "settings": {"expectedAnswerVerifier": {"kind": "exact_match", "outputType": "%"}},
        },
        content_type=JSON,
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_settings"
    dataset.refresh_from_db()
    assert dataset.name == "Finance QA" and dataset.settings == {}


@pytest.mark.django_db
def test_an_unknown_path_and_a_wrong_method_answer_in_the_error_shape(api):
    for path in ("/api/v1/no-such-thing", "/api/v1/"):
        response = api.get(path)
        assert response.status_code == 404 and error_of(response)["code"] == "not_found"
    response = api.delete("/api/v1/datasets")
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


@pytest.mark.django_db
def test_a_staff_token_sees_others_datasets_only_with_the_admins_permission(
    make_dataset, other_user, user
):
    """The pages' rule (issue 15): staff status alone is not enough."""
    from django.contrib.auth.models import Permission

    from datasets_app.services import tokens
    from tests.api.conftest import bearer

    theirs = make_dataset(owner=other_user)
    user.is_staff = True
    user.save()
    api = bearer(tokens.api_token_create(user=user, name="staff")[1])
    assert api.get(f"/api/v1/datasets/{theirs.pk}").status_code == 404

    user.user_permissions.add(Permission.objects.get(codename="change_dataset"))
    assert api.get(f"/api/v1/datasets/{theirs.pk}").status_code == 200
    assert theirs.pk in [d["id"] for d in api.get("/api/v1/datasets").json()]
