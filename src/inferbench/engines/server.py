"""What every engine's command builder receives and returns: one single-node server."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Offload:
    """An agentic job's KV tier (`kv-offloading`, `kv-offload-backend`) and its window."""

    tier: str  # none or dram
    backend: str | None  # vllm-native, vllm-simple, lmcache, mooncake, hicache
    backend_version: str | None
    total_cpu_dram_gb: int
    duration_s: int


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
    ready_pattern: str | None = None  # a stdout line (one group: the base URL) for port 0
