"""Benchmark: bytes fetched to read torch/version.py out of a real torch wheel, against the
whole wheel and its central directory (what remotezip and pip's lazy wheel read).

    python benchmarks/wheel_bytes.py [/path/to/torch-*.whl]

The wheel is served on 127.0.0.1 with Range support; target: under 256 KiB.
"""

from __future__ import annotations

import sys
import time
import zipfile
from pathlib import Path

import requests

from scout_tui.nightlies.wheels import git_version, read_member
from scout_tui.sandbox.demo.file_server import FileServer, Served

DEFAULT = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")


def main() -> None:
    wheel = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not wheel.is_file():
        sys.exit(f"no wheel at {wheel}: pass the path of a torch wheel")
    with zipfile.ZipFile(wheel) as archive:
        entries = archive.infolist()
        directory = wheel.stat().st_size - archive.start_dir
        position = next(i for i, e in enumerate(entries) if e.filename == "torch/version.py")
    served = Served(files={wheel.name: wheel})
    with FileServer(served) as index, requests.Session() as session:
        start = time.perf_counter()
        url = f"{index.removesuffix('/simple')}/files/{wheel.name}"
        data, transfer = read_member(session, url)
        seconds = time.perf_counter() - start
    print(
        f"wheel              {wheel.name}: {wheel.stat().st_size:,} bytes, {len(entries):,} entries"
    )
    print(f"central directory  {directory:,} bytes; torch/version.py is entry #{position + 1}")
    print(
        f"fetched            {transfer.bytes:,} bytes in {transfer.requests} requests, "
        f"{seconds * 1000:.0f} ms (target: under {256 * 1024:,})"
    )
    print(
        f"ratio              {transfer.bytes / wheel.stat().st_size:.6f} of the wheel, "
        f"{transfer.bytes / directory:.3f} of its central directory"
    )
    print(f"git_version        {git_version(data)}")


if __name__ == "__main__":
    main()
