"""`--sweep-topologies`: estimate aggregated and xPyD layouts for a GPU budget, keep the Pareto.

Candidates per worker: TP g, and for MoE models DEP g (DP attention + EP) and TEP g
(TP attention + EP), for g in 1, 2, 4, 8 up to a node (or the scale-up domain).
Aggregated: as many workers of one layout as the budget holds. Disaggregated:
every prefill x decode layout pair and every split p x prefill + d x decode that
fits the budget and leaves fewer idle GPUs than one prefill worker. At most
MAX_CANDIDATES of them (spread evenly), plus the input deployment when it is a valid layout
of its own, each run through the closed-loop estimate at the given concurrencies with
2 x concurrency requests, at most RUN_REQUESTS (short runs: a ranking, not a final figure).
Throughput is reported as plain `estimate` reports it: total (input + output) and output
tokens per second per GPU; the Pareto frontier is total tok/s/GPU against tok/s/user, the
axes of the report's curves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

import numpy as np
import orjson

from inferbench.core.errors import InputError
from inferbench.sim.deployment import Mode, PoolSpec, SimDeployment, validate
from inferbench.sim.estimate import estimate

DEFAULT_CONCURRENCIES = (8, 32, 128, 512)
SCHEMA = "inferbench.topologies/1"
MAX_CANDIDATES = 60
RUN_REQUESTS = 512  # per candidate and concurrency: one wave at the highest concurrency


@dataclass(frozen=True)
class TopologyPoint:
    topology: str
    gpus: int
    concurrency: int
    total_tok_s_gpu: float  # input + output tokens per second per GPU (estimate's tok/s/GPU)
    output_tok_s_gpu: float  # output tokens per second per GPU
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
    asked = dep.total_gpus <= budget and all(c.describe() != dep.describe() for c in out)
    if asked and _valid(dep):
        out.insert(0, dep)  # the deployment asked about is always compared
    return out


def _why_none(dep: SimDeployment, budget: int) -> InputError:
    """Why no layout fits: the refusal of the widest aggregated one (the most memory)."""
    fits = [p for p in _layouts(dep, "aggregated") if p.gpus_per_worker <= budget]
    widest = fits[-1].model_copy(update={"workers": budget // fits[-1].gpus_per_worker})
    cand = dep.model_copy(update={"mode": Mode.AGGREGATED, "prefill": None, "decode": widest})
    try:
        validate(cand)
        reason = f"{cand.describe()} is refused"
    except InputError as exc:
        reason = f"{cand.describe()}: {exc.message}"
    return InputError(
        f"no layout of {dep.model.name} on {budget}x {dep.gpu.key} passes the checks ({reason})",
        hint="raise --gpu-budget, or choose a smaller precision or a bigger GPU",
    )


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
    if not cands:
        raise _why_none(dep, budget)
    for done, cand in enumerate(cands, 1):
        for conc in concurrencies:
            run = estimate(cand, conc, num_prompts=min(2 * conc, max(RUN_REQUESTS, conc)))
            cols = run.columns
            tpots, ttfts = cols.tpot(), cols.ttft()
            if not tpots.size:
                continue
            per_gpu_s = max(run.duration_s, 1e-9) * cand.total_gpus
            inputs = int(cols.input_tokens[cols.ok].sum())
            outputs = int(cols.output_tokens[cols.ok].sum())
            points.append(
                TopologyPoint(
                    topology=cand.describe(),
                    gpus=cand.total_gpus,
                    concurrency=conc,
                    total_tok_s_gpu=(inputs + outputs) / per_gpu_s,
                    output_tok_s_gpu=outputs / per_gpu_s,
                    tok_s_user=float(np.median(1.0 / tpots)),
                    ttft_p50_ms=float(np.median(ttfts)) * 1000,
                )
            )
        if progress is not None:
            progress(done, len(cands), cand.describe())
    return points


def pareto(points: list[TopologyPoint]) -> list[TopologyPoint]:
    """Points no other point beats on both total tok/s/GPU and tok/s/user, from the highest
    throughput to the highest interactivity."""
    front: list[TopologyPoint] = []
    for p in sorted(points, key=lambda q: (-q.total_tok_s_gpu, -q.tok_s_user)):
        if not front or p.tok_s_user > front[-1].tok_s_user:
            front.append(p)
    return front


def topologies_document(
    dep: SimDeployment, budget: int, concurrencies: tuple[int, ...], points: list[TopologyPoint]
) -> bytes:
    """`--sweep-topologies --format json`: every point tried, the frontier's marked.

    {"schema": "inferbench.topologies/1", "deployment": ..., "gpu_budget": 8,
     "points": [{"topology": "TP8", "gpus": 8, "concurrency": 32, "total_tok_s_gpu": ...,
                 "output_tok_s_gpu": ..., "tok_s_user": ..., "ttft_p50_ms": ...,
                 "pareto": true}, ...]}

    Points from the highest total tok/s/GPU down, as the table prints them."""
    on_front = {id(p) for p in pareto(points)}
    ordered = sorted(points, key=lambda q: -q.total_tok_s_gpu)
    doc = {
        "schema": SCHEMA,
        "command": "sim estimate --sweep-topologies",
        "deployment": dep.name,
        "model": dep.model.name,
        "gpu": dep.gpu.key,
        "engine": dep.engine,
        "isl": dep.workload.isl,
        "osl": dep.workload.osl,
        "gpu_budget": budget,
        "concurrencies": list(concurrencies),
        "points": [{**asdict(p), "pareto": id(p) in on_front} for p in ordered],
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
