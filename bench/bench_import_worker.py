"""Importing a .zip of 200 files of 1 MiB through a real Celery worker (Redis on
127.0.0.1:6379): the worker's peak memory growth (goal 64 MiB: members are streamed to
storage in chunks, never held whole) and the import's time from enqueue to "imported"
against copying the same members out of the zip into a folder with shutil.copyfileobj
(goal 2x). Best of several runs, side by side, on a throwaway SQLite database and media
folder. Prints "skipped (no Redis)" when no Redis answers.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
WORK = Path(tempfile.mkdtemp(prefix="bench-import-"))
os.environ["DATABASE_URL"] = f"sqlite:///{WORK / 'db.sqlite3'}"
os.environ["MEDIA_ROOT"] = str(WORK / "media")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")
BROKER_URL = "redis://127.0.0.1:6379/13"
REPEATS = 3
MEMORY_GOAL_MIB = 64
TIME_GOAL = 2.0
MiB = 1024 * 1024


def redis_answers() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return False
    return True


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def pool_child(pid: int) -> int:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(children[0])


def copy_members(path: Path) -> float:
    out = Path(tempfile.mkdtemp(dir=WORK))
    start = time.perf_counter()
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.filename.startswith("files/"):
                target = out / Path(info.filename).name
                with zf.open(info) as src, target.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
    elapsed = time.perf_counter() - start
    shutil.rmtree(out)
    return elapsed


def main() -> None:
    if not redis_answers():
        print("bench import_worker_memory: skipped (no Redis)")
        print("bench import_worker_time: skipped (no Redis)")
        return
    import django

    django.setup()
    from bench_checker_zip import build
    from django.contrib.auth import get_user_model
    from django.core.files import File
    from django.core.management import call_command

    from contextevals.celery import app
    from datasets_app import tasks
    from datasets_app.models import Dataset, Upload
    from datasets_app.services import imports

    call_command("migrate", verbosity=0)
    owner = get_user_model().objects.create_user(username="bench")

    queue = f"bench-{uuid.uuid4().hex[:12]}"
    app.conf.update(task_always_eager=False, broker_url=BROKER_URL)
    env = {**os.environ, "CELERY_BROKER_URL": BROKER_URL}
    log = (WORK / "worker.log").open("wb")
    command = [sys.executable, "-m", "celery", "-A", "contextevals", "worker", "-Q", queue]
    command += [
        "-c",
        "1",
        "-n",
        f"{queue}@%h",
        "--without-gossip",
        "--without-mingle",
        "-l",
        "INFO",
    ]
    worker = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        growth, times, copies = [], [], []
        for run in range(REPEATS):
            # Members of new bytes each run: an import stores bytes it already holds only
            # once, so importing the same zip again would write nothing and time nothing.
            zip_path = WORK / f"bench-{run}.zip"
            build(zip_path, seed=run)
            dataset = Dataset.objects.create(owner=owner, name=f"Bench {run}")
            with zip_path.open("rb") as source:
                upload = imports.upload_create(
                    owner=owner, dataset=dataset, uploaded_file=File(source, name="bench.zip")
                )
            imports.upload_check(upload=upload)
            # Warm the worker up on the first run (imports, connections) before measuring.
            if run == 0:
                deadline = time.monotonic() + 30
                while not (WORK / "worker.log").read_text(errors="replace").count(" ready."):
                    if time.monotonic() > deadline:
                        raise SystemExit("the worker did not start")
                    time.sleep(0.1)
            child = pool_child(worker.pid)
            before = status_kib(child, "VmRSS")
            Upload.objects.filter(pk=upload.pk).update(state=Upload.State.IMPORTING)
            start = time.perf_counter()
            tasks.import_upload.apply_async(args=[upload.pk, "add"], queue=queue)
            while Upload.objects.filter(pk=upload.pk, state=Upload.State.IMPORTING).exists():
                time.sleep(0.01)
            times.append(time.perf_counter() - start)
            assert Upload.objects.get(pk=upload.pk).state == Upload.State.IMPORTED
            growth.append((status_kib(child, "VmHWM") - before) / 1024)
            copies.append(copy_members(zip_path))
    finally:
        os.killpg(worker.pid, 9)
        worker.wait()
        log.close()
        app.connection_for_write(BROKER_URL).default_channel.queue_delete(queue)
        shutil.rmtree(WORK, ignore_errors=True)

    peak = max(growth)
    print(
        f"bench import_worker_memory: {peak:.1f} MiB (goal {MEMORY_GOAL_MIB} MiB) "
        + ("ok" if peak <= MEMORY_GOAL_MIB else "FAIL")
    )
    ratio = min(times) / min(copies)
    print(
        f"bench import_worker_time: {ratio:.1f}x copyfileobj (goal {TIME_GOAL:g}x) "
        + ("ok" if ratio <= TIME_GOAL else "FAIL")
    )


if __name__ == "__main__":
    main()
