"""The prefix cache's counters, in the names the simulated engine exports (Prometheus text).

The names are the engine's own (`EngineSpec.cache_metrics`: vLLM's `prefix_cache_*`,
`prompt_tokens_by_source{source}`, `kv_offload_bytes_*`; SGLang's
`cached_tokens{cache_source}`, `cache_hit_rate`, `hicache_host_*_tokens`); an engine that
exports none (TRT-LLM, ATOM) is reported in vLLM's, so a replay still sees the simulated cache.
"""

from __future__ import annotations

from inferbench.engines import CacheMetricNames, engine, find_engine
from inferbench.sim.engine import SimCluster


def _counter(lines: list[str], name: str | None, labels: str, value: float, text: str) -> None:
    if name is None:
        return
    lines += [f"# HELP {name} {text}", f"# TYPE {name} counter"]
    lines.append(f"{name}_total{{{labels}}} {value}")


def _gauge(lines: list[str], name: str | None, labels: str, value: float, text: str) -> None:
    if name is None:
        return
    lines += [f"# HELP {name} {text}", f"# TYPE {name} gauge", f"{name}{{{labels}}} {value}"]


def metric_names(engine_name: str) -> CacheMetricNames:
    """The cache metric names the simulator exports for a deployment of `engine_name`."""
    spec = find_engine(engine_name)
    names = spec.cache_metrics if spec is not None else None
    if names is None:
        names = engine("vllm").cache_metrics
    assert names is not None
    return names


def render_cache_metrics(cluster: SimCluster, labels: str, engine_name: str) -> str:
    stats = cluster.cache_stats
    if stats is None:
        return ""
    q, gpu, cpu = stats.queried_tokens, stats.gpu_hit_tokens, stats.cpu_hit_tokens
    caches = [r.prefix for w in cluster.decode_workers for r in w.ranks if r.prefix is not None]
    cpu_total = sum(c.cpu_blocks * c.block_size for c in caches)
    cpu_used = sum(c.cpu_used_blocks * c.block_size for c in caches)
    n = metric_names(engine_name)
    lines: list[str] = []
    if not n.prompt_tokens.startswith("vllm:"):  # the base metrics (metrics.py) carry vLLM's
        _counter(lines, n.prompt_tokens, labels, q, "Prompt tokens.")
    _counter(lines, n.queried_tokens, labels, q, "Prefix cache queries, in tokens.")
    if n.hit_tokens != n.tiers.metric:
        _counter(lines, n.hit_tokens, labels, gpu, "Prefix cache hits, in tokens.")
    _counter(lines, n.external_queries, labels, q - gpu, "External queries.")
    _counter(lines, n.external_hits, labels, cpu, "External cache hits.")
    tiers = n.tiers
    lines += [
        f"# HELP {tiers.metric} Prompt tokens by where their KV came from.",
        f"# TYPE {tiers.metric} counter",
    ]
    by_tier = [(tiers.gpu, gpu), (tiers.external, cpu)]
    if tiers.computed is not None:
        by_tier.append((tiers.computed, q - gpu - cpu))
    for value, tokens in by_tier:
        lines.append(f'{tiers.metric}_total{{{labels},{tiers.label}="{value}"}} {tokens}')
    _counter(lines, n.offload_bytes_gpu_to_cpu, labels, stats.write_bytes, "Offloaded.")
    _counter(lines, n.offload_bytes_cpu_to_gpu, labels, stats.load_bytes, "Loaded.")
    rate = (gpu + cpu) / q if q else 0.0
    _gauge(lines, n.hit_rate_gauge, labels, rate, "Hit rate.")
    if cpu_total:
        _gauge(lines, n.cpu_kv_usage, labels, cpu_used / cpu_total, "DRAM use.")
    if n.cpu_kv_tokens is not None:
        used, total = n.cpu_kv_tokens
        _gauge(lines, used, labels, cpu_used, "Host tier used.")
        _gauge(lines, total, labels, cpu_total, "Host tier size.")
    return "\n".join(lines) + "\n"
