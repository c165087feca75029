"""From a deployment to its engine and the server arguments the engine modules build from."""

from __future__ import annotations

import math

from inferbench.core.lengths import served_max_model_len
from inferbench.engines import EngineArgs, ServerCommand, engine, serving_engine
from inferbench.engines.layout import Spelling, worker_layout
from inferbench.launch.deployment import Deployment
from inferbench.launch.plan import Engine


def detect_engine(dep: Deployment) -> Engine:
    """The GPU engine whose server a single-node job's framework names, else the simulator."""
    spec = serving_engine(dep.framework)
    return Engine(spec.key) if spec is not None else Engine.SIM


def build_server(
    chosen: Engine, args: EngineArgs, *, job_file: str, python: str | None = None
) -> ServerCommand:
    return engine(str(chosen)).server(args, job_file=job_file, python=python)


def engine_args(
    dep: Deployment, *, host: str = "127.0.0.1", port: int = 8000, model_path: str | None = None
) -> EngineArgs:
    """Derive the engine layout of a single-node deployment from its master fields.

    `model_path`: the cluster's staged copy of the weights; the server then still answers to
    the job's model id (`served_name`), which the bench asks for."""
    layout = worker_layout(dep.tp, dep.ep, dep.dp_attn, dep.pp)
    notes: list[str] = []
    if layout.spelling in (Spelling.DEP_TP_IS_GPUS, Spelling.DEP_ENGINE_TP):
        notes.append(f"{layout.describe()} (DEP written as {layout.spelling})")
    top = max(dep.concurrencies, default=1)
    per_rank = max(1, math.ceil(top / layout.dp))
    return EngineArgs(
        model=model_path or dep.model,
        served_name=dep.model if model_path else None,
        gpus=layout.gpus,
        tp=layout.tp,
        dp=layout.dp,
        ep=layout.ep,
        pp=layout.pp,
        dp_attention=dep.dp_attn,
        max_model_len=served_max_model_len(dep.max_model_len, dep.isl, dep.osl),
        max_num_seqs=per_rank,
        cudagraph_max_bs=per_rank,
        host=host,
        port=port,
        notes=tuple(notes),
        offload=dep.offload,
    )
