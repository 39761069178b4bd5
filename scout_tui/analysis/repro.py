"""Turn a failing test's `Command:` line into the command a person runs to reproduce it.

The runner's command carries CI plumbing: `TORCH_TRACE=…` and `LOG_RANK=…`, the GPU pinning
of the parallel runner (`CUDA_VISIBLE_DEVICES=…`), and `--dump_folder <dir>`. What is left
is written the way users run it: `NGPU=<n> ./run_train.sh --module <m> --config <c> [flags]`.
"""

from __future__ import annotations

import re
import shlex

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
