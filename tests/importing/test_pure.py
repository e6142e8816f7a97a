"""The importing package is pure Python: nothing in it imports Django."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

PROBE = """
import importlib, pkgutil, sys
import datasets_app.importing as package
names = [info.name for info in pkgutil.iter_modules(package.__path__, package.__name__ + ".")]
for name in names:
    importlib.import_module(name)
print(len(names))
print(sorted(name for name in sys.modules if name == "django" or name.startswith("django.")))
"""


def test_no_module_under_importing_imports_django():
    completed = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    count, django_modules = completed.stdout.splitlines()

    assert int(count) >= 5  # spec, document, json_format, jsonl_format, checker, ...
    assert django_modules == "[]"
