"""What the planner asks of the simulator: a point's prediction under given calibration
parameters, and its grid surface (what `sim calibrate`'s fit interpolates).

`SimModel` simulates each point as `sim calibrate` does (each prediction once per parameter
set; a measured point's surface on the full 7 x 4 grid). `CoarseModel` simulates each point
three times, on short runs, and takes every other parameter set from the plane through them
in the fit's log coordinates: the cheap model a simulation study over a whole matrix needs
(benchmarks/adaptive_sweep.py), where the truth is drawn from the same model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Protocol

import numpy as np

from inferbench.adaptive.candidates import Candidate
from inferbench.sim.calibrate import (
    GRID,
    METRICS,
    Prediction,
    Surface,
    simulate,
    steady_batch,
    steady_experts,
    surface,
)
from inferbench.sim.calibration import base_efficiency
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.estimate import estimate
from inferbench.sim.summary import point

FITTED = ("layer_overhead_s", "attention_efficiency")
_OFFSET = 10e-6  # the fit's log axis of the layer overhead is log(overhead + 10 us)


class PointModel(Protocol):
    def predict(self, candidate: Candidate, params: Mapping[str, float]) -> Prediction: ...

    def surface(self, candidate: Candidate) -> Surface: ...


def _rounded(params: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(sorted((k, float(f"{v:.4g}")) for k, v in params.items()))


class SimModel:
    """Predictions by simulation, as `sim calibrate` makes them, each computed once."""

    def __init__(
        self, deps: Mapping[str, SimDeployment], progress: Callable[[str], None] | None = None
    ) -> None:
        self.deps = deps
        self.progress = progress
        self._predictions: dict[tuple[str, tuple[tuple[str, float], ...]], Prediction] = {}
        self._surfaces: dict[str, Surface] = {}

    def predict(self, candidate: Candidate, params: Mapping[str, float]) -> Prediction:
        key = (candidate.key, _rounded(params))
        if key not in self._predictions:
            dep = self.deps[candidate.key]
            self._predictions[key] = simulate(candidate.as_point(), dict(params), dep)
        return self._predictions[key]

    def surface(self, candidate: Candidate) -> Surface:
        if candidate.key not in self._surfaces:
            dep = self.deps[candidate.key]
            self._surfaces[candidate.key] = surface(candidate.as_point(), dep, self.progress)
        return self._surfaces[candidate.key]


# the three parameter sets CoarseModel simulates: a centre, more overhead, more attention
# (the per-sequence overhead off: it maps onto the per-layer axis, as `Surface` maps it)
CORNERS = (
    {"layer_overhead_s": 40e-6, "attention_efficiency": 0.3, "seq_overhead_s": 0.0},
    {"layer_overhead_s": 320e-6, "attention_efficiency": 0.3, "seq_overhead_s": 0.0},
    {"layer_overhead_s": 40e-6, "attention_efficiency": 0.8, "seq_overhead_s": 0.0},
)


def _coords(overhead: float, attention: float) -> tuple[float, float]:
    return math.log(overhead + _OFFSET), math.log(attention)


def quick_run(dep: SimDeployment, params: Mapping[str, float], waves: int) -> Prediction:
    """One point on a short run: `waves` x concurrency requests (at least 16, at most the
    point's own count), medians as sa-bench reports them."""
    eff = base_efficiency(dep.engine).model_copy(update=dict(params))
    dep = dep.model_copy(update={"efficiency": eff})
    conc = dep.workload.concurrencies[0]
    prompts = min(dep.workload.prompts_for(conc), max(waves * conc, 16))
    p = point(estimate(dep, conc, num_prompts=prompts))
    return Prediction(p.total_tok_s_per_gpu, 1000.0 / max(p.tpot_p50_ms, 1e-9), p.ttft_p50_ms)


def coarse_table(dep: SimDeployment, waves: int = 2) -> dict[str, list[float]]:
    """A point's log metrics at the three corner parameter sets (what CoarseModel keeps)."""
    runs = [quick_run(dep, corner, waves) for corner in CORNERS]
    return {m: [math.log(max(r.value(m), 1e-9)) for r in runs] for m in METRICS}


class CoarseModel:
    """Predictions from each point's plane through three short simulations (log metrics
    linear in log(overhead + 10 us) and log(attention efficiency)); the per-sequence
    overhead adds to the per-layer one at the point's steady decode batch, as on a
    `Surface`."""

    def __init__(
        self,
        tables: Mapping[str, Mapping[str, list[float]]],
        deps: Mapping[str, SimDeployment],
    ) -> None:
        self.planes: dict[str, dict[str, tuple[float, float, float]]] = {}
        self.per_layer = {k: steady_batch(deps[k]) / deps[k].model.layers for k in tables}
        self.shape = {k: (steady_batch(deps[k]), deps[k].model.layers) for k in tables}
        self.experts = {k: steady_experts(deps[k]) for k in tables}
        (u0, v0), (u1, _), (_, v2) = (
            _coords(c["layer_overhead_s"], c["attention_efficiency"]) for c in CORNERS
        )
        self.origin = (u0, v0)
        for key, table in tables.items():
            self.planes[key] = {
                m: (vals[0], (vals[1] - vals[0]) / (u1 - u0), (vals[2] - vals[0]) / (v2 - v0))
                for m, vals in table.items()
            }
        grid_u = np.log(np.asarray(GRID["layer_overhead_s"]) + _OFFSET)
        grid_v = np.log(np.asarray(GRID["attention_efficiency"]))
        self._mesh = np.meshgrid(grid_u - u0, grid_v - v0, indexing="ij")

    def logs(self, key: str, params: Mapping[str, float]) -> dict[str, float]:
        overhead = params.get("layer_overhead_s", 0.0)
        overhead += params.get("seq_overhead_s", 0.0) * self.per_layer[key]
        overhead += params.get("expert_overhead_s", 0.0) * self.experts[key]
        u, v = _coords(overhead, params.get("attention_efficiency", 0.4))
        du, dv = u - self.origin[0], v - self.origin[1]
        return {m: a + gu * du + gv * dv for m, (a, gu, gv) in self.planes[key].items()}

    def predict(self, candidate: Candidate, params: Mapping[str, float]) -> Prediction:
        logs = self.logs(candidate.key, params)
        return Prediction(*(math.exp(logs[m]) for m in METRICS))

    def surface(self, candidate: Candidate) -> Surface:
        du, dv = self._mesh
        planes = self.planes[candidate.key]
        seqs, layers = self.shape[candidate.key]
        logs = {m: a + gu * du + gv * dv for m, (a, gu, gv) in planes.items()}
        return Surface(logs, seqs=seqs, layers=layers, experts=self.experts[candidate.key])
