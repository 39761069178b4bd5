"""`open_log`: every kind of input `scout ci-log` takes, on real files, FIFOs, pipes,
processes and archives built here."""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from scout_tui.analysis.ci.cilog import analyse
from scout_tui.analysis.ci.log_input import LogInputError, log_members, open_log
from scout_tui.sandbox.demo.ci_logs import actions_format, pytest_log, runner_log, write_noisy_log

EXP = "torchtitan/experiments/graph_trainer"
FAILING = ["aot_fx_trace_llama3_fsdp_tp", "jit_1d_auto_bucketing", "aot_fx_trace_deepseek_v3_ep"]

# A child process: open_log(argv[1]), analyse it, print what the CLI would need.
CHILD = """
import json, resource, sys
from scout_tui.analysis.ci.cilog import analyse
from scout_tui.analysis.ci.log_input import LogInputError, open_log
try:
    with open_log(sys.argv[1]) as log:
        result = analyse(log.fd, "torchtitan/experiments/graph_trainer")
        out = {"kind": log.kind, "name": log.name, "lines": result.lines,
               "bytes": result.bytes_scanned, "failing": result.failing_tests}
except LogInputError as exc:
    out = {"error": exc.message, "usage": exc.usage}
out["rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(out))
"""


def child(arg: str, **kwargs) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, arg], capture_output=True, check=True, **kwargs
    )
    return json.loads(done.stdout)


@pytest.fixture
def job_log(tmp_path) -> Path:
    path = tmp_path / "job.log"
    path.write_bytes("".join(actions_format(runner_log())).encode())
    return path


@pytest.fixture(autouse=True)
def spool_dir(tmp_path, monkeypatch) -> Path:
    """Spools go to a directory of the test's own, which must be left empty."""
    spools = tmp_path / "spools"
    spools.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(spools))
    yield spools
    assert list(spools.iterdir()) == []


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def analysed(path: str):
    with open_log(path) as log:
        return log, analyse(log.fd, EXP)


def test_regular_file_is_read_in_place(job_log):
    with open_log(str(job_log)) as log:
        assert (log.kind, log.name) == ("file", str(job_log))
        assert os.fstat(log.fd).st_ino == job_log.stat().st_ino  # no copy
        result = analyse(log.fd, EXP)
    assert result == analyse(str(job_log), EXP)
    assert result.failing_tests == FAILING and result.holds_log


def test_empty_file(tmp_path):
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    log, result = analysed(str(path))
    assert log.kind == "file"
    assert (result.lines, result.binary, result.holds_log, result.failures) == (0, False, False, [])


def test_dev_null_is_spooled_and_empty():
    log, result = analysed("/dev/null")
    assert (log.kind, log.name) == ("pipe", "/dev/null")
    assert result.lines == 0 and not result.holds_log


def test_random_bytes(tmp_path):
    path = tmp_path / "core"
    path.write_bytes(random.Random(3).randbytes(256 * 1024))
    _, result = analysed(str(path))
    assert result.binary and not result.holds_log and result.failures == []


def test_directory(tmp_path):
    with pytest.raises(LogInputError) as caught, open_log(str(tmp_path)):
        pass
    assert (caught.value.message, caught.value.usage) == (f"{tmp_path} is a directory", True)


@pytest.mark.parametrize("name", ["missing.log", "job.log/inside.log"])
def test_missing_path(tmp_path, job_log, name):
    path = str(tmp_path / name)
    with pytest.raises(LogInputError) as caught, open_log(path):
        pass
    assert (caught.value.message, caught.value.usage) == (f"no such log file: {path}", True)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file all the same")
def test_unreadable_file(job_log):
    job_log.chmod(0)
    with pytest.raises(LogInputError) as caught, open_log(str(job_log)):
        pass
    message = f"cannot read {job_log}: Permission denied"
    assert (caught.value.message, caught.value.usage) == (message, True)


def writer(path_or_fd: str | int, data: bytes) -> threading.Thread:
    """Write `data` into a FIFO or a pipe's write end from another thread, then close it."""

    def write() -> None:
        with open(path_or_fd, "wb") as out:
            out.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_fifo(tmp_path, job_log):
    fifo = tmp_path / "job.fifo"
    os.mkfifo(fifo)
    data = job_log.read_bytes() * 40  # past a pipe's 64 KiB buffer
    thread = writer(str(fifo), data)
    log, result = analysed(str(fifo))
    thread.join()
    assert log.kind == "pipe" and result.bytes_scanned == len(data)
    assert result.failing_tests == FAILING
    assert result.lines == data.count(b"\n")


def test_dev_fd_of_a_pipe(job_log):
    """What bash's `<(cmd)` hands over: /dev/fd/N, the read end of a pipe."""
    read_end, write_end = os.pipe()
    try:
        thread = writer(write_end, job_log.read_bytes())
        log, result = analysed(f"/dev/fd/{read_end}")
        thread.join()
    finally:
        os.close(read_end)
    assert log.kind == "pipe" and result == analyse(str(job_log), EXP)


def test_bash_process_substitution(job_log):
    done = subprocess.run(
        ["bash", "-c", 'exec "$0" -c "$1" <(gzip -c < "$2")', sys.executable, CHILD, str(job_log)],
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(done.stdout)
    assert out["name"].startswith("/dev/fd/") and out["kind"] == "gzip"
    assert out["failing"] == FAILING


def test_stdin_pipe(job_log):
    out = child("-", input=job_log.read_bytes())
    assert (out["kind"], out["name"]) == ("stdin", "standard input")
    assert out["failing"] == FAILING and out["bytes"] == job_log.stat().st_size


def test_stdin_regular_file_and_gzip(tmp_path, job_log):
    with open(job_log, "rb") as stdin:
        out = child("-", stdin=stdin)
    assert out["kind"] == "stdin" and out["failing"] == FAILING
    packed = tmp_path / "job.log.gz"
    packed.write_bytes(gzip.compress(job_log.read_bytes()))
    with open(packed, "rb") as stdin:
        out = child("-", stdin=stdin)
    assert out["kind"] == "gzip" and out["failing"] == FAILING
    assert out["bytes"] == job_log.stat().st_size


def test_stdin_empty_and_closed():
    out = child("-", stdin=subprocess.DEVNULL)
    assert out["kind"] == "stdin" and out["lines"] == 0
    done = subprocess.run(
        [sys.executable, "-c", "import os\nos.close(0)\n" + CHILD, "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(done.stdout)
    assert out["error"] == "no standard input to read a log from" and out["usage"]


@pytest.mark.parametrize("name", ["job.log.gz", "job.log"])  # told by its bytes, not its name
def test_gzip_gives_the_plain_files_analysis(tmp_path, job_log, name):
    packed = tmp_path / "packed" / name
    packed.parent.mkdir()
    # Two gzip members, as `cat a.gz b.gz` makes: both are read.
    data = job_log.read_bytes()
    packed.write_bytes(gzip.compress(data[:1000]) + gzip.compress(data[1000:]))
    log, result = analysed(str(packed))
    assert log.kind == "gzip" and log.name == str(packed)
    assert result == analyse(str(job_log), EXP)


def test_gzip_suffix_on_plain_text_is_plain(tmp_path, job_log):
    path = tmp_path / "not-really.gz"
    path.write_bytes(job_log.read_bytes())
    log, result = analysed(str(path))
    assert log.kind == "file" and result.failing_tests == FAILING


def test_truncated_gzip(tmp_path, job_log):
    packed = gzip.compress(job_log.read_bytes())
    path = tmp_path / "cut.log.gz"
    path.write_bytes(packed[: len(packed) // 2])
    before = open_fds()
    with pytest.raises(LogInputError) as caught, open_log(str(path)):
        pass
    assert caught.value.message == (
        f"{path} is not a readable gzip file: "
        "Compressed file ended before the end-of-stream marker was reached"
    )
    assert not caught.value.usage
    assert open_fds() == before  # the file and the spool were closed


def test_corrupt_gzip(tmp_path, job_log):
    packed = bytearray(gzip.compress(job_log.read_bytes()))
    packed[len(packed) // 2 : len(packed) // 2 + 64] = bytes(64)
    path = tmp_path / "bad.gz"
    path.write_bytes(bytes(packed))
    with (
        pytest.raises(LogInputError, match=r"bad.gz is not a readable gzip file: \S"),
        open_log(str(path)),
    ):
        pass


def github_archive(path: Path, jobs: dict[str, list[str]]) -> None:
    """A workflow run's log archive as GitHub serves it: `N_<job>.txt` per job at the top
    level, and `<job>/N_<step>.txt` with the same lines split by step."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for number, (job, steps) in enumerate(jobs.items(), start=1):
            archive.writestr(f"{number}_{job}.txt", "".join(steps))
            for step_number, step in enumerate(steps, start=1):
                archive.writestr(f"{job}/{step_number}_step {step_number}.txt", step)


def run_jobs() -> dict[str, list[str]]:
    setup = "2026-08-20T06:00:00.0000000Z ##[group]Set up job\r\n"
    jobs = {
        f"lint {n}": [setup, "2026-08-20T06:00:01.0000000Z All checks passed!"]
        for n in range(2, 11)
    }
    jobs["integration (cuda)"] = [setup, "".join(actions_format(runner_log()))]
    jobs["unit"] = [setup, "".join(line + "\n" for line in pytest_log())]
    return jobs


def test_github_log_archive_reports_each_failure_once(tmp_path):
    path = tmp_path / "logs_123.zip"
    jobs = run_jobs()
    github_archive(path, jobs)
    log, result = analysed(str(path))
    # The job logs one after the other, a newline ending each that lacks one.
    plain = tmp_path / "jobs.log"
    plain.write_text(
        "".join(
            text if text.endswith("\n") else text + "\n"
            for text in ("".join(steps) for steps in jobs.values())
        )
    )
    assert result == analyse(str(plain), EXP)
    assert log.kind == "zip"
    # The top-level job logs only, 2_ before 10_; no member ends up read twice.
    assert log.members == tuple(f"{n}_{job}.txt" for n, job in enumerate(jobs, start=1))
    pytest_failures = [
        f"{EXP}/tests/test_passes.py::TestCse::test_cse",
        f"{EXP}/tests/test_numerics.py::TestSimpleFSDP::test_fsdp",
    ]
    assert result.failing_tests == FAILING + pytest_failures
    assert result.reported_failures == 3


def test_archive_of_step_files_only(tmp_path):
    path = tmp_path / "steps.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("build/", "")
        archive.writestr("build/10_Post.txt", "2026-08-20T06:09:00.0000000Z done\n")
        archive.writestr("build/2_Run tests.txt", "".join(actions_format(runner_log())))
        archive.writestr("build/notes.md", "FAILED nothing - not a log\n")
    log, result = analysed(str(path))
    assert log.members == ("build/2_Run tests.txt", "build/10_Post.txt")
    assert result.failing_tests == FAILING


def test_zip_without_text_members(tmp_path):
    path = tmp_path / "artifacts.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("model.pt", b"\x80\x02weights")
        archive.writestr("logs/", "")
    with pytest.raises(LogInputError) as caught, open_log(str(path)):
        pass
    assert caught.value.message == f"{path} is not a log archive: it holds no .txt file"
    assert not caught.value.usage
    empty = tmp_path / "empty.zip"
    zipfile.ZipFile(empty, "w").close()
    with pytest.raises(LogInputError, match="is not a log archive"), open_log(str(empty)):
        pass


def test_truncated_zip(tmp_path):
    path = tmp_path / "cut.zip"
    github_archive(path, run_jobs())
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(LogInputError) as caught, open_log(str(path)):
        pass
    assert caught.value.message == (
        f"{path} is not a readable zip archive: its central directory is missing "
        "(a truncated download?)"
    )


def test_zip_member_with_a_bad_crc(tmp_path, job_log):
    path = tmp_path / "flipped.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("1_job.txt", job_log.read_bytes())
    path.write_bytes(path.read_bytes().replace(b"Traceback", b"Tracebaxk", 1))  # stored as is
    with pytest.raises(LogInputError) as caught, open_log(str(path)):
        pass
    assert caught.value.message == (
        f"{path} is not a readable zip archive: Bad CRC-32 for file '1_job.txt'"
    )


def test_log_members_order():
    names = ["10_b.txt", "2_a.txt", "a/1_x.txt", "readme.md", "dir/"]
    assert log_members(names) == ["2_a.txt", "10_b.txt"]
    assert log_members(["j/10_z.txt", "j/9_y.TXT", "x.bin"]) == ["j/9_y.TXT", "j/10_z.txt"]
    assert log_members(["x.bin"]) == []


def test_spools_are_closed_even_when_the_body_raises(job_log):
    before = open_fds()
    with pytest.raises(KeyError), open_log("/dev/null") as log:
        fd = log.fd
        raise KeyError("the caller failed")
    with pytest.raises(OSError):
        os.fstat(fd)
    assert open_fds() == before
    with open_log(str(job_log)) as log:
        fd = log.fd
    with pytest.raises(OSError):
        os.fstat(fd)


@pytest.mark.slow
def test_big_pipe_and_gzip_through_stdin_keep_memory_flat(tmp_path):
    """64 MiB through a pipe, plain then gzip-compressed: the child's peak RSS stays far
    under the log's size."""
    path = tmp_path / "big.log"
    write_noisy_log(path, 64, failures_every_mb=16)
    packed = tmp_path / "big.log.gz"
    with open(path, "rb") as source, gzip.open(packed, "wb", compresslevel=1) as out:
        while block := source.read(1 << 20):
            out.write(block)
    for source, kind in ((path, "stdin"), (packed, "gzip")):
        command = 'cat "$2" | exec "$0" -c "$1" -'
        done = subprocess.run(
            ["bash", "-c", command, sys.executable, CHILD, str(source)],
            capture_output=True,
            text=True,
            check=True,
        )
        out = json.loads(done.stdout)
        assert out["kind"] == kind and out["failing"] == FAILING
        assert out["bytes"] == path.stat().st_size
        assert out["rss_kib"] < 48 * 1024, out
