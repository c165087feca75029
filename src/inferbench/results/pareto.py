"""Pareto frontiers of throughput per GPU against interactivity or E2EL, and monotone
interpolation along them.

A curve groups points by model, sequence lengths, hardware, framework, precision,
disaggregation and speculative decoding (every topology and concurrency of that group
competes on one frontier). Against
interactivity both axes are better when higher; against E2EL, lower latency is better.
Interpolation uses PCHIP (Fritsch-Carlson), which never overshoots between points, so
an interpolated throughput is always between its two neighbours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from inferbench.results.agentic import agentic_kind
from inferbench.results.record import Record

XAxis = Literal["interactivity", "e2el"]


@dataclass(frozen=True, order=True)
class SeriesKey:
    model_prefix: str
    isl: int
    osl: int
    hardware: str
    framework: str
    precision: str
    disagg: bool = False
    spec_decoding: str = "none"
    agentic: str = ""  # an agentic replay's kind, e.g. "synth kv-dram-vllm-native" (else "")
    planned: str = ""  # the entry's hardware, when measured on other (`hardware`) instead

    def variant(self) -> str:
        """What tells apart series of one hardware, framework and precision: `hw fw prec`
        plus `disagg` and the speculative decoding method when they apply."""
        words = [self.hardware, self.framework, self.precision]
        if self.disagg:
            words.append("disagg")
        if self.spec_decoding not in ("", "none"):
            words.append(self.spec_decoding)
        if self.agentic:
            words.append(f"agentic {self.agentic}")
        if self.planned:
            words.append(f"(entry {self.planned})")
        return " ".join(words)

    def label(self) -> str:
        return f"{self.model_prefix} {self.isl}/{self.osl} {self.variant()}"


@dataclass(frozen=True)
class Curve:
    key: SeriesKey
    x: tuple[float, ...]  # x of every point, in input order
    y: tuple[float, ...]
    records: tuple[Record, ...]
    frontier: tuple[int, ...]  # indices into x/y/records, sorted by x


def series_key(r: Record) -> SeriesKey:
    i = r.identity
    return SeriesKey(
        i.model_prefix,
        i.isl,
        i.osl,
        i.hardware(),
        i.framework,
        i.precision,
        i.disagg,
        i.spec_decoding,
        agentic_kind(i.dataset),
        r.provenance.planned_hardware or "",
    )


def x_value(r: Record, axis: XAxis) -> float | None:
    if axis == "e2el":
        return r.metrics.e2el_ms.median
    inter = r.derived.interactivity
    return inter.median if inter else None


def pareto_frontier(
    xs: Sequence[float], ys: Sequence[float], *, higher_x: bool = True, higher_y: bool = True
) -> list[int]:
    """Indices of non-dominated points, sorted by x ascending."""
    if not higher_y:
        ys = [-y for y in ys]
    order = sorted(range(len(xs)), key=lambda k: (xs[k], ys[k]), reverse=higher_x)
    keep: list[int] = []
    best = -np.inf
    for k in order:
        # walking from the best x towards the worst, a point stays if it beats every
        # point with a better x on throughput
        if ys[k] > best:
            keep.append(k)
            best = ys[k]
    return sorted(keep, key=lambda k: xs[k])


def build_curves(
    records: Sequence[Record],
    axis: XAxis = "interactivity",
    *,
    y: Callable[[Record], float | None] | None = None,
    higher_y: bool = True,
) -> list[Curve]:
    """One curve per series; a point without a value on either axis is left out."""
    y_of = y or (lambda r: r.derived.total_tput_per_gpu)
    groups: dict[SeriesKey, list[Record]] = {}
    for r in records:
        if x_value(r, axis) is not None and y_of(r) is not None:
            groups.setdefault(series_key(r), []).append(r)
    curves = []
    for key in sorted(groups):
        members = groups[key]
        xs = tuple(float(x_value(r, axis) or 0.0) for r in members)
        ys = tuple(float(y_of(r) or 0.0) for r in members)
        front = pareto_frontier(xs, ys, higher_x=axis == "interactivity", higher_y=higher_y)
        curves.append(Curve(key, xs, ys, tuple(members), tuple(front)))
    return curves


def pchip(xs: Sequence[float], ys: Sequence[float], x_new: float) -> float:
    """Monotone cubic (PCHIP) interpolation at `x_new`; xs strictly increasing."""
    x = np.asarray(xs, dtype=float)
    yv = np.asarray(ys, dtype=float)
    if x.size == 1:
        return float(yv[0])
    h = np.diff(x)
    delta = np.diff(yv) / h
    d = np.zeros_like(x)
    for k in range(1, x.size - 1):
        if delta[k - 1] * delta[k] > 0:
            w1, w2 = 2 * h[k] + h[k - 1], h[k] + 2 * h[k - 1]
            d[k] = (w1 + w2) / (w1 / delta[k - 1] + w2 / delta[k])
    if h.size == 1:
        d[0] = d[-1] = delta[0]
    else:
        d[0] = _end_slope(h[0], h[1], delta)
        d[-1] = _end_slope(h[-1], h[-2], delta[::-1])
    k = int(np.clip(np.searchsorted(x, x_new) - 1, 0, x.size - 2))
    t = (x_new - x[k]) / h[k]
    h00, h10 = 2 * t**3 - 3 * t**2 + 1, t**3 - 2 * t**2 + t
    h01, h11 = -2 * t**3 + 3 * t**2, t**3 - t**2
    return float(h00 * yv[k] + h10 * h[k] * d[k] + h01 * yv[k + 1] + h11 * h[k] * d[k + 1])


def _end_slope(h0: float, h1: float, delta: np.ndarray) -> float:
    """Three-point end slope, clipped so the end stays monotone (SciPy's rule)."""
    d = ((2 * h0 + h1) * delta[0] - h0 * delta[1]) / (h0 + h1)
    if np.sign(d) != np.sign(delta[0]):
        return 0.0
    if np.sign(delta[0]) != np.sign(delta[1]) and abs(d) > abs(3 * delta[0]):
        return float(3 * delta[0])
    return float(d)


def throughput_at(curve: Curve, target_x: float) -> float | None:
    """The frontier's y interpolated at `target_x`; None outside the measured range."""
    xs = [curve.x[k] for k in curve.frontier]
    ys = [curve.y[k] for k in curve.frontier]
    pairs = sorted({x: y for x, y in zip(xs, ys, strict=True)}.items())
    if not pairs or not pairs[0][0] <= target_x <= pairs[-1][0]:
        return None
    return pchip([p[0] for p in pairs], [p[1] for p in pairs], target_x)
