"""Child processes die with their parent, whatever signal ends it.

SIGINT from a terminal reaches the whole foreground process group, so workers stop with
the CLI. SIGTERM (CI timeouts, Slurm, `kill`) and SIGKILL reach the parent alone: its
children, blocked on a pipe the parent will never write again, would live on and keep
the parent's stdout open, so that a pipe reading it never ends. Two things prevent that:

- `die_with_parent`, run in each child, asks Linux to signal it when its parent dies
  (prctl PR_SET_PDEATHSIG), the one thing that also works when the parent is SIGKILLed;
- `sigterm_as_interrupt`, run by the CLI, turns SIGTERM into the KeyboardInterrupt every
  command already cleans up after (stop servers and workers, record a run as resumable).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import os
import signal
import sys
import threading
from functools import partial
from types import FrameType

PR_SET_PDEATHSIG = 1  # linux/prctl.h
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: cleaned up after as a Ctrl-C is, but exits 143."""


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """In a child: receive `sig` when the parent (pid `parent`) dies. When the parent died
    before this ran, the child was already re-parented: send `sig` now. A no-op off Linux."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), sig)


def child_setup(sig: int = signal.SIGKILL) -> partial[None]:
    """A `preexec_fn` / pool initializer for a child of this process: `die_with_parent`
    with this process's pid, taken now (in the child, getppid may already be init's)."""
    return partial(die_with_parent, sig, os.getpid())


def pool_worker_setup(parent: int) -> None:
    """Initializer of a forked pool worker: the CLI's SIGTERM handler is inherited by a
    fork; a worker ends on SIGTERM at once instead, and dies with its parent."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(signal.SIGKILL, parent)


_TERMINATED = threading.Event()


def terminated() -> bool:
    """Whether SIGTERM arrived since `sigterm_as_interrupt` (typer turns the interrupt into
    exit code 130, which loses the signal: the CLI asks here to exit 143 instead)."""
    return _TERMINATED.is_set()


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    _TERMINATED.set()
    raise Terminated


def exit_promptly() -> None:
    """After SIGTERM, once cleaned up: leave the heap out of the interpreter's final garbage
    collection. That collection walks every object the command made; measured on a loaded
    2-core machine it was 3.2 s of a 3.8 s `run` exit after SIGTERM (and seconds more
    with more load), while whoever sent SIGTERM (a CI timeout, Slurm) SIGKILLs after a grace.
    Frozen objects are still freed at exit; only the cycle search over them is skipped."""
    gc.freeze()


def sigterm_as_interrupt() -> None:
    """SIGTERM raises `Terminated` (a KeyboardInterrupt) in the main thread from now on."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)
