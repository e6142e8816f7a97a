"""The importing package is pure Python: nothing in it imports Django."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

PROBE = """
import importlib, pkgutil, sys
package = importlib.import_module(sys.argv[1])
names = [
    info.name
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    if not info.name.endswith(".__main__")
]
for name in names:
    importlib.import_module(name)
print(len(names))
print(sorted(name for name in sys.modules if name == "django" or name.startswith("django.")))
"""


def modules_and_django_imports(package: str) -> tuple[int, str]:
    """How many modules `package` has (all imported, in a fresh interpreter without Django
    settings), and the Django modules that importing them loaded."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, package],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    count, django_modules = completed.stdout.splitlines()
    return int(count), django_modules


def test_no_module_under_importing_imports_django():
    count, django_modules = modules_and_django_imports("datasets_app.importing")

    assert count >= 5  # spec, document, json_format, jsonl_format, checker, ...
    assert django_modules == "[]"
