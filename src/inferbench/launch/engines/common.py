"""What every engine builder receives: the engine layout and limits of one server."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from inferbench.config.layout import Spelling, worker_layout
from inferbench.core.lengths import max_model_len
from inferbench.launch.deployment import Deployment, Offload


@dataclass(frozen=True)
class EngineArgs:
    """Engine-level parallelism and limits of one single-node server.

    `tp * dp * pp == gpus`. DEP (data-parallel attention + expert parallel) is written two
    ways in master configs (`tp: N, ep: N, dp-attn: true` and `tp: 1, ep: N, dp-attn:
    true`); both mean N GPUs, engine TP 1, DP N, expert parallel on.
    """

    model: str
    gpus: int
    tp: int
    dp: int
    ep: int
    pp: int
    dp_attention: bool
    max_model_len: int
    max_num_seqs: int  # per DP rank: the largest concurrency spread over the ranks
    cudagraph_max_bs: int  # capture up to the per-rank batch so decode never runs eager
    host: str = "127.0.0.1"
    port: int = 8000
    served_name: str | None = None  # the API model name when `model` is a staged path
    notes: tuple[str, ...] = field(default_factory=tuple)
    offload: Offload | None = None  # agentic jobs: prefix caching and the KV offload tier

    @property
    def expert_parallel(self) -> bool:
        return self.ep > 1


@dataclass(frozen=True)
class ServerCommand:
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # extra rendered files by name
    health_path: str = "/health"
    # the model name requests must carry, where the server does not answer to the job's
    # model id (None: it does, by --served-model-name or because it was given the id)
    api_model: str | None = None


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
        max_model_len=dep.max_model_len or max_model_len(dep.isl, dep.osl),
        max_num_seqs=per_rank,
        cudagraph_max_bs=per_rank,
        host=host,
        port=port,
        notes=tuple(notes),
        offload=dep.offload,
    )
