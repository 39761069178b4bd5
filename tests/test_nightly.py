"""Reading torch/version.py out of a wheel over HTTP, with and without Range support."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
import requests

from scout_tui.nightlies.wheels import (
    NightlyError,
    git_version,
    read_member,
    torch_commit,
    wheel_url,
)
from scout_tui.sandbox.demo.file_server import FileServer, Served
from tests.cli import scout

COMMIT = "0123456789abcdef0123456789abcdef01234567"
WHEEL_NAME = "torch-2.13.0.dev20260819+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"
REAL_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")


def make_wheel(path: Path, entries: int, version_first: bool = True, zip64: bool = False) -> Path:
    version_py = f"__version__ = '2.13.0.dev20260819+cu130'\ngit_version = '{COMMIT}'\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        if version_first:
            wheel.writestr("torch/__init__.py", "")
            wheel.writestr("torch/version.py", version_py)
        for n in range(entries):
            # Long names make the central directory big, like torch's (1 MiB+).
            wheel.writestr(f"torch/include/ATen/native/some/deep/path/header_{n:05d}.h", "x")
        if not version_first:
            wheel.writestr("torch/version.py", version_py)
        if zip64:
            info = zipfile.ZipInfo("torch/lib/big.bin")
            with wheel.open(info, "w", force_zip64=True) as out:
                out.write(b"\0" * 1024)
    return path


@pytest.fixture(scope="module")
def big_wheel(tmp_path_factory) -> Path:
    return make_wheel(tmp_path_factory.mktemp("w") / "big.whl", 12_000)


def directory_size(path: Path) -> int:
    with zipfile.ZipFile(path) as wheel:
        return wheel.start_dir and (path.stat().st_size - wheel.start_dir)


def test_ranged_read_stops_early_in_a_big_directory(big_wheel):
    served = Served(files={WHEEL_NAME: big_wheel})
    with FileServer(served) as index, requests.Session() as session:
        url = f"{index.removesuffix('/simple')}/files/{WHEEL_NAME}"
        data, transfer = read_member(session, url)
    assert git_version(data) == COMMIT
    assert transfer.ranged
    assert directory_size(big_wheel) > 1024 * 1024  # the directory alone is over 1 MiB
    assert transfer.bytes < 128 * 1024  # tail + one directory chunk + the member
    assert transfer.bytes == served.bytes_sent
    assert transfer.requests == 3


def serve_and_read(wheel: Path, ranges: bool = True):
    """Serve one wheel on 127.0.0.1 and read torch/version.py out of it."""
    served = Served(ranges=ranges, files={wheel.name: wheel})
    with FileServer(served) as index, requests.Session() as session:
        return read_member(session, f"{index.removesuffix('/simple')}/files/{wheel.name}")


def test_member_at_the_end_still_found(tmp_path):
    data, _ = serve_and_read(make_wheel(tmp_path / "late.whl", 300, version_first=False))
    assert git_version(data) == COMMIT


def test_zip64(tmp_path):
    data, _ = serve_and_read(make_wheel(tmp_path / "z64.whl", 10, zip64=True))
    assert git_version(data) == COMMIT


def test_server_without_ranges_falls_back_and_says_so(big_wheel):
    data, transfer = serve_and_read(big_wheel, ranges=False)
    assert git_version(data) == COMMIT
    assert not transfer.ranged
    assert transfer.bytes == big_wheel.stat().st_size
    assert "ignored Range" in transfer.notes[0]


def test_index_lookup_picks_the_right_wheel(tmp_path):
    wheel = make_wheel(tmp_path / "w.whl", 5)
    files = {
        "torch-2.13.0.dev20260819+cu130-cp312-cp312-manylinux_2_28_x86_64.whl": wheel,
        "torch-2.13.0.dev20260819+cu130-cp311-cp311-manylinux_2_28_x86_64.whl": tmp_path / "no",
        "torch-2.13.0.dev20260819+cu130-cp312-cp312-manylinux_2_28_aarch64.whl": tmp_path / "no",
        "torch-2.13.0.dev20260818+cu130-cp312-cp312-manylinux_2_28_x86_64.whl": tmp_path / "no",
    }
    with FileServer(Served(files=files)) as index:
        found = torch_commit("2.13.0.dev20260819+cu130", index, "cp312", "manylinux")
        assert found.commit == COMMIT
        assert found.wheel.endswith(
            "torch-2.13.0.dev20260819%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl"
        )
        with pytest.raises(NightlyError, match=r"no torch 2\.99\.0 wheel"):
            torch_commit("2.99.0", index, "cp312", "manylinux")


def test_unreachable_index_is_a_clear_error():
    with pytest.raises(NightlyError, match="cannot reach"):
        torch_commit("2.13.0", "http://127.0.0.1:9/simple", "cp312", "manylinux")


def test_wheel_url_parsing():
    html = (
        '<a href="../../files/torch-2.1.0%2Bcu121-cp312-cp312-manylinux1_x86_64.whl#sha256=1">x</a>'
    )
    assert wheel_url(html, "https://h/whl/nightly/torch/", "2.1.0", "cp312", "manylinux") == (
        "https://h/whl/files/torch-2.1.0%2Bcu121-cp312-cp312-manylinux1_x86_64.whl"
    )


def test_torch_commit_cli_is_cached(tmp_path):
    wheel = make_wheel(tmp_path / "w.whl", 5)
    name = "torch-2.13.0.dev20260819+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"
    served = Served(files={name: wheel})
    command = ["torch-commit", "2.13.0.dev20260819+cu130", "--cache-dir", tmp_path / "cache"]
    with FileServer(served) as index:
        first = scout(*command, "--index-url", index)
        assert first.returncode == 0, first.stderr
        assert first.stdout.strip() == COMMIT
        assert "bytes in" in first.stderr
        requests_before = len(served.requests)
        again = scout(*command, "--index-url", index)
        assert again.stdout.strip() == COMMIT
        assert len(served.requests) == requests_before  # answered from the cache
        # A version that is not one is refused before anything is sent.
        typo = scout("torch-commit", "2.13.0.dev2026O819", "--index-url", index)
        assert typo.returncode == 2 and "not a torch version" in typo.stderr
        assert len(served.requests) == requests_before
    down = scout(
        *command[:2], "--index-url", "http://127.0.0.1:9/x", "--cache-dir", tmp_path / "other"
    )
    assert down.returncode == 1 and down.stderr.startswith("scout: error: cannot reach")


@pytest.mark.skipif(
    not REAL_WHEEL.is_file(), reason=f"no torch wheel on this machine ({REAL_WHEEL})"
)
def test_real_torch_wheel():
    served = Served(files={REAL_WHEEL.name: REAL_WHEEL})
    with FileServer(served) as index, requests.Session() as session:
        data, transfer = read_member(
            session, f"{index.removesuffix('/simple')}/files/{REAL_WHEEL.name}"
        )
    assert len(git_version(data)) == 40
    assert transfer.bytes < 256 * 1024


def test_ci_log_report_with_regression_range(tmp_path):
    from scout_tui.sandbox.demo.ci_logs import actions_format, runner_log

    passing_commit = "fedcba9876543210fedcba9876543210fedcba98"
    good = tmp_path / "good.whl"
    with zipfile.ZipFile(good, "w") as wheel:
        wheel.writestr("torch/version.py", f"git_version = '{passing_commit}'\n")
    bad = make_wheel(tmp_path / "bad.whl", 5)
    served = Served(
        files={
            WHEEL_NAME: bad,
            "torch-2.13.0.dev20260818+cu130-cp312-cp312-manylinux_2_28_x86_64.whl": good,
        }
    )
    log = tmp_path / "job.log"
    log.write_text("".join(actions_format(runner_log())))
    with FileServer(served) as index:
        config = tmp_path / "scout.toml"
        config.write_text(f'[torch]\nnightly_index = "{index}"\n')
        done = scout(
            "ci-log",
            log,
            "--report",
            "--config",
            config,
            "--passing-version",
            "2.13.0.dev20260818+cu130",
            "--cache-dir",
            tmp_path / "cache",
        )
    assert done.returncode == 0, done.stderr
    assert "| 2.13.0.dev20260818+cu130 | pass | `fedcba987654` |" in done.stdout
    assert "| 2.13.0.dev20260819+cu130 | fail | `0123456789ab` |" in done.stdout
    assert f"compare/{passing_commit}...{COMMIT}" in done.stdout


def test_a_nightlys_build_picks_its_index():
    from scout_tui.nightlies.regression import variant_index

    index = "https://download.pytorch.org/whl/nightly/cu130"
    assert variant_index(index, "2.11.0.dev20261201+cu126").endswith("/nightly/cu126")
    assert variant_index(index, "2.11.0.dev20261201+cpu").endswith("/nightly/cpu")
    assert variant_index(index, "2.11.0.dev20261201") == index
    assert (
        variant_index("https://example.com/simple", "2.11.0+cu126") == "https://example.com/simple"
    )
