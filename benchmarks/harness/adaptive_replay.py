"""An adaptive sweep replayed over points already measured in full (a grid measured cell by
cell, a finished sweep): the planner sees a point's figures only once it chooses to measure
it, so the result says what the adaptive run would have measured and how close its frontier
comes to the full grid's. The real-engine check of issue 30 runs this over the real vLLM's
batch-limit grid (`harness/engine_grid.py` measures it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from inferbench.adaptive.candidates import Candidate, sim_deployment
from inferbench.adaptive.frontier import Point, frontier_epsilon, frontier_gap
from inferbench.adaptive.model import PointModel, SimModel
from inferbench.adaptive.planner import (
    AdaptivePlanner,
    AdaptiveSettings,
    Assessment,
    Measurement,
    run_adaptive,
)
from inferbench.sim.calibrate import MeasuredPoint
from inferbench.sim.calibration import Calibration, load_calibration
from inferbench.sim.deployment import SimDeployment

# The settings of the real-engine check: issue 30 asks for the frontier within 10%; the band
# covers both axes and the residuals are kriged (the grid's settings are near-duplicates, see
# docs/adaptive.md); the run-to-run noise is an estimate from the duplicate settings of the
# CPU vLLM grids measured for it (benchmarks/adaptive_real_vllm.py prints it per grid).
REAL_ENGINE = AdaptiveSettings(
    confidence=0.95, tolerance=0.10, local=True, both_axes=True, noise=0.10
)


def candidates_from_points(
    points: Sequence[MeasuredPoint],
) -> tuple[list[Candidate], dict[str, SimDeployment]]:
    """Each measured point as a candidate (its name the key; one frontier per model and
    lengths), and its simulated deployment."""
    out: list[Candidate] = []
    deps: dict[str, SimDeployment] = {}
    for pt in points:
        dep = sim_deployment(pt.job, pt.name)
        conc = dep.workload.concurrencies[0]
        setting = {k: v for k, v in pt.job.items() if k != "conc"}
        digest = hashlib.sha256(json.dumps(setting, sort_keys=True).encode()).hexdigest()
        ratio = dep.workload.random_range_ratio
        isl, osl = dep.workload.isl, dep.workload.osl
        out.append(
            Candidate(
                key=pt.name,
                fingerprint=digest,
                concurrency=conc,
                label=pt.name,
                frontier=(str(pt.job.get("model", dep.model.name)), isl, osl),
                gpu=dep.gpu.key,
                engine=dep.engine,
                gpus=dep.total_gpus,
                tokens=dep.workload.prompts_for(conc) * (isl + osl) * (1 + ratio) / 2,
                job=dict(pt.job),
            )
        )
        deps[pt.name] = dep
    return out, deps


@dataclass(frozen=True)
class Replay:
    assessment: Assessment
    measured: int
    points: int
    frontier_error: float  # the worst frontier's largest throughput gap to the full grid's
    frontier_epsilon: float  # the worst frontier's epsilon indicator (both axes) less one

    @property
    def fraction(self) -> float:
        return self.measured / self.points


def replay(
    points: Sequence[MeasuredPoint],
    settings: AdaptiveSettings | None = None,
    *,
    base: Calibration | None = None,
    model: PointModel | None = None,
) -> Replay:
    """The adaptive sweep over `points`, each measurement read from the point itself."""
    candidates, deps = candidates_from_points(points)
    truth: dict[str, Measurement] = {}
    for pt in points:
        if pt.measured.interactivity is None:
            raise ValueError(f"{pt.name}: a replayed point needs its interactivity")
        truth[pt.name] = Measurement(
            pt.measured.tok_s_gpu, pt.measured.interactivity, pt.measured.ttft_ms
        )
    planner = AdaptivePlanner(
        candidates=candidates,
        deps=deps,
        model=model or SimModel(deps),
        base=base if base is not None else load_calibration(None),
        settings=settings or AdaptiveSettings(),
    )
    final = run_adaptive(planner, lambda chosen: {c.key: truth[c.key] for c in chosen})
    got = {p.candidate.key for p in final.points if p.measured is not None}
    worst = epsilon = 0.0
    for key in {c.frontier for c in candidates}:
        members = [c for c in candidates if c.frontier == key]
        full = [Point(truth[c.key].interactivity, truth[c.key].tok_s_gpu) for c in members]
        seen = [Point(truth[c.key].interactivity, truth[c.key].tok_s_gpu)
                for c in members if c.key in got]  # fmt: skip
        worst = max(worst, frontier_gap(full, seen))
        epsilon = max(epsilon, frontier_epsilon(full, seen))
    return Replay(final, len(got), len(candidates), worst, epsilon)
