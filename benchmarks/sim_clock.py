"""Time the simulator's virtual clock as a user meets it: `inferbench demo` (what `make demo`
runs) and `inferbench run --engine sim` of one real 8k1k config key at two concurrencies.

Each command runs as a fresh process, --runs times; the median, min and max of wall time and
of the child's CPU time (user + system) are printed. The run directories go to a tmp folder.
The tree is --tree DIR, else $INFERBENCH_INFERENCEX_TREE (an InferenceX checkout).
Targets (issue 28): the demo under 20 s with at least 6 concurrencies per curve; the run
under 10 s. `--realtime` also times the same run once with `--sim-realtime` (minutes: the
simulator served in real time, as `run --engine sim` did before the virtual clock).

    python benchmarks/sim_clock.py [--runs 5] [--tree DIR] [--key dsr1-fp8-h200-sglang]
                                   [--conc 4,8] [--realtime]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INFERBENCH = [sys.executable, "-m", "inferbench.cli.main"]
TREE_ENV = "INFERBENCH_INFERENCEX_TREE"


def _timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process (it must exit 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _report(name: str, runs: list[tuple[float, float]]) -> None:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    print(
        f"{name}: wall {', '.join(f'{w:.2f}' for w in walls)} s, median "
        f"{statistics.median(walls):.2f} (min {min(walls):.2f}, max {max(walls):.2f}); "
        f"CPU median {statistics.median(cpus):.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=None, help=f"(or ${TREE_ENV})")
    parser.add_argument("--key", default="dsr1-fp8-h200-sglang")
    parser.add_argument("--conc", default="4,8")
    parser.add_argument("--realtime", action="store_true")
    args = parser.parse_args()
    if args.tree is None:
        if not os.environ.get(TREE_ENV):
            raise SystemExit(f"no InferenceX tree given: pass --tree DIR or set {TREE_ENV}")
        args.tree = Path(os.environ[TREE_ENV])
    with tempfile.TemporaryDirectory(prefix="sim-clock-") as tmp:
        demo = [
            _timed([*INFERBENCH, "demo", "--runs-dir", f"{tmp}/demo{i}"]) for i in range(args.runs)
        ]
        _report("inferbench demo (21 points: 3 curves x 7 concurrencies)", demo)
        run = [*INFERBENCH, "run", "--root", str(args.tree), "--config-keys", args.key]
        run += ["--seq-lens", "8k1k", "--concurrency", args.conc, "--engine", "sim"]
        timed = [_timed([*run, "--runs-dir", f"{tmp}/run{i}"]) for i in range(args.runs)]
        _report(f"run --engine sim {args.key} 8k1k conc {args.conc}", timed)
        if args.realtime:
            real = _timed([*run, "--sim-realtime", "--runs-dir", f"{tmp}/realtime"])
            _report("the same with --sim-realtime (one run)", [real])
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
