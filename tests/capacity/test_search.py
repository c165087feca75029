"""The search finds what measuring the whole grid finds, with far fewer measurements."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from inferbench.bench.result import PointResult
from inferbench.capacity.measure import sim_measure
from inferbench.capacity.search import Measure, search_capacity
from inferbench.capacity.targets import parse_targets
from inferbench.sim.points import open_job

from .conftest import shaped

GRID = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def _curve(template: PointResult, knee: float, calls: Counter[int] | None = None) -> Measure:
    """TPOT p90 growing with load: 10 ms at load 1, 50 ms at `knee`."""

    def measure(load: int) -> PointResult:
        if calls is not None:
            calls[load] += 1
        return shaped(template, p90_tpot_ms=10.0 + 40.0 * load / knee)

    return measure


@pytest.mark.parametrize("knee", [0.5, 3, 40, 100, 300, 10_000])
def test_the_answer_is_the_exhaustive_grids_in_log_time(template: PointResult, knee: float) -> None:
    targets = parse_targets("tpot_p90<=50ms")
    calls: Counter[int] = Counter()
    found = search_capacity(targets, GRID, _curve(template, knee, calls), noise=0.0)
    passing = [c for c in GRID if 10.0 + 40.0 * c / knee <= 50.0]
    assert found.capacity == (passing[-1] if passing else None)
    above = [c for c in GRID if c not in passing]
    assert found.first_failing == (above[0] if above else None)
    assert sum(calls.values()) <= len(GRID) // 2, calls  # at most half the grid
    assert found.binding == "tpot_p90<=50 ms"


def test_a_good_prediction_settles_it_in_two_measurements(template: PointResult) -> None:
    calls: Counter[int] = Counter()
    found = search_capacity(
        parse_targets("tpot_p90<=50ms"), GRID, _curve(template, 100, calls), start=64, noise=0.0
    )
    assert found.capacity == 64 and sorted(calls) == [64, 128]


def test_a_load_within_noise_of_a_bound_is_measured_again(template: PointResult) -> None:
    # load 64 reads 49, 52, 49 ms: within 5% of 50 ms, so three measurements, median 49
    draws = {64: iter([49.0, 52.0, 49.0])}

    def measure(load: int) -> PointResult:
        value = next(draws[load]) if load in draws else (20.0 if load < 64 else 90.0)
        return shaped(template, p90_tpot_ms=value)

    found = search_capacity(parse_targets("tpot_p90<=50ms"), GRID, measure, repeats=3)
    at = found.verdict_at(64)
    assert at is not None and at.measurements == 3 and at.checks[0].value == 49.0
    assert found.capacity == 64 and "median of 3 measurement(s)" in found.confidence()


def test_a_failed_point_meets_no_target(template: PointResult) -> None:
    broken = template.model_copy(
        update={"inferbench": template.inferbench.model_copy(update={"gate_failure": "50% failed"})}
    )
    found = search_capacity(
        parse_targets("tpot_p90<=1000ms"), GRID, lambda load: broken if load >= 8 else template
    )
    assert found.capacity == 4 and found.first_failing == 8
    failing = found.verdict_at(8)
    assert failing is not None and not failing.valid and failing.reason == "50% failed"


def test_the_simulated_job_agrees_with_its_exhaustive_grid(job_file: str) -> None:
    """Predicted capacity of a real job: the simulator on every load against the search."""
    measure = sim_measure(open_job(Path(job_file)), prompts_per_load=4)
    targets = parse_targets("ttft_p90<=1s,tpot_p90<=20ms")
    grid = (4, 8, 16, 32, 64, 128, 256)
    every = {c: measure(c) for c in grid}
    met = [c for c in grid if all(t.slack(t.value(every[c])) >= 0 for t in targets)]
    found = search_capacity(targets, grid, lambda c: every[c], noise=0.0)
    assert met and found.capacity == met[-1]
    assert found.measured_loads <= 4
