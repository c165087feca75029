"""One client worker: an event loop that owns a share of the concurrency and arrivals.

A worker builds its share of the requests (before the clock), runs its share of
the warm-ups, reports ready, waits for the common start instant `t0`, then runs
the load and hands finished records to its `Outbox` in batches. Several workers
run as separate processes (`inferbench.bench.runner`); one runs in-process.
"""

from __future__ import annotations

import asyncio
import gc
import math
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from inferbench.bench.client import (
    DURATION_GRACE_S,
    STOPPED,
    PreparedRequest,
    Transport,
    interrupted_record,
    open_transport,
    prepare_request,
    send_request,
)
from inferbench.bench.clock import MONOTONIC, Clock
from inferbench.bench.datasets import build_prompts
from inferbench.bench.records import RequestRecord
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import ClientOptions, Endpoint, RequestOptions
from inferbench.bench.workload import Workload

WARMUP_OFFSET = 1 << 30  # warm-up prompts come from their own index range
FLUSH_S = 0.2


@dataclass(frozen=True)
class WorkerTask:
    """Everything one worker needs (picklable: sent to a child process as is)."""

    worker: int
    endpoint: Endpoint
    workload: Workload
    request: RequestOptions
    client: ClientOptions
    point: LoadPoint
    indices: tuple[int, ...]  # measured request indices owned by this worker
    offsets: tuple[float, ...] | None  # their arrival offsets (rate mode)
    concurrency: int | None  # this worker's share of the cap
    warmups: tuple[int, ...]
    tag: str  # request-id prefix (unique per run)


# Sends one request and returns its record: the HTTP client, unless a test gives another.
SendFn = Callable[[PreparedRequest, float], Awaitable[RequestRecord]]


class Outbox(Protocol):
    """Where a worker reports: ready for t0, finished record batches, stop requests."""

    async def ready(self) -> float: ...

    def emit(self, records: list[RequestRecord]) -> None: ...


def prepare(task: WorkerTask) -> tuple[list[PreparedRequest], list[PreparedRequest]]:
    """Measured and warm-up requests, serialised; runs before the clock starts."""
    seed = task.client.seed
    measured = build_prompts(task.workload, list(task.indices), seed)
    warm = build_prompts(task.workload, [WARMUP_OFFSET + i for i in task.warmups], seed)
    ep, opts = task.endpoint, task.request
    return (
        [prepare_request(p, ep, opts, task.tag) for p in measured],
        [prepare_request(p, ep, opts, task.tag + "-w") for p in warm],
    )


class _Run:
    """The load loop of one worker."""

    def __init__(
        self,
        task: WorkerTask,
        transport: Transport | None,
        outbox: Outbox,
        clock: Clock = MONOTONIC,
        send: SendFn | None = None,
    ) -> None:
        self.task = task
        self.transport = transport
        self.outbox = outbox
        self.clock = clock
        self._send = send
        self.pending: list[RequestRecord] = []
        self.stopping = False
        # measured requests sent and not yet answered: (request, scheduled, sent)
        self.in_flight: dict[object, tuple[PreparedRequest, float, float]] = {}
        self.warming: dict[object, tuple[PreparedRequest, float, float]] = {}  # warm-ups

    async def send(
        self, req: PreparedRequest, scheduled: float, measured: bool = True
    ) -> RequestRecord:
        key = object()
        # left here if the send is cancelled: `interrupted` records it
        (self.in_flight if measured else self.warming)[key] = (req, scheduled, self.clock.now())
        if self._send is not None:
            record = await self._send(req, scheduled)
        else:
            assert self.transport is not None
            record = await send_request(
                self.transport,
                req,
                scheduled,
                options=self.task.request,
                client=self.task.client,
                worker=self.task.worker,
            )
        self.in_flight.pop(key, None)
        self.warming.pop(key, None)
        return record

    def interrupted(self, why: str) -> None:
        """Record the measured requests still in flight as failed, so that a stopped point
        keeps completed + failed == sent (a request cut off is no success, and not nothing)."""
        for req, scheduled, sent in self.in_flight.values():
            self.pending.append(interrupted_record(req, why, scheduled, sent, self.task.worker))
        self.in_flight.clear()

    async def warm_up(self, warm: list[PreparedRequest]) -> None:
        """Closed loop over the warm-ups; their records are dropped."""
        queue = deque(warm)
        slots = max(1, min(len(warm), self.task.concurrency or len(warm)))

        async def slot() -> None:
            while queue:
                await self.send(queue.popleft(), self.clock.now(), measured=False)

        await asyncio.gather(*(slot() for _ in range(slots)))

    async def closed_loop(self, reqs: list[PreparedRequest], t0: float) -> None:
        """`concurrency` slots; each sends its next request as soon as the last one ends."""
        stop_at = t0 + (self.task.point.duration_s or math.inf)
        cycle = self.task.point.duration_s is not None
        queue = deque(reqs)
        await self.clock.sleep_until(t0)

        async def slot() -> None:
            scheduled = t0
            while queue and not self.stopping and self.clock.now() < stop_at:
                req = queue.popleft()
                if cycle:
                    queue.append(req)  # a duration point reuses the prepared prompts
                record = await self.send(req, scheduled)
                self.pending.append(record)
                scheduled = record.done or self.clock.now()

        await asyncio.gather(*(slot() for _ in range(max(1, self.task.concurrency or 1))))

    async def open_loop(
        self, reqs: list[PreparedRequest], offsets: tuple[float, ...], t0: float
    ) -> None:
        """Arrivals at absolute times t0 + offset; an optional cap on requests in flight."""
        cap = asyncio.Semaphore(self.task.concurrency) if self.task.concurrency else None
        limit = self.task.point.duration_s
        tasks: set[asyncio.Task[None]] = set()

        async def fire(req: PreparedRequest, scheduled: float) -> None:
            # the record is awaited first: `flush` may swap `pending` meanwhile
            if cap is None:
                record = await self.send(req, scheduled)
            else:
                async with cap:
                    record = await self.send(req, scheduled)
            self.pending.append(record)

        try:
            for req, offset in zip(reqs, offsets, strict=True):
                if self.stopping or (limit is not None and offset > limit):
                    break
                await self.clock.sleep_until(t0 + offset)
                task = asyncio.create_task(fire(req, t0 + offset))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            # the arrivals fired so far are no children of this task: stop them too (their
            # requests are then in `in_flight`, recorded as interrupted)
            for task in list(tasks):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def flusher(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_S)
            self.flush()

    def flush(self) -> None:
        if self.pending:
            batch, self.pending = self.pending, []
            self.outbox.emit(batch)


def _grace(task: WorkerTask) -> float:
    return min(task.client.request_timeout_s, DURATION_GRACE_S)


async def _warmed_up(run: _Run, warm: list[PreparedRequest]) -> bool:
    """Run the warm-ups; False when --duration's bound (duration + grace) cut them (a stalled
    server would hold them for the request timeout, 600 s). The warm-ups cut in flight are
    then the point's failed requests, and no window is measured."""
    duration = run.task.point.duration_s
    if duration is None:
        await run.warm_up(warm)
        return True
    warming = asyncio.create_task(run.warm_up(warm))
    done, _ = await asyncio.wait({warming}, timeout=duration + _grace(run.task))
    if done:
        warming.result()
        return True
    run.stopping = True
    run.in_flight.update(run.warming)  # recorded as interrupted, with the reason
    warming.cancel()
    await asyncio.gather(warming, return_exceptions=True)
    return False


async def run_worker(
    task: WorkerTask,
    outbox: Outbox,
    on_stop: Callable[[Callable[[], None]], None] | None = None,
    *,
    clock: Clock = MONOTONIC,
    send: SendFn | None = None,
) -> None:
    """Prepare, warm up, wait for t0, run the load; records reach `outbox` as they finish.

    `clock` and `send` are the real clock and HTTP client unless a test drives the
    scheduling on a `VirtualClock` with a send of its own."""
    measured, warm = prepare(task)
    # everything built so far lives for the whole point: move it out of the collector's
    # sight, so a full collection mid-run (tens of ms with this heap) does not delay reads
    gc.collect()
    gc.freeze()
    transport = (
        open_transport(
            task.endpoint, task.client, task.concurrency or len(measured), task.request.secrets()
        )
        if send is None
        else None
    )
    run = _Run(task, transport, outbox, clock, send)
    main: asyncio.Task[None] | None = None
    why = STOPPED

    def stop() -> None:
        run.stopping = True
        if main is not None:
            main.cancel()

    if on_stop is not None:
        on_stop(stop)
    flusher = asyncio.create_task(run.flusher())
    try:
        if warm and not await _warmed_up(run, warm):
            why = f"warm-up still running {_grace(task) + (task.point.duration_s or 0):g} s"
            why += " after it began: the window was not measured"
        t0 = await outbox.ready()
        if task.offsets is None:
            main = asyncio.create_task(run.closed_loop(measured, t0))
        else:
            main = asyncio.create_task(run.open_loop(measured, task.offsets, t0))
        if task.point.duration_s is not None:
            grace = _grace(task)
            end = t0 + task.point.duration_s + grace
            done, _ = await asyncio.wait({main}, timeout=max(0.0, end - clock.now()))
            if not done:  # a stalled server: the point ends at its duration all the same
                why = f"still running {grace:g} s after --duration ended"
                run.stopping = True
                main.cancel()
        try:
            await main
        except asyncio.CancelledError:
            if not run.stopping:
                raise  # Ctrl-C in-process: the runner turns this back into KeyboardInterrupt
    finally:
        flusher.cancel()
        run.interrupted(why)
        run.flush()
        if transport is not None:
            await transport.close()
        gc.unfreeze()
