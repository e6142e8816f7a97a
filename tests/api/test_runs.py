"""The runs endpoints: outputs in (checked, refused whole with every problem), a run's state
and score, every verdict in the command-line grader's --json shape, and who may see them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from datasets_app.importing import outputs
from datasets_app.models import Run
from tests.api.conftest import error_of
from tests.conftest import REPO_ROOT
from tests.runs import outputs_jsonl
from tests.runs.conftest import no_judge, saved_version  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


def post_outputs(api, dataset_id: int, data: bytes, file_name: str = "outputs.jsonl", **fields):
    return api.post(
        f"/api/v1/datasets/{dataset_id}/runs",
        {"outputs": SimpleUploadedFile(file_name, data), **fields},
    )


def test_outputs_are_graded_and_read_back_as_the_grader_prints_them(api, user, tmp_path):
    version = saved_version(user, tasks=3)
    data = outputs_jsonl({"t1": "Answer 1", "t2": "Answer 9"})

    started = post_outputs(api, version.dataset_id, data)

    assert started.status_code == 202
    run_id = started.json()["id"]
    run = api.get(f"/api/v1/runs/{run_id}").json()
    assert run["state"] == "done" and run["version"] == 1
    assert run["progress"] == {"done": 3, "total": 3}
    assert run["score"] == pytest.approx(1 / 3) and run["coverage"] == 1.0
    assert run["counts"] == {"tasks": 3, "graded": 3, "failed": 2, "errored": 0, "no_output": 1}
    results = api.get(f"/api/v1/runs/{run_id}/results").json()
    assert [(t["task"], t["score"]) for t in results["tasks"]] == [
        ("t1", 1.0),
        ("t2", 0.0),
        ("t3", 0.0),
    ]
    assert results["tasks"][2]["criteria"][0]["code"] == "no_answer"

    # The same outputs through `python -m context_verifiers grade --json`, on the version's
    # own export: the same document.
    exported = api.get(f"/api/v1/datasets/{version.dataset_id}/versions/1/export?format=json")
    (tmp_path / "v1.json").write_bytes(b"".join(exported.streaming_content))
    (tmp_path / "o.jsonl").write_bytes(data)
    graded = subprocess.run(
        [sys.executable, "-m", "context_verifiers", "grade", "v1.json", "o.jsonl", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert json.loads(graded.stdout) == results


def test_a_csv_of_outputs_and_an_older_version_on_purpose(api, user):
    version = saved_version(user, tasks=2)
    data = b"id,response\nt1,Answer 1\nt2,Answer 2\n"
    started = post_outputs(api, version.dataset_id, data, "o.csv", version="1", name="nightly")
    assert started.status_code == 202
    assert started.json()["name"] == "nightly" and started.json()["score"] == 1.0
    listed = api.get(f"/api/v1/datasets/{version.dataset_id}/runs").json()
    assert [r["id"] for r in listed] == [started.json()["id"]]


def test_outputs_with_problems_are_refused_whole_with_each_problem(api, user):
    version = saved_version(user, tasks=2)
    data = b'{"task": "t1", "output": "a"}\n{"task": "t9", "output": "b"}\nnope\n'
    refused = post_outputs(api, version.dataset_id, data)
    assert refused.status_code == 400
    error = error_of(refused)
    assert error["code"] == "invalid_outputs"
    assert [(d["line"], d["code"]) for d in error["details"]] == [
        (2, outputs.UNKNOWN_TASK.code),
        (3, outputs.NOT_A_LINE_OBJECT.code),
    ]
    assert not Run.objects.exists()
    missing = api.post(f"/api/v1/datasets/{version.dataset_id}/runs", {})
    assert error_of(missing)["code"] == "invalid"
    unknown = post_outputs(api, version.dataset_id, b"", version="7")
    assert unknown.status_code == 404


def test_a_dataset_never_saved_has_nothing_to_run(api, make_dataset):
    dataset = make_dataset(tasks=1)
    response = post_outputs(api, dataset.pk, outputs_jsonl({"t1": "x"}))
    assert response.status_code == 409 and error_of(response)["code"] == "no_version"


def test_others_see_no_run_of_a_dataset_they_cannot_see(api, other_api, user, other_user):
    version = saved_version(user, tasks=1)
    run_id = post_outputs(api, version.dataset_id, outputs_jsonl({"t1": "x"})).json()["id"]
    for path in (f"/api/v1/runs/{run_id}", f"/api/v1/runs/{run_id}/results"):
        assert other_api.get(path).status_code == 404
    assert post_outputs(other_api, version.dataset_id, b"").status_code == 404
    version.dataset.shared_with.add(other_user)
    assert other_api.get(f"/api/v1/runs/{run_id}").json()["state"] == "done"


def test_stopping_a_run_that_ended_leaves_it_as_it_was(api, user):
    version = saved_version(user, tasks=1)
    run_id = post_outputs(api, version.dataset_id, outputs_jsonl({"t1": "x"})).json()["id"]
    assert api.post(f"/api/v1/runs/{run_id}/stop").json()["state"] == "done"


def test_an_ambiguous_csv_is_refused_unless_the_output_column_is_named(api, user):
    version = saved_version(user, tasks=1)
    data = b"id,answer,response\nt1,Answer 1,no\n"

    refused = post_outputs(api, version.dataset_id, data, "o.csv")

    assert refused.status_code == 400
    assert [d["code"] for d in error_of(refused)["details"]] == ["ambiguous_column"]
    assert not Run.objects.exists()
    told = post_outputs(api, version.dataset_id, data, "o.csv", output_column="answer")
    assert told.status_code == 202
    assert api.get(f"/api/v1/runs/{told.json()['id']}").json()["score"] == 1.0


def test_what_the_agent_s_runs_cost_is_in_the_run_and_in_each_task_of_its_results(
    api, user, tmp_path
):
    version = saved_version(user, tasks=2)
    data = outputs_jsonl(
        {
            "t1": {"output": "Answer 1", "latency_ms": 300, "tokens": 40, "cost": 0.5},
            "t2": {"output": "no", "model": "gpt-x", "trace": "https://traces.example/2"},
        }
    )
    run_id = post_outputs(api, version.dataset_id, data).json()["id"]

    run = api.get(f"/api/v1/runs/{run_id}").json()
    assert run["costs"] == {
        "latency_ms": 300.0,
        "latency_mean_ms": 300.0,
        "tokens": 40,
        "cost": 0.5,
        "models": ["gpt-x"],
    }
    results = api.get(f"/api/v1/runs/{run_id}/results").json()
    assert [t.get("agent") for t in results["tasks"]] == [
        {"latency_ms": 300.0, "tokens": 40, "cost": 0.5},
        {"model": "gpt-x", "trace": "https://traces.example/2"},
    ]
    # The command-line grader carries them the same way.
    exported = api.get(f"/api/v1/datasets/{version.dataset_id}/versions/1/export?format=json")
    (tmp_path / "v1.json").write_bytes(b"".join(exported.streaming_content))
    (tmp_path / "o.jsonl").write_bytes(data)
    graded = subprocess.run(
        [sys.executable, "-m", "context_verifiers", "grade", "v1.json", "o.jsonl", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert json.loads(graded.stdout) == results


def test_a_zip_of_outputs_with_files_is_graded_and_a_bad_one_refused_by_its_paths(api, user):
    import io
    import zipfile

    version = saved_version(user, tasks=2)

    def zipped(members: dict[str, bytes]) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            for name, data in members.items():
                zf.writestr(name, data)
        return buffer.getvalue()

    good = zipped({"outputs.jsonl": outputs_jsonl({"t1": "Answer 1"}), "files/t2/a.txt": b"a"})
    started = post_outputs(api, version.dataset_id, good, "outputs.zip")
    assert started.status_code == 202
    run = api.get(f"/api/v1/runs/{started.json()['id']}").json()
    # t2 answered with a file alone: graded (its exact match fails), not "no output".
    assert run["counts"]["no_output"] == 0 and run["score"] == 0.5

    bad = zipped({"outputs.jsonl": outputs_jsonl({"t1": "x"}), "files/nope/a.txt": b"a"})
    refused = post_outputs(api, version.dataset_id, bad, "outputs.zip")
    body = error_of(refused)
    assert refused.status_code == 400 and body["code"] == "invalid_outputs"
    assert [(d["file"], d["code"]) for d in body["details"]] == [
        ("files/nope/a.txt", outputs.UNKNOWN_TASK.code)
    ]
