"""Run a sweep of engine_server.py deployments through the real runner (a subprocess target).

    python sweep_driver.py RUNS_DIR [--resume RUN_ID] [--point-delay S]

Three deployments of three points each; every finished point appends one line to
RUNS_DIR/executed.log after its result file is written. Prints `run-id <id>` first.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.launch.conftest import http_point, job_dict, server_plan

from inferbench.launch.deployment import Deployment, deployment_from_dicts
from inferbench.launch.local import LocalExecutor, LocalOptions
from inferbench.launch.plan import Backend
from inferbench.launch.runner import RunEvents, RunRequest, execute_run


def deployments() -> list[Deployment]:
    return [
        deployment_from_dicts([job_dict(**{"config-key": f"llama-{i}"}, conc=c) for c in (1, 2, 4)])
        for i in (1, 2, 3)
    ]


class Announce(RunEvents):
    def job_started(self, dep: Deployment, attempt: int, todo: int) -> None:
        print(f"start {dep.fingerprint[:4]} todo={todo}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs_dir", type=Path)
    ap.add_argument("--resume")
    ap.add_argument("--point-delay", type=float, default=0.0)
    args = ap.parse_args()
    log = args.runs_dir / "executed.log"

    def point(base_url, spec, pt, out, client_log):  # type: ignore[no-untyped-def]
        time.sleep(args.point_delay)
        outcome = http_point(base_url, spec, pt, out, client_log)
        with log.open("a") as handle:
            handle.write(f"{out.parent.parent.name} {pt.concurrency}\n")
        return outcome

    def planner(dep: Deployment, job_dir: object) -> object:
        return server_plan(concs=dep.concurrencies, fp=dep.fingerprint)

    request = RunRequest(
        deployments=deployments(),
        backend=Backend.LOCAL,
        engine=None,
        runs_dir=args.runs_dir,
        root=args.runs_dir,
        planner=planner,  # type: ignore[arg-type]
        executor=LocalExecutor(point, LocalOptions(health_timeout_s=10, stop_grace_s=2)),
        resume=args.resume,
    )
    summary = execute_run(request, Announce())
    print(f"run-id {summary.run.run_id}", flush=True)
    print(f"outcomes {[str(o.status) for _, o in summary.outcomes]}", flush=True)


if __name__ == "__main__":
    main()
