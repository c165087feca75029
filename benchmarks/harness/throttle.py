"""Slow a running server by a controlled fraction: stop its process group for a share of
every short period (SIGSTOP, then SIGCONT), as cpulimit does.

The regression gate needs a slowdown of about 10% it can turn on and off on one server; an
engine flag (a smaller batch limit) moves latency by hundreds of percent. Signals need no
root and no cgroup, and reach every process of the server (the API server, the engine core,
its workers) when it runs in a session of its own, as `vllm_cpu.serve` starts it.

The stops are steered on the wall clock, not scheduled blindly: each stop lasts what keeps
the stopped time at `fraction` of the time elapsed, so a late wake-up of this thread on a
loaded machine is paid back by a shorter next stop rather than adding up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class ThrottleStats:
    """What a throttled block did: its wall time, the time the group was stopped, cycles."""

    wall_s: float = 0.0
    stopped_s: float = 0.0
    cycles: int = 0

    @property
    def fraction(self) -> float:
        return self.stopped_s / self.wall_s if self.wall_s > 0 else 0.0


def slowdown_fraction(factor: float) -> float:
    """The share of wall time to stop a CPU-bound server so it runs `factor` times slower
    (1.1: every step 10% longer, throughput 1/1.1 of its own)."""
    if factor < 1.0:
        raise ValueError(f"a slowdown factor is at least 1, not {factor}")
    return 1.0 - 1.0 / factor


@contextlib.contextmanager
def throttled(pgid: int, fraction: float, period_s: float = 0.1) -> Iterator[ThrottleStats]:
    """Process group `pgid` stopped for `fraction` of each `period_s` until the block ends;
    it always ends running (SIGCONT), whatever ends the block."""
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"a throttle fraction is in [0, 1), not {fraction}")
    stats = ThrottleStats()
    done = threading.Event()

    def cycle() -> None:
        start = time.monotonic()
        while not done.is_set():
            # run until the stopped share would fall below the fraction by one period's stop
            owed = fraction * (time.monotonic() - start + period_s) - stats.stopped_s
            if done.wait(max(0.0, period_s - owed)):
                break
            stop = fraction * (time.monotonic() - start) - stats.stopped_s
            if stop <= 0:
                continue
            paused = time.monotonic()
            try:
                os.killpg(pgid, signal.SIGSTOP)
                done.wait(stop)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGCONT)
            stats.stopped_s += time.monotonic() - paused
            stats.cycles += 1

    worker = threading.Thread(target=cycle, name=f"throttle-{pgid}", daemon=True)
    began = time.monotonic()
    worker.start()
    try:
        yield stats
    finally:
        done.set()
        worker.join()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGCONT)
        stats.wall_s = time.monotonic() - began
