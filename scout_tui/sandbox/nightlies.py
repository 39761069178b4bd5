"""Stand-in torch nightlies: small wheels pip and uv really install, each with a
`torch/version.py` naming its PyTorch commit, a `torchrun` that runs a script, and a
behaviour that changes at one nightly (`torch.compile` raising), for the bisect's tests,
its benchmark and the demo."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

FAILURE = "torch._dynamo.exc.Unsupported: graph break on aten.scatter_reduce at layer 3"
# A checkout's repro that calls `torch.compile`, and the command that runs it.
TRAIN = "import torch\n\nstep = torch.compile(lambda x: x + 1)\nprint('loss', step(1))\n"
REPRO = "torchrun --nproc_per_node=1 train.py"


@dataclass(frozen=True)
class Build:
    """What one stand-in nightly does when the repro calls `torch.compile`."""

    version: str  # 2.13.0.dev20260612
    commit: str
    behaviour: str = "pass"  # pass | fail | other-error | hang | uninstallable


def wheel_tag() -> str:
    """A tag this interpreter installs: its own CPython ABI on manylinux x86_64."""
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return f"{interpreter}-{interpreter}-manylinux_2_17_x86_64"


_INIT = '''"""A stand-in torch nightly."""
import time

from torch.version import __version__, git_version

BEHAVIOUR = {behaviour!r}


def compile(fn):
    if BEHAVIOUR == "fail":
        raise RuntimeError({failure!r})
    if BEHAVIOUR == "other-error":
        raise ImportError("cannot import name 'flex_attention' from 'torch.nn.attention'")
    if BEHAVIOUR == "hang":
        time.sleep(3600)
    return fn
'''

_RUN = '''"""torchrun, standing in: runs the script once, as rank 0."""
import runpy
import sys


def main():
    args = sys.argv[1:]
    while args and args[0].startswith("-"):
        name = args.pop(0)
        if "=" not in name and name != "--standalone":
            args.pop(0)
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
'''


def stand_in_wheel(folder: Path, build: Build) -> Path:
    """The wheel file of `build` in `folder`; `uninstallable` requires a project no index
    has, so its install fails."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"torch-{build.version}-{wheel_tag()}.whl"
    info = f"torch-{build.version}.dist-info"
    requires = "Requires-Dist: scout-missing-dependency==1.0\n"
    files = {
        "torch/__init__.py": _INIT.format(behaviour=build.behaviour, failure=FAILURE),
        "torch/version.py": f"__version__ = '{build.version}'\ngit_version = '{build.commit}'\n",
        "torch/run.py": _RUN,
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: torch\nVersion: {build.version}\n"
            + (requires if build.behaviour == "uninstallable" else "")
        ),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: scout-sandbox\nRoot-Is-Purelib: false\n"
            f"Tag: {wheel_tag()}\n"
        ),
        f"{info}/entry_points.txt": "[console_scripts]\ntorchrun = torch.run:main\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(folder / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
    return folder / name


def nightly_builds(
    first_day: int, count: int, first_bad: int, behaviours: dict[int, str] | None = None
) -> list[Build]:
    """`count` daily nightlies from June `first_day`, 2026, passing before index
    `first_bad` and failing from it; `behaviours` overrides some (index → behaviour)."""
    builds = []
    for index in range(count):
        day = date(2026, 6, 1) + timedelta(days=first_day - 1 + index)
        behaviour = (behaviours or {}).get(index, "fail" if index >= first_bad else "pass")
        commit = hashlib.sha1(f"nightly {day}".encode()).hexdigest()
        builds.append(Build(f"2.13.0.dev{day:%Y%m%d}", commit, behaviour))
    return builds


def stand_in_checkout(path: Path) -> Path:
    """A git checkout holding `train.py` (TRAIN), committed."""
    path.mkdir(parents=True)
    (path / "train.py").write_text(TRAIN)
    git = ["git", "-C", str(path), "-c", "user.name=scout", "-c", "user.email=scout@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "a repro"], check=True)
    return path


def places(repo: Path, cache: Path, state: Path, index_url: str) -> list[str]:
    """The flags that say where `scout bisect` and `scout repro --nightly` work."""
    return [
        "--index-url",
        index_url,
        "--repo",
        str(repo),
        "--cache-dir",
        str(cache),
        "--state-dir",
        str(state),
    ]
