"""How far off a prediction may be: the calibration's own held-out error, per (GPU, engine).

The spread of a prediction is the root-mean-square log error the calibration made on
measured points it did not see (an upper 90% bound on it: from n errors the RMS itself is
uncertain, see `upper_factor`):

- a pair with at least `MIN_WITHIN` measured points: leave-one-out within the pair (each of
  its points predicted by a fit on the pair's others), what its own calibration still misses,
  and at least the same error pooled over all such pairs (a few points may be lucky);
- a pair with fewer: its leave-one-group-out error (all its points predicted by a fit on the
  other pairs), what a calibration that never saw it gets wrong, and at least the pooled
  error below (one or two points are too few to trust a smaller one);
- a pair not measured at all: the largest leave-one-group-out error of any measured pair (and
  at least the pooled one's upper bound, counting pairs: a held-out pair's errors move
  together); with fewer than two pairs measured there is nothing to hold out, and the prior
  (the default calibration's held-out error, `PRIOR`) stands.

`HeldOutErrors.spread` is what the planner reads; `held_out_errors` computes it from measured
points with `sim calibrate`'s fit, as `sim.holdout.holdout(by="gpu-engine")` does but
predicting each held-out point from its grid surface instead of simulating it again (the
planner reassesses after every round); `from_holdout` takes a `HoldoutReport` as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

from inferbench.sim.calibrate import MeasuredPoint, Surface, fit
from inferbench.sim.calibration import Calibration, base_efficiency
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.holdout import HoldoutReport

Pair = tuple[str, str]  # (GPU key, engine)
MIN_WITHIN = 3
FLOOR = 0.02  # never trust a prediction closer than run-to-run noise


@dataclass(frozen=True)
class Spread:
    """The log-space standard deviation of a prediction, per metric, and where it is from."""

    tok_s_gpu: float
    interactivity: float
    source: str


# The default calibration's held-out error on the ten published InferenceX points
# (docs/simulator.md's table, as root-mean-square log errors of tok/s/GPU and interactivity):
# 0.18 leave-one-out, 0.14 leave-one-GPU-out, 0.26 leave-one-engine-out when it was set;
# 0.12, 0.12 and 0.15 since the per-expert overhead; a pair nothing was measured on is
# further out than a held-out engine, so it stays at 0.25.
PRIOR = Spread(0.25, 0.25, "prior: the default calibration's held-out error")


def params_for(cal: Calibration, dep: SimDeployment) -> dict[str, float]:
    """The fitted parameters a deployment runs with under `cal` (engine defaults first)."""
    base = base_efficiency(dep.engine)
    out = {
        "layer_overhead_s": base.layer_overhead_s,
        "seq_overhead_s": base.seq_overhead_s,
        "attention_efficiency": base.attention_efficiency,
        "expert_overhead_s": base.expert_overhead_s,
        "chunk_overhead_s": base.chunk_overhead_s,
        "front_latency_s": base.front_latency_s,
    }
    entry = cal.entry_for(dep.gpu, dep.engine)
    if entry is not None:
        out.update(entry.params)
    return out


def _log_errors(
    points: Sequence[MeasuredPoint],
    cal: Calibration,
    surfaces: Mapping[str, Surface],
    deps: Mapping[str, SimDeployment],
) -> list[tuple[float, float | None]]:
    out: list[tuple[float, float | None]] = []
    for pt in points:
        params = params_for(cal, deps[pt.name])
        at = surfaces[pt.name].at_params(
            params["layer_overhead_s"],
            params["seq_overhead_s"],
            params["attention_efficiency"],
            params["expert_overhead_s"],
            params["chunk_overhead_s"],
        )
        tput = float(at["tok_s_gpu"]) - math.log(pt.measured.tok_s_gpu)
        inter = pt.measured.interactivity
        out.append((tput, float(at["interactivity"]) - math.log(inter) if inter else None))
    return out


def _rms(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return math.sqrt(sum(v * v for v in known) / len(known)) if known else None


@dataclass
class HeldOutErrors:
    """Spreads per pair from measured points (see the module's rules)."""

    within: dict[Pair, Spread] = field(default_factory=dict)
    within_pooled: Spread | None = None  # leave-one-out within pairs, all pairs' errors
    group_out: dict[Pair, Spread] = field(default_factory=dict)
    pooled: Spread = PRIOR
    floor: float = FLOOR

    def spread(self, gpu: str, engine: str) -> Spread:
        pair = (gpu, engine)
        got = self.within.get(pair)
        if got is not None and self.within_pooled is not None:
            # a pair's own few errors may be lucky: never below what calibrated pairs miss
            pool = self.within_pooled
            got = Spread(
                max(got.tok_s_gpu, pool.tok_s_gpu),
                max(got.interactivity, pool.interactivity),
                got.source,
            )
        if got is None:
            # one or two points' held-out error is a noisy estimate: never below the pool's
            alone = self.group_out.get(pair)
            got = self.pooled
            if alone is not None:
                got = Spread(
                    max(alone.tok_s_gpu, got.tok_s_gpu),
                    max(alone.interactivity, got.interactivity),
                    f"{alone.source}, at least the pooled",
                )
        return Spread(
            max(got.tok_s_gpu, self.floor), max(got.interactivity, self.floor), got.source
        )


@dataclass
class HeldOutCache:
    """Held-out errors kept between assessments and refitted as the measurements grow by a
    quarter (`growth`), not after every round: each fit costs a fraction of a second per
    point, a leave-one-group-out is one fit per pair, a leave-one-out one per point. Until a
    refit, a spread comes from fewer points, and its upper bound is the wider for it."""

    growth: float = 1.25
    group_out: dict[Pair, Spread] = field(default_factory=dict)
    pooled: Spread | None = None
    group_points: int = 0
    group_pairs: frozenset[Pair] = frozenset()
    # pair -> (its points when refitted, its spread, its errors)
    within: dict[Pair, tuple[int, Spread, list[tuple[float, float | None]]]] = field(
        default_factory=dict
    )

    def stale_groups(self, points: int, pairs: frozenset[Pair]) -> bool:
        return pairs != self.group_pairs or points >= self.group_points * self.growth

    def stale_within(self, pair: Pair, points: int) -> bool:
        have = self.within.get(pair)
        return have is None or points >= have[0] * self.growth


def held_out_errors(
    points: Sequence[MeasuredPoint],
    surfaces: dict[str, Surface],
    deps: dict[str, SimDeployment],
    *,
    prior: Spread = PRIOR,
    floor: float = FLOOR,
    cache: HeldOutCache | None = None,
) -> HeldOutErrors:
    """Leave-one-group-out over the (GPU, engine) pairs and leave-one-out within each pair
    with at least MIN_WITHIN points (`cache`: refitted only as the points grow)."""
    cache = cache if cache is not None else HeldOutCache(growth=1.0)
    pairs: dict[Pair, list[MeasuredPoint]] = {}
    for pt in points:
        dep = deps[pt.name]
        pairs.setdefault((dep.gpu.key, dep.engine), []).append(pt)
    out = HeldOutErrors(pooled=prior, floor=floor)
    if len(pairs) >= 2:
        if cache.stale_groups(len(points), frozenset(pairs)):
            every: list[tuple[float, float | None]] = []
            cache.group_out = {}
            for pair, members in pairs.items():
                names = {pt.name for pt in members}
                rest = [pt for pt in points if pt.name not in names]
                errs = _log_errors(members, fit(rest, surfaces, deps), surfaces, deps)
                every.extend(errs)
                label = f"{pair[0]}/{pair[1]}"
                # one or two points: kept as measured, and never below the pooled bound
                cache.group_out[pair] = _spread(
                    errs, f"leave-one-group-out of {label}", prior, upper=False
                )
            cache.pooled = _worst(cache.group_out, every, prior)
            cache.group_points, cache.group_pairs = len(points), frozenset(pairs)
        out.group_out = dict(cache.group_out)
        out.pooled = cache.pooled or prior
    for pair, members in pairs.items():
        if len(members) < MIN_WITHIN:
            continue
        if cache.stale_within(pair, len(members)):
            errs = []
            for pt in members:
                rest = [p for p in members if p.name != pt.name]
                errs.extend(_log_errors([pt], fit(rest, surfaces, deps), surfaces, deps))
            label = f"{pair[0]}/{pair[1]}"
            cache.within[pair] = (
                len(members),
                _spread(errs, f"leave-one-out within {label} ({len(members)} points)", prior),
                errs,
            )
        out.within[pair] = cache.within[pair][1]
    every_within = [e for pair in out.within for e in cache.within[pair][2]]
    if every_within:
        out.within_pooled = _spread(every_within, "leave-one-out within pairs", prior, upper=False)
    return out


# The spread is an upper bound on the held-out RMS error, not the estimate itself: from n
# errors the RMS is uncertain (a chi-square with n degrees of freedom), and three lucky
# points would otherwise settle a pair's whole frontier. One-sided, at this probability.
UPPER = 0.9


def upper_factor(n: int, p: float = UPPER) -> float:
    """RMS x this = the one-sided upper `p` bound on the error's standard deviation from `n`
    zero-mean errors: sqrt(n / chi2_{1-p}(n)), the chi-square quantile by Wilson-Hilferty."""
    if n <= 0:
        return 1.0
    z = -NormalDist().inv_cdf(p)
    q = n * (1 - 2 / (9 * n) + z * math.sqrt(2 / (9 * n))) ** 3
    return math.sqrt(n / max(q, 1e-6))


def _worst(
    groups: Mapping[Pair, Spread], every: Sequence[tuple[float, float | None]], prior: Spread
) -> Spread:
    """The spread of a pair not measured yet: the largest held-out error of any measured
    pair, and at least the pooled RMS's upper bound counting pairs, not points (a held-out
    pair's errors move together: they are one draw, not many)."""
    pooled = _spread(every, "", prior, upper=False)
    n = len(groups)
    return Spread(
        max(max(g.tok_s_gpu for g in groups.values()), pooled.tok_s_gpu * upper_factor(n)),
        max(max(g.interactivity for g in groups.values()), pooled.interactivity * upper_factor(n)),
        f"largest leave-one-group-out error of {n} (GPU, engine) pairs",
    )


def _spread(
    errs: Sequence[tuple[float, float | None]], source: str, prior: Spread, *, upper: bool = True
) -> Spread:
    """The RMS of `errs`, as its upper bound (`upper`) or as it is."""
    tput = _rms([e[0] for e in errs])
    inter = _rms([e[1] for e in errs])
    f_t = upper_factor(len(errs)) if upper else 1.0
    f_i = upper_factor(sum(e[1] is not None for e in errs)) if upper else 1.0
    return Spread(
        tput * f_t if tput is not None else prior.tok_s_gpu,
        inter * f_i if inter is not None else prior.interactivity,
        source,
    )


def from_holdout(
    report: HoldoutReport, prior: Spread = PRIOR, floor: float = FLOOR
) -> HeldOutErrors:
    """The spreads of a `sim.holdout` report grouped by (GPU, engine): each pair's root-mean-
    square log error, and the pool of all (e.g. the published points' held-out error)."""
    if report.by != "gpu-engine":
        raise ValueError("the planner's spreads are per (GPU, engine): hold out by gpu-engine")
    pairs: dict[Pair, list[tuple[float, float | None]]] = {}
    for e in report.errors:
        inter = math.log1p(e.interactivity) if e.interactivity is not None else None
        pairs.setdefault((e.gpu, e.engine), []).append((math.log1p(e.tok_s_gpu), inter))
    out = HeldOutErrors(pooled=prior, floor=floor)
    every = [err for errs in pairs.values() for err in errs]
    if every:
        out.pooled = _spread(every, f"sim holdout pooled over {len(pairs)} pairs", prior)
    for pair, errs in pairs.items():
        label = f"sim holdout of {pair[0]}/{pair[1]}"
        out.group_out[pair] = _spread(errs, label, prior, upper=False)
    return out
