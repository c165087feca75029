"""Inside a Slurm allocation: `python -m inferbench.launch.inalloc JOB_DIR`.

Reads the job's `plan.json`, moves a real engine's server to a port free on this node,
runs the points without a result file through the local backend, and writes
`inalloc-result.json` for the orchestrator to collect.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from inferbench.core.fsio import atomic_write_text
from inferbench.launch.accelerator import detect_accelerator
from inferbench.launch.benchpoint import bench_point_runner
from inferbench.launch.local import run_local
from inferbench.launch.nodeport import on_free_port
from inferbench.launch.plan import Plan
from inferbench.launch.rundir import JobDir, record_accelerator
from inferbench.launch.slurm import INALLOC_RESULT
from inferbench.launch.stop import STOP_FILE, StopRequest


def main(argv: list[str]) -> int:
    job_dir = JobDir(Path(argv[0]).resolve())
    record_accelerator(job_dir, detect_accelerator())  # this node's, where the engine runs
    # the port the login node wrote may be taken here (another job on this node)
    plan = on_free_port(Plan.model_validate_json(job_dir.plan_json.read_text()))
    todo = [p for p in plan.bench.points if not job_dir.result_file(p.concurrency).is_file()]
    stop = StopRequest(job_dir.path / STOP_FILE)  # the orchestrator's first Ctrl-C
    result = run_local(plan, job_dir, todo, bench_point_runner(), stop=stop)
    record = {
        "status": str(result.status),
        "reason": result.reason,
        "log_tail": result.log_tail,
        "base_url": result.base_url,
        "points": [p.model_dump(mode="json") for p in result.points],
        "timings_s": result.timings_s,
    }
    atomic_write_text(job_dir.path / INALLOC_RESULT, json.dumps(record, indent=2) + "\n")
    return 0  # the record says how it went; non-zero only when the driver itself failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
