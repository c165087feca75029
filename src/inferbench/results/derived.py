"""Derived metrics, one definition each.

- Throughput per GPU: single node total / (tp * pp * pcp) (= the worker's GPUs);
  disaggregated total / (P + D) GPUs, output per decode GPU = output / D, input per
  prefill GPU = input / P.
- Interactivity (tok/s/user) = 1000 / TPOT_ms per request; its percentiles are taken
  over the per-request distribution. (1000 / p99 TPOT is the 1st percentile of
  interactivity, not the 99th.)
- Energy per token: GPU power samples integrated with the trapezoid rule over the
  benchmark window, with a validity verdict.
- Provisioned power: every GPU of the deployment at the hardware catalog's all-in kW per
  GPU (the InferenceX site's constants): throughput per provisioned MW needs no measurement.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inferbench.catalog.load import load_catalog
from inferbench.core.errors import InputError
from inferbench.results.record import Energy, Identity, RecordInteractivity, RecordStats


@dataclass(frozen=True)
class PerGpuThroughput:
    total_per_gpu: float
    output_per_gpu: float
    input_per_gpu: float
    output_per_decode_gpu: float | None
    input_per_prefill_gpu: float | None


def per_gpu_throughput(
    identity: Identity, *, total_tps: float, output_tps: float, input_tps: float
) -> PerGpuThroughput:
    """Token throughputs divided by the GPUs that produced them (see module doc)."""
    gpus = identity.total_gpus
    if gpus <= 0:
        raise ValueError("a point needs at least one GPU")
    prefill, decode = identity.pool("prefill"), identity.pool("decode")
    per_decode = per_prefill = None
    if identity.disagg and prefill is not None and decode is not None and decode.gpus > 0:
        per_decode = output_tps / decode.gpus
        per_prefill = input_tps / prefill.gpus if prefill.gpus else None
    return PerGpuThroughput(
        total_per_gpu=total_tps / gpus,
        output_per_gpu=output_tps / gpus,
        input_per_gpu=input_tps / gpus,
        output_per_decode_gpu=per_decode,
        input_per_prefill_gpu=per_prefill,
    )


def interactivity_from_tpots(tpots_ms: Sequence[float]) -> RecordInteractivity | None:
    """Percentiles of 1000 / TPOT over the requests (non-positive TPOTs are dropped)."""
    arr = np.asarray([t for t in tpots_ms if t is not None and t > 0], dtype=float)
    if arr.size == 0:
        return None
    inter = 1000.0 / arr
    p1, p10, p50, p90, p99 = np.percentile(inter, [1, 10, 50, 90, 99])
    return RecordInteractivity(
        p1=float(p1),
        p10=float(p10),
        median=float(p50),
        p90=float(p90),
        p99=float(p99),
        mean=float(inter.mean()),
        source="per_request",
    )


def interactivity_from_tpot_stats(tpot: RecordStats) -> RecordInteractivity | None:
    """Fallback when only TPOT percentiles exist: p_k(1000/x) = 1000 / p_(100-k)(x)."""

    def inv(v: float | None) -> float | None:
        return 1000.0 / v if v is not None and v > 0 else None

    if tpot.median is None:
        return None
    return RecordInteractivity(
        p1=inv(tpot.p99), p10=inv(tpot.p90), median=inv(tpot.median), source="tpot_percentiles"
    )


def request_tpots_ms(itls_ms: Sequence[Sequence[float]], output_lens: Sequence[int]) -> list[float]:
    """Per-request TPOT from sa-bench's per-request ITL lists: sum(gaps) / (tokens - 1).

    The chunk gaps of a request add up to E2EL - TTFT whatever the chunking, so this is
    exact even when servers batch several tokens per chunk.
    """
    tpots = []
    for gaps, out in zip(itls_ms, output_lens, strict=False):
        if out > 1 and gaps:
            tpots.append(float(sum(gaps)) / (out - 1))
    return tpots


@dataclass(frozen=True)
class PowerSample:
    """One reading: unix time (s), GPU id, watts."""

    t: float
    gpu: str
    watts: float


MIN_SAMPLES_PER_GPU = 3


def energy_per_token(
    samples: Sequence[PowerSample],
    *,
    window: tuple[float, float],
    output_tokens: int,
    total_tokens: int,
    max_gap_s: float = 5.0,
    edge_tolerance_s: float = 2.0,
) -> Energy:
    """Trapezoid-integrate each GPU's power over `window` and divide by tokens.

    Invalid (with reasons) when a GPU has too few samples, a gap wider than `max_gap_s`
    inside the window, or samples that do not reach the window's edges within
    `edge_tolerance_s`. The joules are still reported when they can be computed.
    """
    start, end = window
    reasons: list[str] = []
    if end <= start:
        return Energy(
            joules=None,
            joules_per_output_token=None,
            joules_per_total_token=None,
            gpus=0,
            samples=len(samples),
            valid=False,
            reasons=("benchmark window is empty",),
        )
    by_gpu: dict[str, list[tuple[float, float]]] = {}
    for s in samples:
        by_gpu.setdefault(s.gpu, []).append((s.t, s.watts))
    total_j = 0.0
    for gpu, points in sorted(by_gpu.items()):
        gpu_j, problems = _integrate_gpu(sorted(points), start, end, max_gap_s, edge_tolerance_s)
        reasons.extend(f"gpu {gpu}: {p}" for p in problems)
        total_j += gpu_j
    if not by_gpu:
        reasons.append("no power samples")
    joules: float | None = total_j if by_gpu else None
    return Energy(
        joules=joules,
        joules_per_output_token=joules / output_tokens if joules and output_tokens else None,
        joules_per_total_token=joules / total_tokens if joules and total_tokens else None,
        gpus=len(by_gpu),
        samples=len(samples),
        valid=not reasons,
        reasons=tuple(reasons),
    )


def _integrate_gpu(
    points: list[tuple[float, float]], start: float, end: float, max_gap: float, edge_tol: float
) -> tuple[float, list[str]]:
    problems: list[str] = []
    # readings of one GPU stamped alike (amd-smi stamps whole seconds) are averaged, as
    # InferenceX's aggregate_power.py does, so the time axis increases strictly
    t, first = np.unique(np.asarray([p[0] for p in points]), return_inverse=True)
    w = np.bincount(first, weights=[p[1] for p in points]) / np.bincount(first)
    inside = (t >= start) & (t <= end)
    if int(inside.sum()) < MIN_SAMPLES_PER_GPU:
        problems.append(f"too few samples in the window ({int(inside.sum())})")
    if t[0] > start + edge_tol or t[-1] < end - edge_tol:
        problems.append(f"samples cover {t[0]:.1f}..{t[-1]:.1f}, window is {start:.1f}..{end:.1f}")
    # Clip to the window, interpolating the power at the edges.
    grid = np.concatenate(([start], t[inside], [end]))
    watts = np.interp(grid, t, w)
    gaps = np.diff(grid)
    if gaps.size and float(gaps.max()) > max_gap:
        problems.append(f"gap of {float(gaps.max()):.1f} s between samples (max {max_gap:g})")
    joules = float(np.sum((watts[1:] + watts[:-1]) * 0.5 * gaps))
    return joules, problems


def provisioned_mw(identity: Identity) -> float | None:
    """The deployment's provisioned power in MW: each pool's GPUs at the catalog's all-in
    kW per GPU (the InferenceX site's constants); None when a pool's GPU has none."""
    total = 0.0
    for pool in identity.pools:
        kw = _provisioned_kw(pool.hardware)
        if kw is None:
            return None
        total += kw * pool.gpus
    return total / 1000.0 if total else None


@functools.lru_cache(maxsize=256)
def _provisioned_kw(hardware: str) -> float | None:
    try:
        return load_catalog().gpu(hardware).provisioned_kw
    except InputError:
        return None
