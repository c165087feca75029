"""Evaluate NVIDIA's aiconfigurator-core as the simulator's step-cost source.

For the NVIDIA calibration points (C1, C2, C3, C5, C6, C9 of the published-points table,
given as --published FILE or $INFERBENCH_PUBLISHED_POINTS) the simulator runs each point
twice more with every engine step timed by aiconfigurator's measured per-operation tables (GEMM,
attention/MLA, MoE, communication) instead of the roofline, the rest unchanged: the same
scheduler, batches, KV accounting, arrivals, front latency and per-step CPU overhead. It
prints predicted over measured for tok/s/GPU, interactivity and TTFT, for the roofline
("ours") and aiconfigurator ("aic"), each with the engine defaults (nothing fitted) and
with the default calibration (fitted on these points: in-sample, so it flatters both; for
aic only its front latency and step overhead apply), and how many are within the issue's
targets (+/-25%, TTFT 2x). benchmarks/sim_calibration.py gives the roofline's
leave-one-out figures to compare with.

Needs the optional package (not a dependency of inferbench):

    .venv/bin/pip install aiconfigurator-core
    .venv/bin/python benchmarks/sim_aic.py --published published-points.md [--points C1,C6]
"""

from __future__ import annotations

import argparse
import bisect
import importlib.metadata
import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inferbench.sim.calibrate import METRICS, MeasuredPoint, Prediction, deployment, predict
from inferbench.sim.calibrate import simulate as simulate_point
from inferbench.sim.calibration import load_calibration
from inferbench.sim.deployment import PoolSpec, SimDeployment
from inferbench.sim.perf import RankBatch, StepModel
from sim_calibration import POINTS, PUBLISHED_ENV, load, published_file


@dataclass(frozen=True)
class AicSetup:
    """How one point maps onto aiconfigurator's model, system, backend and parallelism."""

    model: str
    system: str
    backend: str
    compile: dict[str, Any]
    note: str


_R1 = "deepseek-ai/DeepSeek-R1"  # aiconfigurator's config for R1 and R1-0528 (same shape)
_TP8 = {"tp_size": 8, "moe_tp_size": 8, "moe_ep_size": 1}
SETUPS: dict[str, AicSetup] = {
    "C1": AicSetup(
        _R1, "h200_sxm", "sglang",
        {**_TP8, "kvcache_quant_mode": "bfloat16", "fmha_quant_mode": "bfloat16"},
        "SGLang tables 0.5.14 (measured on 0.5.12)",
    ),
    "C2": AicSetup(
        _R1, "h200_sxm", "sglang",
        {**_TP8, "kvcache_quant_mode": "bfloat16", "fmha_quant_mode": "bfloat16"},
        "SGLang tables 0.5.14 (measured on 0.5.12)",
    ),
    "C3": AicSetup(
        _R1, "b200_sxm", "trtllm",
        {**_TP8, "kvcache_quant_mode": "fp8", "fmha_quant_mode": "bfloat16"},
        "TRT-LLM tables 1.3.0rc20 (measured on 1.3.0rc14); no FP8 context-MLA table: BF16 FMHA",
    ),
    "C5": AicSetup(
        _R1, "b200_sxm", "trtllm",
        {"tp_size": 1, "attention_dp_size": 4, "moe_tp_size": 1, "moe_ep_size": 4,
         "moe_quant_mode": "nvfp4", "kvcache_quant_mode": "fp8", "fmha_quant_mode": "bfloat16"},
        "TRT-LLM tables 1.3.0rc20 (Dynamo release not published); MTP as nextn 1 on decode",
    ),
    "C6": AicSetup(
        "openai/gpt-oss-120b", "h200_sxm", "trtllm", {"tp_size": 1},
        "TRT-LLM tables 1.3.0rc20 (measured on a Dec-2025 release)",
    ),
    "C9": AicSetup(
        "MiniMaxAI/MiniMax-M2.5", "h100_sxm", "vllm",
        {"tp_size": 8, "moe_tp_size": 1, "moe_ep_size": 8},
        "vLLM tables 0.24.0 (measured on ~0.21); experts EP8: aiconfigurator refuses TP8 of "
        "the 1536-wide FP8 experts (128-blocks)",
    ),
}  # fmt: skip


class AicStepModel(StepModel):
    """Our StepModel with `step_time` answered by aiconfigurator's compiled engine.

    Memory (weights, KV capacity) stays ours; each DP rank's batch becomes one
    aiconfigurator step (prefill tokens of `isl`-long prompts plus decode sequences at
    their mean context), the worker waits for its slowest rank.
    """

    def __init__(
        self, base: StepModel, handle: Any, isl: int, overhead_s: float, scale: float
    ) -> None:
        self.__dict__.update(base.__dict__)
        self.handle, self.isl, self.overhead_s, self.scale = handle, isl, overhead_s, scale
        self.cache: dict[tuple[int, int, int], float] = {}

    def _rank_ms(self, b: RankBatch) -> float:
        n, p = b.decode_seqs, b.prefill_tokens
        if not n and not p:
            return 0.0
        ctx = b.decode_ctx_tokens // n if n else 0
        key = (p, n, ctx // 32)  # 32-token context buckets: the tables are far coarser
        if key in self.cache:
            return self.cache[key]
        ctx = key[2] * 32 + 16 if n else 0
        if not p:
            ms = self.handle.decode_step_latency(n, max(ctx - 1, 1), 1)
        else:  # decode attention at isl + osl / 2: pick osl so that is the batch's context
            osl = max(2 * (ctx - self.isl), 2)
            ms = self.handle.mixed_step_latency(p, n, self.isl, osl)
        if self.spec is not None and n:
            # aiconfigurator's decode pass verifies nextn + 1 tokens and runs the draft; the
            # scheduler advances one token per step, so that part is spread over the tokens
            # a step yields on average (as StepModel does)
            dec = self.handle.decode_step_latency(n, max(ctx - 1, 1), 1)
            ms -= dec * (1.0 - 1.0 / self.spec.tokens_per_step)
        self.cache[key] = ms
        return ms

    def step_time(self, batches: list[RankBatch]) -> float:
        slowest = max((self._rank_ms(b) for b in batches), default=0.0)
        if not slowest:
            return 0.0
        return slowest / 1000.0 * self.scale * self.par.pp + self.overhead_s


@contextmanager
def aic_cost_source(setup: AicSetup, scale: float = 1.0) -> Iterator[None]:
    """Every StepModel the simulator builds inside is timed by aiconfigurator (its GPU time
    times `scale`), plus the engine's per-step CPU overhead (scheduling, sampling), which
    the tables do not hold."""
    from aiconfigurator_core.sdk.engine import EngineHandle

    handles: dict[int, Any] = {}
    original = SimDeployment.step_model

    def step_model(dep: SimDeployment, pool: PoolSpec) -> StepModel:
        nextn = pool.speculation.draft_tokens if pool.speculation else 0
        if nextn not in handles:
            handles[nextn] = EngineHandle.compile(
                setup.model, setup.system, setup.backend, nextn=nextn, **setup.compile
            )
        base = original(dep, pool)
        overhead = dep.efficiency.step_overhead_s
        return AicStepModel(base, handles[nextn], dep.workload.isl, overhead, scale)

    SimDeployment.step_model = step_model  # type: ignore[method-assign]
    try:
        yield
    finally:
        SimDeployment.step_model = original  # type: ignore[method-assign]


SCALES = (0.6, 0.7, 0.8, 0.9, 1.0, 1.1)  # grid of the one fitted factor on aic's step time


def _log_ratios(pred: Prediction, pt: MeasuredPoint) -> list[float]:
    """log(predicted / measured) of the metrics a step-time factor moves."""
    m = pt.measured
    return [math.log(pred.tok_s_gpu / m.tok_s_gpu), math.log(pred.interactivity / m.interactivity)]


def loo_scaled(points: list[MeasuredPoint]) -> dict[str, Prediction]:
    """aic with one factor on its step time, fitted leave-one-out (engine defaults else).

    Each point is simulated on the SCALES grid; for each point the factor that minimises
    the squared log error of tok/s/GPU and interactivity over the other points (linear
    interpolation between grid nodes, in log space) predicts it.
    """
    grid: dict[str, list[Prediction]] = {}
    for pt in points:
        grid[pt.name] = []
        for scale in SCALES:
            with aic_cost_source(SETUPS[pt.name], scale):
                grid[pt.name].append(simulate_point(pt, None, deployment(pt)))
    fine = [SCALES[0] + i * 0.005 for i in range(int((SCALES[-1] - SCALES[0]) / 0.005) + 1)]

    def at(name: str, scale: float) -> Prediction:
        i = min(max(bisect.bisect_right(SCALES, scale) - 1, 0), len(SCALES) - 2)
        w = (scale - SCALES[i]) / (SCALES[i + 1] - SCALES[i])
        lo, hi = grid[name][i], grid[name][i + 1]
        mix = {
            f: math.exp((1 - w) * math.log(getattr(lo, f)) + w * math.log(getattr(hi, f)))
            for f in ("tok_s_gpu", "interactivity", "ttft_ms")
        }
        return Prediction(**mix)

    out: dict[str, Prediction] = {}
    for pt in points:
        rest = [p for p in points if p.name != pt.name]
        best = min(
            fine, key=lambda s: sum(r * r for p in rest for r in _log_ratios(at(p.name, s), p))
        )
        out[pt.name] = at(pt.name, best)
        print(f"  {pt.name}: aic step-time factor fitted on the others: {best:.3f}")
    return out


def _ratio(pred: Prediction, pt: MeasuredPoint, metric: str) -> float | None:
    want = getattr(pt.measured, metric)
    return pred.value(metric) / want if want else None


def _hit(metric: str, ratio: float) -> bool:
    return 0.5 <= ratio <= 2 if metric == "ttft_ms" else abs(ratio - 1) <= 0.25


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", default=",".join(SETUPS), help="comma-separated names")
    parser.add_argument(
        "--loo-scale", action="store_true", help="add aic with a leave-one-out fitted factor"
    )
    parser.add_argument(
        "--published", type=Path, help=f"the published-points table (or ${PUBLISHED_ENV})"
    )
    args = parser.parse_args()
    try:
        version = importlib.metadata.version("aiconfigurator-core")
    except importlib.metadata.PackageNotFoundError:
        print("aiconfigurator-core is not installed (pip install aiconfigurator-core)")
        return 2
    measured = published_file(args.published)
    if measured is None:
        return 2
    wanted = set(args.points.split(","))
    points = [pt for pt in load(POINTS, measured) if pt.name in wanted and pt.name in SETUPS]
    cal = load_calibration("default")
    columns: tuple[str, ...] = (
        "ours, defaults",
        "ours, default cal.",
        "aic, defaults",
        "aic, default cal.",
    )
    scaled = loo_scaled(points) if args.loo_scale else {}
    if scaled:
        columns += ("aic, LOO factor",)
    print(f"aiconfigurator-core {version}; predicted / measured")
    print(f"{'pt':4} {'metric':14} {'measured':>10} " + " ".join(f"{c:>19}" for c in columns))
    hits = {c: dict.fromkeys(METRICS, 0) for c in columns}
    totals = dict.fromkeys(METRICS, 0)
    started = time.perf_counter()
    for pt in points:
        setup = SETUPS[pt.name]
        dep = deployment(pt)
        preds = [simulate_point(pt, None, dep), predict(pt, cal, dep)]
        with aic_cost_source(setup):
            preds += [simulate_point(pt, None, deployment(pt)), predict(pt, cal, deployment(pt))]
        if scaled:
            preds.append(scaled[pt.name])
        for metric in METRICS:
            ratios = [_ratio(p, pt, metric) for p in preds]
            if ratios[0] is None:
                continue
            totals[metric] += 1
            cells = []
            for column, r in zip(columns, ratios, strict=True):
                assert r is not None
                hits[column][metric] += _hit(metric, r)
                cells.append(f"{r:19.2f}")
            want = getattr(pt.measured, metric)
            print(f"{pt.name:4} {metric:14} {want:10.1f} " + " ".join(cells))
        print(f"     ({setup.note})")
    for column in columns:
        counts = ", ".join(f"{m} {hits[column][m]}/{totals[m]}" for m in METRICS)
        print(f"within target, {column}: {counts}")
    print(f"wall: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
