"""The adaptive planner: from measurements so far to the points to measure next.

Each assessment refits the calibration on every measurement (`sim calibrate`'s fit, on top
of the base calibration for pairs not measured), predicts every point with it, takes each
prediction's spread from the held-out error (uncertainty.py), and asks per frontier (model
family, isl, osl) how likely each unmeasured point is to lie above the measured frontier
scaled by 1 + tolerance. Points below `1 - confidence` are settled: dominated (likely below
the frontier itself) or near it (within the tolerance). The rest are open; per frontier the
most likely to be above are measured next. The sweep is done when nothing is open.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from statistics import NormalDist

import numpy as np

from inferbench.adaptive.candidates import Candidate, FrontierKey
from inferbench.adaptive.frontier import Point, best_at, frontier, probability_above
from inferbench.adaptive.model import PointModel
from inferbench.adaptive.residual import MIN_POINTS, correct
from inferbench.adaptive.uncertainty import (
    FLOOR,
    PRIOR,
    HeldOutCache,
    HeldOutErrors,
    Spread,
    held_out_errors,
    params_for,
)
from inferbench.sim.calibrate import Measured, Prediction, fit
from inferbench.sim.calibration import Calibration
from inferbench.sim.deployment import SimDeployment


@dataclass(frozen=True)
class AdaptiveSettings:
    confidence: float = 0.95  # a point is settled when P(above the frontier band) < 1 - this
    tolerance: float = 0.03  # the band: measured frontier x (1 + tolerance)
    per_round: int = 1  # points measured per frontier per round
    max_points: int | None = None  # stop after this many measurements (then: budget)
    # correct each unmeasured prediction by the kriged residuals of measured points the
    # simulator predicts alike (residual.py), its spread from that correction's held-out error
    local: bool = False
    # the tolerance band scales the frontier's interactivity too, not only its throughput
    # (near-duplicates of a frontier point, measured with noise, are then near it)
    both_axes: bool = False
    noise: float = FLOOR  # run-to-run noise of one measurement (log sd), the least `local` assumes

    def __post_init__(self) -> None:
        if not 0.5 <= self.confidence < 1:
            raise ValueError("confidence must be in [0.5, 1)")
        if self.tolerance < 0 or self.per_round < 1:
            raise ValueError("tolerance must be >= 0 and per_round >= 1")
        if self.noise <= 0:
            raise ValueError("noise must be > 0")

    @property
    def z(self) -> float:
        """The two-sided normal quantile of `confidence` (intervals drawn in the report)."""
        return NormalDist().inv_cdf(0.5 + self.confidence / 2)


@dataclass(frozen=True)
class Measurement:
    tok_s_gpu: float
    interactivity: float
    ttft_ms: float | None = None


class Status(StrEnum):
    MEASURED = "measured"
    NEXT = "next"  # chosen for the coming round
    OPEN = "open"  # undecided, not chosen this round
    DOMINATED = "dominated"
    NEAR = "near"  # within the tolerance of the measured frontier
    BUDGET = "budget"  # still open when the budget ran out
    FAILED = "failed"  # its measurement failed; predicted only


_SKIPPED = (Status.DOMINATED, Status.NEAR, Status.BUDGET, Status.FAILED)


@dataclass(frozen=True)
class PointState:
    candidate: Candidate
    predicted: Prediction
    spread: Spread
    status: Status
    p_above: float  # P(true point above the measured frontier x (1 + tolerance))
    p_beyond: float  # P(true point above the measured frontier itself)
    measured: Measurement | None = None

    @property
    def skipped(self) -> bool:
        return self.status in _SKIPPED

    def tok_s_gpu(self) -> float:
        return self.measured.tok_s_gpu if self.measured else self.predicted.tok_s_gpu

    def gpu_hours(self) -> float:
        """GPU-hours its measurement takes: its tokens at its throughput per GPU."""
        return self.candidate.tokens / max(self.tok_s_gpu(), 1e-9) / 3600.0

    def interval(self, z: float, metric: str) -> tuple[float, float]:
        value = self.predicted.value(metric)
        width = z * getattr(self.spread, metric)
        return value * math.exp(-width), value * math.exp(width)

    def reason(self, settings: AdaptiveSettings) -> str:
        tol = f"{settings.tolerance:.0%}"
        alpha = 1 - settings.confidence
        return {
            Status.MEASURED: "measured",
            Status.NEXT: f"to measure: P(above the frontier + {tol}) = {self.p_above:.2f}",
            Status.OPEN: f"open: P(above the frontier + {tol}) = {self.p_above:.2f}",
            Status.DOMINATED: f"dominated: P(above the measured frontier) = "
            f"{self.p_beyond:.3f} < {alpha:.2g}",
            Status.NEAR: f"within {tol} of the measured frontier: P(above it + {tol}) = "
            f"{self.p_above:.3f} < {alpha:.2g}",
            Status.BUDGET: f"budget spent while open: P(above the frontier + {tol}) = "
            f"{self.p_above:.2f}",
            Status.FAILED: "its measurement failed; predicted only",
        }[self.status]


@dataclass(frozen=True)
class Assessment:
    points: tuple[PointState, ...]
    calibration: Calibration
    errors: HeldOutErrors
    settings: AdaptiveSettings

    @property
    def chosen(self) -> list[Candidate]:
        return [p.candidate for p in self.points if p.status is Status.NEXT]

    @property
    def done(self) -> bool:
        return not any(p.status in (Status.NEXT, Status.OPEN) for p in self.points)

    def count(self, *statuses: Status | str) -> int:
        return sum(p.status in statuses for p in self.points)

    @property
    def gpu_hours_full(self) -> float:
        return sum(p.gpu_hours() for p in self.points)

    @property
    def gpu_hours_measured(self) -> float:
        return sum(p.gpu_hours() for p in self.points if p.status is Status.MEASURED)

    @property
    def gpu_hours_saved(self) -> float:
        return sum(p.gpu_hours() for p in self.points if p.skipped)


def merged(fitted: Calibration, base: Calibration) -> Calibration:
    """`fitted`'s entries, then `base`'s for the (GPU, engine) keys `fitted` lacks."""
    have = {(e.gpu.lower(), e.engine.lower()) for e in fitted.entries}
    rest = tuple(e for e in base.entries if (e.gpu.lower(), e.engine.lower()) not in have)
    return fitted.model_copy(update={"entries": fitted.entries + rest})


@dataclass
class AdaptivePlanner:
    candidates: Sequence[Candidate]
    deps: dict[str, SimDeployment]
    model: PointModel
    base: Calibration
    settings: AdaptiveSettings = field(default_factory=AdaptiveSettings)
    prior: Spread = PRIOR
    refit: bool = True  # False: keep the base calibration and the prior spread (projections)
    held_out: HeldOutCache = field(default_factory=HeldOutCache)

    def assess(
        self, measured: Mapping[str, Measurement], failed: frozenset[str] = frozenset()
    ) -> Assessment:
        by_key = {c.key: c for c in self.candidates}
        points = [
            by_key[k].as_point(Measured(tok_s_gpu=m.tok_s_gpu, interactivity=m.interactivity,
                                        ttft_ms=m.ttft_ms))
            for k, m in measured.items() if k in by_key
        ]  # fmt: skip
        surfaces = (
            {pt.name: self.model.surface(by_key[pt.name]) for pt in points} if self.refit else {}
        )
        if self.refit:
            cal = merged(fit(points, surfaces, self.deps), self.base) if points else self.base
            errors = held_out_errors(
                points, surfaces, self.deps, prior=self.prior, cache=self.held_out
            )
        else:
            cal, errors = self.base, HeldOutErrors(pooled=self.prior)
        states: list[PointState] = []
        groups: dict[FrontierKey, list[int]] = {}
        for c in self.candidates:
            pred = self.model.predict(c, params_for(cal, self.deps[c.key]))
            groups.setdefault(c.frontier, []).append(len(states))
            states.append(
                PointState(c, pred, errors.spread(c.gpu, c.engine), Status.OPEN, 1.0, 1.0,
                           measured.get(c.key))
            )  # fmt: skip
        if self.settings.local:
            for members in groups.values():
                _correct_locally(states, members, self.settings.noise)
        budget_left = (
            None if self.settings.max_points is None else self.settings.max_points - len(points)
        )
        picks: list[tuple[float, float, int]] = []
        for members in groups.values():
            picks.extend(self._settle(states, members, failed))
        if budget_left is not None:
            picks.sort(reverse=True)
            picks = picks[: max(budget_left, 0)]
        chosen = {i for _, _, i in picks}
        out = []
        for i, st in enumerate(states):
            status = st.status
            if status is Status.OPEN:
                status = Status.NEXT if i in chosen else Status.OPEN
                if budget_left is not None and budget_left <= 0:
                    status = Status.BUDGET
            out.append(_replace(st, status=status))
        return Assessment(tuple(out), cal, errors, self.settings)

    def _settle(
        self, states: list[PointState], members: list[int], failed: frozenset[str]
    ) -> list[tuple[float, float, int]]:
        """Mark one frontier's points; return its picks as (score, tie-break, index)."""
        alpha = 1 - self.settings.confidence
        stairs = frontier(
            [Point(st.measured.interactivity, st.measured.tok_s_gpu)
             for i in members if (st := states[i]).measured is not None]
        )  # fmt: skip
        open_idx = [i for i in members if states[i].measured is None]
        if not open_idx:
            for i in members:
                states[i] = _replace(states[i], status=Status.MEASURED, p_above=0, p_beyond=0)
            return []
        log_t = np.log([states[i].predicted.tok_s_gpu for i in open_idx])
        log_i = np.log([states[i].predicted.interactivity for i in open_idx])
        s_t = np.asarray([states[i].spread.tok_s_gpu for i in open_idx])
        s_i = np.asarray([states[i].spread.interactivity for i in open_idx])
        tol = self.settings.tolerance
        if self.settings.both_axes:
            # the band is the frontier scaled on both axes: a point within the tolerance of a
            # measured one in interactivity as well as throughput is near it
            band = [Point(p.interactivity * (1 + tol), p.tok_s_gpu) for p in stairs]
            above = probability_above(band, log_t, log_i, s_t, s_i, tol)
        else:
            above = probability_above(stairs, log_t, log_i, s_t, s_i, tol)
        beyond = probability_above(stairs, log_t, log_i, s_t, s_i, 0.0)
        picks: list[tuple[float, float, int]] = []
        for i in members:
            if states[i].measured is not None:
                states[i] = _replace(states[i], status=Status.MEASURED, p_above=0, p_beyond=0)
        for n, i in enumerate(open_idx):
            pa, pb = float(above[n]), float(beyond[n])
            if states[i].candidate.key in failed:
                status = Status.FAILED
            elif pa < alpha:
                status = Status.DOMINATED if pb < alpha else Status.NEAR
            else:
                status = Status.OPEN
            states[i] = _replace(states[i], status=status, p_above=pa, p_beyond=pb)
            if status is Status.OPEN:
                # ties (no frontier measured yet): the predicted knee, log T + log I, first
                margin = float(log_t[n] + log_i[n])
                if stairs:
                    best = best_at(stairs, math.exp(log_i[n]))
                    margin = float(log_t[n]) - math.log(best) if best > 0 else 1e9
                picks.append((round(pa, 3), margin, i))
        picks.sort(reverse=True)
        return picks[: self.settings.per_round]


def _correct_locally(states: list[PointState], members: list[int], noise: float) -> None:
    """Shift one frontier's unmeasured predictions by the kriged residuals of its measured
    points, per (GPU, engine) pair, in the predictions' log coordinates (residual.py)."""
    by_pair: dict[tuple[str, str], list[int]] = {}
    for i in members:
        by_pair.setdefault(states[i].candidate.pair, []).append(i)
    for idxs in by_pair.values():
        seen = [i for i in idxs if states[i].measured is not None]
        todo = [i for i in idxs if states[i].measured is None]
        if len(seen) < MIN_POINTS or not todo:
            continue

        def at(i: int) -> tuple[float, float]:
            pred = states[i].predicted
            return math.log(pred.tok_s_gpu), math.log(pred.interactivity)

        fixes = {}
        for metric in ("tok_s_gpu", "interactivity"):
            residuals = [
                math.log(getattr(states[i].measured, metric)) - math.log(
                    states[i].predicted.value(metric))
                for i in seen
            ]  # fmt: skip
            prior = max(getattr(states[i].spread, metric) for i in todo)
            fix = correct([at(i) for i in seen], residuals, [at(i) for i in todo], prior, noise)
            if fix is None:
                break
            fixes[metric] = fix
        if len(fixes) < 2:
            continue
        t, n = fixes["tok_s_gpu"], fixes["interactivity"]
        source = (
            f"kriged residuals of {len(seen)} measured points (length {t.length:g}/{n.length:g},"
            f" noise {t.noise:g}/{n.noise:g}, held-out widening x{t.widen:.2f}/x{n.widen:.2f})"
        )
        for k, i in enumerate(todo):
            pred = states[i].predicted
            states[i] = _replace(
                states[i],
                predicted=Prediction(
                    pred.tok_s_gpu * math.exp(t.shift[k]),
                    pred.interactivity * math.exp(n.shift[k]),
                    pred.ttft_ms,
                ),
                spread=Spread(max(float(t.sd[k]), FLOOR), max(float(n.sd[k]), FLOOR), source),
            )


def _replace(st: PointState, **changes: object) -> PointState:
    from dataclasses import replace

    return replace(st, **changes)  # type: ignore[arg-type]


Measure = Callable[[Sequence[Candidate]], Mapping[str, Measurement | None]]


def run_adaptive(
    planner: AdaptivePlanner,
    measure: Measure,
    measured: Mapping[str, Measurement] | None = None,
    failed: frozenset[str] = frozenset(),
    on_round: Callable[[int, Assessment], None] | None = None,
    max_rounds: int = 10_000,
) -> Assessment:
    """Assess, measure what it chooses, and again, until nothing is open (or the budget is
    spent). `measure` returns a measurement per key, None for a point that failed."""
    have = dict(measured or {})
    bad = set(failed)
    for n in range(1, max_rounds + 1):
        assessment = planner.assess(have, frozenset(bad))
        if on_round is not None:
            on_round(n, assessment)
        if assessment.done or not assessment.chosen:
            return assessment
        for key, value in measure(assessment.chosen).items():
            if value is None:
                bad.add(key)
            else:
                have[key] = value
    return planner.assess(have, frozenset(bad))


def project(planner: AdaptivePlanner) -> tuple[Assessment, list[list[str]]]:
    """The sweep the planner would run if every measurement landed on its prediction, with
    the base calibration and the prior spread throughout (no refit on made-up figures):
    what `plan --adaptive` shows. Returns the last assessment and the rounds' keys."""
    rounds: list[list[str]] = []
    fixed = AdaptivePlanner(
        planner.candidates, planner.deps, planner.model, planner.base, planner.settings,
        planner.prior, refit=False,
    )  # fmt: skip

    def measure(chosen: Sequence[Candidate]) -> dict[str, Measurement | None]:
        rounds.append([c.key for c in chosen])
        out: dict[str, Measurement | None] = {}
        for c in chosen:
            pred = fixed.model.predict(c, params_for(fixed.base, fixed.deps[c.key]))
            out[c.key] = Measurement(pred.tok_s_gpu, pred.interactivity, pred.ttft_ms)
        return out

    return run_adaptive(fixed, measure), rounds
