"""Progress as a terminal wants it (Rich bars) or as a log wants it (timestamped lines).

A bar redraws one line in place: captured by CI it is either nothing (Rich draws no bar when
the output is not a terminal) or noise. When stdout is not a terminal, commands print
progress as lines instead, each with the wall time and the seconds since the command
started, and repeat the latest state at least every `HEARTBEAT_S` seconds, so a log never
goes quiet while a point runs for minutes.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

HEARTBEAT_S = 10.0  # the longest a log goes without a progress line


def log_mode() -> bool:
    """Lines instead of bars: stdout is not a terminal (a CI log, a pipe, a file)."""
    return not sys.stdout.isatty()


class LineProgress:
    """Timestamped progress lines: `say` prints at once; `state` is remembered and printed
    again whenever nothing was printed for `interval_s` (by a daemon thread while entered).

    `clock` (monotonic seconds) and `wall` (the time printed) are injectable for tests;
    `tick()` is what the thread calls.
    """

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        interval_s: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = datetime.now,
    ) -> None:
        self._stream = stream
        self.interval_s = interval_s
        self._clock = clock
        self._wall = wall
        self._start = clock()
        self._last = self._start
        self._state = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def stream(self) -> IO[str]:
        # looked up when printing, so a test's captured stderr is the one written to
        return self._stream or sys.stderr

    def say(self, text: str) -> None:
        """Print one progress line now."""
        with self._lock:
            now = self._clock()
            elapsed = now - self._start
            line = f"{self._wall():%H:%M:%S} +{elapsed:.0f}s {text}\n"
            self._last = now
            try:
                self.stream.write(line)
                self.stream.flush()
            except (OSError, ValueError):  # a closed pipe must not kill the command
                pass

    def state(self, text: str) -> None:
        """What the next heartbeat line says (nothing is printed now)."""
        self._state = text

    def tick(self) -> None:
        """Print the state when nothing was printed for `interval_s`."""
        if self._clock() - self._last >= self.interval_s:
            self.say(self._state or "working")

    def _beat(self) -> None:
        while not self._stop.wait(max(0.05, self.interval_s - (self._clock() - self._last))):
            self.tick()

    def __enter__(self) -> LineProgress:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name="progress-lines", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None


CountFn = Callable[[str, int, int | None], None]


@contextmanager
def counted(
    console: Console, *, transient: bool = True, disable: bool = False
) -> Iterator[CountFn]:
    """A `update(label, done, total)` callback: a Rich bar per label on a terminal, lines
    in a log (a label's first update and its last, and the counts every heartbeat)."""
    if log_mode():
        with LineProgress(console.file) as lines:
            seen: set[str] = set()
            finished: set[str] = set()

            def update(label: str, done: int, total: int | None) -> None:
                counts = f"{done}/{total}" if total is not None else str(done)
                lines.state(f"{label}: {counts}")
                if label not in seen:
                    seen.add(label)
                    lines.say(f"{label}: started ({counts})")
                if total is not None and done >= total and label not in finished:
                    finished.add(label)
                    lines.say(f"{label}: {counts} done")

            yield update
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(
        *columns, TimeElapsedColumn(), console=console, transient=transient, disable=disable
    ) as progress:
        bars: dict[str, TaskID] = {}

        def bar(label: str, done: int, total: int | None) -> None:
            if label not in bars:
                bars[label] = progress.add_task(label, total=total)
            progress.update(bars[label], completed=done, total=total)

        yield bar


@contextmanager
def working(console: Console, text: str) -> Iterator[Callable[[str], None]]:
    """One long step (`console.status` on a terminal; a line, then a heartbeat, in a log);
    yields a function that changes the text."""
    if log_mode():
        with LineProgress(console.file) as lines:
            said = [text]

            def change(new: str) -> None:
                said[0] = new
                lines.state(new)

            change(text)
            lines.say(text)
            yield change
            lines.say(f"{said[0]}: done")
        return
    with console.status(text) as status:
        shown = [time.monotonic()]

        def change(new: str) -> None:
            # each update redraws: callers may call per request, thousands a second
            now = time.monotonic()
            if now - shown[0] >= 0.2:
                shown[0] = now
                status.update(new)

        yield change
