"""Give a deployment's ranks their prefix caches and DRAM tiers, and the cache-aware router.

Sizes: the job's `total-cpu-dram-gb` (InferenceX's aggregate budget for the job's GPUs) is
split evenly over the GPUs; each GPU holds its shard of a token's KV, so a rank's DRAM tier
holds (budget / GPUs) / (KV bytes per token per GPU) tokens, and loads them over each GPU's
own host link in parallel (`host_links.yaml`). In a disaggregated deployment the prefill
pool computes the prompts, so its ranks hold the caches (and the router that reads them); the
decode pool receives each prompt's whole KV over the link, as it has no copy of its own.
"""

from __future__ import annotations

from inferbench.config.agentic import SCENARIO
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.engine import RankRouter, Worker
from inferbench.sim.prefix import CacheSpec, PrefixCache, TierStats, host_link_bytes_per_s
from inferbench.sim.routing import CacheAwareRouter


def attach_caches(dep: SimDeployment, workers: list[Worker]) -> TierStats | None:
    """Give every rank of `workers` (the pool that computes prompts) a prefix cache."""
    spec = dep.cache
    if spec is None or not spec.prefix_caching:
        return None
    stats = TierStats()
    link = host_link_bytes_per_s(dep.gpu.key, spec.host_link_gbps)
    per_gpu = spec.cpu_offload_gb * 1e9 / max(dep.total_gpus, 1)
    for worker in workers:
        per_token = worker.model.kv_bytes_per_token_gpu
        bs = worker.limits.block_size
        cpu_blocks = int(per_gpu / per_token) // bs if per_token > 0 else 0
        for rank in worker.ranks:
            rank.prefix = PrefixCache(
                bs,
                cpu_blocks=cpu_blocks,
                bytes_per_token=per_token,
                link_bytes_per_s=link,
                stats=stats,
            )
    return stats


def cache_router(
    dep: SimDeployment, workers: list[Worker], *, by_prefill_tokens: bool = False
) -> RankRouter | None:
    """The cache-aware router over the pool whose ranks hold the caches, or None."""
    spec = dep.cache
    if spec is None or not spec.prefix_caching or not spec.cache_aware_routing:
        return None
    return CacheAwareRouter(workers, by_prefill_tokens=by_prefill_tokens)


def cache_from_job(data: dict[str, object]) -> CacheSpec | None:
    """An agentic job's prefix caching and DRAM tier (`kv-offloading: dram`); else None."""
    if data.get("scenario-type") != SCENARIO:
        return None
    backend = data.get("kv-offload-backend")
    name = backend.get("name") if isinstance(backend, dict) else None
    dram = data.get("kv-offloading") == "dram"
    gb = data.get("total-cpu-dram-gb")
    return CacheSpec(
        prefix_caching=True,
        cpu_offload_gb=float(gb) if dram and isinstance(gb, int | float) else 0.0,
        backend=str(name) if dram and name else None,
    )
