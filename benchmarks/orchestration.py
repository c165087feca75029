"""Orchestration overhead of `inferbench run` with the simulator, beyond server start and bench.

Two measurements, each a median over --repeats:

1. Health detection latency: spawn `inferbench sim serve --port 0` through the launch
   stage's `ServerProcess`, while an independent observer thread tails the server log every
   1 ms and stamps the moment the `listening on` line appears (the simulator answers /health
   from then on). Latency = when `wait_healthy` returned - when the observer saw the line.
2. Per-job overhead: a sweep of --jobs simulator deployments (one point each) through the
   real runner (`execute_run`: plan, job/plan/env files, spawn, health wait, point, teardown,
   outcome and state writes). Overhead = job wall time (planner call to outcome written)
   - server start (spawn to healthy, i.e. the simulator's own start-up) - bench time.
   The point is a single streamed completion (`--bench minimal`) or inferbench's load
   generator when it is installed (`--bench inferbench`); either way its time is subtracted.

    python benchmarks/orchestration.py [--jobs 5] [--repeats 5] [--bench minimal|inferbench]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from inferbench.config.project import load_project
from inferbench.core.fsio import atomic_write_text
from inferbench.core.outcome import Outcome, PointOutcome
from inferbench.core.status import PointStatus
from inferbench.launch.deployment import Deployment, group_jobs
from inferbench.launch.local import LocalExecutor, LocalOptions, PointRunner
from inferbench.launch.plan import Backend, BenchPoint, BenchSpec, Engine, Plan
from inferbench.launch.planner import PlanOptions, local_plan
from inferbench.launch.process import ServerProcess
from inferbench.launch.rundir import JobDir
from inferbench.launch.runner import RunEvents, RunRequest, execute_run
from inferbench.matrix.expand import expand_project
from inferbench.matrix.filters import SweepFilters

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LINE = b"inferbench sim: listening on"


def _deployments(n: int) -> list[Deployment]:
    """n distinct one-point deployments (short requests: the bench time is not the subject)."""
    project = load_project(EXAMPLES)
    (job, *_) = expand_project(project, SweepFilters(config_keys=("llama3.1-8b-bf16-h200-vllm",)))
    variants = [job.evolve(isl=64, osl=4, max_model_len=512 + i, conc=1) for i in range(n)]
    return group_jobs(variants)


def health_latency(tmp: Path) -> tuple[float, float]:
    """(detection latency, server start) in seconds for one simulator start."""
    (dep,) = _deployments(1)
    job = JobDir(tmp / f"h{time.monotonic_ns()}")
    job.make()
    atomic_write_text(job.job_json, dep.job_json)
    spec = local_plan(dep, Engine.SIM).processes[0]
    server = ServerProcess(spec, job.path, job.logs / "server.log")
    seen: list[float] = []
    stop = threading.Event()

    def observe() -> None:
        while not stop.is_set():
            try:
                if LINE in (job.logs / "server.log").read_bytes()[server.log_offset :]:
                    seen.append(time.monotonic())
                    return
            except OSError:
                pass
            time.sleep(0.001)

    server.start()
    watcher = threading.Thread(target=observe)
    watcher.start()
    try:
        server.wait_healthy(60)
    finally:
        stop.set()
        watcher.join()
        server.stop()
    return server.ready_at - seen[0], server.ready_at - server.started_at


def minimal_point(
    base_url: str, spec: BenchSpec, point: BenchPoint, out: Path, log: Path
) -> PointOutcome:
    body = json.dumps(
        {"model": spec.model, "prompt": "hi", "max_tokens": spec.osl, "stream": False}
    ).encode()
    req = urllib.request.Request(
        base_url + "/v1/completions", body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        data = resp.read()
    atomic_write_text(out, data.decode())
    return PointOutcome(
        concurrency=point.concurrency, status=PointStatus.PASSED, result_file=out.name
    )


class _Clock(RunEvents):
    def __init__(self) -> None:
        self.finished: dict[str, float] = {}

    def job_finished(self, dep: Deployment, outcome: Outcome) -> None:
        self.finished[dep.fingerprint] = time.monotonic()


def job_overheads(tmp: Path, jobs: int, run_point: PointRunner) -> list[dict[str, float]]:
    deps = _deployments(jobs)
    starts: dict[str, float] = {}

    def planner(dep: Deployment, job_dir: JobDir) -> Plan:
        starts[dep.fingerprint] = time.monotonic()
        return local_plan(dep, Engine.SIM, PlanOptions(max_prompts=1, max_warmups=0))

    clock = _Clock()
    request = RunRequest(
        deployments=deps,
        backend=Backend.LOCAL,
        engine=Engine.SIM,
        runs_dir=tmp / "runs",
        root=EXAMPLES,
        planner=planner,
        executor=LocalExecutor(run_point, LocalOptions(health_timeout_s=60, stop_grace_s=5)),
    )
    summary = execute_run(request, clock)
    rows = []
    for dep, outcome in summary.outcomes:
        t = outcome.timings_s
        wall = clock.finished[dep.fingerprint] - starts[dep.fingerprint]
        rows.append(
            {
                "wall": wall,
                "server_start": t.get("server_start", 0.0),
                "bench": t.get("bench", 0.0),
                "spawn": t.get("spawn", 0.0),
                "teardown": t.get("teardown", 0.0),
                "overhead": wall - t.get("server_start", 0.0) - t.get("bench", 0.0),
            }
        )
    return rows


def _point_runner(kind: str) -> PointRunner:
    if kind == "inferbench":
        from inferbench.launch.benchpoint import bench_point_runner

        return bench_point_runner()
    return minimal_point


def _fmt(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--bench", choices=("minimal", "inferbench"), default="minimal")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        latency, start = zip(*(health_latency(tmp) for _ in range(args.repeats)), strict=True)
        print(f"health detection latency: {_fmt(list(latency))}")
        print(f"simulator start (spawn to healthy): {_fmt(list(start))}")
        rows: list[dict[str, float]] = []
        for r in range(args.repeats):
            rows += job_overheads(tmp / f"run{r}", args.jobs, _point_runner(args.bench))
        for key in ("overhead", "spawn", "teardown", "server_start", "bench", "wall"):
            print(f"per job {key}: {_fmt([row[key] for row in rows])}")
        python = sys.version.split()[0]
        print(f"({len(rows)} jobs, {args.repeats} runs of {args.jobs}; python {python})")


if __name__ == "__main__":
    main()
