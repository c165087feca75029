"""Time `inferbench check` and `inferbench sweep` on the real InferenceX tree.

The tree is --tree DIR (else $INFERBENCH_INFERENCEX_TREE: an InferenceX checkout; there is
no default, inferbench does not ship one); with --clone BUNDLE, a git checkout made from an
InferenceX history bundle (or repository) in a tmp folder, as users and CI have the tree:
with its symlinks (`runners/launch_b200-dgxc-slurm.sh`), which a plain copy holds as
one-line files. The commit is the one whose `Upstream-Commit:` trailer names
--upstream-commit (default: the bundle's head).
Each command runs as a fresh process (the wall time a user sees), --runs times (default 5),
and the median, min and max are printed. Two cache states for `check` and `sweep`:

- cold: a fresh, empty parse cache (`INFERBENCH_CACHE_DIR` in a new tmp folder each run):
  every YAML file is parsed, as on a first run or after every file changed;
- warm: the cache filled by one run before (the usual case: a CI re-run), so unchanged
  files are unpacked instead of parsed, and `check` takes its whole result from the check
  result cache (`inferbench.checks.result_cache`, keyed by the bytes of every input);
- parse (`check` only): the parse cache warm but the check result cache emptied before each
  run, as after an edit of a few files: every check runs, on unpacked parses.

Every child gets a bytecode cache of its own (PYTHONPYCACHEPREFIX in the tmp folder,
PYTHONDONTWRITEBYTECODE unset) filled by one untimed run first, as an installed package has
its bytecode: otherwise a checkout run with PYTHONDONTWRITEBYTECODE=1 recompiles every
inferbench module at every start (about 0.09 s). `--no-bytecode-cache` keeps the caller's
environment as it is. PYTHONPATH is passed through, so the same script times another
checkout's library (`PYTHONPATH=<old checkout>/src`).

CPU time (user + system of the child) is printed beside the wall time: on a shared, loaded
machine wall time is mostly waiting for a core, and CPU time is what the run itself costs.

InferenceX's own generator (`utils/matrix_logic/generate_sweep_configs.py full-sweep
--config-files <its MASTER_CONFIGS>`, in the oracle venv: --oracle-python, else
INFERBENCH_INFERENCEX_PYTHON, else built by `.ci/services/25-inferencex-oracle.sh`) runs in the
same session, and the ratios generator / `sweep` are printed (skipped with --no-generator).

    python benchmarks/upstream_tree.py [--tree DIR | --clone BUNDLE [--upstream-commit SHA]]
                                       [--runs 5] [--srt-slurm DIR] [--json]
                                       [--commands check,sweep] [--no-bytecode-cache]
                                       [--oracle-python PY | --no-generator]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE_ENV = "INFERBENCH_INFERENCEX_TREE"
ORACLE_SCRIPT = REPO / ".ci" / "services" / "25-inferencex-oracle.sh"


def _oracle_python(given: str | None) -> str:
    python = given or os.environ.get("INFERBENCH_INFERENCEX_PYTHON")
    if python:
        return python
    done = subprocess.run(["bash", str(ORACLE_SCRIPT)], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"no InferenceX oracle venv: {done.stderr.strip()[-400:]}")
    return done.stdout.strip().splitlines()[-1]


def _generator(python: str, tree: Path) -> list[str]:
    """The generator's full sweep over InferenceX's own list of master configs."""
    code = (
        "import sys; sys.path.insert(0, 'utils'); "
        "from constants import MASTER_CONFIGS; print(*MASTER_CONFIGS)"
    )
    done = subprocess.run(
        [python, "-c", code], cwd=tree, capture_output=True, text=True, check=True
    )
    script = str(tree / "utils" / "matrix_logic" / "generate_sweep_configs.py")
    return [python, script, "full-sweep", "--config-files", *done.stdout.split()]


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()[-400:]}")
    return done.stdout


def _checkout(source: Path, upstream_commit: str | None, into: Path) -> tuple[Path, str]:
    """A git checkout of `source` (a bundle or repository) in `into`: (tree, the commit's
    `Upstream-Commit:` trailer, or its own id when it has none)."""
    tree = into / "inferencex"
    _git("clone", "-q", "--no-checkout", str(source), str(tree))
    if upstream_commit:
        found = _git("log", "--all", "--format=%H", f"--grep=Upstream-Commit: {upstream_commit}",
                     cwd=tree).split()  # fmt: skip
        if not found:
            raise SystemExit(f"no commit of {source} names Upstream-Commit: {upstream_commit}")
        commit = found[0]
    else:
        heads = [line.split()[0] for line in _git("ls-remote", str(source)).splitlines()]
        if not heads:
            raise SystemExit(f"{source} has no refs")
        commit = heads[0]
    _git("-c", "advice.detachedHead=false", "checkout", "-q", commit, cwd=tree)
    message = _git("log", "-1", "--format=%B", commit, cwd=tree)
    trailer = [ln.split(":", 1)[1].strip() for ln in message.splitlines()
               if ln.startswith("Upstream-Commit:")]  # fmt: skip
    return tree, (trailer[0] if trailer else commit)


def _cli() -> list[str]:
    return [sys.executable, "-m", "inferbench.cli.main"]


def _wall(args: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1) or "Traceback" in done.stderr:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def _environ(bytecode: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("INFERBENCH_NO_CACHE", None)
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    return env


def _measure(
    name: str,
    args: list[str],
    runs: int,
    cache_state: str,
    bytecode: Path | None,
    cwd: Path | None = None,
) -> dict[str, object]:
    """`cache_state`: cold (an empty cache each run), warm (filled by a run before) or parse
    (filled, less the check results: only the parses are reused)."""
    times: list[float] = []
    cpus: list[float] = []
    reuse = cache_state in ("warm", "parse")
    with tempfile.TemporaryDirectory() as base:
        for run in range(runs + 1):  # the first run fills the bytecode (and the warm) cache
            cache = Path(base) / ("reused" if reuse else f"cold-{run}")
            if cache_state == "parse":
                shutil.rmtree(cache / "check-v1", ignore_errors=True)
            env = {**_environ(bytecode), "INFERBENCH_CACHE_DIR": str(cache)}
            elapsed, cpu = _wall(args, env, cwd)
            if run == 0:
                continue
            times.append(elapsed)
            cpus.append(cpu)
    return {
        "name": name,
        "cache": cache_state,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "cpu_median_s": statistics.median(cpus),
        "runs": len(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tree", type=Path, default=None, help=f"the InferenceX tree (or ${TREE_ENV})"
    )
    parser.add_argument(
        "--clone", type=Path, default=None, help="time a git checkout of this bundle/repository"
    )
    parser.add_argument("--upstream-commit", default=None, help="with --clone: which commit")
    parser.add_argument("--srt-slurm", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--commands", default="check,sweep", help="which to time (comma-separated): check, sweep"
    )
    parser.add_argument("--oracle-python", default=None, help="the InferenceX oracle venv's python")
    parser.add_argument("--no-generator", action="store_true", help="skip InferenceX's generator")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="run the children in the caller's environment as it is (no bytecode cache)",
    )
    opts = parser.parse_args()
    if opts.tree is None and opts.clone is None:
        exported = os.environ.get(TREE_ENV)
        if not exported:
            raise SystemExit(
                f"no InferenceX tree given: pass --tree DIR or --clone BUNDLE, or set {TREE_ENV}"
            )
        opts.tree = Path(exported)
    with tempfile.TemporaryDirectory() as checkout:
        shown = str(opts.tree)
        if opts.clone is not None:
            opts.tree, upstream = _checkout(opts.clone, opts.upstream_commit, Path(checkout))
            shown = f"git checkout of {opts.clone.name} at {upstream[:9]}"
        _run(opts, shown)


def _run(opts: argparse.Namespace, shown: str) -> None:
    if not (opts.tree / "configs").is_dir():
        raise SystemExit(f"no InferenceX tree at {opts.tree}")
    check = [*_cli(), "check", "--root", str(opts.tree), "--format", "json"]
    if opts.srt_slurm is not None:
        check += ["--srt-slurm", str(opts.srt_slurm)]
    sweep = [*_cli(), "sweep", "--root", str(opts.tree), "--format", "json"]
    states = {"check": ("cold", "parse", "warm"), "sweep": ("cold", "warm")}
    with tempfile.TemporaryDirectory() as tmp:
        bytecode = None if opts.no_bytecode_cache else Path(tmp) / "bytecode"
        results = [
            _measure(name, args, opts.runs, state, bytecode)
            for name, args in (("check", check), ("sweep", sweep))
            if name in opts.commands.split(",")
            for state in states[name]
        ]
        if not opts.no_generator:
            generator = _generator(_oracle_python(opts.oracle_python), opts.tree)
            results.append(
                _measure("generator", generator, opts.runs, "cold", bytecode, cwd=opts.tree)
            )
            results[-1]["cache"] = "-"
    if opts.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"tree: {shown}  runs: {opts.runs}  (seconds, fresh process each run; medians)"
        f"  bytecode cache: {'caller' if opts.no_bytecode_cache else 'own'}"
        f"  load average at the end: {os.getloadavg()[0]:.1f}"
    )
    for r in results:
        print(
            f"  {r['name']:<9} {r['cache']:<5} median {r['median_s']:.3f}  "
            f"min {r['min_s']:.3f}  max {r['max_s']:.3f}  cpu median {r['cpu_median_s']:.3f}"
        )
    if not opts.no_generator:
        gen = results[-1]
        for r in (r for r in results if r["name"] == "sweep"):  # (cold and warm)
            wall = float(gen["median_s"]) / float(r["median_s"])  # type: ignore[arg-type]
            cpu = float(gen["cpu_median_s"]) / float(r["cpu_median_s"])  # type: ignore[arg-type]
            print(f"  generator / sweep ({r['cache']}): wall {wall:.2f}x, cpu {cpu:.2f}x")


if __name__ == "__main__":
    main()
