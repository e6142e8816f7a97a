"""`manage.py import_dataset_file`: the import dialog's steps from the command line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from datasets_app.models import Dataset, Upload
from tests.conftest import FILES

pytestmark = pytest.mark.django_db

EXPECTED = FILES / "json" / "expected_answers_template.json"


def run(*args: str) -> tuple[str, int]:
    out = io.StringIO()
    try:
        call_command("import_dataset_file", *args, stdout=out, stderr=io.StringIO())
    except SystemExit as exc:
        return out.getvalue(), int(exc.code)
    return out.getvalue(), 0


def test_it_imports_into_a_dataset_named_by_id_or_name(make_dataset, admin_user):
    dataset = make_dataset(tasks=1)
    out, code = run(str(EXPECTED), "--dataset", str(dataset.pk))
    assert code == 0
    assert "Imported 2 tasks into Finance QA" in out and "Save as v1" in out
    assert [t.task_id for t in dataset.tasks.all()] == ["t1", "yoy-growth", "q3-end-date"]
    assert Upload.objects.get().owner == admin_user

    out, code = run(str(EXPECTED), "--dataset", "Finance QA", "--mode", "replace")
    assert code == 0
    assert [t.task_id for t in dataset.tasks.live()] == ["yoy-growth", "q3-end-date"]


def test_a_second_file_without_ids_is_numbered_after_the_first(make_dataset, admin_user, tmp_path):
    dataset = make_dataset(tasks=2)
    path = tmp_path / "qa.jsonl"
    path.write_text(
        '{"prompt": "What is 2+2?", "expected": "4"}\n{"prompt": "Capital?", "expected": "Paris"}\n'
    )
    assert run(str(path), "--dataset", str(dataset.pk))[1] == 0
    assert run(str(path), "--dataset", str(dataset.pk))[1] == 0
    assert [t.task_id for t in dataset.tasks.all()] == [
        "t1",
        "t2",
        "task-3",
        "task-4",
        "task-5",
        "task-6",
    ]


def test_problems_are_printed_like_check_dataset_file_and_exit_1(make_dataset, admin_user):
    dataset = make_dataset()
    run(str(EXPECTED), "--dataset", str(dataset.pk))
    out, code = run(str(EXPECTED), "--dataset", str(dataset.pk))
    assert code == 1
    assert "2 problems; nothing can be imported:" in out
    assert "Task id 'yoy-growth' is already one of this dataset's tasks" in out
    assert dataset.tasks.count() == 2


def test_new_creates_the_dataset_from_the_file_and_a_bad_file_creates_nothing(
    tmp_path: Path, admin_user
):
    out, code = run(str(EXPECTED), "--new")
    assert code == 0
    assert Dataset.objects.get().name == "Finance QA (expected answers)"

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n')
    out, code = run(str(bad), "--new", "--dataset", "Never")
    assert code == 1 and "nothing can be imported" in out
    assert not Dataset.objects.filter(name="Never").exists()


def test_an_owner_is_needed(make_dataset):
    dataset = make_dataset()
    with pytest.raises(CommandError, match="no superuser"):
        run(str(EXPECTED), "--dataset", str(dataset.pk))
    with pytest.raises(CommandError, match="no user named 'zed'"):
        run(str(EXPECTED), "--dataset", str(dataset.pk), "--user", "zed")
    with pytest.raises(CommandError, match="no dataset named or numbered 'Nope'"):
        run(str(EXPECTED), "--dataset", "Nope", "--user", "ada")


def test_progress_in_a_log_is_plain_lines(make_dataset, admin_user, settings):
    # With a broker the command shows how far the workers are (here the tasks still run
    # eagerly, as CELERY_TASK_ALWAYS_EAGER was set when settings were read).
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    dataset = make_dataset()
    err = io.StringIO()
    call_command(
        "import_dataset_file", str(EXPECTED), "--dataset", str(dataset.pk),
        stdout=io.StringIO(), stderr=err,
    )  # fmt: skip
    assert "\r" not in err.getvalue()
    assert err.getvalue().splitlines() == ["Checking… 2 of 2 tasks", "Importing…"]


def test_progress_on_a_terminal_is_a_tqdm_bar():
    import os

    from datasets_app.management.commands.import_dataset_file import Progress

    reader, writer = os.openpty()
    with open(writer, "w", encoding="utf-8") as terminal:
        progress = Progress(terminal, "Importing…", "files stored")
        progress.show(1, 4)
        progress.show(4, 4)
        progress.close()
    drawn = b""
    while True:  # until the terminal's other end, closed above, has nothing more (EIO)
        try:
            chunk = os.read(reader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(reader)
    drawn = drawn.decode()
    assert "\r" in drawn
    assert "Importing…: 100%" in drawn and "4/4" in drawn


TRIAGE = FILES / "real" / "ragas" / "support_triage.csv"


def test_map_imports_a_file_whose_columns_do_not_say_and_the_dataset_remembers_it(
    make_dataset, admin_user
):
    dataset = make_dataset()
    out, code = run(str(TRIAGE), "--dataset", str(dataset.pk))
    assert code == 1
    assert "Best guess: prompt = text, expected answer = labels." in out

    mapped = ("--map", "prompt=text", "--map", "expected=labels")
    out, code = run(str(TRIAGE), "--dataset", str(dataset.pk), *mapped)
    assert code == 0
    assert "Imported 20 tasks" in out
    first = dataset.tasks.order_by("position").first()
    assert first.expected_text == "Billing;RefundCancel"
    dataset.refresh_from_db()
    assert list(dataset.import_mappings.values()) == [
        {"id": "id", "prompt": "text", "expected": "labels"}
    ]

    # The next file of this shape is offered the same mapping, to confirm.
    out, code = run(str(TRIAGE), "--dataset", str(dataset.pk), "--mode", "replace")
    assert code == 1
    assert "As you mapped this dataset's last file with these columns: prompt = text" in out


def test_encoding_reads_a_csv_whose_code_page_cannot_be_told(make_dataset, admin_user, tmp_path):
    path = tmp_path / "physics.csv"
    path.write_bytes(
        "prompt,expected\nMaxwell’s equations — what’s “curl”?,Ampere’s law\n"
        "It’s “quoted” here,the answer’s fine\n".encode("gbk")
    )
    dataset = make_dataset()
    out, code = run(str(path), "--dataset", str(dataset.pk))
    assert code == 1 and "reads equally well in" in out

    out, code = run(str(path), "--dataset", str(dataset.pk), "--encoding", "gb18030")
    assert code == 0 and "Imported 2 tasks" in out
    assert dataset.tasks.order_by("position").first().prompt == (
        "Maxwell’s equations — what’s “curl”?"
    )
