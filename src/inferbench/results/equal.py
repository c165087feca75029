"""Comparisons at equal interactivity: each series' frontier interpolated (PCHIP) at one
target tok/s/user, the way "at 50 tok/s/user, B200 delivers 1.8x H200" is read.

Outside a curve's measured interactivity range there is no value: nothing is
extrapolated. Targets default to round numbers (1, 2, 5 x 10^k) inside the ranges.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inferbench.results.pareto import Curve, SeriesKey, build_curves, throughput_at
from inferbench.results.record import Record


@dataclass(frozen=True)
class SeriesAt:
    key: SeriesKey
    value: float


@dataclass(frozen=True)
class PairAt:
    """One series at one interactivity in BASE and in HEAD."""

    key: SeriesKey
    target: float
    base: float
    head: float

    @property
    def ratio(self) -> float:
        return self.head / self.base if self.base else math.inf

    def as_dict(self) -> dict[str, float | str]:
        """The pair as the report's page data and `results compare --format json` carry it."""
        return {
            "series": self.key.label(),
            "at": self.target,
            "base": self.base,
            "head": self.head,
            "ratio": self.ratio,
        }


def frontier_range(curve: Curve) -> tuple[float, float]:
    xs = [curve.x[k] for k in curve.frontier]
    return min(xs), max(xs)


def round_targets(lo: float, hi: float) -> list[float]:
    """Round numbers (1, 2, 5 x 10^k) inside [lo, hi], ascending."""
    if not (lo > 0 and hi >= lo):
        return []
    out = []
    for exp in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for mant in (1, 2, 5):
            v = mant * 10.0**exp
            if lo <= v <= hi:
                out.append(round(v, 6))
    return out


def middle_target(lo: float, hi: float) -> float | None:
    """The round number nearest the geometric middle of [lo, hi] (None if none inside)."""
    targets = round_targets(lo, hi)
    if not targets:
        return None
    mid = math.sqrt(lo * hi)
    return min(targets, key=lambda v: abs(math.log(v / mid)))


def values_at(curves: Sequence[Curve], target: float) -> list[SeriesAt]:
    """Every curve's interpolated y at `target` (curves that do not reach it are left out)."""
    found = []
    for c in curves:
        v = throughput_at(c, target)
        if v is not None:
            found.append(SeriesAt(c.key, v))
    return found


def ratio_sentence(
    found: Sequence[SeriesAt], target: float, *, unit: str, higher_is_better: bool = True
) -> str | None:
    """`at 50 tok/s/user, b200 vllm fp4 delivers 4,210 tok/s/GPU, 1.80x h200 sglang fp8`
    (the best series against the runner-up; `needs` for a lower-is-better metric)."""
    if len(found) < 2:
        return None
    ranked = sorted(found, key=lambda s: s.value, reverse=higher_is_better)
    best, second = ranked[0], ranked[1]
    ratio = best.value / second.value if second.value else math.inf
    verb = "delivers" if higher_is_better else "needs"
    return (
        f"at {target:g} tok/s/user, {best.key.variant()} {verb} {best.value:,.4g} {unit}, "
        f"{ratio:.2f}x {second.key.variant()}"
    )


def compare_at(
    base: Sequence[Record],
    head: Sequence[Record],
    *,
    target: float | None = None,
    y: Callable[[Record], float | None] | None = None,
) -> list[PairAt]:
    """Each series present in both: BASE and HEAD frontiers at one interactivity (`target`,
    or a round number in the middle of the range both cover)."""
    b_curves = {c.key: c for c in build_curves(base, y=y)}
    pairs = []
    for h in build_curves(head, y=y):
        b = b_curves.get(h.key)
        if b is None:
            continue
        (b_lo, b_hi), (h_lo, h_hi) = frontier_range(b), frontier_range(h)
        at = target if target is not None else middle_target(max(b_lo, h_lo), min(b_hi, h_hi))
        if at is None:
            continue
        bv, hv = throughput_at(b, at), throughput_at(h, at)
        if bv is not None and hv is not None:
            pairs.append(PairAt(h.key, at, bv, hv))
    return pairs
