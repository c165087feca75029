"""The client's scheduling on a virtual clock: arrivals at t0 + offset, the cap on requests in
flight, closed loops and duration points, exactly and whatever the machine's load.

The HTTP send is replaced by one that takes a fixed service time on the same clock: what is
under test is when requests go out, not the transport (tests/bench/test_load.py keeps one
real-time check of the whole client against a server)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from inferbench.bench.client import PreparedRequest
from inferbench.bench.clock import MONOTONIC, VirtualClock
from inferbench.bench.records import RequestRecord
from inferbench.bench.schedule import LoadPoint, arrival_offsets
from inferbench.bench.settings import ApiKind, ClientOptions, Endpoint, RequestOptions
from inferbench.bench.worker import WorkerTask, run_worker
from inferbench.bench.workload import RandomWorkload

T0 = 100.0


class Server:
    """A send that holds each request `service_s` of virtual time; tracks what is in flight."""

    def __init__(self, clock: VirtualClock, service_s: float) -> None:
        self.clock = clock
        self.service_s = service_s
        self.in_flight = 0
        self.max_in_flight = 0

    async def send(self, req: PreparedRequest, scheduled: float) -> RequestRecord:
        record = RequestRecord(
            index=req.index,
            scheduled=scheduled,
            sent=self.clock.now(),
            intended_input_tokens=req.input_len,
            intended_output_tokens=req.output_len,
        )
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await self.clock.sleep_until(self.clock.now() + self.service_s)
        self.in_flight -= 1
        record.done = self.clock.now()
        record.chunk_times = [record.done]
        record.ok = True
        return record


class Outbox:
    def __init__(self) -> None:
        self.records: list[RequestRecord] = []

    async def ready(self) -> float:
        return T0

    def emit(self, records: list[RequestRecord]) -> None:
        self.records.extend(records)


def _task(point: LoadPoint, offsets: tuple[float, ...] | None = None) -> WorkerTask:
    return WorkerTask(
        worker=0,
        endpoint=Endpoint(base_url="http://127.0.0.1:9", model="m", api=ApiKind.COMPLETIONS),
        workload=RandomWorkload(isl=8, osl=4),
        request=RequestOptions(),
        client=ClientOptions(),
        point=point,
        indices=tuple(range(point.num_prompts)),
        offsets=offsets,
        concurrency=point.concurrency,
        warmups=tuple(range(point.warmups)),
        tag="t",
    )


def _run(task: WorkerTask, service_s: float) -> tuple[list[RequestRecord], Server]:
    clock = VirtualClock()
    server = Server(clock, service_s)
    outbox = Outbox()

    async def main() -> None:
        await clock.run(run_worker(task, outbox, clock=clock, send=server.send))

    asyncio.run(main())
    return sorted(outbox.records, key=lambda r: r.index), server


@pytest.mark.parametrize(("rate", "n", "burstiness"), [(50.0, 200, 1.0), (500.0, 500, 0.5)])
def test_open_loop_sends_each_request_on_its_absolute_time(
    rate: float, n: int, burstiness: float
) -> None:
    """The schedule is t0 + the arrival offsets, each send on time, none early or late, and
    the point runs at the rate asked for (what test_load's real-time check measures)."""
    offsets = arrival_offsets(n, rate, burstiness, seed=0)
    point = LoadPoint(request_rate=rate, burstiness=burstiness, num_prompts=n)
    records, server = _run(_task(point, tuple(offsets.tolist())), service_s=0.03)
    assert [r.index for r in records] == list(range(n))
    scheduled = np.array([r.scheduled for r in records])
    assert scheduled == pytest.approx(T0 + offsets, abs=1e-9)
    assert all(r.sent == r.scheduled for r in records)  # no lateness at all
    sent = np.array([r.sent for r in records])
    assert (n - 1) / (sent[-1] - sent[0]) == pytest.approx(rate, rel=1e-9)
    # with no cap, what is in flight is what the arrivals and the service time make it
    assert server.max_in_flight == max(int(np.sum((sent >= s) & (sent < s + 0.03))) for s in sent)


def test_a_cap_delays_arrivals_and_never_drops_them() -> None:
    """Rate 100/s with 50 ms requests needs 5 in flight; a cap of 2 queues the rest, sends
    them as slots free up, in order, and keeps each one's scheduled time."""
    n, rate = 40, 100.0
    offsets = tuple(i / rate for i in range(n))
    point = LoadPoint(request_rate=rate, concurrency=2, num_prompts=n)
    records, server = _run(_task(point, offsets), service_s=0.05)
    assert server.max_in_flight == 2
    assert [r.scheduled for r in records] == pytest.approx([T0 + o for o in offsets])
    assert all(r.sent >= r.scheduled for r in records)
    sends = sorted(r.sent for r in records)
    # two slots (the second from 10 ms), each sending again as its 50 ms request ends
    assert sends[-1] - sends[0] == pytest.approx(0.01 + (n / 2 - 1) * 0.05, abs=1e-9)
    assert sorted(records, key=lambda r: r.sent) == records  # first come, first sent


def test_closed_loop_holds_the_concurrency_and_chains_each_slot() -> None:
    point = LoadPoint(concurrency=4, num_prompts=40)
    records, server = _run(_task(point), service_s=0.01)
    assert server.max_in_flight == 4 and len(records) == 40
    assert max(r.done or 0 for r in records) == pytest.approx(T0 + 10 * 0.01)
    # each slot's next request is scheduled when its last one ended, and sent then
    ends = {round(r.done or 0, 9) for r in records}
    assert all(r.sent == r.scheduled for r in records)
    assert {round(r.scheduled, 9) for r in records} - {T0} <= ends


def test_a_duration_point_cycles_its_prompts_until_the_time_is_up() -> None:
    point = LoadPoint(concurrency=2, num_prompts=3, duration_s=1.0)
    records, _ = _run(_task(point), service_s=0.0625)  # a binary fraction: sums are exact
    # 2 slots x 16 requests of 62.5 ms fill exactly 1 s; none starts at or after t0 + 1
    assert len(records) == 32
    assert max(r.sent for r in records) < T0 + 1.0
    assert {r.index for r in records} == {0, 1, 2}


def test_the_virtual_clock_refuses_to_wait_forever() -> None:
    clock = VirtualClock()

    async def stuck() -> None:
        await asyncio.Event().wait()

    async def main() -> None:
        await clock.run(stuck(), patience_s=0.05)

    with pytest.raises(RuntimeError, match="not on the virtual clock"):
        asyncio.run(main())


def test_the_monotonic_clock_sleeps_until_its_time() -> None:
    async def main() -> float:
        start = MONOTONIC.now()
        await MONOTONIC.sleep_until(start + 0.02)
        await MONOTONIC.sleep_until(start)  # a past time returns at once
        return MONOTONIC.now() - start

    assert asyncio.run(main()) >= 0.02
