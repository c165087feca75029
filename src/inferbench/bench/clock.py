"""The clock a client worker schedules by: the monotonic clock, or a virtual one for tests.

A worker reads `now()` and waits with `sleep_until(when)`; nothing else of its scheduling
touches time. `MONOTONIC` is the real clock. `VirtualClock` moves only when every task is
waiting on it (discrete-event time), so scheduling logic (arrivals at t0 + offset, a cap on
requests in flight, a duration point's end) is tested exactly and in milliseconds of wall
time, whatever the load of the machine; `VirtualClock.run` drives a coroutine on it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable
from typing import Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep_until(self, when: float) -> None: ...


class MonotonicClock:
    """`time.monotonic`, and asyncio's sleep."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep_until(self, when: float) -> None:
        delay = when - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)


MONOTONIC = MonotonicClock()

# Rounds of the event loop that must pass with nothing waking before time moves on: each
# round runs every callback that was ready, so a woken task reaches its next wait first.
_SETTLE_ROUNDS = 64
_FOREIGN_WAIT_S = 0.001


class VirtualClock:
    """Time that jumps to the next timer once every task waits (for tests)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep_until(self, when: float) -> None:
        if when <= self._now:
            await asyncio.sleep(0)  # a due wait still yields, as asyncio.sleep(0) does
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._timers, (when, next(self._order), future))
        await future

    async def run(self, work: Awaitable[T], *, patience_s: float = 2.0) -> T:
        """Run `work` to its end, moving time to the next timer whenever all tasks wait.

        RuntimeError when, for `patience_s` of real time, every task waits on something
        other than this clock (a deadlock in the code under test)."""
        task = asyncio.ensure_future(work)
        foreign = 0
        while not task.done():
            for _ in range(_SETTLE_ROUNDS):
                await asyncio.sleep(0)
                if task.done():
                    return task.result()
            while self._timers and self._timers[0][2].done():  # a cancelled wait
                heapq.heappop(self._timers)
            if not self._timers:
                # everything waits on something else (a real timer, a pipe): let it come
                foreign += 1
                if foreign * _FOREIGN_WAIT_S > patience_s:
                    task.cancel()
                    raise RuntimeError("every task waits, and not on the virtual clock")
                await asyncio.sleep(_FOREIGN_WAIT_S)
                continue
            foreign = 0
            self._now = when = self._timers[0][0]
            while self._timers and self._timers[0][0] <= when:
                _, _, future = heapq.heappop(self._timers)
                if not future.done():
                    future.set_result(None)
        return task.result()
