"""Rows of aiconfigurator's silicon sample as the simulator's measured points.

aiconfigurator-core (Apache-2.0) ships `systems/silicon_sample.csv`: measured serving
points (TTFT and TPOT) with the model, system, backend and version, precision, aggregated
or disaggregated mode, isl/osl, the worker layout (TP, PP, attention DP, MoE TP/EP; per
pool and with worker counts when disaggregated) and, in `silicon_data_source`, the
concurrency the client held. It is a fit-time data source only: benchmarks read it from
the user's own install of that package, inferbench never ships or needs it.

Each row becomes a sweep job in InferenceX's field names (what `calibrate.deployment`
reads) or a refusal that names why the simulator cannot express it. The row records no
throughput: tok/s/GPU is derived from its own TTFT and TPOT for the closed loop it ran
(each of `concurrency` users sends a prompt as soon as its answer ends), so a fit that
matches TPOT and TTFT matches it too.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from inferbench.core.errors import InputError
from inferbench.sim.calibrate import Measured, MeasuredPoint, deployment

SYSTEMS = {  # aiconfigurator system name -> hardware catalog key
    "h100_sxm": "h100",
    "h200_sxm": "h200",
    "b200_sxm": "b200",
    "b300_sxm": "b300",
    "gb200": "gb200",
    "gb200_sxm": "gb200",
    "gb300": "gb300",
    "gb300_sxm": "gb300",
}
FRAMEWORKS = {"trtllm": "trt", "sglang": "sglang", "vllm": "vllm"}  # backend -> framework
_CONCURRENCY = re.compile(r"silicon_concurrency=(\d+)")
STAT = "mean"  # the sample does not say which statistic; aiconfigurator compares to means


@dataclass(frozen=True)
class SiliconPoint:
    """A row the simulator can run: its point and the labels results are grouped by."""

    id: str
    model: str
    gpu: str
    engine: str  # the row's backend (trtllm, sglang, vllm)
    mode: str  # agg or disagg
    deployment: str  # rows of one deployment differ only in concurrency
    point: MeasuredPoint


@dataclass(frozen=True)
class Refused:
    """A row the simulator cannot express, and why."""

    id: str
    model: str
    gpu: str
    engine: str
    mode: str
    reason: str


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _int(row: Mapping[str, str], key: str) -> int | None:
    text = (row.get(key) or "").strip()
    return int(float(text)) if text else None


def concurrency(row: Mapping[str, str]) -> int | None:
    """The client's concurrency: `silicon_concurrency=` in the source, else (aggregated)
    the batch per attention rank times the ranks."""
    match = _CONCURRENCY.search(row.get("silicon_data_source", ""))
    if match:
        return int(match.group(1))
    batch, adp = _int(row, "batch_size"), _int(row, "attention_dp_size") or 1
    return batch * adp if batch and row.get("mode") == "agg" else None


def _layout(row: Mapping[str, str], prefix: str) -> tuple[dict[str, object], int] | str:
    """One worker's layout in master-config fields, and its GPUs; or why it cannot be."""
    tp = _int(row, f"{prefix}tp_size") or 1
    pp = _int(row, f"{prefix}pp_size") or 1
    adp = _int(row, f"{prefix}attention_dp_size") or 1
    ep = _int(row, f"{prefix}moe_ep_size") or 1
    if adp > 1 and tp > 1:
        return f"attention TP {tp} x DP {adp} in one worker (a master config runs one or the other)"
    gpus = tp * adp
    fields: dict[str, object] = {"tp": gpus, "ep": ep, "pp": pp}
    if adp > 1:
        fields["dp-attn"] = True
    return fields, gpus * pp


def to_job(row: Mapping[str, str]) -> tuple[dict[str, object], int] | str:
    """The row as a sweep job and its GPU count; or the reason it is not expressible."""
    gpu = SYSTEMS.get(row.get("system", ""))
    framework = FRAMEWORKS.get(row.get("backend", ""))
    if gpu is None:
        return f"system {row.get('system')!r} has no hardware catalog entry"
    if framework is None:
        return f"backend {row.get('backend')!r} is not a simulated engine"
    conc = concurrency(row)
    if not conc:
        return "no concurrency recorded (silicon_concurrency, or batch size when aggregated)"
    job: dict[str, object] = {
        "model": row["model_path"],
        "precision": row.get("precision") or "bf16",
        "runner": gpu,
        "framework": framework,
        "conc": conc,
        "isl": int(row["isl"]),
        "osl": int(row["osl"]),
    }
    if row.get("mode") == "agg":
        layout = _layout(row, "")
        if isinstance(layout, str):
            return layout
        job.update(layout[0])
        return job, layout[1]
    workers = {role: _int(row, f"{role}_num_workers") for role in ("prefill", "decode")}
    if not all(workers.values()):
        return "disaggregated row records no prefill/decode worker counts"
    job["framework"] = f"dynamo-{framework}"
    gpus = 0
    for role, count in workers.items():
        layout = _layout(row, f"{role}_")
        if isinstance(layout, str):
            return f"{role}: {layout}"
        job[role] = {"num-worker": count, **layout[0]}
        gpus += int(count or 0) * layout[1]
    return job, gpus


def measured(row: Mapping[str, str], conc: int, gpus: int) -> Measured:
    """TPOT and TTFT as recorded; tok/s/GPU of the closed loop they imply (input and output
    tokens, as sa-bench's total throughput counts them)."""
    ttft, tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
    isl, osl = int(row["isl"]), int(row["osl"])
    request_s = (ttft + (osl - 1) * tpot) / 1000.0
    return Measured(
        tok_s_gpu=conc * (isl + osl) / request_s / gpus,
        interactivity=1000.0 / tpot,
        ttft_ms=ttft,
    )


_CURVE_KEYS = (
    "model_path", "system", "backend", "backend_version", "precision", "mode", "isl", "osl",
    "gemm_quant_mode", "moe_quant_mode", "tp_size", "pp_size", "attention_dp_size",
    "moe_tp_size", "moe_ep_size",
    *(f"{role}_{key}" for role in ("prefill", "decode") for key in (
        "num_workers", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size"
    )),
)  # fmt: skip


def deployment_key(row: Mapping[str, str]) -> str:
    """Rows of one deployment (everything but batch and concurrency) form one curve."""
    return "|".join(row.get(key, "") for key in _CURVE_KEYS)


def express(row: Mapping[str, str]) -> SiliconPoint | Refused:
    """The row as a point the simulator runs, or refused with the simulator's reason
    (including its own checks, e.g. a prompt longer than the engine's default budget)."""
    labels = {
        "id": row.get("id", "?"),
        "model": row.get("model_path", "?"),
        "gpu": SYSTEMS.get(row.get("system", ""), row.get("system", "?")),
        "engine": row.get("backend", "?"),
        "mode": row.get("mode", "?"),
    }
    try:
        job = to_job(row)
        if isinstance(job, str):
            return Refused(**labels, reason=job)
        fields, gpus = job
        pt = MeasuredPoint(
            name=labels["id"],
            job=fields,
            measured=measured(row, int(str(fields["conc"])), gpus),
            stat=STAT,
        )
        deployment(pt)  # the simulator's own checks
    except (InputError, KeyError, ValueError) as exc:
        message = exc.message if isinstance(exc, InputError) else f"{type(exc).__name__}: {exc}"
        return Refused(**labels, reason=message.splitlines()[0])
    return SiliconPoint(**labels, deployment=deployment_key(row), point=pt)
