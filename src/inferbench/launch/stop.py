"""Stopping a run on request: the first Ctrl-C finishes the current point and starts nothing new;
the second stops at once (a KeyboardInterrupt, which every backend cleans up after).

Inside a Slurm allocation the request arrives as a file in the job directory
(`STOP_FILE`), written by the orchestrator on its first Ctrl-C: the allocation finishes the
point it is driving, stops its server and records the job as interrupted.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

STOP_FILE = "stop-requested"


class StopRequest:
    """Set once a stop was asked for (by `request()`, or by `flag_file` appearing)."""

    def __init__(self, flag_file: Path | None = None) -> None:
        self._event = threading.Event()
        self.flag_file = flag_file

    def request(self) -> None:
        self._event.set()

    @property
    def requested(self) -> bool:
        if self._event.is_set():
            return True
        if self.flag_file is not None and self.flag_file.exists():
            self._event.set()
            return True
        return False


@contextmanager
def graceful_sigint(
    stop: StopRequest, on_first: Callable[[], None] | None = None
) -> Iterator[StopRequest]:
    """While inside: the first SIGINT sets `stop` (and calls `on_first`), the next raises
    KeyboardInterrupt. Outside the main thread signals cannot be caught: nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        stop.request()
        if on_first is not None:
            on_first()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)
