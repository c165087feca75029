"""Time `inferbench check` and `inferbench sweep` on the real InferenceX tree.

The tree is `../shared/upstream/inferencex` (relative to the repository root) or --tree.
Each command runs as a fresh process (the wall time a user sees), --runs times (default 5),
and the median, min and max are printed. Two cache states for `check` and `sweep`:

- cold: a fresh, empty parse cache (`INFERBENCH_CACHE_DIR` in a new tmp folder each run):
  every YAML file is parsed, as on a first run or after every file changed;
- warm: the cache filled by one run before (the usual case: a CI re-run, an edit of a few
  files), so unchanged files are unpacked instead of parsed.

CPU time (user + system of the child) is printed beside the wall time: on a shared, loaded
machine wall time is mostly waiting for a core, and CPU time is what the run itself costs.

    python benchmarks/upstream_tree.py [--tree DIR] [--runs 5] [--srt-slurm DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = REPO.parent / "shared" / "upstream" / "inferencex"
SRT_SLURM = REPO.parent / "shared" / "upstream" / "srt-slurm"


def _cli() -> list[str]:
    return [sys.executable, "-m", "inferbench.cli.main"]


def _wall(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1) or "Traceback" in done.stderr:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def _measure(name: str, args: list[str], runs: int, warm: bool) -> dict[str, object]:
    times: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory() as base:
        for run in range(runs + (1 if warm else 0)):
            cache = Path(base) / ("warm" if warm else f"cold-{run}")
            env = {**os.environ, "INFERBENCH_CACHE_DIR": str(cache)}
            env.pop("INFERBENCH_NO_CACHE", None)
            elapsed, cpu = _wall(args, env)
            if warm and run == 0:
                continue  # fills the cache
            times.append(elapsed)
            cpus.append(cpu)
    return {
        "name": name,
        "cache": "warm" if warm else "cold",
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "cpu_median_s": statistics.median(cpus),
        "runs": len(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=TREE)
    parser.add_argument("--srt-slurm", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    opts = parser.parse_args()
    if not (opts.tree / "configs").is_dir():
        raise SystemExit(f"no InferenceX tree at {opts.tree}")
    check = [*_cli(), "check", "--root", str(opts.tree), "--format", "json"]
    if opts.srt_slurm is not None:
        check += ["--srt-slurm", str(opts.srt_slurm)]
    sweep = [*_cli(), "sweep", "--root", str(opts.tree), "--format", "json"]
    results = [
        _measure(name, args, opts.runs, warm)
        for name, args in (("check", check), ("sweep", sweep))
        for warm in (False, True)
    ]
    if opts.json:
        print(json.dumps(results, indent=2))
        return
    print(f"tree: {opts.tree}  runs: {opts.runs}  (wall seconds, fresh process each run)")
    for r in results:
        print(
            f"  {r['name']:<6} {r['cache']:<5} median {r['median_s']:.3f}  "
            f"min {r['min_s']:.3f}  max {r['max_s']:.3f}  cpu median {r['cpu_median_s']:.3f}"
        )


if __name__ == "__main__":
    main()
