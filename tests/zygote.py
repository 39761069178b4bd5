"""A process that has imported scout once and forks a child for every `scout` a test runs.

Each child is a process of its own, as `python -m scout_tui` would be: its own argv, cwd,
environment, stdin, stdout and stderr files, exit code and exit handlers. What it skips is
the interpreter's start and scout's imports (about 0.35 s of CPU a command, hundreds of
commands a suite). The zygote starts no thread, so a fork copies no lock held elsewhere.
Scout reads no environment variable at import (tests/test_zygote.py checks the children
against real subprocesses).

Protocol, one JSON line each way: {argv, cwd, env, stdin, out, err, timeout, started} in,
{returncode} or {timeout: true} out; with `started`, {pid} first, as soon as the child
exists (a test that kills it mid-run).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import select
import signal
import sys


def _child(request: dict) -> None:
    """In the forked child: become the command, run it, leave as it would."""
    code = 1
    try:
        os.setpgid(0, 0)  # killed with its own children on a timeout
        os.environ.clear()
        os.environ.update(request["env"])
        if request["cwd"]:
            os.chdir(request["cwd"])
        stdin = os.open(request["stdin"] or os.devnull, os.O_RDONLY)
        out = os.open(request["out"], os.O_WRONLY | os.O_TRUNC)
        err = os.open(request["err"], os.O_WRONLY | os.O_TRUNC)
        for fd, target in ((stdin, 0), (out, 1), (err, 2)):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = [request["main"], *request["argv"]]
        gc.enable()
        from scout_tui.main import entry

        try:
            code = entry()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        atexit._run_exitfuncs()
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code if isinstance(code, int) else 1)


def _wait(pid: int, timeout: float) -> dict:
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
        if not ready:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"timeout": True}
        _, status = os.waitpid(pid, 0)
        return {"returncode": os.waitstatus_to_exitcode(status)}
    finally:
        os.close(pidfd)


def serve() -> None:
    import importlib.util

    import scout_tui.cli.common
    import scout_tui.cli.dispatch
    import scout_tui.cli.run
    import scout_tui.cli.triage
    import scout_tui.collect.registry
    import scout_tui.github.client
    import scout_tui.pipeline.day
    import scout_tui.publish.execute  # noqa: F401

    spec = importlib.util.find_spec("scout_tui.__main__")
    assert spec is not None and spec.origin is not None
    main_path = spec.origin  # what `python -m scout_tui` makes argv[0]
    gc.collect()
    gc.freeze()  # the imports stay shared with every child, never copied by a gc pass
    for line in sys.stdin:
        request = json.loads(line)
        request["main"] = main_path
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        if request.get("started"):
            with contextlib.suppress(OSError):  # the child may have done it already
                os.setpgid(pid, pid)
            sys.stdout.write(json.dumps({"pid": pid}) + "\n")
            sys.stdout.flush()
        answer = _wait(pid, request["timeout"])
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
