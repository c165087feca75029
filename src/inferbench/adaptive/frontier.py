"""The throughput-interactivity Pareto frontier, and how far a point may lie above it.

A frontier is a staircase: at interactivity x it is the best total tok/s/GPU of any point
at least that interactive (a point is dominated when another is both faster per GPU and
more interactive). Predictions are log-normal: log tok/s/GPU and log interactivity each
with its own spread (independent), so the chance that a point lies above the staircase
(scaled by 1 + tolerance) is a sum over the staircase's steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_erf = np.vectorize(math.erf, otypes=[float])


def ndtr(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF (numpy has no erf; scipy is not a dependency)."""
    return np.asarray(0.5 * (1.0 + _erf(np.asarray(x, dtype=float) / math.sqrt(2.0))))


@dataclass(frozen=True)
class Point:
    interactivity: float  # tok/s/user
    tok_s_gpu: float  # total (input + output) tok/s per GPU


def frontier(points: Sequence[Point]) -> list[Point]:
    """The non-dominated points, most interactive first (throughput rising)."""
    ordered = sorted(points, key=lambda p: (-p.interactivity, -p.tok_s_gpu))
    out: list[Point] = []
    for p in ordered:
        if not out or p.tok_s_gpu > out[-1].tok_s_gpu:
            out.append(p)
    return out


def best_at(stairs: Sequence[Point], interactivity: float) -> float:
    """The staircase's throughput at `interactivity` (0 above its most interactive point)."""
    best = 0.0
    for p in stairs:  # most interactive first, throughput rising
        if p.interactivity >= interactivity:
            best = p.tok_s_gpu
        else:
            break
    return best


def probability_above(
    stairs: Sequence[Point],
    log_tput: np.ndarray,
    log_inter: np.ndarray,
    spread_tput: np.ndarray,
    spread_inter: np.ndarray,
    tolerance: float = 0.0,
) -> np.ndarray:
    """P(a point's true throughput exceeds (1 + tolerance) x the staircase at its true
    interactivity), per point, for log-normal predictions (means and spreads in log space).
    Above the staircase's most interactive step nothing covers the point."""
    if not stairs:
        return np.ones_like(log_tput)
    st = np.maximum(spread_tput, 1e-9)
    si = np.maximum(spread_inter, 1e-9)

    def cdf_inter(x: float) -> np.ndarray:
        return (ndtr((math.log(x) - log_inter) / si)) if x > 0 else 0 * log_inter

    total = 1.0 - cdf_inter(stairs[0].interactivity)  # more interactive than any measured
    for j, step in enumerate(stairs):
        low = stairs[j + 1].interactivity if j + 1 < len(stairs) else 0.0
        p_band = cdf_inter(step.interactivity) - cdf_inter(low)
        bar = math.log(step.tok_s_gpu * (1.0 + tolerance))
        total = total + p_band * (1.0 - (ndtr((bar - log_tput) / st)))
    return np.clip(total, 0.0, 1.0)


def frontier_gap(truth: Sequence[Point], recovered: Sequence[Point]) -> float:
    """The largest relative throughput shortfall of the recovered frontier against the true
    one, at the interactivity of each true frontier point (0: the same frontier; 1: a true
    frontier point more interactive than anything recovered)."""
    stairs = frontier(recovered)
    gaps = [
        1.0 - best_at(stairs, p.interactivity) / p.tok_s_gpu
        for p in frontier(truth)
        if p.tok_s_gpu > 0
    ]
    return max(gaps, default=0.0)


def frontier_epsilon(truth: Sequence[Point], recovered: Sequence[Point]) -> float:
    """The multiplicative epsilon indicator less one: the smallest e such that every true
    frontier point is within a factor 1 + e, on both axes at once, of some recovered point
    (0: the same frontier; inf: nothing recovered). Unlike `frontier_gap` a point a little
    more interactive than anything recovered costs that little, not 100%."""
    got = frontier(recovered)
    worst = 0.0
    for p in frontier(truth):
        best = min(
            (max(p.tok_s_gpu / q.tok_s_gpu, p.interactivity / q.interactivity) for q in got
             if q.tok_s_gpu > 0 and q.interactivity > 0),
            default=math.inf,
        )  # fmt: skip
        worst = max(worst, best - 1.0)
    return worst
