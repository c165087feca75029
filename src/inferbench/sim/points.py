"""A sweep job's points on the simulator's own clock: what `inferbench run --engine sim` runs.

`sim serve --job job.json` builds its deployment from the same file and serves it in real
time; here every point is the offline estimate instead (`sim estimate --job`), so a point
of hundreds of simulated seconds takes a fraction of a second. The result file is the one
the load generator writes for a measured point (the bench writer builds both), written
atomically under its final name once the point is done, so a killed run never leaves half a
point that a resume would trust.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from inferbench.core.outcome import PointOutcome
from inferbench.core.status import PointStatus

if TYPE_CHECKING:  # the simulator loads when a job is opened, not when `run` starts
    from inferbench.sim.deployment import SimDeployment

ENDPOINT = "sim://virtual-clock"  # the result's endpoint: no server answered
NO_POWER = "simulated on the virtual clock: no hardware ran, so no power was sampled"


@dataclass(frozen=True)
class JobPoints:
    """One job's simulated deployment; each call runs one point and writes its result."""

    deployment: SimDeployment
    seed: int = 0

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(str(w) for w in self.deployment.warnings)

    def describe(self) -> str:
        dep = self.deployment
        return (
            f"{dep.model.name} on {dep.total_gpus}x {dep.gpu.key}, {dep.describe()}, {dep.engine}"
        )

    def random_point(self, concurrency: int, num_prompts: int, result_path: Path) -> PointReport:
        """sa-bench's closed loop: `num_prompts` random-length requests, `concurrency` at once."""
        from inferbench.sim.estimate import estimate
        from inferbench.sim.summary import write_result

        run = estimate(self.deployment, concurrency, num_prompts=num_prompts, seed=self.seed)
        write_result(run, self.deployment, result_path, base_url=ENDPOINT)
        _power_note(result_path)
        outcome = _passed(concurrency, result_path)
        return PointReport(outcome, run.columns.size, run.duration_s, run.wall_s)

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
    ) -> PointReport:
        """`inferbench replay`'s lanes over the trace (or synthetic sessions) for the window."""
        from inferbench.bench.agentic.options import ReplayOptions
        from inferbench.bench.result import write_point_result
        from inferbench.sim.agentic_point import estimate_agentic_point, open_agentic_traces

        traces = open_agentic_traces(Path(trace) if trace else None, synth, max_model_len)
        options = ReplayOptions(
            lanes=lanes,
            duration_s=duration_s,
            warmup_sessions=warmup_sessions,
            max_idle_s=max_idle_s,
        )
        point = estimate_agentic_point(
            self.deployment, traces, options, base_url=ENDPOINT, max_model_len=max_model_len
        )
        write_point_result(result_path, point.result)
        _power_note(result_path)
        outcome = _passed(lanes, result_path)
        est = point.estimate
        return PointReport(outcome, point.result.sa.completed, est.run.duration_s, est.wall_s)


@dataclass(frozen=True)
class PointReport:
    """What one simulated point did: its outcome, and its simulated and real seconds."""

    outcome: PointOutcome
    requests: int
    sim_s: float
    wall_s: float


def open_job(job_file: Path, *, seed: int = 0) -> JobPoints:
    """The deployment `sim serve --job job_file` would serve; an InputError if the simulator
    refuses it (an unknown model or GPU, a layout that does not fit)."""
    from inferbench.sim.inputs import Overrides, from_job

    return JobPoints(from_job(str(job_file), Overrides()), seed=seed)


def _passed(concurrency: int, result_path: Path) -> PointOutcome:
    # the simulator answers every request: a simulated point has no failures to gate
    return PointOutcome(
        concurrency=concurrency,
        status=PointStatus.PASSED,
        result_file=f"results/{result_path.name}",
    )


def _power_note(result_path: Path) -> None:
    """The note a measured point leaves when it could not sample power, saying why not."""
    from inferbench.core.fsio import atomic_write_text

    atomic_write_text(
        result_path.with_name(f"power_{result_path.stem}.unavailable"), NO_POWER + "\n"
    )
