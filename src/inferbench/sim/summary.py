"""Per-concurrency figures of an estimate, and its result file.

When the load generator's `inferbench.bench.metrics.summarize` and
`inferbench.bench.result` writer are installed they are used, so an estimate and a
measured run agree by construction; until then this module computes the same
sa-bench definitions itself (TTFT, TPOT = (E2EL - TTFT) / (output - 1), ITL from
content chunks, throughputs over the run's duration) and writes the sa-bench fields.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from inferbench import __version__
from inferbench.core.fsio import atomic_write_bytes
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.estimate import EstimateRun

_STATS = (("mean", None), ("median", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9))


@dataclass(frozen=True)
class EstimatePoint:
    """What the estimate table prints for one concurrency."""

    concurrency: int
    requests: int
    duration_s: float
    total_tok_s_per_gpu: float
    output_tok_s_per_gpu: float
    interactivity_median: float  # tok/s/user, median over requests (1000 / TPOT_ms)
    ttft_p50_ms: float
    ttft_p99_ms: float
    tpot_p50_ms: float
    tpot_p99_ms: float
    preemptions: int
    wall_s: float

    @property
    def sim_tokens_per_wall_s(self) -> float:
        return self.output_tok_s_per_gpu * self.duration_s * self._gpus / max(self.wall_s, 1e-9)

    _gpus: int = 1
    ttft_mean_ms: float = 0.0
    tpot_mean_ms: float = 0.0

    def figures(self) -> dict[str, Any]:
        """What `sim estimate --format json` keeps: every public field, and the simulator's
        own speed."""
        out = {k: v for k, v in dataclasses.asdict(self).items() if not k.startswith("_")}
        out["sim_tokens_per_wall_s"] = self.sim_tokens_per_wall_s
        return out


def _ms(values: list[float]) -> np.ndarray:
    return np.asarray(values, dtype=float) * 1000.0 if values else np.zeros(1)


def _ms_of(values: np.ndarray) -> np.ndarray:
    return values * 1000.0 if values.size else np.zeros(1)


def point(run: EstimateRun) -> EstimatePoint:
    cols = run.columns
    ttft = _ms_of(cols.ttft())
    tpot = _ms_of(cols.tpot())
    inputs = int(cols.input_tokens[cols.ok].sum())
    outputs = int(cols.output_tokens[cols.ok].sum())
    duration = max(run.duration_s, 1e-9)
    return EstimatePoint(
        concurrency=run.concurrency,
        requests=int(cols.ok.sum()),
        duration_s=run.duration_s,
        total_tok_s_per_gpu=(inputs + outputs) / duration / run.gpus,
        output_tok_s_per_gpu=outputs / duration / run.gpus,
        interactivity_median=float(np.median(1000.0 / np.maximum(tpot, 1e-9))),
        ttft_p50_ms=float(np.percentile(ttft, 50)),
        ttft_p99_ms=float(np.percentile(ttft, 99)),
        tpot_p50_ms=float(np.percentile(tpot, 50)),
        tpot_p99_ms=float(np.percentile(tpot, 99)),
        preemptions=run.preemptions,
        wall_s=run.wall_s,
        _gpus=run.gpus,
        ttft_mean_ms=float(ttft.mean()),
        tpot_mean_ms=float(tpot.mean()),
    )


def _stats(prefix: str, values_ms: np.ndarray, out: dict[str, Any]) -> None:
    out[f"mean_{prefix}_ms"] = float(values_ms.mean())
    out[f"std_{prefix}_ms"] = float(values_ms.std())
    for name, q in _STATS[1:]:
        assert q is not None
        out[f"{name}_{prefix}_ms"] = float(np.percentile(values_ms, q))


def result_payload(run: EstimateRun, dep: SimDeployment) -> dict[str, Any]:
    """The sa-bench result fields for one concurrency, plus an `inferbench` block."""
    ok = [r for r in run.records if r.ok]
    inputs = [r.input_tokens or 0 for r in ok]
    outputs = [r.output_tokens for r in ok]
    duration = max(run.duration_s, 1e-9)
    itl: list[float] = []
    for r in ok:
        times = r.chunk_times
        itl.extend(b - a for a, b in zip(times, times[1:], strict=False))
    out: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S"),
        "backend": "inferbench-sim",
        "model_id": dep.served_model,
        "tokenizer_id": dep.served_model,
        "num_prompts": len(run.records),
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": run.concurrency,
        "duration": run.duration_s,
        "completed": len(ok),
        "total_input_tokens": sum(inputs),
        "total_output_tokens": sum(outputs),
        "request_throughput": len(ok) / duration,
        "output_throughput": sum(outputs) / duration,
        "total_token_throughput": (sum(inputs) + sum(outputs)) / duration,
    }
    _stats("ttft", _ms([r.ttft for r in ok if r.ttft is not None]), out)
    _stats("tpot", _ms([t for r in ok if (t := r.tpot) is not None]), out)
    _stats("itl", _ms(itl), out)
    _stats("e2el", _ms([r.e2el for r in ok if r.e2el is not None]), out)
    out["input_lens"] = inputs
    out["output_lens"] = outputs
    out["inferbench"] = {
        "schema_version": 1,
        "producer": "sim-estimate",
        "client_version": __version__,
        "deployment": dep.describe(),
        "gpus": dep.total_gpus,
        "failures": {},
        "preemptions": run.preemptions,
        "simulated": True,
        "wall_s": run.wall_s,
        "engine": dep.engine,
        "warnings": list(dep.warnings),
    }
    return out


def write_result(
    run: EstimateRun, dep: SimDeployment, path: Path, *, base_url: str = "sim://estimate"
) -> Path:
    """Write the result file for `run`: the load generator's writer when it is installed."""
    atomic_write_bytes(path, result_bytes(run, dep, base_url=base_url))
    return path


def result_bytes(
    run: EstimateRun, dep: SimDeployment, *, base_url: str = "sim://estimate"
) -> bytes:
    """The result file's bytes for `run` (what `write_result` writes)."""
    try:
        return _bench_result_bytes(run, dep, base_url)
    except (ImportError, AttributeError, TypeError, ValueError):
        # the bench package's result writer is missing or changed shape: write the
        # sa-bench fields ourselves so the estimate still leaves a readable file
        return orjson.dumps(result_payload(run, dep), option=orjson.OPT_INDENT_2)


def _bench_result_bytes(run: EstimateRun, dep: SimDeployment, base_url: str) -> bytes:
    """The result file `inferbench bench` writes, built from the estimate's records."""
    data: bytes = point_result_of(run, dep, base_url=base_url).to_json_bytes()
    return data


def point_result_of(
    run: EstimateRun, dep: SimDeployment, *, base_url: str = "sim://estimate"
) -> Any:
    """The load generator's `PointResult` of `run` (what its result file holds)."""
    metrics = importlib.import_module("inferbench.bench.metrics")
    result = importlib.import_module("inferbench.bench.result")
    settings = importlib.import_module("inferbench.bench.settings")
    schedule = importlib.import_module("inferbench.bench.schedule")
    workload = importlib.import_module("inferbench.bench.workload")
    now = dt.datetime.now(dt.UTC)
    point_result = result.build_point_result(
        records=run.columns,
        metrics=metrics.summarize_columns(run.columns, run.duration_s),
        endpoint=result.EndpointInfo(
            base_url=base_url, model=dep.served_model, api=settings.ApiKind.COMPLETIONS
        ),
        workload=workload.RandomWorkload(
            isl=dep.workload.isl, osl=dep.workload.osl, range_ratio=dep.workload.random_range_ratio
        ),
        load=schedule.LoadPoint(concurrency=run.concurrency, num_prompts=run.columns.size),
        request=settings.RequestOptions(),
        client=settings.ClientOptions(),
        started_at=now - dt.timedelta(seconds=run.wall_s),
        finished_at=now,
        backend="inferbench-sim",
        tokenizer_id=dep.served_model,
    )
    if dep.warnings:
        block = point_result.inferbench.model_copy(update={"warnings": list(dep.warnings)})
        point_result = point_result.model_copy(update={"inferbench": block})
    return point_result
