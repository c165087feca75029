"""The planner on the examples tree's points, with a ground truth it does not know."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import pytest

from inferbench.adaptive.candidates import Candidate, build_candidates
from inferbench.adaptive.frontier import Point, frontier_gap
from inferbench.adaptive.model import CoarseModel, coarse_table
from inferbench.adaptive.planner import (
    AdaptivePlanner,
    AdaptiveSettings,
    Measurement,
    Status,
    project,
    run_adaptive,
)
from inferbench.adaptive.uncertainty import PRIOR, HeldOutErrors, held_out_errors, params_for
from inferbench.launch.sweep import load_deployments
from inferbench.matrix.filters import SweepFilters
from inferbench.sim.calibrate import Measured
from inferbench.sim.calibration import load_calibration
from inferbench.sim.deployment import SimDeployment

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHIFT = {("h200", "sglang"): 1.3}  # the truth: this pair 30% faster than the calibration says


@cache
def _setup() -> tuple[list[Candidate], dict[str, SimDeployment], CoarseModel]:
    models = ("llama3.1-8b", "gptoss", "llama3.1-70b")
    _, deps = load_deployments(EXAMPLES, SweepFilters(model_prefixes=models))
    candidates, excluded, sims = build_candidates(deps)
    assert candidates and all("agentic" in e.reason for e in excluded)
    model = CoarseModel({c.key: coarse_table(sims[c.key], waves=2) for c in candidates}, sims)
    return candidates, sims, model


def _truth() -> dict[str, Measurement]:
    candidates, sims, model = _setup()
    base = load_calibration("default")
    out = {}
    for c in candidates:
        pred = model.predict(c, params_for(base, sims[c.key]))
        scale = SHIFT.get(c.pair, 1.0)
        out[c.key] = Measurement(pred.tok_s_gpu * scale, pred.interactivity * scale)
    return out


def _gap(candidates: Sequence[Candidate], truth: dict[str, Measurement], got: set[str]) -> float:
    worst = 0.0
    for key in {c.frontier for c in candidates}:
        members = [c for c in candidates if c.frontier == key]
        pts = {c.key: Point(truth[c.key].interactivity, truth[c.key].tok_s_gpu) for c in members}
        worst = max(worst, frontier_gap(list(pts.values()), [pts[k] for k in pts if k in got]))
    return worst


@pytest.mark.slow  # a simulation study: tens of seconds of CPU
def test_adaptive_sweep_skips_points_and_recovers_the_frontier() -> None:
    candidates, sims, model = _setup()
    truth = _truth()
    settings = AdaptiveSettings(confidence=0.95, tolerance=0.03)
    planner = AdaptivePlanner(candidates, sims, model, load_calibration("default"), settings)

    final = run_adaptive(planner, lambda chosen: {c.key: truth[c.key] for c in chosen})

    assert final.done
    measured = {p.candidate.key for p in final.points if p.status is Status.MEASURED}
    skipped = [p for p in final.points if p.skipped]
    assert skipped and len(measured) < len(candidates)
    assert _gap(candidates, truth, measured) <= settings.tolerance
    assert final.gpu_hours_saved > 0
    assert math.isclose(
        final.gpu_hours_full, final.gpu_hours_measured + final.gpu_hours_saved, rel_tol=1e-9
    )
    for p in skipped:  # every skip says why, with its probability under the bound
        assert p.status in (Status.DOMINATED, Status.NEAR)
        assert p.p_above < 0.05 and "< 0.05" in p.reason(settings)
        low, high = p.interval(settings.z, "tok_s_gpu")
        assert low < p.predicted.tok_s_gpu < high


def test_the_spread_is_the_held_out_error_of_each_pair() -> None:
    """A pair the calibration gets 30% wrong has a leave-one-group-out spread near log 1.3;
    once it has three measured points its own refit predicts it, and the spread shrinks."""
    candidates, sims, model = _setup()
    truth = _truth()
    by_pair: dict[tuple[str, str], list[Candidate]] = {}
    for c in candidates:
        by_pair.setdefault(c.pair, []).append(c)
    assert len(by_pair) >= 3 and len(by_pair[("h200", "sglang")]) >= 3

    def errors(chosen: list[Candidate]) -> HeldOutErrors:
        pts = [
            c.as_point(Measured(tok_s_gpu=t.tok_s_gpu, interactivity=t.interactivity))
            for c in chosen
            if (t := truth[c.key])
        ]
        return held_out_errors(
            pts, {c.key: model.surface(c) for c in chosen}, {c.key: sims[c.key] for c in chosen}
        )

    two = [members[0] for members in by_pair.values()]
    few = errors(two)
    shifted = few.spread("h200", "sglang")
    assert "leave-one-group-out of h200/sglang" in shifted.source
    assert few.group_out[("h200", "sglang")].tok_s_gpu > 0.5 * math.log(1.3)
    assert few.group_out[("h200", "vllm")].tok_s_gpu < few.group_out[("h200", "sglang")].tok_s_gpu
    # three errors are too few to trust: the pool's upper bound is well above their RMS
    assert shifted.tok_s_gpu >= few.pooled.tok_s_gpu > few.group_out[("h200", "sglang")].tok_s_gpu
    assert few.spread("mi300x", "vllm").source.startswith("largest leave-one-group-out error")
    assert few.spread("mi300x", "vllm").tok_s_gpu >= few.group_out[("h200", "sglang")].tok_s_gpu
    many = errors(two + by_pair[("h200", "sglang")][1:])
    within = many.spread("h200", "sglang")
    assert within.source.startswith("leave-one-out within h200/sglang")
    assert within.tok_s_gpu < shifted.tok_s_gpu
    # nothing measured: the prior stands
    assert errors([]).spread("h200", "sglang").tok_s_gpu == PRIOR.tok_s_gpu


def test_budget_stops_the_sweep_and_says_so() -> None:
    candidates, sims, model = _setup()
    truth = _truth()
    settings = AdaptiveSettings(max_points=3, per_round=2)
    planner = AdaptivePlanner(candidates, sims, model, load_calibration("default"), settings)
    final = run_adaptive(planner, lambda chosen: {c.key: truth[c.key] for c in chosen})
    assert final.count(Status.MEASURED) == 3 and final.done
    assert final.count(Status.BUDGET) > 0


def test_failed_points_are_not_chosen_again() -> None:
    candidates, sims, model = _setup()
    planner = AdaptivePlanner(candidates, sims, model, load_calibration("default"))
    first = planner.assess({})
    bad = frozenset(c.key for c in first.chosen)
    again = planner.assess({}, bad)
    assert not bad & {c.key for c in again.chosen}
    assert all(p.status is Status.FAILED for p in again.points if p.candidate.key in bad)


def test_projection_measures_what_the_prior_cannot_settle() -> None:
    candidates, sims, model = _setup()
    planner = AdaptivePlanner(candidates, sims, model, load_calibration("default"))
    final, rounds = project(planner)
    assert final.done and rounds
    assert final.count(Status.MEASURED) == sum(len(r) for r in rounds)


@pytest.mark.parametrize(
    "bad", [{"confidence": 1.0}, {"tolerance": -0.1}, {"per_round": 0}, {"noise": 0.0}]
)
def test_settings_are_checked(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        AdaptiveSettings(**bad)  # type: ignore[arg-type]


@pytest.mark.slow
def test_surface_held_out_errors_agree_with_sim_holdout() -> None:
    """The planner's fast leave-one-group-out (held-out points read off their surfaces) and
    sim/holdout.py's (held-out points simulated) give the same spreads, within what the
    short-run surfaces miss."""
    from inferbench.adaptive.uncertainty import from_holdout
    from inferbench.sim.holdout import Prepared, holdout

    candidates, sims, model = _setup()
    truth = _truth()
    chosen: list[Candidate] = []
    for pair in (("h200", "vllm"), ("h200", "sglang"), ("b200", "trtllm")):
        chosen.extend([c for c in candidates if c.pair == pair][:2])
    pts = [
        c.as_point(
            Measured(tok_s_gpu=truth[c.key].tok_s_gpu, interactivity=truth[c.key].interactivity)
        )
        for c in chosen
    ]
    surfaces = {c.key: model.surface(c) for c in chosen}
    deps = {c.key: sims[c.key] for c in chosen}
    fast = held_out_errors(pts, surfaces, deps)
    slow = from_holdout(holdout(pts, "gpu-engine", prepared=Prepared(deps, surfaces)))
    for pair in {c.pair for c in chosen}:
        a, b = fast.group_out[pair], slow.group_out[pair]
        for metric in ("tok_s_gpu", "interactivity"):
            x, y = getattr(a, metric), getattr(b, metric)
            assert abs(x - y) <= 0.05 + 0.25 * max(x, y), (pair, metric, x, y)


@pytest.mark.slow  # a simulation study: tens of seconds of CPU
def test_replay_over_a_fully_measured_grid() -> None:
    """Replayed over points measured in full, the adaptive sweep reads only what it chooses
    and reports its frontier's gap to the full set's."""
    from harness.adaptive_replay import replay

    candidates, sims, model = _setup()
    truth = _truth()
    grid = [
        c.as_point(Measured(tok_s_gpu=truth[c.key].tok_s_gpu,
                            interactivity=truth[c.key].interactivity))
        for c in candidates
    ]  # fmt: skip
    # the replay keys its own candidates by point name: the same as the examples' keys here
    done = replay(grid, AdaptiveSettings(tolerance=0.03), model=model)
    assert done.points == len(candidates) and 0 < done.measured < done.points
    assert done.frontier_error <= 0.03


@pytest.mark.slow  # a simulation study: tens of seconds of CPU
def test_local_correction_kriges_the_skipped_points_of_a_measured_pair() -> None:
    """With `local`, an unmeasured point of a pair with measured neighbours is predicted from
    their residuals (its spread says so), and the sweep still recovers the frontier."""
    candidates, sims, model = _setup()
    truth = _truth()
    settings = AdaptiveSettings(confidence=0.95, tolerance=0.03, local=True, both_axes=True)
    planner = AdaptivePlanner(candidates, sims, model, load_calibration("default"), settings)

    final = run_adaptive(planner, lambda chosen: {c.key: truth[c.key] for c in chosen})

    assert final.done
    kriged = [p for p in final.points if p.skipped and "kriged" in p.spread.source]
    assert kriged
    for p in kriged:  # within its interval: the correction's spread is honest here
        low, high = p.interval(settings.z, "tok_s_gpu")
        assert low <= truth[p.candidate.key].tok_s_gpu <= high
    measured = {p.candidate.key for p in final.points if p.status is Status.MEASURED}
    assert _gap(candidates, truth, measured) <= settings.tolerance
