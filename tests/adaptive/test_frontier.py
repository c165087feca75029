"""The frontier staircase, the chance a prediction lies above it, and the frontier gap."""

from __future__ import annotations

import math

import numpy as np

from inferbench.adaptive.frontier import (
    Point,
    best_at,
    frontier,
    frontier_epsilon,
    frontier_gap,
    probability_above,
)

STAIRS = frontier([Point(100, 1000), Point(50, 3000), Point(20, 5000), Point(40, 2000)])


def test_frontier_drops_dominated_points_and_runs_most_interactive_first() -> None:
    assert [Point(100, 1000), Point(50, 3000), Point(20, 5000)] == STAIRS
    assert best_at(STAIRS, 120) == 0.0  # more interactive than anything measured
    assert best_at(STAIRS, 60) == 1000
    assert best_at(STAIRS, 50) == 3000
    assert best_at(STAIRS, 1) == 5000


def _p(tput: float, inter: float, spread: float, tolerance: float = 0.0) -> float:
    one = np.ones(1)
    return float(
        probability_above(
            STAIRS, np.log([tput]), np.log([inter]), spread * one, spread * one, tolerance
        )[0]
    )


def test_probability_above_the_staircase() -> None:
    assert _p(1500, 45, 0.01) < 1e-6  # well under the 3000 step at 45 tok/s/user
    assert _p(4000, 45, 0.01) > 1 - 1e-6  # well above it
    assert _p(500, 200, 0.01) > 1 - 1e-6  # more interactive than any measured point
    # on the step itself: half above; a tolerance band of 3% settles most of it
    assert abs(_p(3000, 45, 0.05) - 0.5) < 0.05
    assert _p(3000, 45, 0.01, tolerance=0.03) < 0.01
    # wider spreads are less sure: the same point is more likely above
    assert _p(2500, 45, 0.3) > _p(2500, 45, 0.05)
    # with no measured frontier every point is open
    assert probability_above([], np.log([1.0]), np.log([1.0]), np.ones(1), np.ones(1))[0] == 1


def test_probability_matches_sampling() -> None:
    rng = np.random.default_rng(0)
    mt, mi, s = math.log(2800), math.log(48), 0.2
    t = np.exp(rng.normal(mt, s, 200_000))
    i = np.exp(rng.normal(mi, s, 200_000))
    bar = np.array([best_at(STAIRS, x) for x in i[:20_000]])
    sampled = float(np.mean(t[:20_000] > bar * 1.03))
    assert abs(_p(2800, 48, s, tolerance=0.03) - sampled) < 0.02


def test_frontier_gap() -> None:
    truth = [Point(100, 1000), Point(50, 3000), Point(20, 5000), Point(10, 4000)]
    assert frontier_gap(truth, truth) == 0.0
    assert frontier_gap(truth, truth[:3]) == 0.0  # the dominated point is not needed
    # a missed step: at 50 tok/s/user only the 1000 tok/s/GPU point is as interactive
    assert math.isclose(frontier_gap(truth, [Point(100, 1000), Point(20, 5000)]), 2 / 3)
    # the 50 tok/s/user step recovered 10% low: the gap is 10%
    got = [Point(100, 1000), Point(50, 2700), Point(20, 5000)]
    assert math.isclose(frontier_gap(truth, got), 0.1)
    # the most interactive true point missed and nothing as interactive measured: 100%
    assert frontier_gap(truth, [Point(50, 3000), Point(20, 5000)]) == 1.0


def test_frontier_epsilon_covers_both_axes() -> None:
    truth = [Point(500, 4000), Point(400, 12000), Point(200, 27000)]
    assert frontier_epsilon(truth, truth) == 0.0
    # a twin a little less interactive: the strict gap is 100%, the epsilon its 2%
    twin = [Point(490, 4000), Point(400, 12000), Point(200, 27000)]
    assert frontier_gap(truth, twin) == 1.0
    assert abs(frontier_epsilon(truth, twin) - 500 / 490 + 1) < 1e-12
    # the worst true point sets it: 27,000 tok/s recovered only as 20,000
    assert abs(frontier_epsilon(truth, [*truth[:2], Point(200, 20000)]) - 0.35) < 1e-12
    assert frontier_epsilon(truth, []) == float("inf")
