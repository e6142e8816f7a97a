"""The fork server that sandboxed checks start from, and what each check runs.

`python -I -S harness.py CONFIG` starts the server, with an empty environment and its
control socket as stdin. It loads Verdict and the views (trusted code, from their files) and
everything a check needs, then locks itself in: no capabilities, Landlock (read-only
standard library, read and write only beneath its own folder, no TCP, no signal out) and a
seccomp allowlist (no new socket, no exec). It never runs an author's code and holds no
secret. For each check it is sent the check's pipes and folder, and forks: the new process
takes the pipes as fds 0-3, closes every other fd, sets its limits, adds its own Landlock
layer (read and write only its folder) and the strict seccomp filter (no fork, no kill of
another process, no raised limit), and says "ready" on fd 3. Only then does the launcher
send the code, the task and the output on fd 0; the code runs, and the answer (what
`verify` returned, or why it failed) goes back as one JSON line on fd 3.

What the code prints goes to fds 1 and 2, which the launcher reads apart from the answer and
throws away (counted against the output limit): a print is never taken for a verdict. The
code runs in the check's interpreter, so it could write to fd 3 itself; that gains it
nothing it could not get by returning a verdict, and the launcher accepts nothing after
"ready" but a verdict it validates again or one of the code's own failures.

Standard library only; run as a script, never imported by the app.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
import types

# typing is not imported at run time: each module the harness loads costs every check.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CHECK_FILENAME = "check.py"
REPLY_FD = 3
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


def _kernel(sandbox_dir: str) -> types.SimpleNamespace:
    sys.path.insert(0, sandbox_dir)
    try:
        # Siblings loaded by their own names: the package's __init__ is not for the sandbox.
        import landlock  # type: ignore[import-not-found]
        import rlimits  # type: ignore[import-not-found]
        import seccomp  # type: ignore[import-not-found]
    finally:
        del sys.path[0]
    return types.SimpleNamespace(landlock=landlock, rlimits=rlimits, seccomp=seccomp)


def _lock_in_server(kernel: types.SimpleNamespace, config: dict[str, Any]) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    kernel.seccomp.drop_privileges()
    kernel.landlock.restrict_self(read_only=config["read_only"], read_write=[config["root"]])
    kernel.seccomp.load_filter(server=True)


def _lock_in_check(kernel: types.SimpleNamespace, config: dict[str, Any], work: str) -> None:
    kernel.landlock.restrict_self(read_only=config["read_only"], read_write=[work])
    kernel.seccomp.load_filter()


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


def _send(control: socket.socket, message: dict[str, Any]) -> None:
    control.send(json.dumps(message).encode())


def _check(package: types.ModuleType) -> None:
    """In the forked, locked-in check: say ready, take the request, answer, leave."""
    _reply(REPLY_FD, {"ready": True})
    request = json.loads(sys.stdin.buffer.read())
    result = _run(request, package)
    try:
        _reply(REPLY_FD, result)
    except MemoryError:
        _reply(REPLY_FD, {"error": "code_memory", "detail": "The check ran out of memory"})
    # Straight out: no atexit handler or thread the code left behind runs after its answer.
    os._exit(0)


def _fork_check(request: dict[str, Any], fds: list[int], server: _Server) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        # The received fds are 3 or higher (0-2 are the server's own), so none is
        # overwritten before it is moved.
        for target, fd in enumerate(fds[:4]):
            os.dup2(fd, target)
        os.closerange(4, 1 << 30)  # the control socket, other checks' status pipes: all
        os.setsid()
        os.chdir(request["work"])
        server.kernel.rlimits.apply(**request["limits"])
        _lock_in_check(server.kernel, server.config, request["work"])
    except BaseException as error:  # anything short of a full sandbox: run nothing
        _reply(REPLY_FD, {"error": "sandbox_unavailable", "detail": f"{error}"})
        os._exit(0)
    _check(server.package)
    os._exit(0)


class _Server:
    """The fork server: takes requests on its control socket, forks checks, reaps them."""

    def __init__(
        self,
        control: socket.socket,
        package: types.ModuleType,
        kernel: types.SimpleNamespace,
        config: dict[str, Any],
    ) -> None:
        self.control = control
        self.package = package
        self.kernel = kernel
        self.config = config
        self.status_fds: dict[int, int] = {}

    def serve(self) -> None:
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        with selectors.DefaultSelector() as selector:
            selector.register(self.control, selectors.EVENT_READ)
            selector.register(wake_read, selectors.EVENT_READ)
            while True:
                for key, _ in selector.select():
                    if key.fd == wake_read:
                        os.read(wake_read, 4096)
                        self._reap()
                    elif not self._take_request():
                        return

    def _take_request(self) -> bool:
        message, fds, _, _ = socket.recv_fds(self.control, 65_536, 8)
        if not message:  # the launcher is gone: so are its checks
            for pid in self.status_fds:
                os.kill(pid, signal.SIGKILL)
            return False
        request = json.loads(message)
        if "kill" in request:
            if request["kill"] in self.status_fds:
                os.kill(request["kill"], signal.SIGKILL)
            return True
        try:
            pid = _fork_check(request, fds, self)
        except OSError as error:
            os.close(fds[4])
            _send(self.control, {"error": f"{error}"})
        else:
            self.status_fds[pid] = fds[4]
            _send(self.control, {"pid": pid})
        for fd in fds[:4]:
            os.close(fd)
        return True

    def _reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            fd = self.status_fds.pop(pid, None)
            if fd is not None:
                code = os.waitstatus_to_exitcode(status)
                cpu = usage.ru_utime + usage.ru_stime
                os.write(fd, json.dumps({"status": code, "cpu": cpu}).encode())
                os.close(fd)


def main() -> None:
    config = json.loads(sys.argv[1])
    sys.dont_write_bytecode = True
    os.environ.clear()  # started with none; Python's locale coercion adds LC_CTYPE
    control = socket.socket(fileno=0)
    try:
        package = _load_library(config["library"])
        kernel = _kernel(config["sandbox_dir"])
        _lock_in_server(kernel, config)
    except Exception as error:  # anything short of a full sandbox: run nothing
        _send(control, {"error": "sandbox_unavailable", "detail": f"{error}"})
        return
    # Loaded once here, so that no check pays for them: tracebacks for code_crash.
    import linecache  # noqa: F401
    import traceback  # noqa: F401

    _send(control, {"ready": True})
    _Server(control, package, kernel, config).serve()


if __name__ == "__main__":
    main()
