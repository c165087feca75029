"""The metric definitions, in one place (the load generator and the simulator share them).

Per request, then aggregated over successful requests:
- TTFT: sent -> first chunk carrying generated content.
- E2EL: sent -> last content chunk.
- TPOT: (E2EL - TTFT) / (output_tokens - 1), requests with more than one output token.
- ITL per chunk: gaps between successive content chunks, pooled over requests
  (what sa-bench calls ITL). ITL per token: each gap divided over the tokens the
  later chunk carried, from per-chunk usage; only requests that had it.
- Output tokens: the server's `usage.completion_tokens`.
- Throughputs over the measured window `duration_s`.
- Goodput: successful requests/s meeting every SLO given.
- Interactivity: 1000 / TPOT_ms per request; its percentiles are over requests.
- Achieved request rate: (sends - 1) / (last send - first send), every request
  counted (failures too), to set beside the rate asked for.
Statistics: mean, median, std (population), p90, p99, p99.9, linear percentiles.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import ConfigDict, Field

from inferbench.bench.records import FailureKind, RequestRecord
from inferbench.core.model import FrozenModel


class BenchStats(FrozenModel):
    """Summary of one distribution, in the unit its name says (ms for times)."""

    count: int = 0
    mean: float = 0.0
    median: float = 0.0
    std: float = 0.0
    p90: float = 0.0
    p99: float = 0.0
    p99_9: float = Field(default=0.0, alias="p99.9")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def stats_of(values: Sequence[float] | np.ndarray, scale: float = 1.0) -> BenchStats:
    arr = np.asarray(values, dtype=float) * scale
    if arr.size == 0:
        return BenchStats()
    p90, p99, p999 = np.percentile(arr, [90, 99, 99.9])
    return BenchStats(
        count=int(arr.size),
        mean=float(arr.mean()),
        median=float(np.median(arr)),
        std=float(arr.std()),
        p90=float(p90),
        p99=float(p99),
        p99_9=float(p999),
    )


class Slo(FrozenModel):
    """Service-level objectives in milliseconds; None = not constrained."""

    ttft_ms: float | None = Field(default=None, gt=0)
    tpot_ms: float | None = Field(default=None, gt=0)
    e2el_ms: float | None = Field(default=None, gt=0)


class Interactivity(FrozenModel):
    """tok/s/user = 1000 / TPOT_ms, percentiles over the per-request distribution."""

    mean: float = 0.0
    p1: float = 0.0
    p10: float = 0.0
    median: float = 0.0
    p90: float = 0.0
    p99: float = 0.0


class Lengths(FrozenModel):
    """Nominal (intended) and achieved (server-reported) mean lengths."""

    nominal_mean_input: float = 0.0
    nominal_mean_output: float = 0.0
    achieved_mean_input: float = 0.0
    achieved_mean_output: float = 0.0


class InFlight(FrozenModel):
    """Requests in flight as the client saw them (sent -> done), over the window."""

    max: int = 0
    time_weighted_mean: float = 0.0


class PointMetrics(FrozenModel):
    duration_s: float
    completed: int
    failed: int
    failures: dict[str, int]
    total_input_tokens: int
    total_output_tokens: int
    request_throughput: float
    output_throughput: float
    total_token_throughput: float
    ttft_ms: BenchStats
    tpot_ms: BenchStats
    itl_ms: BenchStats
    itl_per_token_ms: BenchStats
    e2el_ms: BenchStats
    queue_ms: BenchStats
    interactivity: Interactivity
    lengths: Lengths
    in_flight: InFlight
    achieved_request_rate: float | None = None
    slo: Slo | None = None
    good_requests: int | None = None
    goodput: float | None = None


def _meets(rec: RequestRecord, slo: Slo) -> bool:
    ttft, e2el, tpot = rec.ttft, rec.e2el, rec.tpot
    if slo.ttft_ms is not None and (ttft is None or ttft * 1e3 > slo.ttft_ms):
        return False
    if slo.e2el_ms is not None and (e2el is None or e2el * 1e3 > slo.e2el_ms):
        return False
    return not (slo.tpot_ms is not None and tpot is not None and tpot * 1e3 > slo.tpot_ms)


def _itls(ok: list[RequestRecord]) -> tuple[np.ndarray, np.ndarray]:
    """Pooled chunk gaps, and per-token gaps from requests with per-chunk usage.

    All requests' chunk times go into one array and are differenced at once (the gap
    that would span two requests is dropped): a 20k-request point has ~20M gaps, which
    per-request numpy calls and Python lists made slower than the run it summarised.
    """
    timed = [rec for rec in ok if len(rec.chunk_times) >= 2]
    if not timed:
        return np.empty(0), np.empty(0)
    lengths = np.array([len(rec.chunk_times) for rec in timed], dtype=np.int64)
    flat = np.concatenate([np.asarray(rec.chunk_times, dtype=float) for rec in timed])
    gaps = flat[1:] - flat[:-1]
    keep = np.ones(gaps.size, dtype=bool)
    keep[np.cumsum(lengths)[:-1] - 1] = False  # the last chunk of one request to the next
    per_chunk = gaps[keep]
    per_token: list[np.ndarray] = []
    for rec in timed:
        if rec.per_chunk_usage and len(rec.chunk_tokens) == len(rec.chunk_times):
            own = np.diff(np.asarray(rec.chunk_times, dtype=float))
            tokens = np.asarray(rec.chunk_tokens[1:])
            mask = tokens > 0
            per_token.append(np.repeat(own[mask] / tokens[mask], tokens[mask]))
    return per_chunk, (np.concatenate(per_token) if per_token else np.empty(0))


def in_flight(records: Sequence[RequestRecord]) -> InFlight:
    """Max and time-weighted mean of requests in flight, from sent/done stamps."""
    spans = [(r.sent, r.done) for r in records if r.done is not None and r.done >= r.sent]
    if not spans:
        return InFlight()
    starts = np.sort(np.array([s for s, _ in spans]))
    ends = np.sort(np.array([e for _, e in spans]))
    times = np.concatenate([starts, ends])
    steps = np.concatenate([np.ones(starts.size), -np.ones(ends.size)])
    order = np.lexsort((steps, times))  # ends before starts at equal times
    times, level = times[order], np.cumsum(steps[order])
    window = times[-1] - times[0]
    mean = float(np.sum(level[:-1] * np.diff(times)) / window) if window > 0 else float(len(spans))
    return InFlight(max=int(level.max()), time_weighted_mean=mean)


def achieved_request_rate(records: Sequence[RequestRecord]) -> float | None:
    """Requests sent per second between the first and the last send."""
    if len(records) < 2:
        return None
    sent = [r.sent for r in records]
    window = max(sent) - min(sent)
    return (len(sent) - 1) / window if window > 0 else None


def summarize(
    records: Sequence[RequestRecord], duration_s: float, *, slo: Slo | None = None
) -> PointMetrics:
    """Aggregate one point's records (warm-ups excluded) over a window of `duration_s`."""
    ok = [r for r in records if r.ok]
    failed = [r for r in records if not r.ok]
    failures = Counter((r.failure or FailureKind.STREAM_ERROR).value for r in failed)
    inputs = [r.input_tokens if r.input_tokens is not None else r.intended_input_tokens for r in ok]
    outputs = [r.output_tokens for r in ok]
    tpots = [t for r in ok if (t := r.tpot) is not None]
    per_chunk, per_token = _itls(ok)
    dur = duration_s if duration_s > 0 else float("nan")
    good = sum(1 for r in ok if _meets(r, slo)) if slo is not None else None
    return PointMetrics(
        duration_s=duration_s,
        completed=len(ok),
        failed=len(failed),
        failures={k.value: failures.get(k.value, 0) for k in FailureKind},
        total_input_tokens=int(sum(inputs)),
        total_output_tokens=int(sum(outputs)),
        request_throughput=_finite(len(ok) / dur),
        output_throughput=_finite(sum(outputs) / dur),
        total_token_throughput=_finite((sum(inputs) + sum(outputs)) / dur),
        ttft_ms=stats_of([r.ttft for r in ok if r.ttft is not None], 1e3),
        tpot_ms=stats_of(tpots, 1e3),
        itl_ms=stats_of(per_chunk, 1e3),
        itl_per_token_ms=stats_of(per_token, 1e3),
        e2el_ms=stats_of([r.e2el for r in ok if r.e2el is not None], 1e3),
        queue_ms=stats_of([r.queue_time for r in records], 1e3),
        interactivity=_interactivity(tpots),
        lengths=_lengths(records, ok),
        in_flight=in_flight(records),
        achieved_request_rate=achieved_request_rate(records),
        slo=slo,
        good_requests=good,
        goodput=_finite(good / dur) if good is not None else None,
    )


PERCENTILE_METRICS = ("ttft", "tpot", "itl", "e2el")
DEFAULT_PERCENTILES = (90.0, 99.0, 99.9)  # the p-keys every result file carries


def percentile_key(metric: str, p: float) -> str:
    """sa-bench's and vLLM's key: `p99_ttft_ms`, `p99.9_itl_ms`, `p50_e2el_ms`."""
    word = str(int(p)) if int(p) == p else str(p)
    return f"p{word}_{metric}_ms"


def percentiles_ms(
    records: Sequence[RequestRecord], metrics: Sequence[str], ps: Sequence[float]
) -> dict[str, float]:
    """The `--metric-percentiles` of the `--percentile-metrics`, from the same samples as
    `summarize` (ITL pooled per chunk), in milliseconds."""
    ok = [r for r in records if r.ok]
    samples = {
        "ttft": [r.ttft for r in ok if r.ttft is not None],
        "tpot": [t for r in ok if (t := r.tpot) is not None],
        "itl": _itls(ok)[0],
        "e2el": [r.e2el for r in ok if r.e2el is not None],
    }
    out: dict[str, float] = {}
    for metric in metrics:
        arr = np.asarray(samples[metric], dtype=float) * 1e3
        for p in ps:
            out[percentile_key(metric, p)] = float(np.percentile(arr, p)) if arr.size else 0.0
    return out


def _interactivity(tpots_s: list[float]) -> Interactivity:
    values = np.array([1.0 / t for t in tpots_s if t > 0])
    if values.size == 0:
        return Interactivity()
    p1, p10, p50, p90, p99 = np.percentile(values, [1, 10, 50, 90, 99])
    return Interactivity(
        mean=float(values.mean()),
        p1=float(p1),
        p10=float(p10),
        median=float(p50),
        p90=float(p90),
        p99=float(p99),
    )


def _lengths(records: Sequence[RequestRecord], ok: list[RequestRecord]) -> Lengths:
    def mean(values: list[int]) -> float:
        return float(np.mean(values)) if values else 0.0

    return Lengths(
        nominal_mean_input=mean([r.intended_input_tokens for r in records]),
        nominal_mean_output=mean([r.intended_output_tokens for r in records]),
        achieved_mean_input=mean([r.input_tokens for r in ok if r.input_tokens is not None]),
        achieved_mean_output=mean([r.output_tokens for r in ok]),
    )


def _finite(value: float) -> float:
    return value if np.isfinite(value) else 0.0
