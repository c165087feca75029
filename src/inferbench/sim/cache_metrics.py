"""The prefix cache's counters in the names vLLM and SGLang export (Prometheus text).

vLLM: `prefix_cache_{queries,hits}` (GPU tier, tokens), `external_prefix_cache_*` (the
offload connector), `prompt_tokens_by_source{source}`, `kv_offload_bytes_*`,
`cpu_kv_cache_usage_perc`. SGLang (when the deployment's engine is sglang): also
`cached_tokens{cache_source=device|host}`, `prompt_tokens`, `cache_hit_rate`,
`hicache_host_{used,total}_tokens`.
"""

from __future__ import annotations

from inferbench.sim.engine import SimCluster


def _counter(lines: list[str], name: str, labels: str, value: float, help_text: str) -> None:
    lines += [f"# HELP {name} {help_text}", f"# TYPE {name} counter"]
    lines.append(f"{name}_total{{{labels}}} {value}")


def _gauge(lines: list[str], name: str, labels: str, value: float, help_text: str) -> None:
    lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", f"{name}{{{labels}}} {value}"]


def render_cache_metrics(cluster: SimCluster, labels: str, engine: str) -> str:
    stats = cluster.cache_stats
    if stats is None:
        return ""
    q, gpu, cpu = stats.queried_tokens, stats.gpu_hit_tokens, stats.cpu_hit_tokens
    caches = [r.prefix for w in cluster.decode_workers for r in w.ranks if r.prefix is not None]
    cpu_total = sum(c.cpu_blocks * c.block_size for c in caches)
    cpu_used = sum(c.cpu_used_blocks * c.block_size for c in caches)
    lines: list[str] = []
    _counter(lines, "vllm:prefix_cache_queries", labels, q, "Prefix cache queries, in tokens.")
    _counter(lines, "vllm:prefix_cache_hits", labels, gpu, "Prefix cache hits, in tokens.")
    _counter(lines, "vllm:external_prefix_cache_queries", labels, q - gpu, "External queries.")
    _counter(lines, "vllm:external_prefix_cache_hits", labels, cpu, "External cache hits.")
    lines += [
        "# HELP vllm:prompt_tokens_by_source Prompt tokens by where their KV came from.",
        "# TYPE vllm:prompt_tokens_by_source counter",
    ]
    for source, value in (
        ("local_cache_hit", gpu),
        ("external_kv_transfer", cpu),
        ("local_compute", q - gpu - cpu),
    ):
        lines.append(f'vllm:prompt_tokens_by_source_total{{{labels},source="{source}"}} {value}')
    _counter(lines, "vllm:kv_offload_bytes_gpu_to_cpu", labels, stats.write_bytes, "Offloaded.")
    _counter(lines, "vllm:kv_offload_bytes_cpu_to_gpu", labels, stats.load_bytes, "Loaded.")
    if cpu_total:
        _gauge(lines, "vllm:cpu_kv_cache_usage_perc", labels, cpu_used / cpu_total, "DRAM use.")
    if engine == "sglang":
        lines += [
            "# HELP sglang:cached_tokens Prefix-cached prompt tokens by tier.",
            "# TYPE sglang:cached_tokens counter",
            f'sglang:cached_tokens_total{{{labels},cache_source="device"}} {gpu}',
            f'sglang:cached_tokens_total{{{labels},cache_source="host"}} {cpu}',
        ]
        _counter(lines, "sglang:prompt_tokens", labels, q, "Prompt tokens.")
        _gauge(lines, "sglang:cache_hit_rate", labels, (gpu + cpu) / q if q else 0.0, "Hit rate.")
        _gauge(lines, "sglang:hicache_host_used_tokens", labels, cpu_used, "HiCache used.")
        _gauge(lines, "sglang:hicache_host_total_tokens", labels, cpu_total, "HiCache size.")
    return "\n".join(lines) + "\n"
