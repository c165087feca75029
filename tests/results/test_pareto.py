from __future__ import annotations

import numpy as np
import pytest

from inferbench.results.pareto import pareto_frontier, pchip


def test_frontier_against_interactivity_drops_dominated_points() -> None:
    xs = [100.0, 80.0, 60.0, 70.0, 40.0]  # interactivity: higher is better
    ys = [10.0, 30.0, 50.0, 20.0, 45.0]  # throughput per GPU
    # (70, 20) is dominated by (80, 30); (40, 45) by (60, 50)
    assert pareto_frontier(xs, ys) == [2, 1, 0]


def test_frontier_against_latency_prefers_low_x() -> None:
    xs = [1000.0, 2000.0, 3000.0, 2500.0]  # E2EL: lower is better
    ys = [10.0, 30.0, 50.0, 20.0]
    assert pareto_frontier(xs, ys, higher_x=False) == [0, 1, 2]


def test_pchip_hits_knots_and_reproduces_lines() -> None:
    xs, ys = [1.0, 2.0, 4.0, 8.0], [10.0, 8.0, 5.0, 1.0]
    for x, y in zip(xs, ys, strict=True):
        assert pchip(xs, ys, x) == pytest.approx(y)
    assert pchip([0.0, 1.0, 3.0], [0.0, 2.0, 6.0], 2.0) == pytest.approx(4.0)


def test_pchip_never_overshoots_monotone_data() -> None:
    xs = [10.0, 20.0, 21.0, 60.0, 100.0]
    ys = [900.0, 850.0, 400.0, 390.0, 100.0]  # decreasing with a cliff
    grid = np.linspace(10.0, 100.0, 500)
    values = [pchip(xs, ys, float(x)) for x in grid]
    assert all(a >= b - 1e-9 for a, b in zip(values, values[1:], strict=False))
    assert min(values) >= 100.0 - 1e-9 and max(values) <= 900.0 + 1e-9
