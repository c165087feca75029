"""The adaptive sweep replayed over real-vLLM grids measured in full (issue 30, real half).

Each grid file is the tiny model's batch-limit grid on vLLM's CPU build (20 points:
concurrency 1/2/4/8/16 x --max-num-seqs 4/16 x chunked-prefill budget 64/512, isl 256,
osl 32), as `benchmarks/sim_real_vllm.py --save-grid FILE` or the `tiny_grid_measurement`
fixture (its `grid.json`) writes it. The planner replays over it offline
(`harness/adaptive_replay.py`: a point's figures are revealed only when chosen) and reports
per grid:

- the points measured (target: at most a third, 6 of 20);
- the frontier error as the simulation study defines it (the largest throughput shortfall
  at equal interactivity; a true frontier point more interactive than anything measured is
  100%), and the epsilon indicator (the factor, on both axes at once, by which the recovered
  frontier misses the full grid's);
- how honest the spreads were: the skipped points' errors in units of their spread;
- the noise floor: each grid's full frontier against every other grid's full frontier (what
  measuring everything twice agrees to), and the run-to-run noise read off the grid's
  duplicate settings (max-num-seqs 4 and 16 are the same server below concurrency 5).

    .venv/bin/python benchmarks/adaptive_real_vllm.py GRID.json [GRID.json ...]
        [--tolerance 0.10] [--confidence 0.95] [--noise 0.05] [--strict-axes] [--no-local]
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
from dataclasses import replace
from pathlib import Path

from harness.adaptive_replay import REAL_ENGINE, replay
from harness.engine_grid import GridMeasurement, read_grid
from inferbench.adaptive.frontier import Point, frontier_epsilon, frontier_gap


def _points(grid: GridMeasurement) -> list[Point]:
    return [
        Point(p.point.measured.interactivity or 0.0, p.point.measured.tok_s_gpu)
        for p in grid.points
    ]


def duplicate_noise(grid: GridMeasurement) -> tuple[float, float] | None:
    """The log sd of one run (tok/s/GPU, interactivity) from the settings that are the same
    server: max-num-seqs 4 and 16 at a concurrency of at most 4, same chunk budget."""
    by = {(p.cell.limits.max_num_seqs, p.cell.limits.max_num_batched_tokens,
           p.cell.concurrency): p.point.measured for p in grid.points}  # fmt: skip
    dt, di = [], []
    for (seqs, chunk, conc), m in by.items():
        twin = by.get((16, chunk, conc))
        if seqs == 4 and conc <= 4 and twin is not None and m.interactivity and twin.interactivity:
            dt.append(math.log(m.tok_s_gpu / twin.tok_s_gpu))
            di.append(math.log(m.interactivity / twin.interactivity))
    if not dt:
        return None
    # the difference of two runs has twice a run's variance
    return tuple(math.sqrt(sum(x * x for x in d) / len(d) / 2) for d in (dt, di))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("grids", type=Path, nargs="+")
    parser.add_argument("--tolerance", type=float, default=REAL_ENGINE.tolerance)
    parser.add_argument("--confidence", type=float, default=REAL_ENGINE.confidence)
    parser.add_argument("--noise", type=float, default=REAL_ENGINE.noise)
    parser.add_argument("--strict-axes", action="store_true", help="tolerance on throughput only")
    parser.add_argument("--no-local", action="store_true", help="no residual correction")
    args = parser.parse_args()
    settings = replace(
        REAL_ENGINE,
        tolerance=args.tolerance,
        confidence=args.confidence,
        noise=args.noise,
        both_axes=not args.strict_axes,
        local=not args.no_local,
    )
    print(f"settings: {settings}")
    grids = {path.name: read_grid(path) for path in args.grids}
    fractions, gaps, epsilons, zs = [], [], [], []
    print(f"{'grid':<22} {'measured':>9} {'gap':>7} {'epsilon':>8}  run noise (tok/s, inter)")
    for name, grid in grids.items():
        done = replay(grid.measured_points(), settings)
        truth = {p.name: p.point.measured for p in grid.points}
        for st in done.assessment.points:
            if st.measured is None:
                m = truth[st.candidate.key]
                for metric, spread in (("tok_s_gpu", st.spread.tok_s_gpu),
                                       ("interactivity", st.spread.interactivity)):  # fmt: skip
                    got = getattr(m, metric)
                    zs.append((math.log(got) - math.log(st.predicted.value(metric))) / spread)
        noise = duplicate_noise(grid)
        shown = f"{noise[0]:.3f}, {noise[1]:.3f}" if noise else "-"
        print(
            f"{name:<22} {done.measured:>4}/{done.points:<4} {done.frontier_error:>7.1%} "
            f"{done.frontier_epsilon:>8.1%}  {shown}"
        )
        fractions.append(done.fraction)
        gaps.append(done.frontier_error)
        epsilons.append(done.frontier_epsilon)
    print(
        f"median: {statistics.median(fractions):.0%} measured, frontier gap "
        f"{statistics.median(gaps):.1%}, epsilon {statistics.median(epsilons):.1%}; target: at "
        f"most 33% measured, within {settings.tolerance:.0%}"
    )
    if zs:
        rms = math.sqrt(sum(z * z for z in zs) / len(zs))
        outside = sum(abs(z) > settings.z for z in zs)
        print(
            f"skipped points' errors in spreads: {len(zs)} (two metrics each), RMS {rms:.2f}, "
            f"{outside} outside the {settings.confidence:.0%} interval"
        )
    if len(grids) > 1:
        print("noise floor: one full grid's frontier against another's (gap / epsilon)")
        for a, b in itertools.permutations(grids, 2):
            truth, other = _points(grids[a]), _points(grids[b])
            print(
                f"  {a} by {b}: {frontier_gap(truth, other):.1%} / "
                f"{frontier_epsilon(truth, other):.1%}"
            )


if __name__ == "__main__":
    main()
