"""One agentic point on the virtual clock: what `run --engine sim` and `sim estimate` both run.

`inferbench replay`'s lanes over a trace (or synthetic sessions), estimated by
`sim.agentic`, written as the result file a replay against a real server writes. Both
commands take this one path; they differ only in the window (`run`: the job's warm-up and
idle cap; `sim estimate`: `--duration` or `--sessions`) and the endpoint the result names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from inferbench.bench.agentic.options import ReplayOptions

if TYPE_CHECKING:
    from inferbench.bench.result import PointResult
    from inferbench.bench.traces.model import TraceSet
    from inferbench.sim.agentic import AgenticEstimate
    from inferbench.sim.deployment import SimDeployment

DEFAULT_DURATION_S = 600.0  # virtual seconds when neither a duration nor sessions is given


def open_agentic_traces(
    trace: Path | None, synth: str | None, max_model_len: int | None
) -> TraceSet:
    """The trace file or folder if given, else synthetic sessions (`synth`'s spec, or the
    default ones)."""
    from inferbench.bench.traces.source import open_traces

    return open_traces(
        trace=trace,
        synth=None if trace is not None else (synth or ""),
        max_model_len=max_model_len,
    )


def window(lanes: int, duration_s: float | None, sessions: int | None) -> ReplayOptions:
    """`sim estimate`'s window: `duration_s` or `sessions`, else DEFAULT_DURATION_S."""
    end = duration_s if duration_s or sessions else DEFAULT_DURATION_S
    return ReplayOptions(lanes=lanes, duration_s=end, sessions=sessions)


def cache_tier(dep: SimDeployment) -> str:
    """The deployment's prefix cache and DRAM tier, in words."""
    cache = dep.cache
    if cache is None:
        return "no prefix cache"
    if cache.cpu_offload_gb:
        return f"prefix cache + {cache.cpu_offload_gb:g} GB DRAM ({cache.backend})"
    return "prefix cache, GPU only"


@dataclass(frozen=True)
class AgenticFigures:
    """An agentic point's headline figures (`sim estimate --format json` keeps them so)."""

    lanes: int
    sessions_completed: int
    sessions_started: int
    requests: int
    window_s: float
    output_tok_s_per_gpu: float
    ttft_p50_ms: float
    tpot_p50_ms: float
    gpu_hit_rate: float | None
    external_hit_rate: float | None
    client_reuse_share: float
    wall_s: float


@dataclass(frozen=True)
class AgenticPoint:
    """One estimated point: its result file's contents and the estimate behind them."""

    lanes: int
    result: PointResult
    estimate: AgenticEstimate

    def figures(self) -> AgenticFigures:
        block = self.result.inferbench.agentic
        assert block is not None  # a replay result always has its agentic block
        est, srv = self.estimate, self.estimate.server
        return AgenticFigures(
            lanes=self.lanes,
            sessions_completed=block.sessions.completed,
            sessions_started=block.sessions.started,
            requests=block.requests,
            window_s=block.window_s,
            output_tok_s_per_gpu=block.output_throughput / est.gpus,
            ttft_p50_ms=self.result.sa.median_ttft_ms,
            tpot_p50_ms=self.result.sa.median_tpot_ms,
            gpu_hit_rate=srv.gpu_hit_rate,
            external_hit_rate=srv.external_hit_rate,
            client_reuse_share=block.client_reuse_share,
            wall_s=est.wall_s,
        )


def estimate_agentic_point(
    dep: SimDeployment,
    traces: TraceSet,
    options: ReplayOptions,
    *,
    base_url: str,
    max_model_len: int | None,
) -> AgenticPoint:
    """Replay `traces` on `options.lanes` lanes against `dep` on the virtual clock, and the
    result a replay against a server at `base_url` would write."""
    from inferbench.bench.agentic.api import build_replay_result
    from inferbench.bench.result import EndpointInfo
    from inferbench.bench.settings import ApiKind, ClientOptions, RequestOptions
    from inferbench.sim.agentic import estimate_agentic

    started = datetime.now(UTC)
    est = estimate_agentic(dep, traces, options)
    result = build_replay_result(
        est.run,
        est.server,
        traces,
        options,
        endpoint=EndpointInfo(base_url=base_url, model=dep.served_model, api=ApiKind.COMPLETIONS),
        request=RequestOptions(),
        client=ClientOptions(),
        started=started,
        finished=datetime.now(UTC),
        max_model_len=max_model_len,
        backend="inferbench-sim",
    )
    return AgenticPoint(options.lanes, result, est)
