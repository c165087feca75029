"""How fast `inferbench sim estimate` runs the seed scenario (one process, one core).

Seed: MiniMax-class MoE, B200, 2P1D DEP2/DEP8, 8k1k, concurrency 2048, 10 x 2048
requests. Prints the median wall and CPU time of several runs, the simulated output
tokens per wall second, and the time `write_result` takes for the same run (it must
not be the bottleneck). Target: under 2 s wall.

    .venv/bin/python benchmarks/sim_estimate.py [--runs 5] [--recipe FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from inferbench.sim.estimate import estimate
from inferbench.sim.inputs import Overrides, from_recipe
from inferbench.sim.summary import write_result

SEED = Path(
    "examples/benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k/"
    "2p1d-dep2-dep8-8k1k.yaml"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--recipe", default=str(SEED))
    args = parser.parse_args()
    dep = from_recipe(args.recipe, Overrides())
    conc = dep.workload.concurrencies[0]
    walls: list[float] = []
    cpus: list[float] = []
    writes: list[float] = []
    tokens = 0
    simulated = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            start, cpu = time.perf_counter(), time.process_time()
            run = estimate(dep, conc)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
            tokens, simulated = run.output_tokens, run.duration_s
            start = time.perf_counter()
            write_result(run, dep, Path(tmp) / "result.json")
            writes.append(time.perf_counter() - start)
    load = os.getloadavg()[0]
    median = statistics.median(walls)
    print(
        f"deployment: {dep.describe()} on {dep.total_gpus}x {dep.gpu.key}, conc {conc}, "
        f"{dep.workload.prompts_for(conc)} requests, isl {dep.workload.isl} osl {dep.workload.osl}"
    )
    print(
        f"wall s per run: {', '.join(f'{w:.2f}' for w in walls)} (median {median:.2f}; target < 2)"
    )
    cpu_list = ", ".join(f"{c:.2f}" for c in cpus)
    print(f"CPU s per run: {cpu_list} (median {statistics.median(cpus):.2f})")
    write_list = ", ".join(f"{w:.3f}" for w in writes)
    print(
        f"write_result wall s: {write_list} (median {statistics.median(writes):.3f}; "
        f"{statistics.median(writes) / median:.0%} of the estimate; the first run imports the "
        "result writer)"
    )
    print(f"load average (1 min) at the end: {load:.1f}")
    print(f"simulated {simulated:.0f} s of serving, {tokens:,} output tokens")
    print(f"simulated output tokens per wall second: {tokens / median:,.0f}")
    print(f"speed-up over real time: {simulated / median:,.0f}x")


if __name__ == "__main__":
    main()
