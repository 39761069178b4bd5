"""A sample world with a long history: 15,000 commits to one file full of TODOs, so that
the TODO collector's blame replay takes seconds — long enough to interrupt it."""

from __future__ import annotations

import os
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from scout_tui.sandbox.demo.sample import Sample, build_sample

CHURN = "torchtitan/experiments/graph_trainer/churn.py"
COMMITS = 15_000


def build_long_history(base: Path, today) -> Sample:
    world = build_sample(base, today)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=world.repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    start = int(datetime.combine(today, datetime.min.time(), UTC).timestamp()) + 12 * 3600
    stream = []
    for n in range(COMMITS):
        text = "".join(
            f"# TODO(owner): line {k} rev {n if k % 3 == n % 3 else 0}\n" for k in range(120)
        ).encode()
        message = f"churn {n}\n".encode()
        stream += [
            b"commit refs/heads/main\n",
            b"committer Dev <d@e> %d +0000\n" % (start + n),
            b"data %d\n%s" % (len(message), message),
        ]
        if n == 0:
            stream.append(f"from {head}\n".encode())
        stream += [f"M 100644 inline {CHURN}\n".encode(), b"data %d\n%s\n" % (len(text), text)]
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=world.repo, input=b"".join(stream), check=True
    )
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=world.repo, check=True)
    return world


def processes_in(folder: Path, *words: str) -> list[int]:
    """Pids of processes running in `folder` whose command line has all `words`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if Path(cwd) == folder and all(w.encode() in argv for w in words):
            found.append(int(entry))
    return found


def wait_for(check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"gave up waiting after {timeout} s")


def group_gone(pgid: int, timeout: float = 10.0) -> bool:
    """True once no process of the group is left (orphans are reaped by init)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
