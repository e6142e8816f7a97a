"""The .zip dataset file as a person uses it: a dataset file plus the files its tasks attach.

Hostile and damaged archives are in test_zip_hostile.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import zipfile
from typing import Any

import openpyxl
import pytest
from hypothesis import given, settings

from datasets_app.importing import zip_format
from datasets_app.importing.archive import ArchiveError
from datasets_app.importing.document import FILE_NOT_IN_ZIP, FILE_TOO_LARGE
from datasets_app.importing.spec import CheckOptions, CheckResult, DatasetSpec, FileSpec, TaskSpec
from tests.importing.strategies import dataset_specs

OPTIONS = CheckOptions()
REVENUE = b"quarter,revenue\nQ1,120\nQ2,130\n"
SUMMARY = b"# Summary\n\nTotal: 250.\n"


def make_zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def dataset_json(*tasks: dict[str, Any]) -> bytes:
    return json.dumps(
        {"format": "context-evals-dataset", "version": 1, "name": "Files", "tasks": list(tasks)}
    ).encode()


def task(task_id: str, *, inputs: list[Any] = (), expected: list[Any] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {
        "id": task_id,
        "prompt": f"Do {task_id}.",
        "expected": {"text": "Done."},
        "inputFiles": list(inputs),
        "expectedFiles": list(expected),
    }


def check(data: bytes, name: str = "set.zip") -> CheckResult:
    return zip_format.check(data, name, options=OPTIONS)


def codes(problems: tuple[Any, ...]) -> list[str]:
    return [problem.code for problem in problems]


def test_a_dataset_with_attached_files_is_planned_with_their_sizes_and_hashes() -> None:
    data = make_zip(
        {
            "dataset.json": dataset_json(
                task("sum", inputs=["files/revenue.csv"], expected=["files/summary.md"]),
                task("link", inputs=[{"url": "https://example.com/a.pdf", "name": "a.pdf"}]),
            ),
            "files/revenue.csv": REVENUE,
            "files/summary.md": SUMMARY,
        }
    )

    result = check(data)

    assert result.problems == ()
    assert result.warnings == ()
    assert result.ok
    assert result.format == "zip"
    assert result.detected.startswith("ZIP archive with dataset.json (")
    assert result.detected.endswith(") and 2 attached files")
    first, second = result.plan.tasks
    assert first.input_files == (
        FileSpec(
            name="revenue.csv",
            path="files/revenue.csv",
            size=len(REVENUE),
            sha256=hashlib.sha256(REVENUE).hexdigest(),
        ),
    )
    assert first.expected_files[0].sha256 == hashlib.sha256(SUMMARY).hexdigest()
    assert second.input_files == (FileSpec(name="a.pdf", url="https://example.com/a.pdf"),)


def test_a_zipped_folder_resolves_paths_from_the_dataset_folder_or_the_root() -> None:
    # What "Compress my-set" gives on macOS, Finder's litter included.
    data = make_zip(
        {
            "my-set/dataset.json": dataset_json(
                task("a", inputs=["inputs/revenue.csv"]),
                task("b", inputs=["my-set/inputs/revenue.csv"], expected=["./summary.md"]),
            ),
            "my-set/inputs/revenue.csv": REVENUE,
            "my-set/summary.md": SUMMARY,
            "my-set/.DS_Store": b"\x00\x00\x00\x01Bud1",
            "__MACOSX/my-set/._dataset.json": b"\x00\x05\x16\x07",
        }
    )

    result = check(data)

    assert result.ok, result.problems
    assert result.warnings == ()
    a, b = result.plan.tasks
    assert a.input_files[0].path == "my-set/inputs/revenue.csv"
    assert b.input_files[0].path == "my-set/inputs/revenue.csv"
    assert b.expected_files[0].path == "my-set/summary.md"
    assert "and 2 attached files" in result.detected


def test_a_file_attached_by_several_tasks_counts_once() -> None:
    data = make_zip(
        {
            "dataset.json": dataset_json(
                task("a", inputs=["revenue.csv"]), task("b", inputs=["revenue.csv"])
            ),
            "revenue.csv": REVENUE,
        }
    )

    result = check(data)

    assert result.ok, result.problems
    assert result.detected.endswith("and 1 attached file")
    assert result.plan.tasks[0].input_files == result.plan.tasks[1].input_files


def test_a_csv_dataset_file_sits_next_to_its_files() -> None:
    csv = b"prompt,expected\nWhat is the total?,250\n"
    data = make_zip({"dataset.csv": csv, "notes.txt": b"scratch"})

    result = check(data)

    assert result.ok, result.problems
    assert result.detected.startswith("ZIP archive with dataset.csv (")
    assert codes(result.warnings) == [zip_format.UNUSED_MEMBER.code]
    assert result.warnings[0].file == "notes.txt"
    assert result.warnings[0].message == zip_format.UNUSED_MEMBER.format()


def test_a_csv_dataset_file_attaches_files_one_per_line() -> None:
    csv = b'prompt,expected,input_files\nSum it.,250,"inputs/revenue.csv\ninputs/notes.md"\n'
    data = make_zip({"dataset.csv": csv, "inputs/revenue.csv": REVENUE, "inputs/notes.md": SUMMARY})

    result = check(data)

    assert result.ok, result.problems
    assert [f.path for f in result.plan.tasks[0].input_files] == [
        "inputs/revenue.csv",
        "inputs/notes.md",
    ]


def test_a_jsonl_dataset_file_is_read_line_by_line() -> None:
    lines = [
        {"id": "a", "prompt": "Sum it.", "expected": "250", "inputFiles": ["in/revenue.csv"]},
        {"id": "b", "prompt": "Again.", "expected": "250"},
    ]
    jsonl = "\n".join(json.dumps(line) for line in lines).encode()

    result = check(make_zip({"tasks.jsonl": jsonl, "in/revenue.csv": REVENUE}))

    assert result.ok, result.problems
    assert result.detected.startswith("ZIP archive with tasks.jsonl (JSON Lines")
    assert result.plan.tasks[0].input_files[0].size == len(REVENUE)


def test_an_xlsx_dataset_file_is_read_from_the_zip() -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["prompt", "expected", "input_files"])
    sheet.append(["Sum it.", "250", "revenue.csv"])
    xlsx = io.BytesIO()
    workbook.save(xlsx)

    result = check(make_zip({"dataset.xlsx": xlsx.getvalue(), "revenue.csv": REVENUE}))

    assert result.ok, result.problems
    assert result.plan.tasks[0].input_files[0].path == "revenue.csv"


def test_check_file_hands_a_zip_to_the_zip_checker() -> None:
    from datasets_app.importing.checker import check_file

    data = make_zip({"dataset.json": dataset_json(task("a", inputs=["a.txt"])), "a.txt": b"x"})

    result = check_file(data, "Upload.ZIP")

    assert result == check(data, "Upload.ZIP")
    assert result.ok


def test_a_dataset_named_dataset_wins_over_a_csv_it_attaches() -> None:
    data = make_zip(
        {"dataset.json": dataset_json(task("a", inputs=["revenue.csv"])), "revenue.csv": REVENUE}
    )

    result = check(data)

    assert result.ok, result.problems
    assert result.plan.tasks[0].input_files[0].path == "revenue.csv"


def test_a_path_not_in_the_zip_is_a_problem_of_the_dataset_file() -> None:
    data = make_zip({"set/dataset.json": dataset_json(task("a", inputs=["missing.csv"]))})

    result = check(data)

    assert codes(result.problems) == [FILE_NOT_IN_ZIP.code]
    assert result.problems[0].file == "set/dataset.json"
    assert "missing.csv" in result.problems[0].message
    assert result.plan is None


def test_files_no_task_uses_are_warnings_that_do_not_block() -> None:
    data = make_zip(
        {
            "dataset.json": dataset_json(task("a")),
            "draft.md": b"old",
            "images/chart.png": b"\x89PNG",
        }
    )

    result = check(data)

    assert result.ok
    assert [(w.code, w.file) for w in result.warnings] == [
        (zip_format.UNUSED_MEMBER.code, "draft.md"),
        (zip_format.UNUSED_MEMBER.code, "images/chart.png"),
    ]


def test_thousands_of_unused_files_are_counted_not_each_named() -> None:
    members = {"dataset.json": dataset_json(task("a"))}
    members.update({f"junk/{n}.txt": b"" for n in range(25)})

    result = check(make_zip(members))

    assert len(result.warnings) == zip_format.MAX_UNUSED_WARNINGS + 1
    assert result.warnings[-1].message == zip_format.MORE_UNUSED.format(count=5)


def test_a_member_over_10_mib_that_a_task_uses_is_a_problem() -> None:
    big = bytes(range(256)) * (41 * 1024)  # 10.25 MiB, stored as is
    data = make_zip(
        {"dataset.json": dataset_json(task("a", inputs=["big.bin"])), "big.bin": big},
        compression=zipfile.ZIP_STORED,
    )

    result = check(data)

    assert codes(result.problems) == [FILE_TOO_LARGE.code]
    assert "big.bin" in result.problems[0].message


def test_an_attached_zip_is_just_a_file_and_is_not_opened() -> None:
    inner = make_zip({"dataset.json": b"not even json", "../escape.txt": b"x"})
    data = make_zip(
        {"dataset.json": dataset_json(task("a", inputs=["bundle.zip"])), "bundle.zip": inner}
    )

    result = check(data)

    assert result.ok, result.problems
    assert result.plan.tasks[0].input_files[0].sha256 == hashlib.sha256(inner).hexdigest()


def test_a_zip_inside_a_zip_with_no_dataset_file_says_so() -> None:
    inner = make_zip({"dataset.json": dataset_json(task("a"))})

    result = check(make_zip({"set.zip": inner}))

    assert codes(result.problems) == [zip_format.NO_DATASET_FILE.code]
    assert result.problems[0].message == zip_format.NESTED_ZIP.format(found="set.zip")


def test_a_zip_with_no_dataset_file_names_what_it_holds() -> None:
    result = check(make_zip({"readme.txt": b"hi", "files/a.csv": b"x"}), "upload.zip")

    assert codes(result.problems) == [zip_format.NO_DATASET_FILE.code]
    assert result.problems[0].file == "upload.zip"
    assert result.problems[0].message == zip_format.NO_DATASET_FILE.format(
        found="readme.txt, files/"
    )


def test_a_zip_with_two_dataset_files_names_both() -> None:
    data = make_zip({"tasks.json": dataset_json(task("a")), "more.csv": b"prompt\nHi\n"})

    result = check(data)

    assert codes(result.problems) == [zip_format.SEVERAL_DATASET_FILES.code]
    assert result.problems[0].message == zip_format.SEVERAL_DATASET_FILES.format(
        count=2, found="tasks.json, more.csv"
    )


def test_problems_inside_the_dataset_file_name_the_member() -> None:
    data = make_zip({"my-set/dataset.json": b'{"tasks": [{"id": "a"}]}'})

    result = check(data)

    assert result.problems
    assert {problem.file for problem in result.problems} == {"my-set/dataset.json"}


def test_an_empty_zip_has_no_dataset_file() -> None:
    result = check(make_zip({}))

    assert result.problems[0].message == zip_format.NO_DATASET_FILE.format(found="nothing")


# Storing the checked files ---------------------------------------------------------------


def test_iter_attachments_streams_each_stored_file_once(tmp_path: Any) -> None:
    upload = tmp_path / "set.zip"
    upload.write_bytes(
        make_zip(
            {
                "dataset.json": dataset_json(
                    task("a", inputs=["revenue.csv"], expected=["summary.md"]),
                    task("b", inputs=["revenue.csv", "https://example.com/x.csv"]),
                ),
                "revenue.csv": REVENUE,
                "summary.md": SUMMARY,
            }
        )
    )
    plan = check(upload.read_bytes()).plan

    stored = {
        spec.path: stream.read() for spec, stream in zip_format.iter_attachments(upload, plan)
    }

    assert stored == {"revenue.csv": REVENUE, "summary.md": SUMMARY}


def test_iter_attachments_refuses_a_zip_changed_since_the_check() -> None:
    plan = check(
        make_zip({"dataset.json": dataset_json(task("a", inputs=["a.txt"])), "a.txt": b"checked"})
    ).plan
    changed = make_zip({"a.txt": b"swapped"})

    with pytest.raises(ArchiveError):
        for _spec, stream in zip_format.iter_attachments(io.BytesIO(changed), plan):
            stream.read()


def test_open_member_streams_one_member_and_enforces_its_limit() -> None:
    data = make_zip({"a.txt": b"x" * 5000})

    with zip_format.open_member(io.BytesIO(data), "a.txt") as stream:
        assert stream.read() == b"x" * 5000
    with (
        zip_format.open_member(io.BytesIO(data), "a.txt", max_bytes=4999) as stream,
        pytest.raises(ArchiveError),
    ):
        stream.read()
    with pytest.raises(ArchiveError):
        zip_format.open_member(io.BytesIO(data), "missing.txt")


# Export and the template -----------------------------------------------------------------


def _stored_spec() -> tuple[DatasetSpec, dict[str, bytes]]:
    contents = {"s1": REVENUE, "s2": SUMMARY}

    def stored(name: str, key: str) -> FileSpec:
        data = contents[key]
        return FileSpec(
            name=name, path=key, size=len(data), sha256=hashlib.sha256(data).hexdigest()
        )

    spec = DatasetSpec(
        name="Export",
        tasks=(
            TaskSpec(
                id="sum/../up",  # ids are the user's: the export must keep them inside files/
                name="Sum",
                prompt="Sum it.",
                expected_text="250",
                input_files=(stored("revenue.csv", "s1"),),
                expected_files=(stored("summary.md", "s2"),),
            ),
            TaskSpec(
                id="again",
                name="Again",
                prompt="Again.",
                expected_text="250",
                input_files=(
                    stored("revenue.csv", "s1"),
                    FileSpec(name="a.pdf", url="https://example.com/a.pdf"),
                ),
            ),
        ),
    )
    return spec, contents


def _contents_by_sha(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {
            hashlib.sha256(zf.read(info)).hexdigest(): zf.read(info)
            for info in zf.infolist()
            if not info.filename.startswith("dataset.")
        }


@pytest.mark.parametrize("inner", ["json", "csv"])
def test_an_export_checks_back_as_the_same_tasks_and_file_bytes(inner: str) -> None:
    spec, contents = _stored_spec()
    out = io.BytesIO()

    warnings = zip_format.write(
        spec, out, open_file=lambda attached: io.BytesIO(contents[attached.path]), inner=inner
    )

    result = check(out.getvalue(), "export.zip")
    assert result.ok, result.problems
    assert result.warnings == ()
    assert isinstance(warnings, list)
    by_id = {task.id: task for task in result.plan.tasks}
    for original in spec.tasks:
        back = by_id[original.id]
        assert back.prompt == original.prompt
        for before, after in zip(
            (*original.input_files, *original.expected_files),
            (*back.input_files, *back.expected_files),
            strict=True,
        ):
            assert (after.name, after.url, after.size, after.sha256) == (
                before.name,
                before.url,
                before.size,
                before.sha256,
            )
    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
    assert all(name.startswith("files/") for name in names if name != f"dataset.{inner}")
    # The same file attached twice is written once.
    assert sum(1 for name in names if name.endswith("revenue.csv")) == 1


def test_an_export_leaves_out_a_file_storage_lost_and_says_so() -> None:
    spec, contents = _stored_spec()
    out = io.BytesIO()

    warnings = zip_format.write(
        spec,
        out,
        open_file=lambda attached: (
            None if attached.name == "summary.md" else io.BytesIO(contents[attached.path])
        ),
    )

    assert warnings == [
        zip_format.FILE_UNAVAILABLE_WARNING.format(task="sum/../up", name="summary.md")
    ]
    result = check(out.getvalue())
    assert result.ok, result.problems
    assert result.plan.tasks[0].expected_files == ()


def test_the_files_in_and_out_template_passes_the_checker() -> None:
    data = zip_format.files_in_and_out_template()

    result = check(data, "files-in-and-out.zip")

    assert result.problems == ()
    assert result.warnings == ()
    assert result.plan.description == zip_format.TEMPLATE_DESCRIPTION
    summary, linked = result.plan.tasks
    assert [f.path for f in summary.input_files] == ["files/quarterly-summary/input/revenue.csv"]
    assert [f.path for f in summary.expected_files] == [
        "files/quarterly-summary/expected/summary.md"
    ]
    assert linked.input_files[0].url.startswith("https://")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        revenue = zf.read("files/quarterly-summary/input/revenue.csv").decode()
    assert revenue.splitlines()[0] == "quarter,revenue_usd_millions"
    assert zip_format.files_in_and_out_template() == data  # the same bytes every time


@settings(max_examples=40, deadline=None)
@given(dataset_specs(with_paths=True))
def test_any_valid_plan_exports_and_checks_back_the_same(spec: DatasetSpec) -> None:
    def content(attached: FileSpec) -> bytes:
        return f"contents of {attached.path}\n".encode()

    out = io.BytesIO()
    zip_format.write(spec, out, open_file=lambda attached: io.BytesIO(content(attached)))

    result = check(out.getvalue(), "export.zip")

    assert result.ok, result.problems
    back = result.plan
    without_files = {"input_files": (), "expected_files": ()}
    assert dataclasses.replace(back, tasks=()) == dataclasses.replace(spec, tasks=())
    with zipfile.ZipFile(out) as zf:
        for original, task in zip(spec.tasks, back.tasks, strict=True):
            assert dataclasses.replace(task, **without_files) == dataclasses.replace(
                original, **without_files
            )
            pairs = zip(
                (*original.input_files, *original.expected_files),
                (*task.input_files, *task.expected_files),
                strict=True,
            )
            for before, after in pairs:
                assert (after.name, after.url) == (before.name, before.url)
                if before.path is not None:
                    assert zf.read(after.path) == content(before)
                    assert after.sha256 == hashlib.sha256(content(before)).hexdigest()
