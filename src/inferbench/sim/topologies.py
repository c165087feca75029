"""`--sweep-topologies`: estimate aggregated and xPyD layouts for a GPU budget, keep the Pareto.

Candidates per worker: TP g, and for MoE models DEP g (DP attention + EP) and TEP g
(TP attention + EP), for g in 1, 2, 4, 8 up to a node (or the scale-up domain).
Aggregated: as many workers of one layout as the budget holds. Disaggregated:
every prefill x decode layout pair and every split p x prefill + d x decode that
fits the budget and leaves fewer idle GPUs than one prefill worker. At most
MAX_CANDIDATES of them (spread evenly), plus the input deployment, each run through
the closed-loop estimate at a few concurrencies with 2 x concurrency requests, at most
RUN_REQUESTS (short runs: a ranking, not a final figure).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from inferbench.errors import InputError
from inferbench.sim.deployment import Mode, PoolSpec, SimDeployment, validate
from inferbench.sim.estimate import estimate

DEFAULT_CONCURRENCIES = (8, 32, 128, 512)
MAX_CANDIDATES = 60
RUN_REQUESTS = 512  # per candidate and concurrency: one wave at the highest concurrency


@dataclass(frozen=True)
class TopologyPoint:
    topology: str
    gpus: int
    concurrency: int
    tok_s_gpu: float  # output tokens per second per GPU
    tok_s_user: float  # median interactivity, 1000 / TPOT_ms
    ttft_p50_ms: float


def _layouts(dep: SimDeployment, role: str) -> Iterator[PoolSpec]:
    limit = max(dep.gpus_per_node, dep.gpu.scale_up_domain if dep.gpu.scale_up_domain <= 72 else 8)
    base = dep.decode.model_dump(exclude={"role", "workers", "tp", "dp", "pp", "expert_parallel"})
    for g in (1, 2, 4, 8, 16):
        if g > min(limit, 16):
            break
        shapes = [(g, 1, False)]
        if dep.model.is_moe:
            shapes += [(1, g, True), (g, 1, True)] if g > 1 else []
        for tp, dp, ep in shapes:
            yield PoolSpec(role=role, workers=1, tp=tp, dp=dp, expert_parallel=ep, **base)


def _valid(dep: SimDeployment) -> bool:
    try:
        validate(dep)
    except InputError:
        return False
    return True


def candidates(dep: SimDeployment, budget: int) -> list[SimDeployment]:
    out: list[SimDeployment] = []
    for pool in _layouts(dep, "aggregated"):
        workers = budget // pool.gpus_per_worker
        if workers:
            cand = dep.model_copy(
                update={
                    "mode": Mode.AGGREGATED,
                    "prefill": None,
                    "decode": pool.model_copy(update={"workers": workers}),
                }
            )
            if _valid(cand):
                out.append(cand)
    for pre in _layouts(dep, "prefill"):
        for dec in _layouts(dep, "decode"):
            for p in range(1, budget // pre.gpus_per_worker + 1):
                d = (budget - p * pre.gpus_per_worker) // dec.gpus_per_worker
                idle = budget - p * pre.gpus_per_worker - d * dec.gpus_per_worker
                if d < 1 or idle >= pre.gpus_per_worker:
                    continue
                cand = dep.model_copy(
                    update={
                        "mode": Mode.DISAGGREGATED,
                        "prefill": pre.model_copy(update={"workers": p}),
                        "decode": dec.model_copy(update={"workers": d}),
                    }
                )
                if _valid(cand):
                    out.append(cand)
    if len(out) > MAX_CANDIDATES:  # keep an even spread over the layout space
        stride = len(out) / MAX_CANDIDATES
        out = [out[int(i * stride)] for i in range(MAX_CANDIDATES)]
    if dep.total_gpus <= budget and all(c.describe() != dep.describe() for c in out):
        out.insert(0, dep)  # the deployment asked about is always compared
    return out


def sweep_topologies(
    dep: SimDeployment,
    budget: int,
    concurrencies: tuple[int, ...] = DEFAULT_CONCURRENCIES,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[TopologyPoint]:
    """Estimate every candidate layout for `budget` GPUs at `concurrencies`.

    `progress(done, total, topology)` is called after each candidate.
    """
    points: list[TopologyPoint] = []
    cands = candidates(dep, budget)
    for done, cand in enumerate(cands, 1):
        for conc in concurrencies:
            run = estimate(cand, conc, num_prompts=min(2 * conc, max(RUN_REQUESTS, conc)))
            tpots, ttfts = run.columns.tpot(), run.columns.ttft()
            if not tpots.size:
                continue
            points.append(
                TopologyPoint(
                    topology=cand.describe(),
                    gpus=cand.total_gpus,
                    concurrency=conc,
                    tok_s_gpu=run.output_tokens / max(run.duration_s, 1e-9) / cand.total_gpus,
                    tok_s_user=float(np.median(1.0 / tpots)),
                    ttft_p50_ms=float(np.median(ttfts)) * 1000,
                )
            )
        if progress is not None:
            progress(done, len(cands), cand.describe())
    return points


def pareto(points: list[TopologyPoint]) -> list[TopologyPoint]:
    """Points no other point beats on both tok/s/GPU and tok/s/user."""
    front: list[TopologyPoint] = []
    for p in sorted(points, key=lambda q: (-q.tok_s_gpu, -q.tok_s_user)):
        if not front or p.tok_s_user > front[-1].tok_s_user:
            front.append(p)
    return front
