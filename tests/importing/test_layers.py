"""The importer's modules form layers (docs/architecture.md): no module imports another
inside a function to dodge a cycle, and no import cycle is left (issue 26: json_format and
jsonl_format imported each other; the JSON text layer now sits below both)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "datasets_app" / "importing"
PREFIX = "datasets_app.importing"


def _module_name(path: Path) -> str:
    """`json_format`, `shapes` (a package's `__init__`), `shapes.base`."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path) for path in PACKAGE.rglob("*.py")}


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The importing package's modules that one import statement names: `from package
    import module` names the module, `from module import name` the module."""
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    else:
        module = node.module or ""
        names = {
            f"{module}.{alias.name}"
            if f"{module}.{alias.name}".removeprefix(PREFIX + ".") in MODULES
            else module
            for alias in node.names
        }
    return {name.removeprefix(PREFIX + ".") for name in names if name.startswith(PREFIX + ".")}


def _imports() -> dict[str, tuple[set[str], list[str]]]:
    """Each module: the package's modules it imports, and those imported inside functions."""
    found: dict[str, tuple[set[str], list[str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {
            name
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
            for name in _imported(node)
        }
        inner = [
            f"{_module_name(path)}:{node.lineno}"
            for function in ast.walk(tree)
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(function)
            if isinstance(node, ast.Import | ast.ImportFrom) and _imported(node)
        ]
        found[_module_name(path)] = (top, inner)
    return found


def test_no_module_of_the_importer_imports_another_inside_a_function():
    inner = [place for _, places in _imports().values() for place in places]

    assert inner == []


def test_the_importer_s_modules_import_each_other_in_one_direction():
    graph = {module: deps for module, (deps, _) in _imports().items()}
    cycles = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            module, path = stack.pop()
            for dep in graph.get(module, ()):
                if dep == start:
                    cycles.append(" -> ".join([*path, dep]))
                elif dep not in seen:
                    seen.add(dep)
                    stack.append((dep, [*path, dep]))

    assert cycles == []
    # The JSON text layer is below both JSON readers; JSON Lines never reads through JSON's.
    assert graph["json_text"].isdisjoint({"json_format", "jsonl_format"})
    assert "json_format" not in graph["jsonl_format"]
