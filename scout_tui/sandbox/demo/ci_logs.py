"""CI job logs as torchtitan's integration runner and GitHub Actions write them, for the
demo, the tests and the log benchmark. Modelled on tests/integration_tests/run_tests.py:
`[test] `-prefixed output blocks between `=====` headers, `Failed test flavor` errors,
and the closing `RuntimeError: N integration test(s) failed:`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

EXP = "torchtitan/experiments/graph_trainer"
SITE = "/opt/conda/envs/py_3.12/lib/python3.12/site-packages"
TORCH_VERSION = "2.13.0.dev20260819+cu130"


@dataclass(frozen=True)
class SampleTest:
    name: str
    description: str
    ngpu: int
    outcome: str  # "pass" | "fail" | "chained" | "timeout"
    flags: str = "--compile.mode aot_fx_trace"


TESTS = [
    SampleTest(
        "aot_fx_trace_llama3_fsdp_tp",
        "AOT FX trace FSDP+TP",
        4,
        "fail",
        "--parallelism.data_parallel_shard_degree 2 --parallelism.tensor_parallel_degree 2",
    ),
    SampleTest("aot_fx_trace_llama3_1d", "AOT FX trace 1D", 2, "pass"),
    SampleTest(
        "jit_1d_auto_bucketing",
        "JIT 1D+auto_bucketing",
        2,
        "chained",
        "--compile.mode jit --compile.passes=auto_bucketing",
    ),
    SampleTest(
        "aot_fx_trace_deepseek_v3_ep",
        "AOT FX trace EP",
        8,
        "timeout",
        "--parallelism.expert_parallel_degree 8",
    ),
]


def command(test: SampleTest, out: str = "/tmp/artifacts") -> str:
    ranks = ",".join(str(n) for n in range(test.ngpu))
    visible = ",".join(str(n) for n in range(test.ngpu))
    return (
        f'TORCH_TRACE="{out}/{test.name}/compile_trace" '
        f"MODULE=graph_trainer.llama3 CONFIG=graph_trainer_llama3_debugmodel "
        f"CUDA_VISIBLE_DEVICES={visible} HIP_VISIBLE_DEVICES={visible} "
        f"NGPU={test.ngpu} LOG_RANK={ranks} ./run_train.sh --dump_folder {out}/{test.name} "
        f"{test.flags}"
    )


def _traceback(test: SampleTest, rank: int) -> list[str]:
    prefix = f"[rank{rank}]:"
    if test.outcome == "fail":
        return [
            f"{prefix}Traceback (most recent call last):",
            f'{prefix}  File "/workspace/torchtitan/train.py", line 812, in <module>',
            f"{prefix}    trainer.train()",
            f'{prefix}  File "/workspace/{EXP}/trainer.py", line 233, in train_step',
            f"{prefix}    loss = self.forward_backward_step(input_dict, labels)",
            f'{prefix}  File "/workspace/{EXP}/make_fx_tracer.py", line 488, in trace',
            f"{prefix}    gm = dynamo_graph_capture_for_export(model)(*args)",
            f'{prefix}  File "{SITE}/torch/_dynamo/functional_export.py", line 640, in inner',
            f"{prefix}    raise UserError(UserErrorType.DYNAMIC_CONTROL_FLOW, msg)",
            f"{prefix}torch._dynamo.exc.UserError: Dynamic control flow is not supported at "
            "the moment. Please use functorch.experimental.control_flow.cond",
        ]
    # A chained exception: the root cause is the last one printed.
    return [
        f"{prefix}Traceback (most recent call last):",
        f'{prefix}  File "/workspace/{EXP}/jit_backend.py", line 88, in backend',
        f"{prefix}    return aot_autograd(fw_compiler=compiler)(gm, example_inputs)",
        f"{prefix}KeyError: 'tangents_2'",
        f"{prefix}",
        f"{prefix}The above exception was the direct cause of the following exception:",
        f"{prefix}",
        f"{prefix}Traceback (most recent call last):",
        f'{prefix}  File "/workspace/{EXP}/passes.py", line 141, in apply_graph_passes',
        f"{prefix}    gm = pass_fn(gm, example_inputs)",
        f'{prefix}  File "{SITE}/torch/_functorch/partitioners.py", line 1022, in partition',
        f"{prefix}    raise AssertionError(f'Node {{name}} was invalid')",
        f"{prefix}AssertionError: Node tangents_2 was invalid, but is output",
    ]


def _block(test: SampleTest, start: datetime, noise: int, rng: random.Random) -> list[str]:
    lines = [f"[titan] {start:%Y-%m-%d %H:%M:%S},000 - root - INFO - Starting job: {test.name}"]
    for step in range(1, noise + 1):
        lines.append(
            f"[titan] {start:%Y-%m-%d %H:%M:%S},{step % 1000:03d} - root - INFO - "
            f"\x1b[31mstep: {step:>4}\x1b[39m  \x1b[32mloss: {rng.uniform(2, 11):7.4f}\x1b[39m  "
            f"\x1b[33mmemory: {rng.uniform(20, 70):5.2f}GiB(31.2%)\x1b[39m  "
            f"\x1b[34mtps: {rng.randint(4000, 9000):,}\x1b[39m"
        )
    if test.outcome in ("fail", "chained"):
        for rank in range(min(2, test.ngpu)):
            lines += _traceback(test, rank)
        lines += [
            "E0820 06:14:02.123000 1234 torch/distributed/elastic/multiprocessing/api.py:882] "
            "failed (exitcode: 1) local_rank: 0 (pid: 1234) of binary: /opt/conda/bin/python",
            "Traceback (most recent call last):",
            '  File "/opt/conda/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        ]
    return lines


def _rc(test: SampleTest) -> int:
    return {"pass": 0, "fail": 1, "chained": 1, "timeout": -1}[test.outcome]


def runner_log(
    tests: list[SampleTest] = TESTS,
    *,
    noise: int = 20,
    interleave: bool = True,
    seed: int = 0,
    pip_line: bool = True,
    torch_version: str = TORCH_VERSION,
) -> Iterator[str]:
    """The runner's stderr: blocks per test (interleaved line by line when `interleave`,
    as when tests run in parallel without the output lock), then the summary."""
    rng = random.Random(seed)
    start = datetime(2026, 8, 20, 6, 0, tzinfo=UTC)
    if pip_line:
        yield (
            "Successfully installed filelock-3.18.0 fsspec-2025.5.1 "
            f"nvidia-nccl-cu13-2.27.3 torch-{torch_version} triton-3.5.0"
        )
    blocks = []
    for number, test in enumerate(tests):
        begin = start + timedelta(minutes=number)
        end = begin + timedelta(minutes=3)
        header = [
            f"===== [{test.name}] start {begin:%Y-%m-%d %H:%M:%S} end {end:%Y-%m-%d %H:%M:%S} "
            f"flavor: {test.description} (rc={_rc(test)}) =====",
            f"===== [{test.name}] command: {command(test)} =====",
        ]
        body = [f"[{test.name}] {line}" for line in _block(test, begin, noise, rng)]
        footer = [f"===== [{test.name}] end of output (rc={_rc(test)}) ====="]
        blocks.append((header, body, footer))
    if interleave:
        for header, _, _ in blocks:
            yield from header
        cursors = [0] * len(blocks)
        while any(cursor < len(block[1]) for cursor, block in zip(cursors, blocks, strict=True)):
            for index, (_, body, _) in enumerate(blocks):
                if cursors[index] < len(body):
                    yield body[cursors[index]]
                    cursors[index] += 1
        for _, _, footer in blocks:
            yield from footer
    else:
        for header, body, footer in blocks:
            yield from header
            yield from body
            yield from footer
    failed = [t for t in tests if t.outcome != "pass"]
    for test in failed:
        reason = "timed out after 600s" if test.outcome == "timeout" else "rc=1"
        yield "[titan] 2026-08-20 06:20:00,000 - root - ERROR - "
        yield f"Failed test flavor: {test.description} ({reason})."
        yield f"Command: {command(test)}"
        yield "Last 50 lines:"
        yield "[titan] ... step: 10 loss: 3.2"
    if failed:
        yield "Traceback (most recent call last):"
        yield '  File "/workspace/tests/integration_tests/run_tests.py", line 344, in <module>'
        yield "    main()"
        yield (f"RuntimeError: {len(failed)} integration test(s) failed:")
        for test in failed:
            reason = "timed out after 600s" if test.outcome == "timeout" else "rc=1"
            yield f"  {test.name}: "
            yield f"Failed test flavor: {test.description} ({reason})."
            yield f"Command: {command(test)}"
            yield "Last 50 lines:"
            yield "[titan] ... step: 10 loss: 3.2"


def actions_format(lines: Iterator[str], start: datetime | None = None) -> Iterator[str]:
    """A job log as downloaded from the job page: a timestamp on every line, CRLF."""
    moment = start or datetime(2026, 8, 20, 6, 0, tzinfo=UTC)
    yield f"{moment:%Y-%m-%dT%H:%M:%S}.0000000Z ##[group]Run tests\r\n"
    for number, line in enumerate(lines):
        stamp = moment + timedelta(milliseconds=number)
        yield f"{stamp:%Y-%m-%dT%H:%M:%S}.{stamp.microsecond:06d}0Z {line}\r\n"
    yield f"{moment:%Y-%m-%dT%H:%M:%S}.0000000Z ##[error]Process completed with exit code 1.\r\n"


def gh_view_format(lines: Iterator[str], job: str = "build-test / linux-job") -> Iterator[str]:
    """`gh run view --log`: job, step and timestamp columns."""
    moment = datetime(2026, 8, 20, 6, 0, tzinfo=UTC)
    for number, line in enumerate(lines):
        stamp = moment + timedelta(milliseconds=number)
        yield f"{job}\tRun script\t{stamp:%Y-%m-%dT%H:%M:%S}.{stamp.microsecond:06d}0Z {line}\n"


def pytest_log() -> Iterator[str]:
    """A pytest step failing, as pytest prints it."""
    yield "============================= test session starts =============================="
    yield "collected 12 items"
    yield f"{EXP}/tests/test_passes.py ....F..                                    [ 58%]"
    yield f"{EXP}/tests/test_numerics.py ....F                                    [100%]"
    yield "=================================== FAILURES ==================================="
    yield "_____________________________ TestCse.test_cse ________________________________"
    yield "Traceback (most recent call last):"
    yield f'  File "/workspace/{EXP}/tests/test_passes.py", line 41, in test_cse'
    yield "    self.assertEqual(count_nodes(gm), 3)"
    yield "AssertionError: 4 != 3"
    yield "=========================== short test summary info ============================"
    yield f"FAILED {EXP}/tests/test_passes.py::TestCse::test_cse - AssertionError: 4 != 3"
    yield (
        f"FAILED {EXP}/tests/test_numerics.py::TestSimpleFSDP::test_fsdp - "
        "RuntimeError: NCCL error: unhandled system error"
    )
    yield "========================= 2 failed, 10 passed in 41.2s ========================="


def write_noisy_log(path: Path, megabytes: int, failures_every_mb: int = 200) -> None:
    """A job log of about `megabytes` MiB that is mostly training noise (step/loss lines,
    ANSI colours, timestamps), with the runner's failures spread through it and at its end."""
    noise = "".join(
        f"2026-08-20T06:00:00.0000000Z [titan] 2026-08-20 06:00:00,000 - root - INFO - "
        f"\x1b[31mstep: {n:>5}\x1b[39m  \x1b[32mloss: 3.{n % 9999:04d}\x1b[39m  "
        "memory: 41.20GiB(43.3%)  tps: 6,521  tflops: 301.2  mfu: 30.4%\r\n"
        for n in range(20_000)
    ).encode()
    failing = "".join(actions_format(runner_log())).encode()
    target = megabytes * 1024 * 1024
    every = max(1, failures_every_mb * 1024 * 1024 // len(noise))
    with open(path, "wb") as out:
        written = blocks = 0
        while written < target:
            out.write(noise)
            written += len(noise)
            blocks += 1
            if blocks % every == 0:
                out.write(failing)
                written += len(failing)
        out.write(failing)
