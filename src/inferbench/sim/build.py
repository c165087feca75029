"""Turn a SimDeployment into a running SimCluster (workers, KV pools, transfer time)."""

from __future__ import annotations

from inferbench.catalog.schema import Precision
from inferbench.sim.caching import attach_caches, cache_router
from inferbench.sim.deployment import PoolSpec, SimDeployment
from inferbench.sim.engine import Listener, SimCluster, Worker
from inferbench.sim.perf import kv_transfer_time


def _workers(dep: SimDeployment, pool: PoolSpec) -> list[Worker]:
    model = dep.step_model(pool)
    limits = dep.limits(pool)
    tokens = model.kv_capacity_tokens(pool.gpu_memory_utilization, dep.typical_context)
    blocks = tokens // pool.block_size
    return [Worker(f"{pool.role}{i}", model, limits, blocks) for i in range(pool.workers)]


def transfer_seconds(dep: SimDeployment, tokens: int) -> float:
    """KV transfer of `tokens` from a prefill rank to a decode rank."""
    if dep.prefill is None:
        return 0.0
    fixed = _transfer_cost(dep, 0)
    return fixed + (_transfer_cost(dep, 1_000_000) - fixed) * tokens / 1_000_000


def _transfer_cost(dep: SimDeployment, tokens: int) -> float:
    assert dep.prefill is not None
    gpu = dep.gpu
    # both pools inside one scale-up domain (NVL72) move KV over NVLink, else over the NICs
    network = dep.total_gpus > gpu.scale_up_domain or gpu.scale_up_domain <= dep.gpus_per_node
    links = min(dep.prefill.tp * dep.prefill.pp, dep.decode.tp * dep.decode.pp)
    return kv_transfer_time(
        dep.model,
        tokens,
        kv_precision=dep.decode.kv_cache_dtype or Precision.BF16,
        link_gbps=gpu.scale_out_gbps if network else gpu.scale_up_gbps,
        parallel_links=links,
        eff=dep.efficiency,
        network=network,
    )


def build_cluster(
    dep: SimDeployment, listener: Listener | None = None, *, step_time_factor: float = 1.0
) -> SimCluster:
    """The engine for `dep`; `listener` hears tokens and finishes; every step of every
    worker takes `step_time_factor` times as long as modelled (an injected slowdown)."""
    decode = _workers(dep, dep.decode)
    prefill = _workers(dep, dep.prefill) if dep.prefill else None
    for worker in (*decode, *(prefill or ())):
        worker.step_time_factor = step_time_factor
    fixed = transfer_seconds(dep, 0)
    per_token = transfer_seconds(dep, 1) - fixed
    stats = attach_caches(dep, prefill or decode)  # the pool that computes the prompts
    routed = (
        None
        if stats is None
        else cache_router(dep, prefill or decode, by_prefill_tokens=bool(prefill))
    )
    cluster = SimCluster(
        decode,
        prefill,
        transfer_time=lambda tokens: fixed + per_token * tokens,
        listener=listener,
        decode_router=None if prefill else routed,
        prefill_router=routed if prefill else None,
    )
    cluster.cache_stats = stats
    return cluster
