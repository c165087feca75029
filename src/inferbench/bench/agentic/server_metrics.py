"""The server's own view of the cache, read from its Prometheus `/metrics`.

Read once when the window starts and once when it ends; counters are differenced, gauges
are taken at the end. Names are each engine's own (`EngineSpec.cache_metrics`), as
InferenceX's agentic aggregation reads them: vLLM `prefix_cache_{queries,hits}` (GPU prefix
cache, in tokens),
`external_prefix_cache_{queries,hits}` (a KV connector: CPU offload, LMCache, Mooncake),
`prompt_tokens_by_source{source=local_cache_hit|external_kv_transfer|local_compute}`,
`kv_offload_bytes_{gpu_to_cpu,cpu_to_gpu}`, `kv_cache_usage_perc`,
`cpu_kv_cache_usage_perc`; SGLang `cached_tokens{cache_source=device|host}`,
`prompt_tokens`, `cache_hit_rate`, `hicache_host_{used,total}_tokens`, `token_usage`.
"""

from __future__ import annotations

from collections import defaultdict

from prometheus_client.parser import text_string_to_metric_families

from inferbench.core.model import FrozenModel
from inferbench.engines import CacheMetricNames, engines

Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]


class ServerCacheMetrics(FrozenModel):
    """What the server said about its caches over the window (None: not exported)."""

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


# A /metrics page answers in milliseconds; a stalled server must not add much to a replay
# that --duration bounds (two 10 s waits made one end 58 s after a 5 s window).
SCRAPE_TIMEOUT_S = 5.0


async def scrape_text(
    base_url: str, timeout_s: float = SCRAPE_TIMEOUT_S
) -> tuple[str | None, str | None]:
    """The `/metrics` text of the server at `base_url` and None, or None and why not."""
    import aiohttp  # here: the result-file model above is read without the HTTP client

    root = base_url[:-3] if base_url.endswith("/v1") else base_url
    try:
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(root + "/metrics") as resp,
        ):
            if resp.status != 200:
                return None, f"GET /metrics: HTTP {resp.status}"
            return await resp.text(), None
    except (TimeoutError, aiohttp.ClientError, ValueError) as exc:
        return None, f"GET /metrics: {type(exc).__name__}: {exc}"[:200]


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


def _engine_names(after: Samples) -> tuple[str, CacheMetricNames] | None:
    """The engine whose cache metrics the scrape holds (its hit counter, else its prefix)."""
    known = [(spec.key, spec.cache_metrics) for spec in engines() if spec.cache_metrics]
    for key, names in known:
        if names.hit_tokens in after or names.hit_tokens + "_total" in after:
            return key, names
    for key, names in known:
        if any(name.startswith(names.prefix) for name in after):
            return key, names
    return None


def cache_metrics(before: Samples, after: Samples) -> ServerCacheMetrics:
    found = _engine_names(after)
    if found is None:
        prefixes = " or ".join(s.cache_metrics.prefix for s in engines() if s.cache_metrics)
        return ServerCacheMetrics(error=f"no {prefixes} metrics exported")
    engine, n = found

    def delta(name: str | None, **match: str) -> float | None:
        return None if name is None else _delta(before, after, name, **match)

    tiers = n.tiers
    prompt = delta(n.prompt_tokens)
    queries = delta(n.queried_tokens) if n.queried_tokens else prompt
    hits = delta(n.hit_tokens)
    gpu = delta(tiers.metric, **{tiers.label: tiers.gpu})
    external = delta(tiers.metric, **{tiers.label: tiers.external})
    if tiers.computed is not None:
        # vLLM: the GPU counters are the GPU tier's; the by-source family covers every prompt
        # token, so it gives each tier's share when the server exports it
        gpu_rate = _rate(hits, queries)
        ext_rate = _rate(delta(n.external_hits), delta(n.external_queries))
        overall = gpu_rate
        by_source = delta(tiers.metric)
        if by_source:
            gpu_rate = _rate(gpu, by_source) if gpu is not None else gpu_rate
            ext_rate = _rate(external, by_source) if external is not None else ext_rate
            overall = ((gpu or 0.0) + (external or 0.0)) / by_source
    else:
        # SGLang: hits of every tier in one family, over the prompt tokens
        gpu_rate, ext_rate = _rate(gpu, queries), _rate(external, queries)
        overall = _rate(hits, queries)
        if overall is None and n.hit_rate_gauge is not None:
            overall = _gauge_max(after, n.hit_rate_gauge)
    cpu_usage = _gauge_max(after, n.cpu_kv_usage) if n.cpu_kv_usage else None
    if n.cpu_kv_tokens is not None:
        used, total = (_gauge_max(after, name) for name in n.cpu_kv_tokens)
        cpu_usage = _rate(used, total)
    gpu_usage = None
    for name in n.gpu_kv_usage:  # the current name first; an idle server's 0.0 is a reading
        if gpu_usage is None:
            gpu_usage = _gauge_max(after, name)
    return ServerCacheMetrics(
        engine=engine,
        prompt_tokens=prompt,
        prefix_cache_queries=queries,
        prefix_cache_hits=hits,
        gpu_hit_rate=gpu_rate,
        external_hit_rate=ext_rate,
        overall_hit_rate=overall,
        offload_bytes_gpu_to_cpu=delta(n.offload_bytes_gpu_to_cpu),
        offload_bytes_cpu_to_gpu=delta(n.offload_bytes_cpu_to_gpu),
        gpu_kv_usage=gpu_usage,
        cpu_kv_usage=cpu_usage,
    )
