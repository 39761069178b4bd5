"""One run of the repro in a nightly's environment, and what it says: pass, fail (the same
failure as the bad end's, by its normalised root cause, as `scout ci-log` compares CI
runs), or could not test (a timeout, a different error: not evidence either way)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scout_tui.analysis.ci.ci_history import normalize_error
from scout_tui.analysis.ci.cilog import analyse
from scout_tui.errors import redact
from scout_tui.nightlies.envs import Environment
from scout_tui.nightlies.search import Outcome
from scout_tui.repro.process import ProcessGroup

DRAIN = 2.0  # seconds the output left in the pipe is read for, once the command ended


@dataclass(frozen=True)
class Expected:
    """The failure being bisected: its normalised root cause once the bad end has shown it
    (None before: the bad end's own run sets it), and whether CI saw it as a timeout."""

    error: str | None = None
    timeout_is_failure: bool = False


@dataclass(frozen=True)
class Trial:
    nightly: str
    outcome: Outcome
    seconds: float
    why: str  # "passed", "failed: …", "timed out after 600 s", "a different error: …"
    log: str  # the file its output went to
    error: str = ""  # the normalised root cause it showed ("" when it passed)


def root_cause(log: Path, experiment: str) -> str:
    """The normalised root cause of a failed run's output: the first failure's error as
    `scout ci-log` reads it, else the last line that names an error, else the last line."""
    analysis = analyse(str(log), experiment)
    for failure in analysis.failures:
        if failure.error:
            return normalize_error(failure.error)
    lines = [line.strip() for line in log.read_text("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    named = [line for line in lines if "Error" in line or "Exception" in line]
    return normalize_error((named or lines or ["no output"])[-1])


def run_trial(
    env: Environment,
    argv: list[str],
    cwd: Path,
    log: Path,
    timeout: float,
    expected: Expected,
    experiment: str = "",
    line: Callable[[str], None] = lambda _: None,
    variables: dict[str, str] | None = None,
) -> Trial:
    """Run `argv` with the environment active, its output to `log` (and `line`), stopped
    as a whole group after `timeout` seconds; KeyboardInterrupt stops it and propagates."""
    started = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    timed_out = False
    group: ProcessGroup | None = None
    with log.open("w", encoding="utf-8") as out:

        def read(source: ProcessGroup) -> None:
            for text in source.lines():
                text = redact(text)
                out.write(text + "\n")
                line(text)

        try:
            group = ProcessGroup(argv, cwd, {**env.variables(), **(variables or {})})
            # Read apart: a child it left in the background may hold the pipe open long
            # after the command itself ended, and its end is what decides.
            reader = threading.Thread(target=read, args=(group,), daemon=True)
            reader.start()
            try:
                code = group.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out, code = True, -1
            reader.join(DRAIN)
            group.stop(grace=2.0)  # what it left running (GPU workers) goes with it
            reader.join(DRAIN)
        except OSError as exc:  # the environment has no such program
            why = f"cannot run {argv[0]}: {exc.strerror or exc}"
            return Trial(env.nightly, Outcome.UNTESTABLE, 0.0, why, str(log))
        except BaseException:  # Ctrl-C: nothing of the run left behind
            if group is not None:
                group.stop(grace=2.0)
            raise
    seconds = round(time.monotonic() - started, 1)
    if timed_out:
        why = f"timed out after {timeout:g} s"
        if expected.timeout_is_failure:
            return Trial(env.nightly, Outcome.FAIL, seconds, why, str(log), "timeout")
        return Trial(env.nightly, Outcome.UNTESTABLE, seconds, why, str(log))
    if code == 0:
        return Trial(env.nightly, Outcome.PASS, seconds, "passed", str(log))
    error = root_cause(log, experiment)
    if expected.error is None or error == expected.error:
        return Trial(env.nightly, Outcome.FAIL, seconds, f"failed: {error}", str(log), error)
    return Trial(
        env.nightly, Outcome.UNTESTABLE, seconds, f"a different error: {error}", str(log), error
    )
