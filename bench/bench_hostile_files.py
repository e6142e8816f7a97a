"""Hostile files: each is checked as a worker checks an upload, in a process of its own,
and must finish within 30 s and 512 MiB of peak RSS (issue 15's goal for any file under the
upload limit). Each line prints the file, its size, the seconds and the peak RSS of the
check, and what the check said.

The files are the attacks of issue 15 (and their near misses, just under each cap):
- xlsx_billion_row: one empty cell at row 1,000,000,000 (a 2 KB workbook).
- xlsx_huge_string: one 190 MiB shared string (a 195 KB workbook).
- xlsx_string_at_cap: one 63 MiB shared string (just under the 64 MiB cap) in 2,000 cells.
- xlsx_1m_rows: 1,048,576 rows, a value in each.
- xlsx_shared_strings_at_cap: a shared-string table just under the 64 MiB cap.
- xlsx_sheet_dense: 20,000 rows × 100 cells (4 million XML elements).
- xlsx_sheet_largest: the largest sheet a file can import (1,000 tasks × 20 criteria rows,
  17 columns of inline text, as our own export writes it): it must import, not only fail fast.
- zip_zeros: 2,000 attached files of 1 MiB of zeros (a 2.3 MB zip, 2 GiB unzipped).
- zip_overlapping: 1,000 entries, each quoting the next one's header (CVE-2024-0450).
- jsonl_deep: a .jsonl eval set nested 10,000 deep.
- json_million_criteria: 1,000 tasks × 1,000 criteria (a 30 MB .json).
- json_huge_prompt / csv_huge_prompt: one 49 MiB prompt.
- json_deep: a .json array nested 10,000 deep.
- json_two_million_records / _values / _criteria: 2,000,000 records, values as tasks, or
  values as one task's criteria (far past the 1,000-task and criteria limits).
- json_many_keys: an object of 400,000 keys beside an empty task list.

Run: `.venv/bin/python bench/bench_hostile_files.py [NAME...]` (also in `make bench`); the
check is `manage.py check_dataset_file PATH`, the command a person runs, with the worker's
code; a file that can be imported is then imported with `manage.py import_dataset_file
PATH --new` (a throwaway SQLite database and media folder), and measured the same way.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from timing import verdict  # noqa: E402

MiB = 1024 * 1024
TIME_GOAL = 30.0
RSS_GOAL_MIB = 512
HEADER = ("Task ID", "Prompt", "Expected Answer")
MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


# --- Workbooks, written part by part (openpyxl cannot write what attacks are made of) ------


def _xlsx(path: Path, sheet_rows: Callable[[], object], shared: list[str] | None = None) -> None:
    """A one-sheet workbook whose sheet XML is streamed from `sheet_rows` (chunks of bytes)."""
    content_types = (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="'
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
        + (
            '<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
            if shared is not None
            else ""
        )
        + "</Types>"
    )
    rels = (
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
        'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://'
        'schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
        'Target="xl/workbook.xml"/></Relationships>'
    )
    workbook = (
        f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{MAIN_NS}" xmlns:r="http://'
        'schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet '
        'name="Tasks" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )
    workbook_rels = (
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
        'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://'
        'schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
        'Target="worksheets/sheet1.xml"/></Relationships>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", content_types)
        zf.writestr("_rels/.rels", rels)
        zf.writestr("xl/workbook.xml", workbook)
        zf.writestr("xl/_rels/workbook.xml.rels", workbook_rels)
        if shared is not None:
            with zf.open("xl/sharedStrings.xml", "w", force_zip64=True) as out:
                out.write(f'<sst xmlns="{MAIN_NS}">'.encode())
                for text in shared:
                    out.write(f"<si><t>{text}</t></si>".encode())
                out.write(b"</sst>")
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as out:
            out.write(f'<worksheet xmlns="{MAIN_NS}"><sheetData>'.encode())
            for chunk in sheet_rows():  # type: ignore[attr-defined]
                out.write(chunk)
            out.write(b"</sheetData></worksheet>")


def _inline(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'


def _header_row() -> bytes:
    cells = "".join(_inline(f"{col}1", name) for col, name in zip("ABC", HEADER, strict=True))
    return f'<row r="1">{cells}</row>'.encode()


def xlsx_billion_row(path: Path) -> None:
    def rows():
        yield _header_row()
        yield b'<row r="2">' + _inline("A2", "t1").encode() + _inline("B2", "Q").encode()
        yield _inline("C2", "A").encode() + b"</row>"
        yield b'<row r="1000000000"><c r="A1000000000" s="0"/></row>'

    _xlsx(path, rows)


def xlsx_huge_string(path: Path) -> None:
    def rows():
        yield _header_row()
        yield b'<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2" t="s"><v>0</v></c></row>'

    _xlsx(path, rows, shared=["x" * (190 * MiB)])


def xlsx_string_at_cap(path: Path) -> None:
    """One shared string just under the cap on a part, referenced by every cell."""

    def rows():
        yield _header_row()
        for number in range(2, 1_002):
            yield (
                f'<row r="{number}"><c r="A{number}" t="s"><v>0</v></c>'
                f'<c r="B{number}" t="s"><v>0</v></c></row>'
            ).encode()

    _xlsx(path, rows, shared=["x" * (63 * MiB)])


def xlsx_1m_rows(path: Path) -> None:
    def rows():
        yield _header_row()
        batch = []
        for number in range(2, 1_048_577):
            batch.append(f'<row r="{number}"><c r="A{number}"><v>{number}</v></c></row>')
            if len(batch) == 10_000:
                yield "".join(batch).encode()
                batch = []
        yield "".join(batch).encode()

    _xlsx(path, rows)


def xlsx_shared_strings_at_cap(path: Path) -> None:
    # 20,000 rows, each prompt and answer its own string of ~1,550 characters: 60 MiB.
    rows_count = 20_000
    shared = [f"{n:08d}" + "s" * 1_540 for n in range(2 * rows_count)]

    def rows():
        yield _header_row()
        for number in range(2, rows_count + 1):
            index = 2 * (number - 2)
            yield (
                f'<row r="{number}">{_inline(f"A{number}", f"t{number}")}'
                f'<c r="B{number}" t="s"><v>{index}</v></c>'
                f'<c r="C{number}" t="s"><v>{index + 1}</v></c></row>'
            ).encode()

    _xlsx(path, rows, shared=shared)


def xlsx_sheet_dense(path: Path) -> None:
    # 20,000 rows of 100 numeric cells (the most columns a sheet may use): 4 million elements.
    columns = [_column(n) for n in range(1, 101)]

    def rows():
        yield _header_row()
        for number in range(2, 20_001):
            cells = "".join(f'<c r="{col}{number}"><v>{number}</v></c>' for col in columns[3:])
            yield (
                f'<row r="{number}">{_inline(f"A{number}", f"t{number}")}'
                f"{_inline(f'B{number}', 'Question')}{_inline(f'C{number}', 'Answer')}"
                f"{cells}</row>"
            ).encode()

    _xlsx(path, rows)


NOTES = [f"Note {n}" for n in range(1, 13)]


def xlsx_sheet_largest(path: Path) -> None:
    """The largest sheet a file can import: 1,000 tasks of 20 criteria rows, 17 columns of
    inline text (what our own export writes)."""
    header = ["Task ID", "Prompt", "Expected Answer", "Criterion", "Weight", *NOTES]
    columns = [_column(n) for n in range(1, len(header) + 1)]

    def row(number: int, values: list[str]) -> bytes:
        cells = "".join(
            _inline(f"{col}{number}", value) for col, value in zip(columns, values, strict=True)
        )
        return f'<row r="{number}">{cells}</row>'.encode()

    def rows():
        yield row(1, header)
        for index in range(19_999):
            task = index // 20
            values = [f"t{task}", f"Question {task}?", "", f"Says {index}", "1"]
            yield row(index + 2, values + [f"note {index}"] * len(NOTES))

    _xlsx(path, rows)


def _column(number: int) -> str:
    name = ""
    while number:
        number, rest = divmod(number - 1, 26)
        name = chr(65 + rest) + name
    return name


# --- Zips ------------------------------------------------------------------------------


def zip_zeros(path: Path) -> None:
    zeros = bytes(MiB)
    tasks = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for number in range(2_000):
            zf.writestr(f"files/{number}.bin", zeros)
        for number in range(1_000):
            attached = [f"files/{2 * number}.bin", f"files/{2 * number + 1}.bin"]
            task = {"id": f"t{number}", "prompt": "Q", "expected": "A", "inputFiles": attached}
            tasks.append(task)
        zf.writestr("dataset.json", json.dumps({"tasks": tasks}))


def zip_overlapping(path: Path) -> None:
    """1,000 stored entries, each one's data being every entry after it (headers included):
    a few MB on disk that unzip to over a gigabyte."""
    when = (2024, 1, 1, 0, 0, 0)
    kernel = b"x" * 2_000
    tail = b""
    infos: list[zipfile.ZipInfo] = []
    for number in reversed(range(1_000)):
        info = zipfile.ZipInfo(f"files/{number}.bin", date_time=when)
        data = tail + kernel
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = info.compress_size = len(data)
        info.CRC = zlib.crc32(data)
        tail = info.FileHeader() + data
        infos.insert(0, info)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        tasks = [{"id": "t", "prompt": "Q", "expected": "A", "inputFiles": ["files/0.bin"]}]
        zf.writestr("dataset.json", json.dumps({"tasks": tasks}))
        start = zf.fp.tell()  # type: ignore[union-attr]
        zf.fp.write(tail)  # type: ignore[union-attr]
        offset = start
        for info in infos:
            info.header_offset = offset
            offset += len(info.FileHeader())
            zf.filelist.append(info)
            zf.NameToInfo[info.filename] = info
        zf.start_dir = zf.fp.tell()  # type: ignore[union-attr]
    path.write_bytes(out.getvalue())


# --- Text formats ----------------------------------------------------------------------


def jsonl_deep(path: Path) -> None:
    deep = "[" * 10_000 + "]" * 10_000
    path.write_text('{"question": "Q", "meta": ' + deep + "}\n")


def json_million_criteria(path: Path) -> None:
    criteria = ",".join(f'{{"id":"c{n}","criterion":"Mentions {n}"}}' for n in range(1_000))
    tasks = ",".join(
        f'{{"id":"t{n}","prompt":"Question {n}","criteria":[{criteria}]}}' for n in range(1_000)
    )
    path.write_text(f'{{"tasks":[{tasks}]}}')


def json_huge_prompt(path: Path) -> None:
    path.write_text(json.dumps({"tasks": [{"prompt": "p" * (49 * MiB), "expected": "A"}]}))


def csv_huge_prompt(path: Path) -> None:
    path.write_text("prompt,expected_answer\n" + "p" * (49 * MiB) + ",A\n")


def json_deep(path: Path) -> None:
    path.write_text("[" * 10_000 + "]" * 10_000)


def json_two_million_records(path: Path) -> None:
    path.write_text("[" + ",".join(['{"q": 1}'] * 2_000_000) + "]")


def json_two_million_values(path: Path) -> None:
    path.write_text('{"tasks": [' + ",".join(["1"] * 2_000_000) + "]}")


def json_two_million_criteria(path: Path) -> None:
    many = ",".join(["1"] * 2_000_000)
    path.write_text('{"tasks": [{"prompt": "p", "criteria": [' + many + "]}]}")


def json_many_keys(path: Path) -> None:
    path.write_text("{" + ",".join(f'"k{n}": 1' for n in range(400_000)) + ', "tasks": []}')


FILES: dict[str, Callable[[Path], None]] = {
    "xlsx_billion_row.xlsx": xlsx_billion_row,
    "xlsx_huge_string.xlsx": xlsx_huge_string,
    "xlsx_string_at_cap.xlsx": xlsx_string_at_cap,
    "xlsx_1m_rows.xlsx": xlsx_1m_rows,
    "xlsx_shared_strings_at_cap.xlsx": xlsx_shared_strings_at_cap,
    "xlsx_sheet_dense.xlsx": xlsx_sheet_dense,
    "xlsx_sheet_largest.xlsx": xlsx_sheet_largest,
    "zip_zeros.zip": zip_zeros,
    "zip_overlapping.zip": zip_overlapping,
    "jsonl_deep.jsonl": jsonl_deep,
    "json_million_criteria.json": json_million_criteria,
    "json_huge_prompt.json": json_huge_prompt,
    "csv_huge_prompt.csv": csv_huge_prompt,
    "json_deep.json": json_deep,
    "json_two_million_records.json": json_two_million_records,
    "json_two_million_values.json": json_two_million_values,
    "json_two_million_criteria.json": json_two_million_criteria,
    "json_many_keys.json": json_many_keys,
}


# Each run is a management command in a new process that reports its own peak RSS (VmHWM,
# which starts afresh at exec; the kernel's ru_maxrss of a child would include this
# process's own peak, since it carries over through fork and exec).
_CHILD = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")
from django.core.management import execute_from_command_line
try:
    execute_from_command_line(["manage.py", *sys.argv[1:]])
except SystemExit:
    pass
finally:
    with open("/proc/self/status") as status:
        peak = next(line for line in status if line.startswith("VmHWM:"))
    print("PEAK", int(peak.split()[1]), file=sys.stderr)
"""


def run(*args: str, env: dict[str, str] | None = None) -> tuple[float, float, str, str]:
    """(seconds, peak RSS in MiB, stdout, stderr) of `manage.py ARGS` in a new process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    seconds = time.perf_counter() - started
    peak = [line for line in done.stderr.splitlines() if line.startswith("PEAK ")]
    rss = int(peak[-1].split()[1]) / 1024 if peak else float("inf")
    return seconds, rss, done.stdout, done.stderr


def measure(path: Path) -> tuple[float, float, str, bool]:
    """(seconds, peak RSS in MiB, what it said, whether it can be imported) of checking
    `path` as `manage.py check_dataset_file PATH --json` does."""
    seconds, rss, stdout, stderr = run("check_dataset_file", str(path), "--json")
    try:
        result = json.loads(stdout)
        problems = result["problems"]
        said = (
            f"{len(problems)} problem(s), first: {problems[0]['message'][:90]}"
            if problems
            else f"ok, {result['task_count']} tasks"
        )
        return seconds, rss, said, bool(result["ok"])
    except (ValueError, KeyError, IndexError):
        return seconds, rss, f"no JSON: {stderr[-300:]}", False


def line(what: str, name: str, size: int, seconds: float, rss: float) -> bool:
    ok = seconds <= TIME_GOAL and rss <= RSS_GOAL_MIB
    print(
        f"bench hostile {what} {name} ({size / MiB:.1f} MiB): {seconds:.1f} s, {rss:.0f} MiB "
        f"(goal {TIME_GOAL:.0f} s, {RSS_GOAL_MIB} MiB) {verdict(ok)}"
    )
    return ok


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under `folder` (0 when there is none)."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def main() -> int:
    """Check every file; import those that can be, into a throwaway SQLite database and
    media folder (as `import_dataset_file --new` does, on the eager path)."""
    failed = False
    only = sys.argv[1:]
    with tempfile.TemporaryDirectory() as folder:
        media = Path(folder) / "media"
        env = {
            "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
            "MEDIA_ROOT": str(media),
            "CELERY_BROKER_URL": "",
        }
        run("migrate", "--no-input", env=env)
        create = "from django.contrib.auth.models import User; User.objects.create_superuser('b')"
        run("shell", "-c", create, env=env)
        for name, build in FILES.items():
            if only and not any(word in name for word in only):
                continue
            path = Path(folder) / name
            build(path)
            size = path.stat().st_size
            seconds, rss, said, importable = measure(path)
            failed |= not line("check", name, size, seconds, rss)
            print(f"  {said}", file=sys.stderr)
            if importable:
                seconds, rss, _, _ = run("import_dataset_file", str(path), "--new", env=env)
                failed |= not line("import", name, size, seconds, rss)
                stored = folder_bytes(media / "task-files") / MiB
                print(f"  {stored:.1f} MiB of attached files stored in all", file=sys.stderr)
            path.unlink()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
