"""The local residual correction: kriged residuals of measured neighbours, with a spread that
its own held-out error can only widen."""

from __future__ import annotations

import numpy as np

from inferbench.adaptive.residual import MIN_POINTS, correct


def _line(n: int) -> list[list[float]]:
    return [[0.1 * i, -0.1 * i] for i in range(n)]


def test_near_a_measured_point_its_residual_carries_far_away_it_fades() -> None:
    at = _line(8)
    residuals = [0.3 + 0.2 * x for x, _ in at]  # the simulator 30-45% low, smoothly
    fix = correct(at, residuals, [[0.31, -0.31], [5.0, 5.0]], spread=0.3)
    assert fix is not None
    near_shift, far_shift = fix.shift
    assert abs(near_shift - (0.3 + 0.2 * 0.31)) < 0.05
    assert fix.sd[0] < 0.1  # a neighbour measured: about the noise, not the simulator's error
    assert abs(far_shift) < 0.01  # nothing measured near: the prediction stands
    assert fix.sd[1] >= 0.29  # ... with the held-out spread


def test_a_correction_that_misses_what_it_held_out_is_widened() -> None:
    rng = np.random.default_rng(3)
    at = _line(10)
    residuals = list(rng.normal(0.0, 0.25, size=10))  # neighbours share nothing
    claimed = 0.05  # a held-out spread far too small for these residuals
    fix = correct(at, residuals, [[0.45, -0.45]], spread=claimed)
    assert fix is not None
    assert fix.widen > 2
    assert fix.sd[0] > 2 * claimed


def test_too_few_measured_points_correct_nothing() -> None:
    at = _line(MIN_POINTS - 1)
    assert correct(at, [0.1] * len(at), [[0.0, 0.0]], spread=0.2) is None
    assert correct(_line(MIN_POINTS), [0.1] * MIN_POINTS, [], spread=0.2) is None
