"""Turn a failing test's `Command:` line into the command a person runs to reproduce it.

The runner's command carries CI plumbing: `TORCH_TRACE=…` and `LOG_RANK=…`, the GPU pinning
of the parallel runner (`CUDA_VISIBLE_DEVICES=…`), and `--dump_folder <dir>`. What is left
is written the way users run it: `NGPU=<n> ./run_train.sh --module <m> --config <c> [flags]`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

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
    ngpu = env.pop("NGPU", str(default_ngpu))
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
    kept_env = [f"{key}={shlex.quote(value)}" for key, value in env.items()
                if key not in DROPPED_ENV]  # fmt: skip
    parts = [*kept_env, f"NGPU={shlex.quote(ngpu)}", program]
    if module:
        parts += ["--module", shlex.quote(module)]
    if config:
        parts += ["--config", shlex.quote(config)]
    parts += [shlex.quote(flag) for flag in rest]
    return " ".join(parts)


@dataclass(frozen=True)
class ReproArgv:
    """A repro as scout runs it: no shell, the environment assignments apart."""

    env: dict[str, str]
    argv: list[str]

    def display(self) -> str:
        return shlex.join([f"{key}={value}" for key, value in self.env.items()] + self.argv)


_PYTEST_FLAGS = {"-x", "-q", "-v", "-vv", "-s", "-rA"}
# torchrun runs a script of the checkout; these make it run any program or module instead.
_TORCHRUN_ELSEWHERE = {"-m", "--module", "--no-python", "--no_python", "--run-path",
                       "--run_path"}  # fmt: skip


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
        if name != "NGPU" or not value.isdigit():
            raise ReproError(f"a repro sets NGPU=<n> and nothing else, not {name}")
        env[name] = value
        words.pop(0)
    if not words:
        raise ReproError("no program in the command")
    program, arguments = words[0], words[1:]
    for argument in arguments:
        value = argument.split("=", 1)[-1]
        if not argument.isprintable() or value.startswith(("/", "~")) or ".." in value:
            raise ReproError(f"the argument {argument!r} reaches outside the checkout")
    if program == "./run_train.sh":
        if "NGPU" not in env:
            raise ReproError("./run_train.sh runs with NGPU=<n>")
    elif program == "pytest":
        if not arguments or not all(
            argument in _PYTEST_FLAGS or "::" in argument for argument in arguments
        ):
            raise ReproError(
                f"pytest runs tests named path::test (and {' '.join(sorted(_PYTEST_FLAGS))})"
            )
    elif program == "torchrun":
        elsewhere = any(argument.split("=", 1)[0] in _TORCHRUN_ELSEWHERE
                        or argument.startswith("-m") for argument in arguments)  # fmt: skip
        if elsewhere or not any(argument.endswith(".py") for argument in arguments):
            raise ReproError("torchrun runs a script of the checkout (a relative path.py)")
    else:
        raise ReproError(
            f"{program!r} is not a repro scout runs (./run_train.sh, torchrun, pytest)"
        )
    return ReproArgv(env, [program, *arguments])
