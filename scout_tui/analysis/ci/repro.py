"""Turn a failing test's `Command:` line into the command a person runs to reproduce it.

The runner's command carries CI plumbing: `TORCH_TRACE=…` and `LOG_RANK=…`, the GPU pinning
of the parallel runner (`CUDA_VISIBLE_DEVICES=…`), and `--dump_folder <dir>`. What is left
is written the way users run it: `NGPU=<n> ./run_train.sh --module <m> --config <c> [flags]`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from scout_tui.analysis.ci.cilog import TestFailure

DROPPED_ENV = {"TORCH_TRACE", "LOG_RANK", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}
DROPPED_FLAGS = {"--dump_folder", "--dump-folder"}
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


class ReproError(ValueError):
    pass


def repro_command(command: str, default_ngpu: int = 8) -> str:
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ReproError(f"cannot parse the command ({exc}): {command!r}") from None
    env: dict[str, str] = {}
    index = 0
    while index < len(words) and (match := _ASSIGNMENT.match(words[index])):
        env[match.group(1)] = match.group(2)
        index += 1
    if index >= len(words):
        raise ReproError(f"no program in the command: {command!r}")
    program, flags = words[index], words[index + 1 :]
    module, config = env.pop("MODULE", None), env.pop("CONFIG", None)
    # ./run_train.sh takes its GPUs from NGPU (CI's runners have 8); pytest and torchrun are
    # not given a count they did not say (torchrun says it in --nproc-per-node).
    ngpu = env.pop("NGPU", str(default_ngpu) if program == "./run_train.sh" else None)
    rest: list[str] = []
    position = 0
    while position < len(flags):
        flag = flags[position]
        name = flag.split("=", 1)[0]
        if name in DROPPED_FLAGS:
            position += 1 if "=" in flag else 2
            continue
        if name in ("--module", "--config") and "=" not in flag and position + 1 < len(flags):
            value = flags[position + 1]
            module, config = (value, config) if name == "--module" else (module, value)
            position += 2
            continue
        if name in ("--module", "--config") and "=" in flag:
            value = flag.split("=", 1)[1]
            module, config = (value, config) if name == "--module" else (module, value)
            position += 1
            continue
        rest.append(flag)
        position += 1
    kept_env = [
        f"{key}={shlex.quote(value)}" for key, value in env.items() if key not in DROPPED_ENV
    ]
    parts = [*kept_env, *([f"NGPU={shlex.quote(ngpu)}"] if ngpu is not None else []), program]
    if module:
        parts += ["--module", shlex.quote(module)]
    if config:
        parts += ["--config", shlex.quote(config)]
    parts += [shlex.quote(flag) for flag in rest]
    return " ".join(parts)


def left_out(command: str) -> list[str]:
    """What `repro_command` leaves out of `command`: the environment it drops (the GPUs a
    repro runs on are NGPU's; traces and ranks are CI's) and the output folders."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    out = []
    for position, word in enumerate(words):
        match = _ASSIGNMENT.match(word)
        if match and match.group(1) in DROPPED_ENV:
            out.append(word)
        elif word.split("=", 1)[0] in DROPPED_FLAGS:
            value = "" if "=" in word or position + 1 >= len(words) else " " + words[position + 1]
            out.append(word + value)
    return out


def gpus_of(argv: ReproArgv) -> int | None:
    """The GPUs a repro takes: torchrun's --nproc-per-node (it starts that many, whatever
    NGPU says), else NGPU; None when unsaid."""
    if argv.argv[0] == "torchrun":
        try:  # torchrun's own options only: the script's arguments may look alike
            per_node = _torchrun_options(argv.argv[1:])[0].get("--nproc-per-node", "")
        except ReproError:
            per_node = ""
        if per_node.isdigit():
            return int(per_node)
    ngpu = argv.env.get("NGPU", "")
    return int(ngpu) if ngpu.isdigit() else None


@dataclass(frozen=True)
class ReproArgv:
    """A repro as scout runs it: no shell, the environment assignments apart."""

    env: dict[str, str]
    argv: list[str]

    def display(self) -> str:
        return shlex.join([f"{key}={value}" for key, value in self.env.items()] + self.argv)


_PYTEST_FLAGS = {"-x", "-q", "-v", "-vv", "-s", "-rA"}
_PYTEST_TEST = re.compile(r"^[\w.][\w.-]*(?:/[\w.-]+)*\.py(?:::[\w\[\]-]+)+$")  # no -option
# What torchrun may be told before its script, each with the values it may take: an exact
# list, since torchrun's own parser takes any unique prefix (`--no-pyt` is --no-python, which
# runs any program) and options such as --rdzv-endpoint reach other hosts.
_TORCHRUN_OPTIONS: dict[str, re.Pattern[str] | None] = {
    **dict.fromkeys(("--nproc-per-node", "--nproc_per_node"), re.compile(r"^(\d+|gpu|auto)$")),
    "--nnodes": re.compile(r"^1(:1)?$"),
    "--standalone": None,
    **dict.fromkeys(("--local-ranks-filter", "--local_ranks_filter"), re.compile(r"^[\d,]+$")),
    "--role": re.compile(r"^\w+$"),
    "--tee": re.compile(r"^\d$"),
    "--redirects": re.compile(r"^\d$"),
}


def _torchrun_options(arguments: list[str]) -> tuple[dict[str, str], str]:
    """torchrun's options (from the allowed list only: any other is a ReproError), and the
    script it runs after them."""
    options: dict[str, str] = {}
    position = 0
    while position < len(arguments) and arguments[position].startswith("-"):
        name, has_value, value = arguments[position].partition("=")
        if name not in _TORCHRUN_OPTIONS:
            raise ReproError(f"torchrun option {name!r} is not one a repro needs")
        allowed = _TORCHRUN_OPTIONS[name]
        if allowed is not None and not has_value:
            position += 1
            value = arguments[position] if position < len(arguments) else ""
        if (allowed is None and has_value) or (allowed is not None and not allowed.match(value)):
            raise ReproError(f"torchrun {name} {value!r} is not a value a repro needs")
        options[name.replace("_", "-")] = value
        position += 1
    script = arguments[position] if position < len(arguments) else ""
    if not re.fullmatch(r"[\w.-]+(?:/[\w.-]+)*\.py", script):
        raise ReproError("torchrun runs a script of the checkout (a relative path.py)")
    return options, script


# What a shell would have read as more than one argv: operators, redirections, expansions.
# No shell runs a repro, so they would reach the program as words; refused instead. (A
# pytest id's parameters, `test[a|b]`, are words, not operators.)
_SHELL_SYNTAX = re.compile(r"^(?:[;&|]+|\d*[<>]+&?\d*|&>)$|\$[({\w]|`|;$")


def repro_argv(command: str) -> ReproArgv:
    """The argv of a repro in one of the shapes scout makes: `NGPU=<n> ./run_train.sh …`,
    `torchrun …` and `pytest path::…`; anything else is refused (ReproError, saying why).
    No argument may reach outside the checkout (an absolute path, `~`, `..`)."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ReproError(f"cannot parse the command ({exc})") from None
    env: dict[str, str] = {}
    while words and (match := _ASSIGNMENT.match(words[0])):
        name, value = match.groups()
        # NGPU only: PATH, LD_PRELOAD, BASH_ENV, a cache folder of torch's… each runs other code.
        if name != "NGPU":
            raise ReproError(f"a repro sets NGPU=<n> and nothing else, not {name}")
        if not value.isdigit() or int(value) == 0:
            raise ReproError(f"NGPU takes a number of GPUs (1 or more), not {value!r}")
        env[name] = value
        words.pop(0)
    if not words:
        raise ReproError("no program in the command")
    program, arguments = words[0], words[1:]
    if program not in ("./run_train.sh", "pytest", "torchrun"):  # said first: the shapes
        raise ReproError(
            f"{program!r} is not a repro scout runs (./run_train.sh, torchrun, pytest)"
        )
    for argument in arguments:
        if _SHELL_SYNTAX.search(argument):
            raise ReproError(
                f"{argument!r} is shell syntax: a repro is one command, run with no shell "
                "(no pipes, redirections, `&&` or `$(…)`)"
            )
        value = argument.split("=", 1)[-1]
        if not argument.isprintable():
            raise ReproError(f"the argument {argument!r} holds a control character")
        if value.startswith(("/", "~")) or ".." in value:
            raise ReproError(f"the argument {argument!r} reaches outside the checkout")
    if program == "./run_train.sh":
        if "NGPU" not in env:
            raise ReproError("./run_train.sh runs with NGPU=<n>")
    elif program == "pytest":
        if not any(_PYTEST_TEST.match(argument) for argument in arguments) or not all(
            argument in _PYTEST_FLAGS or _PYTEST_TEST.match(argument) for argument in arguments
        ):
            raise ReproError(
                f"pytest runs tests named path.py::test (and {' '.join(sorted(_PYTEST_FLAGS))})"
            )
    else:
        _torchrun_options(arguments)
    return ReproArgv(env, [program, *arguments])


def failure_repro(failure: TestFailure) -> str | None:
    """One failing test's repro: its runner's `Command:` line made a person's, or for a
    pytest test the log gives no command for, `pytest path.py::Class::test`. None when
    neither is there (or the command cannot be read)."""
    if failure.command:
        try:
            return repro_command(failure.command)
        except ReproError:
            return None
    if failure.kind == "pytest" and _PYTEST_TEST.match(failure.name):
        return f"pytest {shlex.quote(failure.name)}"
    return None
