"""A benchmark script's process group dies with inferbench, SIGKILL included.

A tree's script starts its engine in the background (`vllm serve ... &`) and then the
benchmark client. inferbench runs it in a process group of its own and ends that group when
the point is over or the run is stopped; a parent-death signal (PR_SET_PDEATHSIG) on the
script's bash reaches that bash alone when inferbench is SIGKILLed: the server and the client
it started lived on, holding the GPUs and the port.

`python -m inferbench.launch.groupguard PARENT COMMAND...` stands between the two: the leader
of the group, it runs COMMAND as its child and exits with its status. It adopts what the
script leaves behind (a child subreaper), and when PARENT dies (its own parent-death signal)
or it is sent SIGTERM, SIGINT or SIGHUP, it signals the whole group SIGTERM, waits up to
GRACE_S for its descendants to exit, then SIGKILLs whatever is left. Only the standard
library: it starts in a few tens of milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import time
from types import FrameType

PR_SET_PDEATHSIG = 1  # linux/prctl.h
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 10.0
_ENDING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _End(Exception):
    """The parent died, or the group is being stopped."""


def _prctl(option: int, value: int) -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(option, value, 0, 0, 0)


def _raise_end(signum: int, frame: FrameType | None) -> None:
    raise _End


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell says


def stop_group(grace_s: float = GRACE_S) -> int:
    """SIGTERM to the group (this process aside), reap the descendants for `grace_s`, then
    SIGKILL the group if any is left. Returns the exit status for a SIGTERM end."""
    for sig in _ENDING:
        signal.signal(sig, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.killpg(0, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 128 + signal.SIGTERM  # none left
        if pid == 0:
            time.sleep(0.05)
    with contextlib.suppress(OSError):
        os.killpg(0, signal.SIGKILL)  # this process too: the group ends here
    return 128 + signal.SIGKILL


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print(
            "usage: python -m inferbench.launch.groupguard PARENT-PID COMMAND...", file=sys.stderr
        )
        return 2
    parent, command = int(argv[0]), argv[1:]
    for sig in _ENDING:
        signal.signal(sig, _raise_end)
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the signal was asked for
            raise _End
        child = os.fork()
        if child == 0:  # pragma: no cover - replaced by COMMAND at once
            for sig in _ENDING:
                signal.signal(sig, signal.SIG_DFL)
            try:
                os.execvp(command[0], command)
            finally:
                os._exit(127)
        while True:  # reap the command, and whatever it left behind and this adopted
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                return _exit_code(status)
    except _End:
        return stop_group()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
