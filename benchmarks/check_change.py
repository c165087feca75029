"""Time `inferbench check --base master` on a pull request to the real InferenceX tree, and
count what it reports.

A git copy of the tree (--tree DIR, default ../shared/upstream/inferencex) is committed as
`master`; a worktree on branch `planted` adds the seed's kind of change with its three
planted defects (`tests/upstream/seed_change.py`). Each command runs as a fresh process,
--runs times (default 3), and the median, min and max of wall and CPU time (user + system of
the child) are printed, with the load average before and after. Every run starts with an
empty cache (`INFERBENCH_CACHE_DIR` in a new temporary folder), as a CI job does:

- `check` on the planted branch without a base (today's gate, for comparison);
- `check --base master` on the planted branch (the tree checked twice: now, and the base
  written out of git into a temporary folder);
- `check --base master` on master itself (no change).

The counts (new, fixed, pre-existing by severity) come from `--format json --all`.

    python benchmarks/check_change.py [--tree DIR] [--runs 3] [--srt-slurm PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "upstream"))

from seed_change import apply_seed_change  # noqa: E402


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", *args],
        cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip


def _pull_request(tree: Path, work: Path) -> tuple[Path, Path]:
    """(master checkout, planted worktree) of a git copy of `tree`."""
    repo = work / "inferencex"
    shutil.copytree(tree, repo, symlinks=True)
    for folder, _, files in os.walk(repo):
        for name in [".", *files]:
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
    _git(repo, "init", "-q", "-b", "master")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "master")
    planted = work / "planted"
    _git(repo, "worktree", "add", "-q", "-b", "planted", str(planted), "master")
    apply_seed_change(planted, planted=True)
    _git(planted, "add", "-A")
    _git(planted, "commit", "-q", "-m", "seed change with three defects")
    return repo, planted


_MAIN = "import sys; from inferbench.cli.main import main; sys.exit(main(sys.argv[1:]))"


def _run(args: list[str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the child, exit code, stdout) of one fresh `inferbench` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="check-change-cache-") as cache:
        # an empty cache each run, as a CI job starts: the base check reuses what the check
        # of the change parsed (the files the change left alone), nothing else is warm
        env = {**os.environ, "INFERBENCH_CACHE_DIR": cache}
        done = subprocess.run(
            [sys.executable, "-c", _MAIN, *args],
            capture_output=True, text=True, check=False, env=env,
        )  # fmt: skip
    if done.returncode not in (0, 1):
        raise SystemExit(f"inferbench {' '.join(args)} exited {done.returncode}: {done.stderr}")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode, done.stdout


def _timed(args: list[str], runs: int) -> dict[str, object]:
    walls, cpus, codes = [], [], set()
    load = os.getloadavg()[0]
    for _ in range(runs):
        wall, cpu, code, _ = _run(args)
        walls.append(wall)
        cpus.append(cpu)
        codes.add(code)
    return {
        "wall_median_s": round(statistics.median(walls), 3),
        "wall_min_s": round(min(walls), 3),
        "wall_max_s": round(max(walls), 3),
        "cpu_median_s": round(statistics.median(cpus), 3),
        "exit": sorted(codes),
        "load": [round(load, 1), round(os.getloadavg()[0], 1)],
    }


def _counts(tree: Path, extra: list[str]) -> dict[str, int]:
    _, _, _, out = _run(["check", str(tree), "--base", "master", "--format", "json", "--all",
                         *extra])  # fmt: skip
    counted = Counter(f"{r['status']} {r['severity']}" for r in json.loads(out))
    return dict(sorted(counted.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO.parent / "shared/upstream/inferencex")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--srt-slurm", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    extra = ["--srt-slurm", str(args.srt_slurm.resolve())] if args.srt_slurm else []
    with tempfile.TemporaryDirectory(prefix="check-change-") as scratch:
        master, planted = _pull_request(args.tree.resolve(), Path(scratch))
        report = {
            "counts_planted": _counts(planted, extra),
            "check planted (no base)": _timed(["check", str(planted), *extra], args.runs),
            "check --base master, planted": _timed(
                ["check", str(planted), "--base", "master", *extra], args.runs
            ),
            "check --base master, master": _timed(
                ["check", str(master), "--base", "master", *extra], args.runs
            ),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("planted branch:", ", ".join(f"{v} {k}" for k, v in report.pop("counts_planted").items()))  # type: ignore[union-attr]
    for name, figures in report.items():
        print(f"{name}: {figures}")


if __name__ == "__main__":
    main()
