"""Generate a torchtitan-shaped repository at N times torchtitan's size, with `git fast-import`,
for the collectors benchmark (benchmark only; not used by the tests).

    python benchmarks/make_repo.py 10 /tmp/synthetic-10x
    python benchmarks/collectors.py /tmp/synthetic-10x --date 2026-08-21 --prior DIR

Scale 1 is about torchtitan today: ~650 files (60 experiment modules, 20 experiment test
files, ~500 core modules) and ~2,000 commits, 40 of them in the last week. Scale N
multiplies files and commits by N.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scout_tui.sandbox.demo.files import BASELINE, EXP

END = datetime(2026, 8, 21, 12, tzinfo=UTC)


def experiment_module(n: int) -> str:
    lines = [
        '"""Synthetic experiment module."""',
        "from torch._inductor.fx_passes.bucketing import is_wait_tensor",
        "from torch.distributed.tensor._dtensor_spec import DTensorSpec",
        "from torchtitan.models.common.attention import FlexAttention",
        "",
    ]
    for k in range(8):
        if k == 0:
            lines.append(f"# TODO(owner{n % 7}): revisit helper {n}")
        if k == 1 and n % 5 == 0:
            lines.append(f"# TODO(pytorch/pytorch#{150000 + n}): drop once upstream fixes it")
        name = f"pass_{n}_{k}_pass" if k == 2 else f"helper_{n}_{k}"
        lines += [
            f"def {name}(gm, example_inputs, *, bucket_mb={k}):",
            f"    total = {k}",
            "    for node in list(gm.graph.nodes):",
            "        if node.op == 'call_function':",
            "            total += 1",
            "    return gm",
            "",
        ]
    return "\n".join(lines) + "\n"


def test_module(n: int) -> str:
    out = [f"from torchtitan.experiments.graph_trainer.mod_{n} import helper_{n}_0", ""]
    for k in range(3):
        out += [
            f"class TestSynthetic{n}x{k}:",
            "    def test_it(self):",
            f"        assert helper_{n}_0 is not None",
            "",
        ]
    return "\n".join(out) + "\n"


def core_module(n: int) -> str:
    out = [f'"""Synthetic core module {n}."""', ""]
    for k in range(6):
        out += [f"def api_{n}_{k}(x, y=None):", f"    return x if y is None else x + {k}", ""]
    out += [f"class Component{n}:", "    def forward(self, x):", "        return x", ""]
    return "\n".join(out) + "\n"


def _bucket(n: int, per_scale: int) -> str:
    """A subdirectory per scale step beyond the first: scale 1 keeps torchtitan's layout."""
    return f"part_{n // per_scale}/" if n >= per_scale else ""


def files_at_scale(scale: int) -> dict[str, str]:
    files = dict(BASELINE)
    # At most ~100 entries a directory, as in real trees: fast-import rewrites a changed
    # file's directory objects on every commit.
    for n in range(60 * scale):
        files[f"{EXP}/{_bucket(n, 60)}mod_{n}.py"] = experiment_module(n)
    for n in range(20 * scale):
        files[f"{EXP}/tests/{_bucket(n, 20)}test_mod_{n}.py"] = test_module(n)
    dirs = [
        "torchtitan/distributed",
        "torchtitan/models/common",
        "torchtitan/components",
        "torchtitan/config",
        "torchtitan/tools",
        "scripts",
    ]
    for n in range(500 * scale):
        files[f"{dirs[n % len(dirs)]}/{_bucket(n, 600)}gen_{n}.py"] = core_module(n)
    runs = "\n".join(
        f"          pytest {EXP}/tests/{_bucket(n, 20)}test_mod_{n}.py -v"
        for n in range(0, 20 * scale, 2)
    )
    files[".github/workflows/integration_test_8gpu_graph_trainer.yaml"] = (
        "name: t\non: {schedule: [{cron: '0 0 * * *'}]}\njobs:\n  t:\n    runs-on: x\n"
        f"    steps:\n      - run: |\n{runs}\n"
    )
    return files


def _data(text: str) -> bytes:
    body = text.encode()
    return b"data %d\n" % len(body) + body + b"\n"


def stream(scale: int) -> bytes:
    files = files_at_scale(scale)
    commits = 2000 * scale
    in_window = 40 * scale
    paths = sorted(files)
    core = [p for p in paths if p.startswith("torchtitan/") and "/experiments/" not in p]
    chunks: list[bytes] = []
    start = END - timedelta(days=400)
    step = (END - timedelta(days=7) - start) / max(1, commits - in_window)
    window_step = timedelta(days=7) / max(1, in_window)
    when = start

    def commit(message: str, changes: dict[str, str], moment: datetime) -> None:
        stamp = f"{int(moment.timestamp())} +0000"
        chunks.append(b"commit refs/heads/main\n")
        chunks.append(f"author Synth <s@example.com> {stamp}\n".encode())
        chunks.append(f"committer Synth <s@example.com> {stamp}\n".encode())
        chunks.append(_data(message))  # later commits continue the branch: no `from`
        for path, text in changes.items():
            chunks.append(f"M 100644 inline {path}\n".encode())
            chunks.append(_data(text))
        chunks.append(b"\n")

    commit("import", files, when)
    for number in range(1, commits):
        when = when + step if number < commits - in_window else when + window_step
        path = (
            core[(number * 7919) % len(core)]
            if number % 3
            else paths[(number * 104729) % len(paths)]
        )
        files[path] = files[path] + f"# change {number}\n"
        commit(f"change {number}", {path: files[path]}, when)
    return b"".join(chunks)


def main() -> None:
    scale, target = int(sys.argv[1]), Path(sys.argv[2])
    target.mkdir(parents=True, exist_ok=False)
    subprocess.run(["git", "init", "-q", "-b", "main", str(target)], check=True)
    subprocess.run(
        ["git", "-C", str(target), "fast-import", "--quiet"], input=stream(scale), check=True
    )
    subprocess.run(["git", "-C", str(target), "checkout", "-q", "main"], check=True)
    count = subprocess.run(
        ["git", "-C", str(target), "rev-list", "--count", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"{target}: scale {scale}, {len(files_at_scale(scale))} files, {count} commits")


if __name__ == "__main__":
    main()
