"""Offline estimate: the engine on a virtual clock, driven by a closed-loop client.

The client is sa-bench's: all requests are ready at t0 and at most `concurrency`
are in flight; each finish releases the next. Input and output lengths are drawn
uniformly from the integers in [floor(L * r), L] (sa-bench's random dataset). No
HTTP and no sleeping: time jumps from one engine event to the next.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from inferbench.bench.records import RecordColumns, RequestRecord
from inferbench.sim.build import build_cluster
from inferbench.sim.columns import estimate_columns
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.scheduler import Seq


@dataclass(frozen=True)
class EstimateRun:
    """One concurrency's simulated run.

    `columns` holds the requests as arrays (what the metrics and the result file read);
    `records`, the per-request records with every chunk stamp, are built on first use.
    """

    concurrency: int
    columns: RecordColumns
    duration_s: float  # simulated seconds from the first send to the last finish
    gpus: int
    preemptions: int
    steps: int
    prefill_chunks: int  # prefill chunks scheduled over all ranks (a whole prompt is one)
    scheduled_seqs: int  # sequences scheduled over all ranks, summed over steps
    wall_s: float  # real seconds the simulation took
    seqs: list[Seq] = field(default_factory=list, repr=False)  # finished, in request order
    stream_interval: int = 1

    @property
    def output_tokens(self) -> int:
        return int(self.columns.output_tokens.sum())

    @cached_property
    def records(self) -> list[RequestRecord]:
        sent = self.columns.sent.tolist()
        return [
            chunk_record(seq, seq.rid, sent[i], self.stream_interval)
            for i, seq in enumerate(self.seqs)
        ]


class _Finishes:
    per_token = False

    def __init__(self) -> None:
        self.done: list[Seq] = []

    def on_tokens(self, seq: Seq, time: float, count: int) -> None:
        return None

    def on_decode_step(self, seqs: list[Seq], time: float) -> None:
        return None

    def on_finish(self, seq: Seq, time: float) -> None:
        self.done.append(seq)


def sample_lengths(length: int, ratio: float, count: int, rng: np.random.Generator) -> list[int]:
    """sa-bench random lengths: uniform integers in [floor(length * ratio), length]."""
    low = max(int(length * ratio), 1)
    return [int(v) for v in rng.integers(low, length + 1, size=count)]


def chunk_record(seq: Seq, index: int, sent: float, stream_interval: int) -> RequestRecord:
    """The record a client would have measured, chunks grouped by `stream_interval`."""
    times = seq.token_times()
    n = stream_interval
    if n <= 1:
        chunk_times, chunk_tokens = times, [1] * len(times)
    else:
        chunk_times = times[:1] + times[n::n]
        chunk_tokens = [1] + [n] * (len(chunk_times) - 1)
        rest = (len(times) - 1) % n
        if rest:
            chunk_times.append(times[-1])
            chunk_tokens.append(rest)
    return RequestRecord(
        index=index,
        scheduled=sent,
        sent=sent,
        intended_input_tokens=seq.prompt,
        intended_output_tokens=seq.output,
        ok=True,
        chunk_times=chunk_times,
        chunk_tokens=chunk_tokens,
        input_tokens=seq.prompt,
        output_tokens=len(times),
        done=seq.done,
    )


def estimate(
    dep: SimDeployment, concurrency: int, *, num_prompts: int | None = None, seed: int = 0
) -> EstimateRun:
    """Simulate `num_prompts` requests at fixed `concurrency` on `dep`."""
    started = time.perf_counter()
    total = num_prompts or dep.workload.prompts_for(concurrency)
    rng = np.random.default_rng(seed)
    ratio = dep.workload.random_range_ratio
    inputs = sample_lengths(dep.workload.isl, ratio, total, rng)
    outputs = sample_lengths(dep.workload.osl, ratio, total, rng)
    finishes = _Finishes()
    cluster = build_cluster(dep, finishes)
    latency = dep.efficiency.front_latency_s
    sent: dict[int, float] = {}
    done: list[Seq] = []
    launched = 0

    # requests sent but not yet seen by the engine (the front end's fixed latency)
    pending: list[tuple[float, int, Seq]] = []

    def launch(now: float) -> None:
        nonlocal launched
        seq = Seq(rid=launched, prompt=inputs[launched], output=outputs[launched], arrival=now)
        sent[launched] = now
        launched += 1
        if latency:
            heapq.heappush(pending, (now + latency, seq.rid, seq))
        else:
            cluster.submit(seq, now)

    while launched < min(concurrency, total):
        launch(0.0)
    now = 0.0
    while True:
        due = cluster.next_time()
        if pending and (due is None or pending[0][0] < due):
            now = pending[0][0]  # nothing in the engine is due before it: no advance needed
            while pending and pending[0][0] <= now:
                cluster.submit(heapq.heappop(pending)[2], now)
            continue
        if due is None:
            break
        now = due
        cluster.advance(now)
        for seq in finishes.done:
            done.append(seq)
            if launched < total:
                launch(now)
        finishes.done.clear()
        cluster.run_decode_steps(pending[0][0] if pending else math.inf)
    done.sort(key=lambda s: s.rid)
    return EstimateRun(
        concurrency=concurrency,
        columns=estimate_columns(done, [sent[s.rid] for s in done], dep.stream_interval),
        duration_s=now,
        gpus=dep.total_gpus,
        preemptions=sum(r.preemptions for w in cluster.workers for r in w.ranks),
        steps=sum(len(w.step_times) for w in cluster.workers),
        prefill_chunks=sum(r.prefill_chunks for w in cluster.workers for r in w.ranks),
        scheduled_seqs=sum(r.scheduled_seqs for w in cluster.workers for r in w.ranks),
        wall_s=time.perf_counter() - started,
        seqs=done,
        stream_interval=dep.stream_interval,
    )
