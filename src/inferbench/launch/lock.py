"""One live orchestrator per run directory: an exclusive flock on `run.lock`, held while it runs.

The kernel drops the lock when its holder exits, however it exits (SIGKILL included), so a
killed run never leaves a stale lock behind; a second `run --resume` beside a live one is
refused at once instead of measuring the same points twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from inferbench.core.errors import InputError, Location

LOCK_FILE = "run.lock"


class RunInUse(InputError):
    """Another live inferbench holds the run directory."""


def _holder(path: Path) -> str:
    with contextlib.suppress(OSError):
        text = path.read_text().strip()
        if text:
            return text
    return "another process"


@contextmanager
def run_lock(run_path: Path, run_id: str) -> Iterator[None]:
    """Hold the run's lock while inside; refuse (RunInUse, exit 2) when it is taken."""
    path = run_path / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o666)
    except OSError as exc:  # a folder, a dangling link, no permission: not a lock to take
        raise InputError(
            f"cannot take the run's lock: {exc.strerror or exc}",
            location=Location(file=path),
            hint=f"{LOCK_FILE} holds only the live run's pid: remove it (rm -r {path}) "
            "and resume again",
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunInUse(
                f"run {run_id} is in use by {_holder(path)}",
                location=Location(file=run_path, key="--resume"),
                hint="wait for that run to end, or stop it (Ctrl-C) and resume it then",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"inferbench pid {os.getpid()} on {socket.gethostname()}\n".encode())
        yield
    finally:
        os.close(fd)  # closing drops the lock
