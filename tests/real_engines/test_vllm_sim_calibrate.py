"""The calibrated simulator against the real vLLM (CPU build): `sim calibrate`'s fit on
part of the tiny model's batch-limit grid predicts the rest (issue 28 item 3).

The grid (conftest `tiny_grid_measurement`) is 4 servers (max-num-seqs 4/16 x chunked-
prefill budget 64/512) x concurrency 1/2/4/8/16, isl 256, osl 32, each point as if its
server had its core alone. The fit sees concurrencies 1, 4 and 16 of every setting and
predicts 2 and 8 on the `cpu` hardware entry and the tiny model's catalog entry.
benchmarks/sim_real_vllm.py prints the same split with repeats, and leave-one-setting-out.
"""

from __future__ import annotations

import statistics

import pytest

from harness.engine_grid import GridMeasurement, held_out_errors

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HELD = (2, 8)
# Issue 28's target is 15%, judged by benchmarks/sim_real_vllm.py (best of 3 per cell: medians
# 2.1-5.3% there). This test measures each cell once, so a loaded runner's noise lands in the
# error: medians 5.8-12% in CI-style runs, and 15.1% once with other tests beside it. It keeps
# a margin for that and still fails a fit that stops carrying across concurrency.
LIMIT = 0.20


@pytest.mark.timeout(600)
def test_fit_on_some_concurrencies_predicts_the_others(
    tiny_grid_measurement: GridMeasurement,
) -> None:
    grid = tiny_grid_measurement
    assert len(grid.points) == 20
    assert all(p.cpu_share is not None and 0 < p.cpu_share <= 1.05 for p in grid.points)
    errors = held_out_errors(grid.points, lambda cell: cell.concurrency in HELD)
    assert sorted({grid.by_name()[e.name].cell.concurrency for e in errors}) == list(HELD)
    by = grid.by_name()
    lines = [
        f"{e.name:<24} tok/s {e.tok_s_gpu:+.1%}  interactivity {e.interactivity or 0:+.1%}"
        for e in errors
    ]
    lines += [
        f"{p.name:<24} alone {p.point.measured.tok_s_gpu:7.0f} tok/s "
        f"{p.point.measured.interactivity or 0:6.1f} tok/s/user; raw {p.total_tok_s:7.0f} "
        f"tok/s at CPU share {p.cpu_share or 0:.2f}"
        for p in by.values()
    ]
    tput = [abs(e.tok_s_gpu) for e in errors]
    inter = [abs(e.interactivity) for e in errors if e.interactivity is not None]
    assert len(inter) == len(errors), "every point streams more than one token"
    report = "\n".join(lines)
    print(f"\nheld-out median |error|: tok/s {statistics.median(tput):.1%}, interactivity "
          f"{statistics.median(inter):.1%}\n{report}")  # fmt: skip
    # the median held-out point within the target: one run per cell on a shared runner
    # leaves single points at the mercy of a noisy minute (see docs/simulator.md)
    assert statistics.median(tput) <= LIMIT, report
    assert statistics.median(inter) <= LIMIT, report
