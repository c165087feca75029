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

from collections.abc import Sequence

import numpy as np
from pydantic import ConfigDict, Field

from inferbench.bench.records import FailureKind, RecordColumns, RequestRecord
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


def stats_of_counts(values: np.ndarray, counts: np.ndarray, scale: float = 1.0) -> BenchStats:
    """`stats_of` of `values` each repeated `counts` times, without building that array.

    Percentiles and the median are exactly numpy's linear ones on the repeated array;
    the mean and std are weighted sums (equal up to float rounding).
    """
    keep = counts > 0
    arr = np.asarray(values, dtype=float)[keep] * scale
    weights = np.asarray(counts, dtype=np.int64)[keep]
    n = int(weights.sum())
    if n == 0:
        return BenchStats()
    order = np.argsort(arr, kind="stable")
    arr, weights = arr[order], weights[order]
    ends = np.cumsum(weights)  # the sorted repeated array's rank j holds arr[#ends <= j]

    def at(rank: np.ndarray) -> np.ndarray:
        return arr[np.searchsorted(ends, rank, side="right")]

    # numpy's linear method: virtual index (n - 1) * q, lerp between its neighbours
    q = np.true_divide(np.array([90.0, 99.0, 99.9]), 100)
    virtual = (n - 1) * q
    below = np.floor(virtual)
    low = np.clip(below, 0, n - 1).astype(np.int64)
    high = np.clip(below + 1, 0, n - 1).astype(np.int64)
    low[virtual >= n - 1] = high[virtual >= n - 1] = n - 1
    gamma = virtual - below
    a, b = at(low), at(high)
    diff = b - a
    p90, p99, p999 = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    middle = at(np.array([(n - 1) // 2, n // 2]))
    median = float(middle[0]) if n % 2 else float((middle[0] + middle[1]) / 2)
    mean = float(np.dot(arr, weights) / n)
    std = float(np.sqrt(np.dot((arr - mean) ** 2, weights) / n))
    return BenchStats(
        count=n,
        mean=mean,
        median=median,
        std=std,
        p90=float(p90),
        p99=float(p99),
        p99_9=float(p999),
    )


def _meets(cols: RecordColumns, slo: Slo) -> np.ndarray:
    """Which ok requests meet every objective (None TPOT: single-token, no constraint)."""
    ok = cols.ok
    timed = ~np.isnan(cols.first_chunk)
    good = ok.copy()
    sent = cols.sent
    if slo.ttft_ms is not None:
        good &= timed & ~((cols.first_chunk - sent) * 1e3 > slo.ttft_ms)
    if slo.e2el_ms is not None:
        good &= timed & ~((cols.last_chunk - sent) * 1e3 > slo.e2el_ms)
    if slo.tpot_ms is not None:
        has = timed & (cols.output_tokens > 1)
        tpot = (cols.last_chunk - cols.first_chunk) / np.maximum(cols.output_tokens - 1, 1)
        good &= ~(has & (tpot * 1e3 > slo.tpot_ms))
    return good


def in_flight(records: Sequence[RequestRecord] | RecordColumns) -> InFlight:
    """Max and time-weighted mean of requests in flight, from sent/done stamps."""
    cols = records if isinstance(records, RecordColumns) else RecordColumns.from_records(records)
    spans = cols.done >= cols.sent  # a request that never ended (nan) is not counted
    if not spans.any():
        return InFlight()
    starts = np.sort(cols.sent[spans])
    ends = np.sort(cols.done[spans])
    times = np.concatenate([starts, ends])
    steps = np.concatenate([np.ones(starts.size), -np.ones(ends.size)])
    order = np.lexsort((steps, times))  # ends before starts at equal times
    times, level = times[order], np.cumsum(steps[order])
    window = times[-1] - times[0]
    mean = float(np.sum(level[:-1] * np.diff(times)) / window) if window > 0 else float(starts.size)
    return InFlight(max=int(level.max()), time_weighted_mean=mean)


def achieved_request_rate(records: Sequence[RequestRecord] | RecordColumns) -> float | None:
    """Requests sent per second between the first and the last send."""
    sent = (
        records.sent
        if isinstance(records, RecordColumns)
        else np.array([r.sent for r in records], dtype=float)
    )
    if sent.size < 2:
        return None
    window = float(sent.max() - sent.min())
    return (sent.size - 1) / window if window > 0 else None


def summarize(
    records: Sequence[RequestRecord], duration_s: float, *, slo: Slo | None = None
) -> PointMetrics:
    """Aggregate one point's records (warm-ups excluded) over a window of `duration_s`."""
    return summarize_columns(RecordColumns.from_records(records), duration_s, slo=slo)


def summarize_columns(
    cols: RecordColumns, duration_s: float, *, slo: Slo | None = None
) -> PointMetrics:
    """`summarize` of records already in columns (the simulator's estimate gives these)."""
    ok = cols.ok
    completed = int(ok.sum())
    failed = cols.size - completed
    total_in = int(cols.input_tokens[ok].sum())
    total_out = int(cols.output_tokens[ok].sum())
    tpots = cols.tpot()
    dur = duration_s if duration_s > 0 else float("nan")
    good = int(_meets(cols, slo).sum()) if slo is not None else None
    itl = (
        stats_of(cols.itl, 1e3)
        if cols.itl_counts is None
        else stats_of_counts(cols.itl, cols.itl_counts, 1e3)
    )
    return PointMetrics(
        duration_s=duration_s,
        completed=completed,
        failed=failed,
        failures={k.value: cols.failures.get(k.value, 0) for k in FailureKind},
        total_input_tokens=total_in,
        total_output_tokens=total_out,
        request_throughput=_finite(completed / dur),
        output_throughput=_finite(total_out / dur),
        total_token_throughput=_finite((total_in + total_out) / dur),
        ttft_ms=stats_of(cols.ttft(), 1e3),
        tpot_ms=stats_of(tpots, 1e3),
        itl_ms=itl,
        itl_per_token_ms=stats_of(cols.itl_per_token, 1e3),
        e2el_ms=stats_of(cols.e2el(), 1e3),
        queue_ms=stats_of(cols.queue_time(), 1e3),
        interactivity=_interactivity(tpots),
        lengths=_lengths(cols),
        in_flight=in_flight(cols),
        achieved_request_rate=achieved_request_rate(cols),
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
    cols = RecordColumns.from_records(records)
    samples = {"ttft": cols.ttft(), "tpot": cols.tpot(), "itl": cols.itl, "e2el": cols.e2el()}
    out: dict[str, float] = {}
    for metric in metrics:
        arr = np.asarray(samples[metric], dtype=float) * 1e3
        for p in ps:
            out[percentile_key(metric, p)] = float(np.percentile(arr, p)) if arr.size else 0.0
    return out


def _interactivity(tpots_s: np.ndarray) -> Interactivity:
    values = 1.0 / tpots_s[tpots_s > 0]
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


def _lengths(cols: RecordColumns) -> Lengths:
    def mean(values: np.ndarray) -> float:
        return float(np.mean(values)) if values.size else 0.0

    ok = cols.ok
    return Lengths(
        nominal_mean_input=mean(cols.intended_input),
        nominal_mean_output=mean(cols.intended_output),
        achieved_mean_input=mean(cols.input_tokens[ok & cols.has_input]),
        achieved_mean_output=mean(cols.output_tokens[ok]),
    )


def _finite(value: float) -> float:
    return value if np.isfinite(value) else 0.0
