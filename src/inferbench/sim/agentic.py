"""`sim estimate` for agentic jobs: trace lanes replayed against the engine on a virtual clock.

The client is `inferbench replay`'s, event for event: `lanes` lanes each replay one session
after another; a turn waits its recorded idle gap (capped, scaled), then submits its whole
conversation so far; a fork starts its subagents at their offsets and the parent waits for
them; the window ends after `duration_s` virtual seconds or `sessions` sessions. Prompts
carry their block hash chains, so the engine's prefix cache (`sim.prefix`) sees exactly the
reuse the trace implies; the server-side cache counters go into the result like the
`/metrics` of a real server.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.agentic.replay import ReplayRun, SessionRecord, TurnRecord
from inferbench.bench.agentic.reuse import PrefixTrie
from inferbench.bench.agentic.server_metrics import ServerCacheMetrics
from inferbench.bench.traces.model import Fork, Segment, Stream, Trace, TraceSet, Turn
from inferbench.sim.build import build_cluster
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.estimate import chunk_record
from inferbench.sim.prefix import TierStats
from inferbench.sim.scheduler import Seq


class BlockHasher:
    """Hash chains of a conversation's prompts; each turn hashes only its new blocks."""

    def __init__(self, block_size: int, salt: int) -> None:
        self.bs = block_size
        self.salt = salt
        self.last: Sequence[Segment] = ()
        self.hashes: list[int] = []

    def __call__(self, prompt: Sequence[Segment]) -> tuple[int, ...]:
        common = 0
        for a, b in zip(self.last, prompt, strict=False):
            if a != b:
                break
            common += a.length
        keep = min(common // self.bs, len(self.hashes))
        hashes = self.hashes[:keep]
        prev = hashes[-1] if hashes else self.salt
        start = keep * self.bs
        pieces: list[tuple[int, int, int]] = []
        filled = 0
        pos = 0
        for seg in prompt:
            lo, hi = max(start - pos, 0), seg.length
            pos += seg.length
            while lo < hi:
                take = min(hi - lo, self.bs - filled)
                pieces.append((seg.key, lo, lo + take))
                lo += take
                filled += take
                if filled == self.bs:
                    prev = hash((prev, tuple(pieces)))
                    hashes.append(prev)
                    pieces, filled = [], 0
        self.last, self.hashes = prompt, hashes
        return tuple(hashes)


@dataclass
class _Session:
    lane: int
    number: int
    trace: Trace
    measured: bool
    record: SessionRecord
    salt: int
    open_streams: int = 0
    over: bool = False
    on_done: Callable[[float], None] | None = None


@dataclass
class _Cursor:
    session: _Session
    stream: Stream
    depth: int
    on_done: Callable[[float], None]
    hasher: BlockHasher
    index: int = 0
    turn_no: int = 0
    pending: int = 0
    trie: PrefixTrie = field(default_factory=PrefixTrie)


@dataclass(frozen=True, slots=True)
class _Sent:
    cursor: _Cursor
    turn_no: int
    sent: float
    reused: int
    gap: float


class _Estimate:
    per_token = False

    def __init__(self, dep: SimDeployment, traces: TraceSet, options: ReplayOptions) -> None:
        self.dep = dep
        self.traces = traces.traces
        self.trace_counter = 0
        self.options = options
        self.cluster = build_cluster(dep, self)
        self.block_size = dep.prompt_pool.block_size
        self.timers: list[tuple[float, int, Callable[[float], None]]] = []
        self.ticket = itertools.count()
        self.rid = itertools.count()
        self.run = ReplayRun()
        self.stop_at = float("inf")
        self.started_measured = 0
        self.numbers = itertools.count(1)
        self.tries: dict[int, PrefixTrie] = {}
        self.warm_lanes = 0
        self.waiting_lanes: list[int] = []
        self.lane_k = [0] * options.lanes
        self.finished: list[Seq] = []

    # -- listener -----------------------------------------------------------------------
    def on_tokens(self, seq: Seq, time: float, count: int) -> None:
        return None

    def on_decode_step(self, seqs: list[Seq], time: float) -> None:
        return None

    def on_finish(self, seq: Seq, time: float) -> None:
        self.finished.append(seq)

    # -- clock --------------------------------------------------------------------------
    def at(self, when: float, fn: Callable[[float], None]) -> None:
        heapq.heappush(self.timers, (when, next(self.ticket), fn))

    def loop(self) -> float:
        now = 0.0
        while True:
            engine = self.cluster.next_time()
            timer = self.timers[0][0] if self.timers else None
            if engine is None and timer is None:
                return now
            if timer is not None and (engine is None or timer < engine):
                now, _, fn = heapq.heappop(self.timers)
                fn(now)
                continue
            assert engine is not None
            now = engine
            self.cluster.advance(now)
            done, self.finished = self.finished, []
            for seq in done:
                tag = seq.tag
                assert isinstance(tag, _Sent)
                self._finished(tag, seq, seq.done or now)

    # -- lanes --------------------------------------------------------------------------
    def window_over(self, now: float) -> bool:
        return now >= self.stop_at

    def lane_next(self, lane: int, now: float) -> None:
        k = self.lane_k[lane]
        warm = k < self.options.warmup_sessions
        if not warm:
            wanted = self.options.sessions
            if self.window_over(now) or (wanted is not None and self.started_measured >= wanted):
                return
            self.started_measured += 1
        self.lane_k[lane] += 1
        # the shared queue the replay client's lanes draw from (bench/agentic/replay.py)
        trace = self.traces[self.trace_counter % len(self.traces)]
        self.trace_counter += 1
        number = next(self.numbers)
        record = SessionRecord(lane, number, trace.id, now)
        salt = hash((self.options.seed, trace.id, number if self.options.cache_bust else 0))
        session = _Session(lane, number, trace, not warm, record, salt)
        if not warm:
            self.run.sessions.append(record)

        def ended(t: float) -> None:
            record.ended = t
            if warm and self.lane_k[lane] == self.options.warmup_sessions:
                self._lane_warm(lane, t)
            else:
                self.lane_next(lane, t)

        session.on_done = ended
        self.start_stream(session, trace.root, 0, now, offset=0.0)

    def _lane_warm(self, lane: int, now: float) -> None:
        self.warm_lanes += 1
        self.waiting_lanes.append(lane)
        if self.warm_lanes == self.options.lanes:
            self.begin_window(now)

    def begin_window(self, now: float) -> None:
        self.run.t0 = now
        if self.options.duration_s is not None:
            self.stop_at = now + self.options.duration_s
        lanes = self.waiting_lanes or list(range(self.options.lanes))
        self.waiting_lanes = []
        for lane in lanes:
            self.lane_next(lane, now)

    # -- streams ------------------------------------------------------------------------
    def start_stream(
        self, session: _Session, stream: Stream, depth: int, now: float, offset: float
    ) -> None:
        session.open_streams += 1

        def done(t: float) -> None:
            session.open_streams -= 1
            if session.open_streams == 0 and session.on_done is not None:
                session.on_done(t)

        hasher = BlockHasher(self.block_size, session.salt)
        cursor = _Cursor(session, stream, depth, done, hasher)
        cursor.trie = self.tries.setdefault(session.salt, PrefixTrie())
        self.at(now + self.gap(session, offset), lambda t: self.step(cursor, t))

    def gap(self, session: _Session, recorded: float) -> float:
        return self.options.gap(recorded) if session.measured else 0.0

    def step(self, cursor: _Cursor, now: float) -> None:
        session = cursor.session
        steps = cursor.stream.steps
        if session.over or cursor.index >= len(steps):
            cursor.on_done(now)
            return
        item = steps[cursor.index]
        cursor.index += 1
        if isinstance(item, Turn):
            gap = self.gap(session, item.delay_s)
            self.at(now + gap, lambda t: self.send(cursor, item, gap, t))
            return
        self.at(now + self.gap(session, item.delay_s), lambda t: self.fork(cursor, item, t))

    def fork(self, cursor: _Cursor, fork: Fork, now: float) -> None:
        if fork.join:
            cursor.pending = len(fork.branches)
        for branch, offset in zip(fork.branches, fork.offsets_s, strict=True):
            self._branch(cursor, branch, offset, now, fork.join)
        if not fork.join or not fork.branches:
            self.step(cursor, now)

    def _branch(
        self, parent: _Cursor, branch: Stream, offset: float, now: float, join: bool
    ) -> None:
        session = parent.session

        def joined(t: float) -> None:
            parent.pending -= 1
            if parent.pending == 0:
                self.step(parent, t)

        session.open_streams += 1
        hasher = BlockHasher(self.block_size, session.salt)

        def done(t: float) -> None:
            session.open_streams -= 1
            if join:
                joined(t)
            if session.open_streams == 0 and session.on_done is not None:
                session.on_done(t)

        child = _Cursor(session, branch, parent.depth + 1, done, hasher, trie=parent.trie)
        self.at(now + self.gap(session, offset), lambda t: self.step(child, t))

    def send(self, cursor: _Cursor, turn: Turn, gap: float, now: float) -> None:
        session = cursor.session
        if session.over:
            cursor.on_done(now)
            return
        if session.measured and self.window_over(now):
            session.over = True
            session.record.status = "cut"
            cursor.on_done(now)
            return
        cursor.turn_no += 1
        reused = cursor.trie.reuse_and_add(turn.prompt)
        seq = Seq(
            rid=next(self.rid),
            prompt=turn.input_len,
            output=turn.output,
            arrival=now,
            hashes=cursor.hasher(turn.prompt),
        )
        seq.tag = _Sent(cursor, cursor.turn_no, now, reused, gap)
        self.cluster.submit(seq, now)

    def _finished(self, tag: _Sent, seq: Seq, now: float) -> None:
        cursor = tag.cursor
        session = cursor.session
        rec = session.record
        rec.requests += 1
        rec.input_tokens += seq.prompt
        rec.output_tokens += seq.output
        if session.measured:
            record = chunk_record(seq, seq.rid, tag.sent, self.dep.stream_interval)
            self.run.turns.append(
                TurnRecord(
                    record,
                    rec.lane,
                    rec.session,
                    rec.trace,
                    cursor.stream.name,
                    tag.turn_no,
                    cursor.depth,
                    tag.reused,
                    tag.gap,
                    server_cached=seq.cached_tokens,
                )
            )
        else:
            self.run.warmup_requests += 1
        self.step(cursor, now)


def server_metrics(stats: TierStats | None, engine: str) -> ServerCacheMetrics:
    if stats is None:
        return ServerCacheMetrics(engine=engine, error="prefix caching off")
    q = stats.queried_tokens
    return ServerCacheMetrics(
        engine=engine,
        prompt_tokens=q,
        prefix_cache_queries=q,
        prefix_cache_hits=stats.gpu_hit_tokens,
        gpu_hit_rate=stats.gpu_hit_tokens / q if q else None,
        external_hit_rate=stats.cpu_hit_tokens / q if q else None,
        overall_hit_rate=(stats.gpu_hit_tokens + stats.cpu_hit_tokens) / q if q else None,
        offload_bytes_gpu_to_cpu=stats.write_bytes,
        offload_bytes_cpu_to_gpu=stats.load_bytes,
    )


@dataclass(frozen=True)
class AgenticEstimate:
    run: ReplayRun
    server: ServerCacheMetrics
    gpus: int
    wall_s: float


def estimate_agentic(
    dep: SimDeployment, traces: TraceSet, options: ReplayOptions
) -> AgenticEstimate:
    """Replay `traces` over `options.lanes` lanes against `dep` on the virtual clock."""
    started = time.perf_counter()
    sim = _Estimate(dep, traces, options)
    if options.warmup_sessions:
        for lane in range(options.lanes):
            sim.lane_next(lane, 0.0)
    else:
        sim.begin_window(0.0)
    end = sim.loop()
    run = sim.run
    last = max((t.record.done or t.record.sent for t in run.turns), default=run.t0)
    run.end = max(last, min(end, sim.stop_at)) if options.duration_s else last
    return AgenticEstimate(
        run=run,
        server=server_metrics(sim.cluster.cache_stats, dep.engine),
        gpus=dep.total_gpus,
        wall_s=time.perf_counter() - started,
    )
