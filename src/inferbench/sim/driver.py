"""The real-time driver: the same SimCluster, stepped on the event loop's monotonic clock."""

from __future__ import annotations

import asyncio
import contextlib

from inferbench.sim.engine import SimCluster
from inferbench.sim.scheduler import Seq


class RealTimeDriver:
    """Sleeps until the cluster's next event, then advances it to the real time."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        self.loop = asyncio.get_running_loop()
        self._wake: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self.max_lag = 0.0  # how late the loop ran an engine event, worst case
        self.lag_total = 0.0
        self.events = 0

    def now(self) -> float:
        return self.loop.time()

    def start(self) -> None:
        self._task = self.loop.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def submit(self, seq: Seq) -> None:
        self.cluster.submit(seq, self.now())
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)  # a new step may now start earlier than the one slept on

    async def _run(self) -> None:
        loop = self.loop
        while True:
            due = self.cluster.next_time()
            self._wake = loop.create_future()
            handle = loop.call_at(due, _settle, self._wake) if due is not None else None
            await self._wake
            if handle is not None:
                handle.cancel()
            now = loop.time()
            if due is not None and now >= due:
                lag = now - due
                self.max_lag = max(self.max_lag, lag)
                self.lag_total += lag
                self.events += 1
            self.cluster.advance(now)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
