"""Running `scout` as a user does: a real subprocess, `python -m scout_tui`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scout_tui.sandbox.demo.sample import Sample

DAY = "2026-12-02"


def scout(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scout_tui", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def world_args(world: Sample, tmp_path: Path, *, day: str = DAY, prior: bool = True) -> list[str]:
    """The options that point a command at a sample world, with its own cache and state."""
    args = [
        "--repo",
        str(world.repo),
        "--config",
        str(world.config),
        "--date",
        day,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / "state"),
    ]
    return args + (["--prior", str(world.priors)] if prior else [])


def read_only(*paths: Path) -> list[str] | None:
    """A command prefix that runs its command with `paths` on a read-only mount (a user
    and mount namespace of its own: even root cannot write there); None where namespaces
    cannot be made."""
    import shutil

    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    mounts = " && ".join(f'mount --bind -o ro "{p}" "{p}"' for p in paths)
    return ["unshare", "-rm", "sh", "-c", f'{mounts} && exec "$@"', "sh"]


def scout_read_only(paths: list[Path], *args: str) -> subprocess.CompletedProcess[str] | None:
    prefix = read_only(*paths)
    if prefix is None:
        return None
    return subprocess.run(
        [*prefix, sys.executable, "-m", "scout_tui", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )
