"""The program a sandboxed check runs: `python -I -S harness.py CONFIG`, one process per check.

In order, before any of the author's code is read: load Verdict and the views (trusted code,
from their files), set the resource limits, give up privileges, restrict itself with Landlock
and seccomp, and say "ready" on the reply pipe. Only then does the launcher send the code,
the task and the output on stdin; the code runs, and the harness writes what `verify`
returned, or why it failed, as one JSON line on the reply pipe.

What the code prints goes to stdout and stderr, which the launcher reads apart from the reply
and throws away (counted against the output limit): a print can never be taken for a verdict.
The code runs in this same interpreter, so it could write to the reply pipe itself; that
gains it nothing it could not get by returning a verdict, and the launcher accepts nothing
after "ready" but a verdict it validates again or one of the code's own failures.

Standard library only; run as a script, never imported by the app.
"""

from __future__ import annotations

import json
import os
import sys
import types

# typing is not imported at run time: each module the harness loads costs every check.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CHECK_FILENAME = "check.py"
# Lines of traceback kept for code_crash: the end of what the author's own code did.
TRACEBACK_FRAMES = 5
MAX_DETAIL_CHARS = 4_000
BAD_RETURN = (
    "verify(task, output) must return a Verdict: Verdict.boolean(passed=..., reasoning=...) "
    "or Verdict.score(value, reasoning=...), from `from context_verifiers import Verdict`"
)
NO_VERIFY = "The code must define a function verify(task, output) that returns a Verdict"


def _reply(fd: int, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode() + b"\n"
    while data:
        data = data[os.write(fd, data) :]


def _load_library(files: dict[str, str]) -> types.ModuleType:
    """`context_verifiers` as the check sees it: Verdict and the views, nothing else (the
    package's other modules need what the sandbox does not let in, and hold no use here)."""
    import importlib.util

    package = types.ModuleType("context_verifiers")
    package.__path__ = []  # a package with nothing more to import from disk
    sys.modules["context_verifiers"] = package
    for name in ("verdict", "views"):
        spec = importlib.util.spec_from_file_location(f"context_verifiers.{name}", files[name])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        setattr(package, name, module)
    package.Verdict = package.verdict.Verdict  # type: ignore[attr-defined]
    for name in ("TaskView", "OutputView", "FileView", "CriterionView"):
        setattr(package, name, getattr(package.views, name))
    return package


def _restrict(config: dict[str, Any]) -> None:
    sys.path.insert(0, config["sandbox_dir"])
    try:
        # Siblings loaded by their own names: the package's __init__ is not for the sandbox.
        import landlock  # type: ignore[import-not-found]
        import rlimits  # type: ignore[import-not-found]
        import seccomp  # type: ignore[import-not-found]
    finally:
        del sys.path[0]
    rlimits.apply(**config["limits"])
    seccomp.drop_privileges()
    landlock.restrict_self(read_only=config["read_only"], read_write=[config["work"]])
    seccomp.load_filter()


def _author_traceback(error: BaseException) -> str:
    """The last frames of the traceback that are in the author's code, and the error."""
    import traceback

    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename == CHECK_FILENAME
    ][-TRACEBACK_FRAMES:]
    lines = traceback.format_list(frames)
    lines += traceback.format_exception_only(type(error), error)
    return "".join(lines).rstrip()[-MAX_DETAIL_CHARS:]


def _run(request: dict[str, Any], package: types.ModuleType) -> dict[str, Any]:
    import linecache

    code = request["code"]
    lines = code.splitlines(keepends=True)
    linecache.cache[CHECK_FILENAME] = (len(code), None, lines, CHECK_FILENAME)
    try:
        task = package.TaskView.from_json(request["task"])
        output = package.OutputView.from_json(request["output"])
        namespace = {"__name__": "check", "__builtins__": __builtins__}
        # Running the author's code is this program's job; it is locked in by now.
        exec(compile(code, CHECK_FILENAME, "exec"), namespace)  # noqa: S102
        verify = namespace.get("verify")
        if not callable(verify):
            return {"error": "code_bad_return", "detail": NO_VERIFY}
        result = verify(task, output)
    except MemoryError:
        return {"error": "code_memory", "detail": "The check ran out of memory"}
    except BaseException as error:  # the author's code may raise anything, SystemExit too
        return {"error": "code_crash", "detail": _author_traceback(error)}
    if not isinstance(result, package.Verdict):
        return {"error": "code_bad_return", "detail": f"{BAD_RETURN}; it returned {_kind(result)}"}
    return {"verdict": package.Verdict.to_json(result)}


def _kind(value: object) -> str:
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def main() -> None:
    config = json.loads(sys.argv[1])
    reply_fd = config["reply_fd"]
    sys.dont_write_bytecode = True
    os.environ.clear()  # started with none; Python's locale coercion adds LC_CTYPE
    try:
        package = _load_library(config["library"])
        _restrict(config)
    except Exception as error:  # anything short of a full sandbox: run nothing
        _reply(reply_fd, {"error": "sandbox_unavailable", "detail": f"{error}"})
        os._exit(0)
    _reply(reply_fd, {"ready": True})
    request = json.loads(sys.stdin.buffer.read())
    result = _run(request, package)
    try:
        _reply(reply_fd, result)
    except MemoryError:
        _reply(reply_fd, {"error": "code_memory", "detail": "The check ran out of memory"})
    # Straight out: no atexit handler or thread the code left behind runs after its answer.
    os._exit(0)


if __name__ == "__main__":
    main()
