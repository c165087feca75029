"""The points an adaptive sweep chooses from: one per (deployment, concurrency).

A candidate carries what the planner needs besides predictions: the frontier it belongs to
(model family and sequence lengths, the axes of InferenceX's charts), the (GPU, engine)
pair whose calibration and held-out error it takes, its GPU count, and the tokens its
measurement processes (for the GPU-hours a skipped point saves).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inferbench.core.errors import InferbenchError
from inferbench.core.job import short_fingerprint
from inferbench.launch.deployment import Deployment
from inferbench.sim.calibrate import Measured, MeasuredPoint
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.inputs import Overrides, from_job_data

FrontierKey = tuple[str, int, int]  # (model prefix, isl, osl)


@dataclass(frozen=True)
class Candidate:
    key: str  # "<fingerprint[:12]>@<concurrency>", unique in a sweep
    fingerprint: str
    concurrency: int
    label: str  # the config key, else the fingerprint
    frontier: FrontierKey
    gpu: str
    engine: str
    gpus: int
    tokens: float  # input + output tokens a measurement of the point processes
    job: dict[str, Any]  # the sweep job at this one concurrency (what the simulator reads)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.gpu, self.engine)

    def as_point(self, measured: Measured | None = None) -> MeasuredPoint:
        """The point as `sim calibrate` takes it (a placeholder figure when not measured)."""
        return MeasuredPoint(
            name=self.key, job=self.job, measured=measured or Measured(tok_s_gpu=1.0)
        )

    def frontier_label(self) -> str:
        model, isl, osl = self.frontier
        return f"{model} {isl}/{osl}"


@dataclass(frozen=True)
class Excluded:
    """A job the planner leaves out, and why (it runs as in a plain sweep, or not at all)."""

    label: str
    fingerprint: str
    concurrencies: tuple[int, ...]
    reason: str


def point_key(fingerprint: str, concurrency: int) -> str:
    return f"{short_fingerprint(fingerprint)}@{concurrency}"


def job_at(dep: Deployment, concurrency: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(dep.job_json)
    data["conc"] = concurrency
    return data


def sim_deployment(job: dict[str, Any], name: str) -> SimDeployment:
    """The simulator's deployment of one point, uncalibrated (parameters come per fit)."""
    return from_job_data(job, Overrides(calibration="none"), path=Path(name))


def build_candidates(
    deployments: Sequence[Deployment],
) -> tuple[list[Candidate], list[Excluded], dict[str, SimDeployment]]:
    """Every fixed-length point the simulator can cost, the jobs it cannot (with the
    reason), and each candidate's simulated deployment by key."""
    out: list[Candidate] = []
    excluded: list[Excluded] = []
    deps: dict[str, SimDeployment] = {}
    for dep in deployments:
        label = dep.config_key or short_fingerprint(dep.fingerprint)
        why = _unplannable(dep)
        if why is None:
            try:
                built = [
                    (c, sim_deployment(job_at(dep, c), point_key(dep.fingerprint, c)))
                    for c in dep.concurrencies
                ]
            except InferbenchError as exc:
                why = f"the simulator cannot cost it: {exc.render()}"
        if why is not None:
            excluded.append(Excluded(label, dep.fingerprint, dep.concurrencies, why))
            continue
        for conc, sim in built:
            key = point_key(dep.fingerprint, conc)
            ratio = sim.workload.random_range_ratio
            tokens = sim.workload.prompts_for(conc) * (dep.isl + dep.osl) * (1 + ratio) / 2
            out.append(
                Candidate(
                    key=key,
                    fingerprint=dep.fingerprint,
                    concurrency=conc,
                    label=label,
                    frontier=(dep.model_prefix, dep.isl, dep.osl),
                    gpu=sim.gpu.key,
                    engine=sim.engine,
                    gpus=sim.total_gpus,
                    tokens=tokens,
                    job=job_at(dep, conc),
                )
            )
            deps[key] = sim
    return out, excluded, deps


def _unplannable(dep: Deployment) -> str | None:
    if dep.agentic:
        return "agentic job: its points are trace replays, not throughput/interactivity points"
    if dep.eval_only:
        return "eval-only job: it measures accuracy, not performance"
    return None
