"""The server's own view of the cache, read from its Prometheus `/metrics`.

Read once when the window starts and once when it ends; counters are differenced, gauges
are taken at the end. Names are vLLM's and SGLang's, as InferenceX's agentic aggregation
reads them: vLLM `prefix_cache_{queries,hits}` (GPU prefix cache, in tokens),
`external_prefix_cache_{queries,hits}` (a KV connector: CPU offload, LMCache, Mooncake),
`prompt_tokens_by_source{source=local_cache_hit|external_kv_transfer|local_compute}`,
`kv_offload_bytes_{gpu_to_cpu,cpu_to_gpu}`, `kv_cache_usage_perc`,
`cpu_kv_cache_usage_perc`; SGLang `cached_tokens{cache_source=device|host}`,
`prompt_tokens`, `cache_hit_rate`, `hicache_host_{used,total}_tokens`, `token_usage`.
"""

from __future__ import annotations

from collections import defaultdict

from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel, ConfigDict

Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]


class ServerCacheMetrics(BaseModel):
    """What the server said about its caches over the window (None: not exported)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: str | None = None  # vllm or sglang, from the metric prefix
    prompt_tokens: float | None = None
    prefix_cache_queries: float | None = None
    prefix_cache_hits: float | None = None
    gpu_hit_rate: float | None = None
    external_hit_rate: float | None = None  # CPU / connector tier
    overall_hit_rate: float | None = None
    offload_bytes_gpu_to_cpu: float | None = None
    offload_bytes_cpu_to_gpu: float | None = None
    gpu_kv_usage: float | None = None
    cpu_kv_usage: float | None = None
    error: str | None = None  # why the metrics could not be read


def parse_metrics(text: str) -> Samples:
    """Sample values by name (counters keep their `_total` suffix) and label set."""
    out: Samples = defaultdict(dict)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = tuple(sorted((k, v) for k, v in sample.labels.items()))
            out[sample.name][labels] = float(sample.value)
    return dict(out)


async def scrape(base_url: str, timeout_s: float = 10.0) -> Samples | str:
    """The parsed `/metrics` of the server at `base_url`, or why it could not be read."""
    import aiohttp  # here: the result-file model above is read without the HTTP client

    root = base_url[:-3] if base_url.endswith("/v1") else base_url
    try:
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(root + "/metrics") as resp,
        ):
            if resp.status != 200:
                return f"GET /metrics: HTTP {resp.status}"
            return parse_metrics(await resp.text())
    except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
        return f"GET /metrics: {type(exc).__name__}: {exc}"[:200]


def _total(samples: Samples, name: str, **match: str) -> float | None:
    """Sum of `name` (or `name_total`) over series whose labels include `match`."""
    for key in (name + "_total", name):
        series = samples.get(key)
        if series is not None:
            return sum(v for labels, v in series.items() if set(match.items()) <= set(labels))
    return None


def _gauge_max(samples: Samples, name: str) -> float | None:
    series = samples.get(name)
    return max(series.values()) if series else None


def _delta(before: Samples, after: Samples, name: str, **match: str) -> float | None:
    end = _total(after, name, **match)
    if end is None:
        return None
    start = _total(before, name, **match) or 0.0
    return max(0.0, end - start)


def _rate(num: float | None, den: float | None) -> float | None:
    return num / den if num is not None and den else None


def cache_metrics(before: Samples, after: Samples) -> ServerCacheMetrics:
    if any(name.startswith("sglang:") for name in after):
        prompt = _delta(before, after, "sglang:prompt_tokens")
        device = _delta(before, after, "sglang:cached_tokens", cache_source="device")
        host = _delta(before, after, "sglang:cached_tokens", cache_source="host")
        cached = _delta(before, after, "sglang:cached_tokens")
        used = _gauge_max(after, "sglang:hicache_host_used_tokens")
        total = _gauge_max(after, "sglang:hicache_host_total_tokens")
        overall = _rate(cached, prompt)
        if overall is None:
            overall = _gauge_max(after, "sglang:cache_hit_rate")
        return ServerCacheMetrics(
            engine="sglang",
            prompt_tokens=prompt,
            prefix_cache_queries=prompt,
            prefix_cache_hits=cached,
            gpu_hit_rate=_rate(device, prompt),
            external_hit_rate=_rate(host, prompt),
            overall_hit_rate=overall,
            gpu_kv_usage=_gauge_max(after, "sglang:token_usage"),
            cpu_kv_usage=_rate(used, total),
        )
    if not any(name.startswith("vllm:") for name in after):
        return ServerCacheMetrics(error="no vllm: or sglang: metrics exported")
    queries = _delta(before, after, "vllm:prefix_cache_queries")
    hits = _delta(before, after, "vllm:prefix_cache_hits")
    ext_q = _delta(before, after, "vllm:external_prefix_cache_queries")
    ext_h = _delta(before, after, "vllm:external_prefix_cache_hits")
    local = _delta(before, after, "vllm:prompt_tokens_by_source", source="local_cache_hit")
    external = _delta(before, after, "vllm:prompt_tokens_by_source", source="external_kv_transfer")
    by_source = _delta(before, after, "vllm:prompt_tokens_by_source")
    gpu_rate = _rate(hits, queries)
    ext_rate = _rate(ext_h, ext_q)
    overall = gpu_rate
    if by_source:
        gpu_rate = _rate(local, by_source) if local is not None else gpu_rate
        ext_rate = _rate(external, by_source) if external is not None else ext_rate
        overall = ((local or 0.0) + (external or 0.0)) / by_source
    return ServerCacheMetrics(
        engine="vllm",
        prompt_tokens=_delta(before, after, "vllm:prompt_tokens"),
        prefix_cache_queries=queries,
        prefix_cache_hits=hits,
        gpu_hit_rate=gpu_rate,
        external_hit_rate=ext_rate,
        overall_hit_rate=overall,
        offload_bytes_gpu_to_cpu=_delta(before, after, "vllm:kv_offload_bytes_gpu_to_cpu"),
        offload_bytes_cpu_to_gpu=_delta(before, after, "vllm:kv_offload_bytes_cpu_to_gpu"),
        gpu_kv_usage=_gauge_max(after, "vllm:kv_cache_usage_perc")
        or _gauge_max(after, "vllm:gpu_cache_usage_perc"),
        cpu_kv_usage=_gauge_max(after, "vllm:cpu_kv_cache_usage_perc"),
    )
