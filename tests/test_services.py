"""Saving versions, archiving and runs: the promises the reference page makes."""

import threading
from dataclasses import replace

import pytest
from django.db import connection
from django.db.models.deletion import ProtectedError

from datasets_app import selectors
from datasets_app.models import Dataset, Task, TaskState, Version
from datasets_app.services import datasets, runs
from tests.runs import outputs_jsonl, run_outputs


@pytest.mark.django_db
def test_saving_numbers_versions_v1_v2_and_turns_drafts_into_saved_tasks(make_dataset, user):
    dataset = make_dataset(tasks=3)
    v1 = datasets.version_save(dataset=dataset, user=user)
    assert v1.number == 1
    assert set(dataset.tasks.values_list("state", flat=True)) == {TaskState.SAVED}
    assert [t.id for t in selectors.version_spec(v1).tasks] == ["t1", "t2", "t3"]
    assert v1.tasks.count() == 3

    Task.objects.create(dataset=dataset, task_id="t4", prompt="New", expected_text="x", position=3)
    v2 = datasets.version_save(dataset=dataset, user=user)
    assert v2.number == 2
    assert v2.tasks.count() == 4
    assert len(selectors.version_spec(v1).tasks) == 3, "a saved version never changes"


@pytest.mark.django_db
def test_a_version_shares_the_rows_of_tasks_saved_unchanged(make_dataset, user):
    dataset = make_dataset(tasks=3)
    v1 = datasets.version_save(dataset=dataset, user=user)
    task = dataset.tasks.get(task_id="t2")
    spec = selectors.task_spec(task)
    datasets.task_save(dataset=dataset, task=task, spec=replace(spec, prompt="Clearer"))
    rows = Task.objects.count()

    v2 = datasets.version_save(dataset=dataset, user=user)

    assert Task.objects.count() == rows, "saving writes no task again"
    one, two = (list(selectors.version_tasks(v)) for v in (v1, v2))
    assert [t.pk for t in one if t.task_id != "t2"] == [t.pk for t in two if t.task_id != "t2"]
    assert [t.prompt for t in one] == ["Prompt 1", "Prompt 2", "Prompt 3"]
    assert [t.prompt for t in two] == ["Prompt 1", "Clearer", "Prompt 3"]
    assert "tasks" not in v2.snapshot, "a version's row keeps its head, its tasks are rows"


@pytest.mark.django_db
def test_saving_without_drafts_is_refused(make_dataset, user):
    dataset = make_dataset(tasks=1)
    datasets.version_save(dataset=dataset, user=user)
    with pytest.raises(datasets.NothingToSave):
        datasets.version_save(dataset=dataset, user=user)


@pytest.mark.django_db
def test_an_archived_task_keeps_its_run_results_and_leaves_the_live_tasks(make_dataset, user):
    dataset = make_dataset(tasks=2)
    dataset.settings = {"expectedAnswerVerifier": {"kind": "exact_match"}}
    dataset.save()
    version = datasets.version_save(dataset=dataset, user=user)
    run = run_outputs(version, user, {"t1": "Answer 1", "t2": "Answer 0"})
    dataset.tasks.update(state=TaskState.ARCHIVED)

    assert dataset.tasks.live().count() == 0
    assert sorted(run.results.values_list("task__task_id", "score")) == [("t1", 1.0), ("t2", 0.0)]
    with pytest.raises(ProtectedError):
        Task.objects.filter(dataset=dataset).delete()


@pytest.mark.django_db
def test_a_run_grades_the_latest_saved_version_never_drafts(make_dataset, user):
    dataset = make_dataset(tasks=1)
    outputs = outputs_jsonl({"t1": "Answer 1"})
    with pytest.raises(runs.RunRefused) as refused:
        runs.run_create_for_latest(dataset=dataset, user=user, data=outputs, file_name="o.jsonl")
    assert str(refused.value) == runs.NO_VERSION
    datasets.version_save(dataset=dataset, user=user)
    Task.objects.create(dataset=dataset, task_id="draft", prompt="p", expected_text="x")
    run = runs.run_create_for_latest(dataset=dataset, user=user, data=outputs, file_name="o.jsonl")
    assert run.version.number == 1
    assert list(run.version.tasks.values_list("task_id", flat=True)) == ["t1"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_people_saving_at_once_never_share_a_version_number(make_dataset, user):
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL; this runs in the PostgreSQL pass of make test")
    dataset = make_dataset(tasks=1)
    barrier = threading.Barrier(4)
    errors: list[Exception] = []

    def save(index: int) -> None:
        try:
            Task.objects.create(dataset=dataset, task_id=f"c{index}", prompt="p", expected_text="x")
            barrier.wait()
            datasets.version_save(dataset=Dataset.objects.get(pk=dataset.pk), user=user)
        except datasets.NothingToSave:
            pass  # another thread's save already took this one's draft: nothing left to save
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    numbers = list(Version.objects.filter(dataset=dataset).values_list("number", flat=True))
    assert sorted(numbers) == list(range(1, len(numbers) + 1))
    assert len(numbers) >= 1


@pytest.mark.django_db
def test_an_empty_dataset_has_nothing_to_save(make_dataset, user):
    with pytest.raises(datasets.NothingToSave):
        datasets.version_save(dataset=make_dataset(), user=user)
