"""The chunk scan: anchors found whatever the chunk boundaries, lines counted, binary data
told from a text log, on real files."""

from __future__ import annotations

import os
import random

import pytest

from scout_tui.analysis.ci.cilog import ANCHORS, CHUNK, analyse, scan_log
from scout_tui.sandbox.demo.ci_logs import actions_format, runner_log


def reference_hits(data: bytes) -> list[tuple[int, str]]:
    """Every anchor occurrence, overlapping ones too, by a plain forward search."""
    hits = []
    for name, anchor in ANCHORS.items():
        position = data.find(anchor)
        while position >= 0:
            hits.append((position, name))
            position = data.find(anchor, position + 1)
    return sorted(hits)


def scan_bytes(tmp_path, data: bytes, chunk_size: int = CHUNK):
    path = tmp_path / "scan.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        return scan_log(fd, len(data), chunk_size)
    finally:
        os.close(fd)


def tricky_log() -> bytes:
    """A log with anchors next to each other, overlapping (`===== ===== [`), at the very
    start and end, CRLF and LF lines."""
    rng = random.Random(7)
    pieces = [b"===== [start] x\n"]
    anchors = list(ANCHORS.values())
    for _ in range(300):
        pieces.append(rng.choice([b"noise ", b"[titan] ", b"\x1b[31m", b"= [", b"FAILED", b" "]))
        if rng.random() < 0.3:
            pieces.append(rng.choice(anchors))
        if rng.random() < 0.2:
            pieces.append(rng.choice([b"\n", b"\r\n"]))
    pieces.append(b"===== ===== [ FAILED FAILED Command: Command: ")
    pieces.append(b"Traceback (most recent call last)")
    return b"".join(pieces)


@pytest.mark.parametrize("chunk_size", [1, 2, 7, 33, 34, 100, 512, 4096, CHUNK])
def test_scan_finds_every_anchor_whatever_the_chunk_size(tmp_path, chunk_size):
    data = tricky_log()
    scan = scan_bytes(tmp_path, data, chunk_size)
    assert scan.hits == reference_hits(data)
    assert scan.lines == data.count(b"\n") + 1  # the last line has no newline
    assert not scan.binary


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", 0),
        (b"\n", 0),
        (b" \n\t\n", 0),
        (b"one", 1),
        (b"one\n", 1),
        (b"one\ntwo", 2),
        (b"a\r\nb\r\n", 2),
        (b"\n\nthree", 3),
    ],  # only blank lines: no log
)
def test_line_count(tmp_path, data, lines):
    for chunk_size in (1, 2, 3, CHUNK):
        assert scan_bytes(tmp_path, data, chunk_size).lines == lines


def test_empty_file_has_no_lines(tmp_path):
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    result = analyse(str(path), "torchtitan/experiments/")
    assert (result.lines, result.binary, result.holds_log) == (0, False, False)
    assert result.failures == []


def test_random_bytes_are_binary(tmp_path):
    path = tmp_path / "random.bin"
    path.write_bytes(random.Random(1).randbytes(1024 * 1024))
    result = analyse(str(path), "torchtitan/experiments/")
    assert result.binary and not result.holds_log and result.lines > 0


def test_zero_bytes_and_utf16_are_binary(tmp_path):
    assert scan_bytes(tmp_path, bytes(100_000)).binary
    assert scan_bytes(tmp_path, "line\n".encode("utf-16-le") * 1000).binary


def test_log_with_binary_junk_is_text(tmp_path):
    """The junk is most of the file's bytes, yet a quarter is real log: not binary."""
    log = "".join(line + "\n" for line in runner_log(interleave=False)).encode()
    junk = bytes(range(256)) * 300 + b"\xff\xfe\x00" * 1000
    for data in (junk + b"\n" + log, log[:5000] + junk + b"\n" + log[5000:]):
        path = tmp_path / "noisy.log"
        path.write_bytes(data)
        result = analyse(str(path), "torchtitan/experiments/")
        assert not result.binary and result.holds_log
        assert len(result.failures) == 3


def test_stray_nul_and_utf8_stay_text(tmp_path):
    lines = "".join(actions_format(runner_log())).encode()
    data = lines + "✓ 日本語のログ\n".encode() * 1000 + b"\x00" + lines
    for chunk_size in (4096, CHUNK):
        scan = scan_bytes(tmp_path, data, chunk_size)
        assert not scan.binary
        assert scan.lines == data.count(b"\n")


def test_real_log_lines(tmp_path):
    text = "".join(actions_format(runner_log()))
    path = tmp_path / "job.log"
    path.write_bytes(text.encode())
    result = analyse(str(path), "torchtitan/experiments/")
    assert result.lines == text.count("\n") and result.holds_log
