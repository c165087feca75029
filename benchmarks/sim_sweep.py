"""How fast `inferbench sim estimate --sweep-topologies --gpu-budget 16` runs on the seed.

Runs the library call the CLI makes (candidates x concurrencies 8, 32, 128, 512) several
times and prints the median wall and CPU time. Target (issue 13): under 30 s.

    .venv/bin/python benchmarks/sim_sweep.py [--runs 5] [--budget 16]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from inferbench.sim.inputs import Overrides, from_recipe
from inferbench.sim.topologies import candidates, sweep_topologies

SEED = Path("tests/sim/fixtures/seed_recipe.yaml")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget", type=int, default=16)
    parser.add_argument("--recipe", default=str(SEED))
    args = parser.parse_args()
    dep = from_recipe(args.recipe, Overrides())
    walls: list[float] = []
    cpus: list[float] = []
    points = 0
    for _ in range(args.runs):
        start, cpu = time.perf_counter(), time.process_time()
        points = len(sweep_topologies(dep, args.budget))
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    load = os.getloadavg()[0]
    print(
        f"{len(candidates(dep, args.budget))} candidate layouts for {args.budget} GPUs, "
        f"{points} points"
    )
    print(
        f"wall s per run: {', '.join(f'{w:.1f}' for w in walls)} "
        f"(median {statistics.median(walls):.1f}; target < 30)"
    )
    cpu_list = ", ".join(f"{c:.1f}" for c in cpus)
    print(f"CPU s per run: {cpu_list} (median {statistics.median(cpus):.1f})")
    print(f"load average (1 min) at the end: {load:.1f}")


if __name__ == "__main__":
    main()
