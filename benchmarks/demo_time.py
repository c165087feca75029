"""How long `make demo` takes from a fresh clone, install included (issue 41: under 30 s on
a quiet machine).

Each run clones this repository into a temporary folder and runs `make demo` there, with
pip (`make UV=`) or a ready uv (`--uv`); it prints the median wall time and CPU time (the
children's user + system) of the runs, the install and the demo apart, and the load
average. The package index and pip's or uv's wheel cache are what the machine has: say
which when quoting a figure (a first install on a new machine also downloads the wheels).

    .venv/bin/python benchmarks/demo_time.py [--runs 3] [--uv]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float


def _timed(argv: list[str], cwd: Path) -> Timed:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(wall, cpu)


def one_run(uv: str) -> tuple[Timed, Timed]:
    """(install, demo) of one fresh clone: `make .venv/.core`, then `make demo`."""
    with tempfile.TemporaryDirectory(prefix="inferbench-demo-") as tmp:
        clone = Path(tmp) / "inferbench"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        make = ["make", f"UV={uv}"]
        install = _timed([*make, ".venv/.core"], clone)
        demo = _timed([*make, "demo"], clone)
    return install, demo


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} s (runs: {', '.join(f'{v:.1f}' for v in values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--uv", action="store_true", help="install with the uv on PATH")
    args = parser.parse_args()
    uv = (shutil.which("uv") or "") if args.uv else ""
    if args.uv and not uv:
        parser.error("--uv: no uv on PATH")
    runs = [one_run(uv) for _ in range(args.runs)]
    print(f"make demo from a fresh clone, {'uv' if uv else 'pip'}, {args.runs} runs, "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")  # fmt: skip
    for name, pick in (("install", 0), ("demo", 1)):
        print(f"  {name:<8} wall {_median([r[pick].wall_s for r in runs])}")
        print(f"  {'':<8} CPU  {_median([r[pick].cpu_s for r in runs])}")
    total = [r[0].wall_s + r[1].wall_s for r in runs]
    print(f"  total    wall {_median(total)} (target under 30 s on a quiet machine)")


if __name__ == "__main__":
    main()
