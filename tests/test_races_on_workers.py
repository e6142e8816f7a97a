"""Issue 22's races with real concurrency: PostgreSQL, real Celery workers on Redis, and the
pages as people use them (the import dialog, the task form), from several threads at once.

A race is made to happen every round rather than left to chance: the test holds a row lock
the worker's import needs (a task it archives, or the dataset), so the import stops there,
and the test sends what races it while it waits; one more test leaves it to chance. Each
round then checks what a person would see: every page answered (never a 500), what landed,
and `?version=1` over the API read exactly as the version's export holds it.

Redis database 13 (the broker) with a queue of the test's own. Skipped, with the reason
shown, without PostgreSQL (the PostgreSQL pass of `make test` runs them) or Redis.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.db.models import Model
from django.test import Client
from django.urls import reverse

from datasets_app.models import Dataset, Task, TaskFile, Upload
from datasets_app.services import datasets, imports
from tests.as_rendered import form_data
from tests.datasets import assert_version_reads_as_exported
from tests.test_background_imports import dataset_zip
from tests.test_worker import (  # noqa: F401 - fixtures
    Worker,
    broker,
    broker_url,
    shared_db,
    start_worker,
)

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ROUNDS = 3
MiB = 1024 * 1024


@pytest.fixture
def workers(start_worker, broker, settings) -> Callable[[], Worker]:  # noqa: F811
    """Start a Celery worker on this test's queue, where the pages' tasks go too."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL; this runs in the PostgreSQL pass of make test")

    def start() -> Worker:
        # The app's own settings (tests.recipe_settings: its queue is RECIPE_QUEUE) and
        # this process's quota as the test set it.
        return start_worker(
            DJANGO_SETTINGS_MODULE="tests.recipe_settings",
            RECIPE_QUEUE=broker,
            STORAGE_QUOTA_BYTES=str(settings.STORAGE_QUOTA_BYTES),
        )

    return start


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {seconds} s waiting for {what}; {activity()}")
        time.sleep(0.05)


def activity() -> list[tuple]:
    """What each connection to this test database is doing, for a failure to show."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT state, wait_event_type, left(query, 120) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchall()


def waiting_on_locks() -> int:
    """Connections to this test database now waiting for a lock another one holds (but a
    worker's heartbeat, which waits on the row of the upload it imports every 10 s)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            " AND query NOT LIKE '%%heartbeat_at%%'"
        )
        return cursor.fetchone()[0]


class RowLockHeld:
    """Holds a row lock (SELECT … FOR UPDATE), from a thread and connection of its own,
    until released: what needs that row waits there, with whatever it has locked so far."""

    def __init__(self, model: type[Model], pk: int) -> None:
        self._rows = model.objects.select_for_update().filter(pk=pk)
        self._taken, self._release = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._hold)

    def _hold(self) -> None:
        try:
            with transaction.atomic():
                assert self._rows.exists()
                self._taken.set()
                self._release.wait(60)
        finally:
            connection.close()

    def __enter__(self) -> RowLockHeld:
        self._thread.start()
        assert self._taken.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._thread.join(30)


class Sent:
    """Requests sent at once, each from a thread (and database connection) of its own."""

    def __init__(self, calls: list[Callable[[], Any]]) -> None:
        self._results: list[Any] = [None] * len(calls)
        barrier = threading.Barrier(len(calls))

        def run(index: int) -> None:
            try:
                barrier.wait()
                self._results[index] = calls[index]()
            except Exception as exc:  # a 500: the test client raises what the view raised
                self._results[index] = exc
            finally:
                connection.close()

        self._threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
        for thread in self._threads:
            thread.start()

    def answers(self) -> list[Any]:
        """Each request's response, in the order given, once all have answered."""
        for thread in self._threads:
            thread.join(60)
        raised = [r for r in self._results if r is None or isinstance(r, Exception)]
        assert not raised, f"every request answered a page, not {raised}"
        return self._results


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def upload_now(upload: Upload) -> Upload:
    upload.refresh_from_db()
    return upload


def tasks_file(tasks: dict[str, str]) -> bytes:
    rows = [{"id": i, "prompt": prompt, "expected": "Yes"} for i, prompt in tasks.items()]
    return json.dumps({"format": "context-evals-dataset", "version": 1, "tasks": rows}).encode()


def checked(client: Client, dataset: Dataset, name: str, data: bytes, mode: str) -> Upload:
    """Choose the file in the dialog; the worker checks it."""
    client.post(
        reverse("datasets_app:import_check", args=[dataset.pk]),
        {"file": SimpleUploadedFile(name, data), "mode": mode},
    )
    upload = Upload.objects.filter(dataset=dataset, original_name=name).latest("pk")
    wait_for(lambda: upload_now(upload).state == Upload.State.CHECKED, f"the check of {name}")
    assert upload.result["ok"], upload.result.get("problems")
    return upload


def import_form(client: Client, upload: Upload, mode: str) -> tuple[str, dict, str]:
    """The dialog as it shows the checked file (for Replace, with what it archives): the
    Import button's URL, the form it sends and the page."""
    status = reverse("datasets_app:import_status", args=[upload.dataset_id, upload.key])
    page = client.get(f"{status}?mode={mode}").content.decode()
    commit = reverse("datasets_app:import_commit", args=[upload.dataset_id, upload.key])
    return commit, form_data(page, having="mode"), page


def live(dataset: Dataset) -> dict[str, str]:
    return dict(dataset.tasks.live().values_list("task_id", "prompt"))


# --- An edit racing a Replace (findings 1 and 6) --------------------------------------------

EDITS = 8
REFUSED_EDIT = datasets.TASK_ARCHIVED_MEANWHILE.replace("'", "&#x27;")


def test_edits_waiting_on_a_running_replace_are_refused_and_change_no_version(
    workers, make_dataset, user
):
    """Each round: v1 holds t1…t8; a Replace whose file holds t1…t4 again (so an edit that
    brought t1 back would collide with the Replace's t1: the IntegrityError of finding 6)
    runs on the worker, and the eight tasks' edits, each opened before it, are sent while
    it holds the dataset. Every edit waits for it, then says the task was archived."""
    workers()
    for round_ in range(ROUNDS):
        dataset = make_dataset(name=f"Round {round_}", tasks=EDITS)
        datasets.version_save(dataset=dataset, user=user)
        _edits_racing_a_replace(user, dataset)


def _edits_racing_a_replace(user, dataset: Dataset) -> None:
    owner = logged_in(user)
    edits = []
    for task in dataset.tasks.order_by("position"):
        editor = logged_in(user)
        url = reverse("datasets_app:task_edit", args=[dataset.pk, task.pk])
        data = form_data(editor.get(url).content.decode(), having="prompt")
        data["prompt"] = [f"Edited {task.task_id} during the Replace"]
        edits.append(lambda editor=editor, url=url, data=data: editor.post(url, data))
    new = {f"t{n}": f"Replaced t{n}" for n in range(1, 5)}
    new |= {f"r{n}": f"Replaced r{n}" for n in range(1, 5)}
    upload = checked(owner, dataset, "replace.json", tasks_file(new), "replace")
    commit, form, _page = import_form(owner, upload, "replace")

    # The Replace locks the dataset, then archives its tasks, and waits at the last one.
    with RowLockHeld(Task, dataset.tasks.order_by("position").last().pk):
        owner.post(commit, form)
        wait_for(lambda: waiting_on_locks() == 1, "the Replace to hold the dataset")
        sent = Sent(edits)
        wait_for(lambda: waiting_on_locks() == 1 + EDITS, "the edits to wait on it")
    pages = sent.answers()
    wait_for(lambda: upload_now(upload).state != Upload.State.IMPORTING, "the Replace")

    assert (upload.state, upload.error) == (Upload.State.IMPORTED, "")
    assert sorted(p.status_code for p in pages) == [200] * EDITS
    assert all(REFUSED_EDIT in p.content.decode() for p in pages)
    assert all("during the Replace" in p.content.decode() for p in pages), "kept as typed"
    assert live(dataset) == new, "no task of v1 came back to life"
    positions = list(dataset.tasks.live().values_list("position", flat=True))
    assert sorted(positions) == list(range(EDITS))
    held = assert_version_reads_as_exported(user, dataset, 1)
    assert [row[2] for row in held] == [f"Prompt {n}" for n in range(1, EDITS + 1)]


def test_an_admin_edit_waiting_on_a_running_replace_is_refused_with_why(
    workers, make_dataset, user, admin_user
):
    """The admin's change page of a saved task, opened before a Replace and sent while it
    runs: the save waits for the Replace, sees the task archived, changes nothing (neither
    the row v1 holds nor its criteria) and the page says why."""
    from datasets_app.admin import TASK_ARCHIVED_BEFORE_SAVED

    workers()
    for round_ in range(ROUNDS):
        dataset = make_dataset(name=f"Round {round_}", tasks=2)
        datasets.version_save(dataset=dataset, user=user)
        admin = logged_in(admin_user)
        task = dataset.tasks.get(task_id="t2")
        url = reverse("admin:datasets_app_task_change", args=[task.pk])
        data = form_data(admin.get(url).content.decode(), having="prompt")
        data["prompt"], data["criteria-0-text"] = ["Edited in the admin"], ["Edited"]
        owner = logged_in(user)
        upload = checked(owner, dataset, "replace.json", tasks_file({"t2": "New"}), "replace")
        commit, form, _page = import_form(owner, upload, "replace")

        with RowLockHeld(Task, dataset.tasks.get(task_id="t1").pk):
            owner.post(commit, form)
            wait_for(lambda: waiting_on_locks() == 1, "the Replace to hold the dataset")
            sent = Sent([lambda admin=admin, url=url, data=data: admin.post(url, data)])
            wait_for(lambda: waiting_on_locks() == 2, "the admin's save to wait on it")
        (response,) = sent.answers()
        wait_for(lambda u=upload: upload_now(u).state != Upload.State.IMPORTING, "the Replace")

        assert upload.state == Upload.State.IMPORTED
        assert response.status_code == 302
        page = admin.get(url).content.decode().replace("&#x27;", "'")
        assert TASK_ARCHIVED_BEFORE_SAVED in page
        assert live(dataset) == {"t2": "New"}
        held = assert_version_reads_as_exported(user, dataset, 1)
        assert [(row[2], row[5]) for row in held] == [
            ("Prompt 1", []),
            ("Prompt 2", [("c1", "Is right", 2.0, None)]),
        ]


# --- An Add racing a Replace (finding 4) ----------------------------------------------------

ADDED = 20


def test_an_add_committed_after_the_replace_was_listed_is_never_archived(
    workers, make_dataset, user
):
    """Each round: the Replace's dialog lists v1's two tasks; an Add of 20 tasks is clicked
    and reaches the worker first (held at the storage lock, the dataset locked), then the
    Replace is clicked. The Add lands; the Replace, run next, is refused as out of date and
    the dialog lists what it would archive now, the Add's tasks among them."""
    workers()
    for round_ in range(ROUNDS):
        dataset = make_dataset(name=f"Round {round_}", tasks=2)
        datasets.version_save(dataset=dataset, user=user)
        _an_add_landing_before_a_listed_replace(user, dataset)


def _an_add_landing_before_a_listed_replace(user, dataset: Dataset) -> None:
    client = logged_in(user)
    replace = checked(client, dataset, "replace.json", tasks_file({"t1": "New"}), "replace")
    commit_replace, replace_form, listed = import_form(client, replace, "replace")
    assert "Replace archives 2 tasks" in listed
    added = {f"late-{n}": f"Late {n}" for n in range(ADDED)}
    add = checked(client, dataset, "late.json", tasks_file(added), "add")
    commit_add, add_form, _page = import_form(client, add, "add")

    # The Add reaches the worker first and waits for the dataset; the Replace is clicked
    # meanwhile, and the worker takes it once the Add is done.
    with RowLockHeld(Dataset, dataset.pk):
        client.post(commit_add, add_form)
        wait_for(lambda: waiting_on_locks() == 1, "the Add to wait for the dataset")
        client.post(commit_replace, replace_form)
    wait_for(lambda: upload_now(add).state == Upload.State.IMPORTED, "the Add")
    wait_for(lambda: upload_now(replace).state != Upload.State.IMPORTING, "the Replace")

    assert (replace.state, replace.error) == (Upload.State.CHECKED, imports.REPLACE_LIST_CHANGED)
    assert {k: v for k, v in live(dataset).items() if k.startswith("late-")} == added
    status = reverse("datasets_app:import_status", args=[dataset.pk, replace.key])
    page = client.get(f"{status}?mode=replace").content.decode()
    assert imports.REPLACE_LIST_CHANGED.replace("'", "&#x27;") in page
    assert f"Replace archives {ADDED + 2} tasks" in page, "a fresh list"
    held = assert_version_reads_as_exported(user, dataset, 1)
    assert [row[2] for row in held] == ["Prompt 1", "Prompt 2"]


def test_an_add_and_a_replace_clicked_at_once_never_lose_the_adds_tasks(
    workers, make_dataset, user
):
    """Left to chance, on two workers: whichever lands first, the Add's tasks stay; the
    Replace either ran first (the Add then adds to its tasks) or is refused as out of
    date."""
    workers()
    workers()
    for round_ in range(2 * ROUNDS):
        dataset = make_dataset(name=f"Round {round_}", tasks=2)
        datasets.version_save(dataset=dataset, user=user)
        _an_add_and_a_replace_at_once(user, dataset)


def _an_add_and_a_replace_at_once(user, dataset: Dataset) -> None:
    client, other = logged_in(user), logged_in(user)
    replace = checked(client, dataset, "replace.json", tasks_file({"t1": "New"}), "replace")
    commit_replace, replace_form, _page = import_form(client, replace, "replace")
    added = {f"late-{n}": f"Late {n}" for n in range(ADDED)}
    add = checked(other, dataset, "late.json", tasks_file(added), "add")
    commit_add, add_form, _page = import_form(other, add, "add")

    Sent(
        [
            lambda: client.post(commit_replace, replace_form),
            lambda: other.post(commit_add, add_form),
        ]
    ).answers()
    wait_for(lambda: upload_now(add).state != Upload.State.IMPORTING, "the Add")
    wait_for(lambda: upload_now(replace).state != Upload.State.IMPORTING, "the Replace")

    assert add.state == Upload.State.IMPORTED, add.error
    if replace.state == Upload.State.IMPORTED:
        assert live(dataset) == {"t1": "New", **added}
    else:
        assert replace.error == imports.REPLACE_LIST_CHANGED
        assert live(dataset) == {"t1": "Prompt 1", "t2": "Prompt 2", **added}
    assert_version_reads_as_exported(user, dataset, 1)


# --- Uploads and imports sent at once against a quota (finding 5) ---------------------------


def test_uploads_sent_at_once_through_the_dialog_keep_only_what_the_quota_allows(
    workers, make_dataset, user, settings
):
    """Each round, eight files of 0.9 MiB chosen in the dialog at once against a quota of
    3 MiB: three are kept and checked, five refused with the amounts, never 3.6 MiB kept."""
    settings.STORAGE_QUOTA_BYTES = 3 * MiB
    workers()
    for round_ in range(ROUNDS):
        person = get_user_model().objects.create_user(username=f"uploader-{round_}")
        _eight_uploads_at_once(make_dataset(owner=person, name=f"Round {round_}"), person)


def _eight_uploads_at_once(dataset: Dataset, person) -> None:
    size = int(0.9 * MiB)
    url = reverse("datasets_app:import_check", args=[dataset.pk])

    def send(n: int) -> Callable[[], object]:
        client = logged_in(person)
        head = f"prompt,expected\nQuestion {n}?,".encode()
        data = head + b"y" * (size - len(head))
        return lambda: client.post(url, {"file": SimpleUploadedFile(f"{n}.csv", data)})

    pages = Sent([send(n) for n in range(8)]).answers()

    kept = list(Upload.objects.filter(owner=person))
    assert len(kept) == 3
    refused = [p for p in pages if "would take you past the 3.0\xa0MB" in p.content.decode()]
    assert len(refused) == 5
    assert imports.storage_used(owner=person) == 3 * size
    for upload in kept:
        wait_for(lambda u=upload: upload_now(u).state == Upload.State.CHECKED, "a check")


def test_imports_into_a_shared_dataset_at_once_take_only_what_its_owners_quota_allows(
    workers, make_dataset, user, settings
):
    """Six people a dataset of Ada's is shared with each import a zip holding a 0.9 MiB file
    at once, on three workers, against a quota of 3 MiB: the files take Ada's storage, not
    theirs, so three imports land and three are refused naming her, and she keeps 2.7 MiB."""
    settings.STORAGE_QUOTA_BYTES = 3 * MiB
    for _ in range(3):
        workers()
    size = int(0.9 * MiB)
    people = [get_user_model().objects.create_user(username=f"colleague-{n}") for n in range(6)]
    shared = make_dataset(name="Shared")
    shared.shared_with.add(*people)
    clicks, uploads = [], []
    for n, person in enumerate(people):
        client = logged_in(person)
        data = dataset_zip({f"task-{n}": [(f"f{n}.bin", bytes([n]) * size)]})
        uploads.append(checked(client, shared, f"{n}.zip", data, "add"))
        commit, form, _page = import_form(client, uploads[-1], "add")
        clicks.append(lambda client=client, commit=commit, form=form: client.post(commit, form))

    Sent(clicks).answers()
    for upload in uploads:
        wait_for(lambda u=upload: upload_now(u).state != Upload.State.IMPORTING, "an import")

    imported = [u for u in uploads if u.state == Upload.State.IMPORTED]
    refused = [u for u in uploads if u.state == Upload.State.CHECKED]
    assert (len(imported), len(refused)) == (3, 3)
    owners = f"in the storage of {user.get_username()}, who owns this dataset"
    assert all(owners in u.error for u in refused)
    assert TaskFile.objects.filter(task__dataset=shared).count() == 3
    assert shared.tasks.count() == 3
    assert imports.storage_used(owner=user) == 3 * size <= settings.STORAGE_QUOTA_BYTES
