"""Per-turn, per-context, per-session and window figures of one replay."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from inferbench.bench.agentic.block import (
    AgenticBlock,
    ContextBin,
    SessionFailure,
    SessionSummary,
    TurnStats,
)
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.agentic.replay import ReplayRun, TurnRecord
from inferbench.bench.agentic.server_metrics import ServerCacheMetrics
from inferbench.bench.metrics import stats_of
from inferbench.bench.traces.model import TraceSet

MAX_TURN_ROWS = 64
MAX_FAILURES = 10


def _ms(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1e3 if values else 0.0


def _tpot_median(rows: list[TurnRecord]) -> float | None:
    tpots = [t for r in rows if (t := r.record.tpot) is not None]
    return float(np.median(tpots)) * 1e3 if tpots else None


def per_turn(turns: list[TurnRecord]) -> list[TurnStats]:
    groups: dict[int, list[TurnRecord]] = defaultdict(list)
    for t in turns:
        if t.depth == 0 and t.record.ok and t.turn <= MAX_TURN_ROWS:
            groups[t.turn].append(t)
    out = []
    for turn in sorted(groups):
        rows = groups[turn]
        ttfts = [r.record.ttft for r in rows if r.record.ttft is not None]
        out.append(
            TurnStats(
                turn=turn,
                requests=len(rows),
                mean_prompt_tokens=float(np.mean([r.record.intended_input_tokens for r in rows])),
                mean_ttft_ms=float(np.mean(ttfts)) * 1e3 if ttfts else 0.0,
                median_ttft_ms=_ms(ttfts, 50),
                p90_ttft_ms=_ms(ttfts, 90),
                median_tpot_ms=_tpot_median(rows),
                server_hit_rate=_server_hit_rate(rows),
            )
        )
    return out


def _server_hit_rate(rows: list[TurnRecord]) -> float | None:
    if any(r.server_cached is None for r in rows):
        return None
    prompt = sum(r.record.intended_input_tokens for r in rows)
    return sum(r.server_cached or 0 for r in rows) / prompt if prompt else None


def by_context(turns: list[TurnRecord]) -> list[ContextBin]:
    groups: dict[int, list[TurnRecord]] = defaultdict(list)
    for t in turns:
        if t.record.ok:
            n = max(t.record.intended_input_tokens, 1)
            groups[int(math.log2(n))].append(t)
    out = []
    for exp in sorted(groups):
        rows = groups[exp]
        ttfts = [r.record.ttft for r in rows if r.record.ttft is not None]
        out.append(
            ContextBin(
                low=2**exp,
                high=2 ** (exp + 1),
                requests=len(rows),
                median_ttft_ms=_ms(ttfts, 50),
                median_tpot_ms=_tpot_median(rows),
            )
        )
    return out


def sessions_summary(run: ReplayRun) -> SessionSummary:
    done = [s for s in run.sessions if s.status == "completed"]
    failed = [s for s in run.sessions if s.status == "failed"]
    return SessionSummary(
        started=len(run.sessions),
        completed=len(done),
        failed=len(failed),
        cut=sum(1 for s in run.sessions if s.status == "cut"),
        duration_s=stats_of([s.ended - s.started for s in done]),
        requests=stats_of([s.requests for s in done]),
        input_tokens=stats_of([s.input_tokens for s in done]),
        output_tokens=stats_of([s.output_tokens for s in done]),
        failures=[
            SessionFailure(
                session=s.session,
                trace=s.trace,
                stream=s.failed_stream or "main",
                turn=s.failed_turn or 0,
                error=(s.error or "")[:240],
            )
            for s in failed[:MAX_FAILURES]
        ],
    )


def agentic_block(
    run: ReplayRun,
    traces: TraceSet,
    options: ReplayOptions,
    server: ServerCacheMetrics | None,
) -> AgenticBlock:
    ok = [t for t in run.turns if t.record.ok]
    window = run.duration_s
    dur = window if window > 0 else float("nan")
    prompt = sum(t.record.intended_input_tokens for t in run.turns)
    reused = sum(t.reused for t in run.turns)
    out_tokens = sum(t.record.output_tokens for t in ok)
    in_tokens = sum(t.record.intended_input_tokens for t in ok)
    done = sum(1 for s in run.sessions if s.status == "completed")

    def finite(x: float) -> float:
        return x if math.isfinite(x) else 0.0

    return AgenticBlock(
        traces=len(traces.traces),
        trace_source=traces.source,
        trace_format=traces.format,
        trace_notes=list(traces.notes),
        replay=options,
        window_s=window,
        requests=len(run.turns),
        warmup_requests=run.warmup_requests,
        subagent_requests=sum(1 for t in run.turns if t.depth > 0),
        request_throughput=finite(len(ok) / dur),
        output_throughput=finite(out_tokens / dur),
        total_token_throughput=finite((in_tokens + out_tokens) / dur),
        sessions_per_minute=finite(done * 60 / dur),
        prompt_tokens=prompt,
        reused_prompt_tokens=reused,
        client_reuse_share=reused / prompt if prompt else 0.0,
        per_turn=per_turn(run.turns),
        by_context=by_context(run.turns),
        sessions=sessions_summary(run),
        server=server,
    )
