"""The agentic part of a result file: the `inferbench.agentic` block (versioned with it)."""

from __future__ import annotations

from pydantic import Field

from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.agentic.server_metrics import ServerCacheMetrics
from inferbench.bench.metrics import BenchStats
from inferbench.core.model import FrozenModel

AGENTIC_VERSION = 1


class TurnStats(FrozenModel):
    """Requests at one position of the root conversation (turn 1, 2, ...)."""

    turn: int
    requests: int
    mean_prompt_tokens: float
    mean_ttft_ms: float
    median_ttft_ms: float
    p90_ttft_ms: float
    median_tpot_ms: float | None
    server_hit_rate: float | None = None  # cached / prompt tokens, where the server says


class ContextBin(FrozenModel):
    """Requests whose prompt falls in [low, high) tokens (bins double)."""

    low: int
    high: int
    requests: int
    median_ttft_ms: float
    median_tpot_ms: float | None


class SessionFailure(FrozenModel):
    session: int
    trace: str
    stream: str
    turn: int
    error: str


class SessionSummary(FrozenModel):
    started: int
    completed: int
    failed: int
    cut: int  # still running when the window ended
    duration_s: BenchStats  # completed sessions
    requests: BenchStats
    input_tokens: BenchStats
    output_tokens: BenchStats
    failures: list[SessionFailure] = Field(default_factory=list)  # first few


class AgenticBlock(FrozenModel):
    version: int = AGENTIC_VERSION
    traces: int
    trace_source: str
    trace_format: str
    trace_notes: list[str] = Field(default_factory=list)
    replay: ReplayOptions
    window_s: float
    requests: int
    warmup_requests: int
    subagent_requests: int
    request_throughput: float
    output_throughput: float
    total_token_throughput: float
    sessions_per_minute: float
    prompt_tokens: int
    reused_prompt_tokens: int
    client_reuse_share: float  # reused / prompt tokens: what a perfect prefix cache could serve
    per_turn: list[TurnStats]
    by_context: list[ContextBin]
    sessions: SessionSummary
    server: ServerCacheMetrics | None = None
