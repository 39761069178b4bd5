"""A virtual environment per nightly, under the cache dir: torch pinned to that nightly
from the index the user chose, with uv when it is on PATH (seconds), else venv and pip.

An environment is built where it stays (a venv's scripts name their own path: a moved one
runs the wrong Python), and marked ready only once every install line has succeeded; one
without the mark (a Ctrl-C, a failed install) is removed and built again. At most `keep`
stay, the least recently used removed first: each can take gigabytes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from scout_tui.errors import SECRET_VARIABLES, clean, redact
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

    @functools.cached_property
    def digest(self) -> str:
        """What the environment holds, as a name (read once: every tried nightly asks)."""
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


def safe_name(version: str) -> str:
    """A version as part of a file name: short (an index may list absurd versions), and
    only the characters a version has."""
    kept = re.sub(r"[^\w.+-]", "_", version)
    if len(kept) <= 48:
        return kept
    return f"{kept[:32]}-{hashlib.sha256(version.encode()).hexdigest()[:12]}"


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
        name = f"torch-{safe_name(nightly.name)}-{recipe.digest}"
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
            for step in self._steps(env, nightly, recipe):
                _run(step, self.root)
        except BaseException:
            shutil.rmtree(env.root, ignore_errors=True)  # never half an environment kept
            raise
        (env.root / READY).write_text(
            json.dumps({"nightly": nightly.name, "tool": self.tool, "python": sys.version})
        )
        say(f"environment ready in {time.monotonic() - started:.0f} s")
        return env

    def _steps(self, env: Environment, nightly: Nightly, recipe: Recipe) -> list[Step]:
        """The installs; the index goes in the environment (never on a command line,
        which any user of the box sees), the checkout's requirements as plain names."""
        pin = f"torch=={nightly.name}"
        nightly_only = {"PIP_INDEX_URL": recipe.index_url, "UV_INDEX_URL": recipe.index_url}
        also = {"PIP_EXTRA_INDEX_URL": recipe.index_url, "UV_EXTRA_INDEX_URL": recipe.index_url}
        if self.tool == "uv":
            uv = shutil.which("uv") or "uv"
            install = [uv, "pip", "install", "--python", str(env.python)]
            steps = [
                Step([uv, "venv", "--quiet", "--python", sys.executable, str(env.root)]),
                Step([*install, pin], nightly_only),
            ]
        else:
            install = [str(env.python), "-m", "pip", "install", "--disable-pip-version-check"]
            steps = [
                Step([sys.executable, "-m", "venv", str(env.root)]),
                Step([*install, pin], nightly_only),
            ]
        # The checkout's requirements and the runner from the user's own index settings,
        # torch held at the nightly (the nightly index offered too: its own dependencies).
        wanted = [line for path in recipe.requirements for line in plain_requirements(path)]
        if wanted or recipe.tools:
            steps.append(Step([*install, *wanted, *recipe.tools, pin], also))
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


@dataclass(frozen=True)
class Step:
    argv: list[str]
    variables: dict[str, str] = field(default_factory=dict)


def plain_requirements(path: Path) -> list[str]:
    """A requirements file's requirements, as names and versions only: its options
    (`--index-url`, `--extra-index-url`, `-f`, `-r`, `-e`) and URLs dropped — a checkout's
    file does not choose where code is installed from."""
    found = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        text = raw.split(" #", 1)[0].strip()
        if not text or text.startswith(("#", "-")):
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if requirement.url is None and requirement.name.lower() != "torch":
            found.append(str(requirement))
    return found


def _run(step: Step, cwd: Path) -> None:
    """One install, in a folder of scout's (a checkout's uv.toml or pyproject.toml is not
    read), with no GitHub token in its environment (a package's build code runs there)."""
    environment = {**os.environ, **step.variables, "PIP_NO_INPUT": "1"}
    for name in SECRET_VARIABLES:
        environment.pop(name, None)
    argv = step.argv
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=INSTALL_TIMEOUT,
            env=environment,
            cwd=cwd,
        )
    except subprocess.TimeoutExpired:
        raise InstallFailed(f"{Path(argv[0]).name} took over {INSTALL_TIMEOUT} s") from None
    except OSError as exc:
        raise InstallFailed(f"{argv[0]}: {exc.strerror}") from None
    if done.returncode:
        output = (done.stderr or done.stdout).decode("utf-8", "replace").strip()
        last = output.splitlines()[-1].strip() if output else f"exit {done.returncode}"
        raise InstallFailed(redact(clean(last))[:OUTPUT_KEPT])
