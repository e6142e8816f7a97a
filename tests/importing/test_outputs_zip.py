"""Outputs in a .zip: the outputs file at the top and each task's files under
files/<task id>/, screened as an import's zip is; every problem named by its path."""

from __future__ import annotations

import io
import stat
import zipfile

from datasets_app.importing import outputs, outputs_zip, zip_format
from datasets_app.importing.outputs_zip import read_outputs_file as read_outputs

IDS = {"t1", "t2", "t3"}


def zipped(members: dict[str, bytes], *, links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_each_task_s_files_come_with_its_output_and_files_alone_are_an_output():
    data = zipped(
        {
            "outputs.jsonl": b'{"task": "t1", "output": "see the file"}\n'
            b'{"task": "t2", "output": "x"}\n',
            "files/t1/report.csv": b"a,b\n1,2\n",
            "files/t3/out/summary.md": b"# Done\n",
            "__MACOSX/._report.csv": b"junk",
        }
    )
    read = read_outputs(data, "run.zip", IDS)
    assert read.ok and read.format == "zip"
    assert read.outputs["t1"].files == (outputs.OutputFile("report.csv", "files/t1/report.csv", 8),)
    assert read.outputs["t2"].files == ()
    alone = read.outputs["t3"]
    assert (alone.output, [f.name for f in alone.files], alone.answered) == (
        "",
        ["out/summary.md"],
        True,
    )


def test_every_problem_of_a_zip_is_named_by_its_path_in_the_archive():
    data = zipped(
        {
            "outputs.csv": b"task,output\nt1,a\nt7,b\n",
            "files/t9/x.txt": b"x",
            "notes.txt": b"stray",
            "files/t2": b"a file where the folder should be",
        }
    )
    read = read_outputs(data, "run.zip", IDS)
    assert [(p.file, p.row, p.code) for p in read.problems] == [
        ("outputs.csv", 3, outputs.UNKNOWN_TASK.code),
        ("files/t9/x.txt", None, outputs.UNKNOWN_TASK.code),
        ("notes.txt", None, outputs_zip.STRAY_MEMBER.code),
        ("files/t2", None, outputs_zip.STRAY_MEMBER.code),
    ]
    assert read.problems[1].message == 'The dataset has no task "t9".'


def test_a_hostile_zip_is_refused_whole_before_anything_is_read():
    data = zipped(
        {"outputs.jsonl": b'{"task": "t1", "output": "a"}\n', "files/t1/../../evil": b"x"},
        links=("files/t1/link",),
    )
    read = read_outputs(data, "run.zip", IDS)
    assert [(p.file, p.code) for p in read.problems] == [
        ("files/t1/../../evil", zip_format.UNSAFE_PATH.code),
        ("files/t1/link", zip_format.SYMLINK.code),
    ]
    assert not read.outputs


def test_a_zip_without_one_outputs_file_or_not_a_zip_says_so():
    none = read_outputs(zipped({"files/t1/a.txt": b"a"}), "run.zip", IDS)
    assert [p.code for p in none.problems] == [outputs_zip.NO_OUTPUTS_FILE.code]
    assert "It holds: files/." in none.problems[0].message
    two = read_outputs(zipped({"a.jsonl": b"", "b.csv": b""}), "run.zip", IDS)
    assert [p.code for p in two.problems] == [outputs_zip.SEVERAL_OUTPUTS_FILES.code]
    named = zipped({"outputs.jsonl": b'{"task": "t1", "output": "a"}\n', "b.csv": b""})
    assert read_outputs(named, "run.zip", IDS).problems[-1].file == "b.csv"  # stray
    broken = read_outputs(b"PK\x03\x04 not really", "run.zip", IDS)
    assert [p.code for p in broken.problems] == [zip_format.NOT_A_ZIP.code]


def test_too_many_files_for_a_task_and_a_csv_s_column_question_inside_a_zip():
    files = {f"files/t1/{i}.txt": b"x" for i in range(outputs_zip.MAX_FILES_PER_TASK + 1)}
    data = zipped({"outputs.jsonl": b'{"task": "t1", "output": "a"}\n', **files})
    read = read_outputs(data, "run.zip", IDS)
    assert [(p.file, p.code) for p in read.problems] == [
        ("files/t1/", outputs_zip.TOO_MANY_FILES.code)
    ]
    asked = read_outputs(
        zipped({"outputs.csv": b"id,answer,response\nt1,a,b\n", "files/t1/r.txt": b"r"}),
        "run.zip",
        IDS,
    )
    assert asked.mapping_due and asked.ask["output"] == ("response", "answer")
    chosen = read_outputs(
        zipped({"outputs.csv": b"id,answer,response\nt1,a,b\n", "files/t1/r.txt": b"r"}),
        "run.zip",
        IDS,
        mapping={"output": "answer"},
    )
    assert chosen.ok and chosen.outputs["t1"].output == "a"
    assert [f.name for f in chosen.outputs["t1"].files] == ["r.txt"]
