"""Time `inferbench check` + `inferbench sweep` on synthetic InferenceX-scale trees, on one core.

For each scale (1x, 2x, 4x the size of InferenceX today) the script generates a tree with
`synth_tree.py`, then measures, pinned to CPU 0 with `taskset -c 0`:

- in-process: load the tree once, run every check rule on it, expand the full sweep and render
  the GitHub matrix, as one process doing both would (a fresh load each run; imports paid once,
  reported separately);
- CLI wall time: `inferbench check --root T` and `inferbench sweep --root T --format github`,
  each a fresh process, and their sum (the figure the < 2 s target is about).

Every figure is the median of --runs runs (default 5), with min and max.

    python benchmarks/check_sweep.py [--scales 1 2 4] [--runs 5] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synth_tree import generate  # noqa: E402

CPU = "0"


def _pinned(cmd: list[str]) -> list[str]:
    return ["taskset", "-c", CPU, *cmd] if shutil.which("taskset") else cmd


def _inner(tree: Path, runs: int) -> dict[str, object]:
    """Runs inside the pinned child: phase timings of `runs` fresh loads of `tree`."""
    started = time.perf_counter()
    from inferbench.config.project import load_project
    from inferbench.matrix.expand import expand_project
    from inferbench.matrix.filters import SweepFilters
    from inferbench.matrix.output import github_to_json

    check = _check_function()
    imported = time.perf_counter() - started
    phases: dict[str, list[float]] = {"load": [], "check": [], "sweep": [], "total": []}
    counts: dict[str, int] = {}
    for _ in range(runs):
        t0 = time.perf_counter()
        project = load_project(tree)
        t1 = time.perf_counter()
        findings = check(project) if check is not None else None
        t2 = time.perf_counter()
        jobs = expand_project(project, SweepFilters())
        github_to_json(jobs)
        t3 = time.perf_counter()
        phases["load"].append(t1 - t0)
        phases["check"].append(t2 - t1)
        phases["sweep"].append(t3 - t2)
        phases["total"].append(t3 - t0)
        counts = {
            "masters": len(project.masters),
            "recipes": len(project.recipe_paths()),
            "jobs": len(jobs),
            "findings": -1 if findings is None else len(findings),
        }
    return {"import_s": imported, "phases": phases, "counts": counts, "check": check is not None}


def _check_function():  # type: ignore[no-untyped-def]
    """The checks engineer's library entry on an already loaded project: project -> findings."""
    try:
        from inferbench.checks.engine import CheckOptions, check_project
        from inferbench.checks.registry import all_rules
    except ImportError:
        return None
    rules = all_rules()

    def run(project: object) -> list[object]:
        return list(check_project(project, rules, CheckOptions()).findings)  # type: ignore[arg-type]

    return run


def _stats(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"


def _cli_times(tree: Path, runs: int) -> dict[str, list[float]]:
    exe = str(Path(sys.executable).with_name("inferbench"))
    commands = {
        "check": [exe, "check", "--root", str(tree)],
        "sweep": [exe, "sweep", "--root", str(tree), "--format", "github"],
    }
    times: dict[str, list[float]] = {"check": [], "sweep": [], "check+sweep": []}
    for _ in range(runs):
        pair = 0.0
        for name, cmd in commands.items():
            t0 = time.perf_counter()
            proc = subprocess.run(_pinned(cmd), capture_output=True, check=False)
            elapsed = time.perf_counter() - t0
            if proc.returncode not in (0, 1):  # 1 = findings at error severity
                raise SystemExit(
                    f"{name} failed ({proc.returncode}): {proc.stderr.decode()[-400:]}"
                )
            times[name].append(elapsed)
            pair += elapsed
        times["check+sweep"].append(pair)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--inner", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner is not None:
        print(json.dumps(_inner(args.inner, args.runs)))
        return 0
    work = args.workdir or Path(tempfile.mkdtemp(prefix="inferbench-bench-"))
    print(f"machine: {os.cpu_count()} CPUs visible, pinned to CPU {CPU}; {args.runs} runs each")
    for scale in args.scales:
        tree = work / f"tree-{scale}x"
        generate(tree, scale)
        child = subprocess.run(
            _pinned([sys.executable, __file__, "--inner", str(tree), "--runs", str(args.runs)]),
            capture_output=True,
            check=True,
            text=True,
        )
        inner = json.loads(child.stdout)
        cli = _cli_times(tree, args.runs)
        print(f"\n## {scale}x: {inner['counts']}")
        print(f"  in-process import      {inner['import_s']:.3f} s (once)")
        for phase, values in inner["phases"].items():
            print(f"  in-process {phase:<12}{_stats(values)}")
        if not inner["check"]:
            print("  (inferbench.checks.engine not available: check not timed)")
        for name, values in cli.items():
            print(f"  CLI wall {name:<14}{_stats(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
