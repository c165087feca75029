"""Workers, the router and the cluster: the engine both drivers run.

`SimCluster` is a state machine with an injected notion of time: callers `submit`
requests at `now`, ask `next_time()` for the next moment something happens, and
`advance(now)` to apply everything due by then and start the next steps. The
offline estimate drives it with a virtual clock (jumping from event to event, no
sleeping); the HTTP server drives it with the real monotonic clock, sleeping until
`next_time()`. Nothing here reads a clock itself.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from inferbench.sim.admission import KvAdmission
from inferbench.sim.kv import BlockPool
from inferbench.sim.perf import RankBatch, StepModel
from inferbench.sim.prefix import TierStats
from inferbench.sim.scheduler import RankScheduler, Seq, SeqState


@dataclass(frozen=True)
class EngineLimits:
    """The vLLM engine flags the scheduler honours."""

    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    block_size: int = 16
    gpu_memory_utilization: float = 0.9
    max_model_len: int = 8192
    stream_interval: int = 1
    chunked_prefill: bool = True  # False: a prompt is prefilled whole, in one step
    batch_wait_iters: int = 0  # TRT-LLM batch waiting: hold contexts at most this many steps ...
    batch_wait_tokens: int = 0  # ... unless the step would reach this many tokens (0: off)
    kv_admission: KvAdmission | None = None  # SGLang's KV reservation at admission


class Listener(Protocol):
    """Who hears about tokens: the HTTP server (every token) or the estimate (finishes)."""

    per_token: bool

    def on_tokens(self, seq: Seq, time: float, count: int) -> None: ...

    def on_decode_step(self, seqs: list[Seq], time: float) -> None:
        """One token for each of `seqs` (only called when `per_token`)."""

    def on_finish(self, seq: Seq, time: float) -> None: ...


class Worker:
    """One engine instance: `dp` rank schedulers stepping in lockstep on one StepModel."""

    def __init__(self, wid: str, model: StepModel, limits: EngineLimits, blocks_per_rank: int):
        self.wid = wid
        self.model = model
        self.limits = limits
        self.ranks = [
            RankScheduler(
                i,
                BlockPool(blocks_per_rank, limits.block_size),
                max_num_seqs=limits.max_num_seqs,
                max_num_batched_tokens=limits.max_num_batched_tokens,
                chunked_prefill=limits.chunked_prefill,
                batch_wait=(limits.batch_wait_iters, limits.batch_wait_tokens),
                kv_admission=limits.kv_admission,
            )
            for i in range(model.par.dp)
        ]
        self.step_times: list[float] = []
        self.busy_until: float | None = None
        # the ranks whose step ends something (a prefill chunk, a finishing sequence), with
        # their chunks: found when the step starts (nothing between start and end changes
        # a rank's finish heap), so `finish` does not visit every rank of every step
        self._completing: list[tuple[RankScheduler, list[tuple[Seq, int]]]] = []
        self.busy_time = 0.0
        self.step_time_factor = 1.0  # `sim serve --step-time-factor`: an injected slowdown

    def try_start(self, now: float) -> list[Seq] | None:
        """Start a step if there is work; returns remote-KV sequences admitted (or None)."""
        if self.busy_until is not None:
            return None
        for r in self.ranks:
            if r.running or r.waiting or r.ready:
                break
        else:
            return None
        step = len(self.step_times)
        batches: list[RankBatch] = []
        self._completing = completing = []
        loading: list[Seq] = []
        for rank in self.ranks:
            batch, chunks = rank.schedule(step)
            batches.append(batch)
            finishing = rank.finish_heap  # `not rank.nothing_due(step)`, inlined
            if chunks or (finishing and finishing[0][0] <= step):
                completing.append((rank, chunks))
            if rank.loading_admitted:
                loading.extend(rank.loading_admitted)
                rank.loading_admitted.clear()
        duration = self.model.step_time(batches) * self.step_time_factor
        # KV loaded from host DRAM for requests admitted now: the step waits for it
        # (attach_caches gives every rank of a worker a prefix cache, or none)
        if self.ranks[0].prefix is not None:
            loads = [r.prefix.take_step_load() for r in self.ranks if r.prefix is not None]
            duration = max(duration, *loads)
        if duration > 0:
            self.busy_until = now + duration
            self.busy_time += duration
        return loading

    def run_decode_steps(self, horizon: float) -> None:
        """Run, in one go, the decode-only steps that would start before `horizon`.

        Such a step's end changes nothing but the clock (no token reaches a listener that
        is not per-token, no sequence joins, finishes or is preempted), so ending it and
        starting the next without the cluster's event loop gives the very same steps;
        the caller guarantees nothing else happens before `horizon`."""
        ranks = self.ranks
        if self.step_time_factor <= 0:  # a zero-time step leaves the worker idle instead
            return
        while self.busy_until is not None and self.busy_until < horizon and not self._completing:
            step = len(self.step_times) + 1
            decoding = 0
            for rank in ranks:
                if not rank.decode_only(step):
                    return
                decoding += rank.decode_count
            if not decoding:
                return
            start = self.busy_until
            self.step_times.append(start)  # the running step ends ...
            # ... and the next starts (`try_start`, whose every rank takes its decode path)
            duration = self.model.step_time([r.schedule(step)[0] for r in ranks])
            duration *= self.step_time_factor
            self.busy_until = start + duration
            self.busy_time += duration

    def finish(self) -> tuple[float, list[Seq], list[Seq]]:
        """End the running step: (end time, finished sequences, sequences that prefilled)."""
        assert self.busy_until is not None
        end, self.busy_until = self.busy_until, None
        step = len(self.step_times)
        self.step_times.append(end)
        finished: list[Seq] = []
        prefilled: list[Seq] = []
        for rank, chunks in self._completing:
            done, pre = rank.complete(step, chunks, end)
            finished += done
            prefilled += pre
        return end, finished, prefilled


class RankRouter:
    """Sends each request to the least-loaded DP rank of a pool, round-robin on ties."""

    def __init__(self, workers: list[Worker], *, by_prefill_tokens: bool) -> None:
        self.slots = [(w, r) for w in workers for r in w.ranks]
        self.by_prefill_tokens = by_prefill_tokens
        self._turn = itertools.count()

    def pick(self, seq: Seq | None = None) -> tuple[Worker, RankScheduler]:
        start = next(self._turn) % len(self.slots)
        best = None
        best_load = 0
        for i in range(len(self.slots)):
            worker, rank = self.slots[(start + i) % len(self.slots)]
            load = rank.queued_prefill_tokens if self.by_prefill_tokens else rank.load
            if best is None or load < best_load:
                best, best_load = (worker, rank), load
        assert best is not None
        return best


class SimCluster:
    """Aggregated workers, or an xPyD pool pair joined by KV transfers."""

    def __init__(
        self,
        decode_workers: list[Worker],
        prefill_workers: list[Worker] | None = None,
        *,
        transfer_time: Callable[[int], float] | None = None,
        listener: Listener | None = None,
        decode_router: RankRouter | None = None,
        prefill_router: RankRouter | None = None,
    ) -> None:
        self.decode_workers = decode_workers
        self.prefill_workers = prefill_workers or []
        self.workers = [*self.prefill_workers, *self.decode_workers]
        self.disaggregated = bool(self.prefill_workers)
        self.transfer_time = transfer_time or (lambda tokens: 0.0)
        self.listener = listener
        self._decode_router = decode_router or RankRouter(decode_workers, by_prefill_tokens=False)
        self._prefill_router = (
            prefill_router or RankRouter(self.prefill_workers, by_prefill_tokens=True)
            if self.prefill_workers
            else None
        )
        self._transfers: list[tuple[float, int, Seq]] = []
        self.in_flight = 0
        self.cache_stats: TierStats | None = None  # prefix cache counters (sim.caching)

    # -- input --------------------------------------------------------------------------
    def submit(self, seq: Seq, now: float) -> None:
        """Accept one request at `now` (its prompt and output length already checked)."""
        self.in_flight += 1
        if self._prefill_router is not None:
            seq.prefill_only = True
            _, rank = self._prefill_router.pick(seq)
        else:
            worker, rank = self._decode_router.pick(seq)
            seq.step_times = worker.step_times
        rank.enqueue(seq)
        self._start_idle(now)

    # -- time ---------------------------------------------------------------------------
    def next_time(self) -> float | None:
        best = self._transfers[0][0] if self._transfers else None
        for worker in self.workers:
            due = worker.busy_until
            if due is not None and (best is None or due < best):
                best = due
        return best

    def advance(self, now: float) -> None:
        """Apply every step end and KV arrival due by `now`, then start idle workers.

        A worker whose step ended at `due` starts its next step at `due`, not at `now`:
        a real-time caller that wakes late does not stretch the engine's schedule.
        """
        started_at = None
        while True:
            due = self.next_time()
            if due is None or due > now:
                break
            if self._transfers and self._transfers[0][0] == due:
                self._arrive(heapq.heappop(self._transfers)[2], due)
            else:
                for worker in self.workers:
                    if worker.busy_until == due:
                        self._end_step(worker)
                        break
            self._start_idle(due)
            started_at = due
        if started_at != now:  # nothing changed since the last start at `now`
            self._start_idle(now)

    def run_decode_steps(self, quiet_until: float) -> None:
        """Let each worker run its decode-only steps up to the next event anywhere else: a
        step end that completes something, a KV arrival, or `quiet_until`, before which
        the caller submits nothing. Only for listeners that do not hear every token."""
        if self.listener is not None and self.listener.per_token:
            return
        for worker in self.workers:
            if worker.busy_until is None:
                continue
            horizon = quiet_until
            if self._transfers and self._transfers[0][0] < horizon:
                horizon = self._transfers[0][0]
            for other in self.workers:
                due = other.busy_until
                if other is not worker and due is not None and due < horizon:
                    horizon = due
            worker.run_decode_steps(horizon)

    def _start_idle(self, now: float) -> None:
        for worker in self.workers:
            if worker.busy_until is not None:
                continue
            loading = worker.try_start(now)
            for seq in loading or ():
                seq.ready_at = now + self.transfer_time(seq.prompt)
                heapq.heappush(self._transfers, (seq.ready_at, seq.rid, seq))

    def _arrive(self, seq: Seq, time: float) -> None:
        if seq.state != SeqState.LOADING:
            return  # preempted while its KV was in flight; it recomputes instead
        seq.state = SeqState.READY
        seq.first_token = time
        seq.pieces.append(time)
        for worker in self.decode_workers:
            if worker.step_times is seq.step_times:
                worker.ranks[seq.rank].ready.append(seq)
        if self.listener is not None:
            self.listener.on_tokens(seq, time, 1)

    def _end_step(self, worker: Worker) -> None:
        end, finished, prefilled = worker.finish()
        listener = self.listener
        if listener is not None:
            for seq in prefilled:
                if not seq.prefill_only:
                    listener.on_tokens(seq, end, 1)
            if listener.per_token:
                steps = len(worker.step_times)
                for rank in worker.ranks:
                    listener.on_decode_step([s for s in rank.decoding() if s.s0 < steps], end)
        for seq in finished:
            if seq.prefill_only:
                self._hand_off(seq)
                continue
            self.in_flight -= 1
            if listener is not None:
                if listener.per_token and seq.finish_step == len(worker.step_times) - 1:
                    listener.on_tokens(seq, end, 1)
                listener.on_finish(seq, end)

    def _hand_off(self, seq: Seq) -> None:
        """A prefill finished: send it to a decode rank, whose admission starts the transfer."""
        seq.prefill_only = False
        seq.state, seq.done, seq.computed = SeqState.LOADING, None, 0
        worker, rank = self._decode_router.pick()
        seq.step_times = worker.step_times
        rank.enqueue(seq)

    def kv_usage(self) -> float:
        pools = [r.pool for w in self.decode_workers for r in w.ranks]
        return sum(p.used for p in pools) / max(sum(p.total for p in pools), 1)

    def counts(self) -> tuple[int, int]:
        """(running, waiting) over all ranks, as vLLM's gauges report them."""
        running = sum(len(r.running) for w in self.workers for r in w.ranks)
        waiting = sum(len(r.waiting) for w in self.workers for r in w.ranks)
        return running, waiting
