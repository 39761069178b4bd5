"""The `scout` command.

Ctrl-C at any moment once this module runs — during the imports of the command's modules
included, in a forked collector too — prints `scout: interrupted` and exits 130 without a
traceback. Nothing heavy is imported before the handler is in place. Headless subcommands
never import Textual.
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from types import FrameType

from scout_tui.errors import EXIT_INTERRUPTED, note_sigint, sigint_received  # tiny, no imports


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    note_sigint()
    if _within_hook(frame):  # raised here, Python would print it as ignored and go on
        _thread.start_new_thread(_interrupt_soon, ())  # again, once out of the hook
        return
    raise KeyboardInterrupt


def _interrupt_soon() -> None:
    time.sleep(0.005)
    signal.raise_signal(signal.SIGINT)  # (handled by the main thread, wherever it is then)


def _within_hook(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code is _unraisable.__code__:
            return True
        frame = frame.f_back
    return False


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """A Ctrl-C that landed in a finalizer would be printed as "Exception ignored" and
    lost: raise it again, where the main flow can handle it. Once Ctrl-C came, a finalizer
    failing on an object the interrupt left half-built (GitPython's config parser, stopped
    in its `__init__`) is the interrupt's debris, not news: not printed."""
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        # Raised again for the main flow: `_on_sigint` sees it comes inside this hook
        # (where it would be printed as "Exception ignored" and lost) and waits it out.
        signal.raise_signal(signal.SIGINT)
        return
    if sigint_received():
        return
    sys.__unraisablehook__(unraisable)


def interrupted() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not print a traceback
    with contextlib.suppress(OSError):
        print("scout: interrupted", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None, console: Callable[..., int] | None = None) -> int:
    """`console(session_options, demo=False)` opens the console (`scout_tui.main` passes
    it: the CLI and the console are independent layers)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
        sys.unraisablehook = _unraisable
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        # Stopped before a command set its own (a collection winds down on SIGTERM):
        # the same clean exit as Ctrl-C, not a silent death.
        signal.signal(signal.SIGTERM, _on_sigint)
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:
        # The SSH session dropped: wind down as on Ctrl-C, so a repro's process group (GPU
        # workers in a session of their own, which the hangup never reaches) is stopped.
        signal.signal(signal.SIGHUP, _on_sigint)
    # What the parser imports (pydantic's models) lives as long as scout does: no cycle
    # collection while it loads; a headless command turns it on, the console once painted.
    gc.disable()
    try:
        from scout_tui.cli.dispatch import run
        from scout_tui.github.auth import register_environment_tokens

        register_environment_tokens()
        code = run(argv, console)
    except KeyboardInterrupt:
        return interrupted()
    except Exception:
        # A library that wraps the KeyboardInterrupt in its own error (pydantic does, when
        # it lands while a model class is being built on import): still the Ctrl-C.
        if sigint_received():
            return interrupted()
        raise
    finally:
        gc.enable()
    return interrupted() if sigint_received() else code


def entry(console: Callable[..., int] | None = None) -> int:
    """The console script: `main`, then no Ctrl-C during interpreter shutdown."""
    code = main(console=console)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == EXIT_INTERRUPTED:
        # CPython 3.11 remembers a KeyboardInterrupt that went through exec() of a string
        # (dataclasses does that while our modules import) and would kill the process with
        # SIGINT at exit, however it was handled: leave now, the exit code as said.
        with contextlib.suppress(OSError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    return code
