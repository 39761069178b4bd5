"""A virtual environment per nightly, under the cache dir: torch pinned to that nightly
from the index the user chose, with uv when it is on PATH (seconds), else venv and pip.

An environment is built where it stays (a venv's scripts name their own path: a moved one
runs the wrong Python), and marked ready only once every install line has succeeded; one
without the mark (a Ctrl-C, a failed install) is removed and built again. At most `keep`
stay, the least recently used removed first: each can take gigabytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scout_tui.errors import redact
from scout_tui.nightlies.index import Nightly

READY = "scout-env.json"
INSTALL_TIMEOUT = 30 * 60  # seconds: a CUDA nightly is gigabytes
OUTPUT_KEPT = 4000  # characters of an install's output said when it fails


class InstallFailed(Exception):
    """The environment could not be built: the nightly cannot be tested here."""


@dataclass(frozen=True)
class Recipe:
    """What an environment holds besides torch: the index torch comes from, and the
    requirements files installed after it (from the user's own pip configuration)."""

    index_url: str
    requirements: tuple[Path, ...] = ()
    tools: tuple[str, ...] = ()  # what runs the repro besides torch (`pytest`)

    def digest(self) -> str:
        parts = [self.index_url, sys.version, *(str(p) for p in self.requirements), *self.tools]
        for path in self.requirements:
            parts.append(hashlib.sha256(path.read_bytes()).hexdigest())
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Environment:
    root: Path
    nightly: str

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def variables(self) -> dict[str, str]:
        """What activating it sets: its scripts first on PATH (`torchrun`, `pytest`)."""
        path = os.environ.get("PATH", "")
        return {"VIRTUAL_ENV": str(self.root), "PATH": f"{self.bin}{os.pathsep}{path}"}


def installer() -> str:
    """`uv` when it is on PATH, else `pip`."""
    return "uv" if shutil.which("uv") else "pip"


class Environments:
    def __init__(self, root: Path, keep: int = 2, tool: str | None = None) -> None:
        self.root = root
        self.keep = max(1, keep)
        self.tool = tool or installer()

    def paths(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return [p for p in sorted(self.root.iterdir()) if p.is_dir()]

    def get(
        self, nightly: Nightly, recipe: Recipe, say: Callable[[str], None] = lambda _: None
    ) -> Environment:
        """The nightly's environment, built if need be (InstallFailed)."""
        name = f"torch-{nightly.name}-{recipe.digest()}"
        env = Environment(self.root / name, nightly.name)
        if (env.root / READY).is_file():
            os.utime(env.root / READY)  # used: the last to be removed
            return env
        if env.root.exists():
            shutil.rmtree(env.root)  # an earlier build that did not finish
        self.root.mkdir(parents=True, exist_ok=True)
        self._make_room(keep_for_new=True)
        say(f"building an environment for torch {nightly.name} with {self.tool}")
        started = time.monotonic()
        try:
            for argv in self._steps(env, nightly, recipe):
                _run(argv)
        except BaseException:
            shutil.rmtree(env.root, ignore_errors=True)  # never half an environment kept
            raise
        (env.root / READY).write_text(
            json.dumps({"nightly": nightly.name, "tool": self.tool, "python": sys.version})
        )
        say(f"environment ready in {time.monotonic() - started:.0f} s")
        return env

    def _steps(self, env: Environment, nightly: Nightly, recipe: Recipe) -> list[list[str]]:
        pin = f"torch=={nightly.name}"
        if self.tool == "uv":
            uv = shutil.which("uv") or "uv"
            install = [uv, "pip", "install", "--python", str(env.python)]
            steps = [
                [uv, "venv", "--quiet", "--python", sys.executable, str(env.root)],
                [*install, "--index-url", recipe.index_url, pin],
            ]
        else:
            install = [str(env.python), "-m", "pip", "install", "--disable-pip-version-check"]
            steps = [
                [sys.executable, "-m", "venv", str(env.root)],
                [*install, "--index-url", recipe.index_url, pin],
            ]
        # The checkout's requirements and the runner from the user's own index settings,
        # torch held at the nightly (the nightly index offered too: its own dependencies).
        for path in recipe.requirements:
            steps.append([*install, "-r", str(path), pin, "--extra-index-url", recipe.index_url])
        if recipe.tools:
            steps.append([*install, *recipe.tools, pin, "--extra-index-url", recipe.index_url])
        return steps

    def _make_room(self, keep_for_new: bool) -> None:
        """Remove the least recently used ready environments beyond `keep` (one place
        left for the one about to be built)."""
        ready = sorted(
            (p for p in self.paths() if (p / READY).is_file()),
            key=lambda p: (p / READY).stat().st_mtime_ns,
        )
        excess = len(ready) - (self.keep - 1 if keep_for_new else self.keep)
        for path in ready[: max(0, excess)]:
            shutil.rmtree(path, ignore_errors=True)


def _run(argv: Sequence[str]) -> None:
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=INSTALL_TIMEOUT,
            env={**os.environ, "PIP_NO_INPUT": "1"},
        )
    except subprocess.TimeoutExpired:
        raise InstallFailed(f"{Path(argv[0]).name} took over {INSTALL_TIMEOUT} s") from None
    except OSError as exc:
        raise InstallFailed(f"{argv[0]}: {exc.strerror}") from None
    if done.returncode:
        output = (done.stderr or done.stdout).decode("utf-8", "replace").strip()
        last = output.splitlines()[-1] if output else f"exit {done.returncode}"
        raise InstallFailed(redact(last)[:OUTPUT_KEPT])
