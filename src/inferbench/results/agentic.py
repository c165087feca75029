"""The identity of an agentic point: its own kind of curve in the store and the report.

An agentic job has no isl/osl. Its points are stored with `dataset` =
`agentic-coding:<trace format>:kv-<kv-offloading>[-<backend>]` (what tells the curve apart
from fixed-length curves of the same configuration, and offload tiers from each other) and
isl/osl = the trace set's mean requested prompt and output tokens per request, which the
result file records and which are the same at every concurrency of the job, so the points
of one job form one curve.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferbench.bench.workload import TraceWorkload
from inferbench.config.agentic import SCENARIO
from inferbench.results.benchfile import BenchFile

DATASET_PREFIX = SCENARIO + ":"


def agentic_kind(dataset: str) -> str:
    """`synth kv-dram-vllm-native` of an agentic dataset; "" for any other dataset."""
    if not dataset.startswith(DATASET_PREFIX):
        return ""
    return dataset.removeprefix(DATASET_PREFIX).replace(":", " ")


def agentic_fields(job: Mapping[str, Any], bench: BenchFile) -> dict[str, Any]:
    """Identity fields an agentic result supplies (nothing for other results)."""
    workload = bench.point.inferbench.workload if bench.point is not None else None
    if not isinstance(workload, TraceWorkload):
        return {}
    tier = f"kv-{job.get('kv-offloading') or 'none'}"
    backend = job.get("kv-offload-backend")
    if isinstance(backend, Mapping) and backend.get("name"):
        tier += f"-{backend['name']}"
    out: dict[str, Any] = {"dataset": f"{DATASET_PREFIX}{workload.format}:{tier}"}
    if job.get("isl") in (None, ""):
        out["isl"] = workload.mean_input or 1
    if job.get("osl") in (None, ""):
        out["osl"] = workload.mean_output or 1
    return out
