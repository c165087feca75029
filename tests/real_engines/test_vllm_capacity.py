"""The capacity search against the real vLLM (CPU build, the tiny model): it must return the
concurrency the exhaustive grid of the same server gives (or the next step of the grid),
measuring at most half of the grid's loads.

The server is the session's `vllm serve` (`--max-num-seqs 16`): beyond 16 streams requests
queue, so TTFT p90 jumps between loads 16 and 32. The target is set in that jump from the
exhaustive grid's own figures (the geometric mean of the two loads' TTFT p90), so a
measurement noise of tens of percent cannot move the answer by more than a step.
"""

from __future__ import annotations

import math

import pytest

from inferbench.bench.settings import Endpoint
from inferbench.capacity.measure import bench_measure
from inferbench.capacity.search import search_capacity
from inferbench.capacity.targets import Target

from .vllm_cpu import VllmServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GRID = (1, 2, 4, 8, 16, 32, 64)
ISL, OSL, PROMPTS_PER_LOAD = 64, 32, 4


@pytest.mark.timeout(900)
def test_capacity_matches_the_exhaustive_grid_with_half_the_loads(
    vllm_server: VllmServer,
) -> None:
    measure = bench_measure(
        Endpoint(base_url=vllm_server.url, model=vllm_server.model),
        ISL,
        OSL,
        prompts_per_load=PROMPTS_PER_LOAD,
    )
    grid = {load: measure(load) for load in GRID}
    ttft = {load: r.sa.p90_ttft_ms for load, r in grid.items()}
    target = Target(metric="ttft", stat="p90", bound=math.sqrt(ttft[16] * ttft[32]))
    print("TTFT p90 by load:", {k: round(v, 1) for k, v in ttft.items()}, target.label)
    assert ttft[32] > 1.5 * ttft[16], "no queueing jump above max-num-seqs: the premise fails"
    exhaustive = max(c for c in GRID if ttft[c] <= target.bound)

    found = search_capacity([target], GRID, measure, repeats=3)
    print(found.confidence())
    assert found.capacity is not None
    assert abs(GRID.index(found.capacity) - GRID.index(exhaustive)) <= 1, (found, exhaustive)
    assert found.measured_loads <= len(GRID) // 2
