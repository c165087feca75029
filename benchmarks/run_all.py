"""Run every benchmark with the command docs/benchmarks.md quotes (what `make bench` does).

Each runs in its own process, one after another (they pin cores and must not
overlap); a failing one is reported and the rest still run. `--only NAME ...`
picks some; `--list` prints the commands.

    .venv/bin/python benchmarks/run_all.py [--only bench_client sim_estimate] [--list]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable

# name -> argv, as docs/benchmarks.md quotes them
COMMANDS: dict[str, list[str]] = {
    "check_sweep": [PY, str(HERE / "check_sweep.py"), "--scales", "1", "2", "--runs", "5"],
    "config_load": ["taskset", "-c", "0", PY, str(HERE / "config_load.py"), "--scales", "1", "2"],
    "sim_estimate": ["taskset", "-c", "1", PY, str(HERE / "sim_estimate.py"), "--runs", "5"],
    "sim_serve": [PY, str(HERE / "sim_serve.py")],
    "sim_clock": [PY, str(HERE / "sim_clock.py"), "--runs", "5"],
    "orchestration": [PY, str(HERE / "orchestration.py"), "--jobs", "5", "--repeats", "5"],
    "results_ingest": [PY, str(HERE / "results_ingest.py"), "--points", "100000"],
    "store_scale": [PY, str(HERE / "store_scale.py"), "--ingest", "10000"],  # 10k and 100k
    "bench_client": [PY, str(HERE / "bench_client.py"), "--repeats", "5"],
    "agentic_replay": [PY, str(HERE / "agentic_replay.py"), "--lanes", "1024", "--repeats", "3"],
    "regression_gate": [PY, str(HERE / "regression_gate.py"), "--reruns", "20", "--slowed", "10"],
    # needs the real InferenceX tree in ../shared/upstream (or --tree DIR)
    "check_change": [PY, str(HERE / "check_change.py"), "--runs", "3"],
    # needs the InferenceX tree: $INFERBENCH_INFERENCEX_TREE (as sim_clock)
    "adaptive_sweep": [PY, str(HERE / "adaptive_sweep.py"), "--seeds", "10"],
    # needs the vLLM venv of .ci/services/40-vllm.sh (INFERBENCH_VLLM_BIN or its cache)
    "vllm_bench_compare": [PY, str(HERE / "vllm_bench_compare.py"), "--repeats", "15"],
    "sim_real_vllm": [PY, str(HERE / "sim_real_vllm.py"), "--repeats", "3"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", nargs="+", choices=sorted(COMMANDS))
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    names = args.only or list(COMMANDS)
    if args.list:
        for name in names:
            print(f"{name}: {' '.join(COMMANDS[name])}")
        return 0
    failed = []
    for name in names:
        print(f"== {name}: {' '.join(COMMANDS[name])}", flush=True)
        started = time.monotonic()
        code = subprocess.call(COMMANDS[name], cwd=HERE.parent)
        print(f"== {name}: exit {code} after {time.monotonic() - started:.0f} s", flush=True)
        if code != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
