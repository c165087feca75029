"""The simulator's points on its own clock: `inferbench run --engine sim` without a server.

A plan served by the simulator runs each point as the simulator's offline estimate of it,
in this process: no server starts, no client waits, and a point of hundreds of simulated
seconds takes a fraction of a second. The job directory ends the same as a measured job's
(results/conc<C>.json in the load generator's format, a power note, client.log lines,
outcome.json), and the run's state, `--resume` and Ctrl-C work point by point as before.
Evals need an HTTP endpoint (lm-eval is a client), so a job with evals starts the simulator
server for them after its points. `--sim-realtime` serves every point in real time instead
(`sim serve`), for testing clients against a live endpoint.

The simulator is handed in (`open_job`): launch starts the simulator, it does not import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from inferbench.core.errors import InferbenchError
from inferbench.core.outcome import PointOutcome
from inferbench.core.status import JobStatus
from inferbench.launch.execute import ExecResult, Executor, JobRun
from inferbench.launch.outcome import LaunchFailure
from inferbench.launch.plan import Engine, Plan
from inferbench.launch.pointpower import log_line

ENDPOINT = "sim://virtual-clock"
NOTE = (
    "virtual clock: each point is the simulator's estimate on its own timeline, run in "
    "this process; the server process below starts only for evals (--sim-realtime serves "
    "every point in real time)"
)


class SimulatedPoint(Protocol):
    @property
    def outcome(self) -> PointOutcome: ...

    @property
    def requests(self) -> int: ...

    @property
    def sim_s(self) -> float: ...

    @property
    def wall_s(self) -> float: ...


class JobSimulator(Protocol):
    """One job's simulated deployment (`inferbench.sim.points.JobPoints`)."""

    @property
    def warnings(self) -> tuple[str, ...]: ...

    def describe(self) -> str: ...

    def random_point(
        self, concurrency: int, num_prompts: int, result_path: Path
    ) -> SimulatedPoint: ...

    def agentic_point(
        self,
        lanes: int,
        duration_s: float,
        result_path: Path,
        *,
        trace: str | None,
        synth: str,
        warmup_sessions: int,
        max_idle_s: float,
        max_model_len: int | None,
    ) -> SimulatedPoint: ...


# job.json -> its simulated deployment; an InferbenchError when the simulator refuses it
OpenJob = Callable[[Path], JobSimulator]


def virtual_plan(plan: Plan) -> Plan:
    """`plan` as the virtual clock runs it: a simulator plan says so in its notes."""
    if plan.engine is not Engine.SIM or NOTE in plan.notes:
        return plan
    return plan.model_copy(update={"notes": (*plan.notes, NOTE)})


@dataclass(frozen=True)
class SimClockExecutor(Executor):
    """Runs simulator plans on the virtual clock; hands every other plan to `serve` (the
    local backend), which also serves a simulator job's evals."""

    open_job: OpenJob
    serve: Executor

    def run(self, job: JobRun, result: ExecResult) -> None:
        if job.plan.engine is not Engine.SIM or job.plan.script is not None:
            self.serve.run(job, result)  # a real engine, or the tree's own script
            return
        import time

        t0 = time.monotonic()
        sim = self._open(job)
        result.base_url = ENDPOINT
        for point in job.todo:
            if job.stop.requested:  # the first Ctrl-C: this point and the rest stay to do
                raise LaunchFailure(
                    JobStatus.INTERRUPTED,
                    f"stopped on request before concurrency {point.concurrency}",
                )
            outcome = _run_point(sim, job, point.concurrency, point.num_prompts)
            result.points.append(outcome)
            job.on_point(outcome)
        result.timings_s["simulate"] = time.monotonic() - t0
        if job.plan.bench.eval is not None and not job.stop.requested:
            self.serve.run(replace(job, todo=()), result)  # lm-eval needs an endpoint

    def _open(self, job: JobRun) -> JobSimulator:
        server_log = job.job_dir.logs / "server.log"
        log_line(server_log, "--- inferbench: simulating on the virtual clock (no server) ---")
        try:
            sim = self.open_job(job.job_dir.job_json)
        except InferbenchError as exc:  # what `sim serve` would have died of at start
            text = exc.render()
            log_line(server_log, f"inferbench sim: error: {text}")
            raise LaunchFailure(
                JobStatus.SERVER_CRASHED, f"the simulator refused the deployment: {text}", text
            ) from None
        log_line(server_log, f"inferbench sim: {sim.describe()}")
        for warning in sim.warnings:
            log_line(server_log, f"inferbench sim: warning: {warning}")
        return sim


def _run_point(sim: JobSimulator, job: JobRun, concurrency: int, prompts: int) -> PointOutcome:
    """One point, logged as the load generator logs a measured one (`bench`, then `done`)."""
    spec = job.plan.bench
    path = job.job_dir.result_file(concurrency)
    log = job.job_dir.logs / "client.log"
    try:
        if spec.agentic is not None:
            agentic = spec.agentic
            log_line(
                log,
                f"replay {ENDPOINT} lanes={concurrency} duration={agentic.duration_s:g}s",
            )
            report = sim.agentic_point(
                concurrency,
                agentic.duration_s,
                path,
                trace=agentic.trace,
                synth=agentic.synth,
                warmup_sessions=agentic.warmup_sessions,
                max_idle_s=agentic.max_idle_s,
                max_model_len=agentic.max_model_len,
            )
            done = f"done lanes={concurrency} requests={report.requests} failed=0"
        else:
            log_line(log, f"bench {ENDPOINT} conc={concurrency} n={prompts}")
            report = sim.random_point(concurrency, prompts, path)
            done = f"done conc={concurrency} completed={report.requests} failed=0"
    except InferbenchError as exc:  # the workload was refused (a trace that is not one)
        raise LaunchFailure(JobStatus.BENCH_ERROR, exc.render()) from None
    log_line(log, f"{done} simulated={report.sim_s:.1f}s wall={report.wall_s:.2f}s")
    return report.outcome
