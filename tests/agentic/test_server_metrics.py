"""The server's cache figures from vLLM and SGLang /metrics text (names as they export them)."""

from __future__ import annotations

import pytest

from inferbench.bench.agentic.server_metrics import cache_metrics, parse_metrics

VLLM = """# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{{model_name="m"}} {q}
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{{model_name="m"}} {h}
# TYPE vllm:prompt_tokens_by_source counter
vllm:prompt_tokens_by_source_total{{model_name="m",source="local_cache_hit"}} {h}
vllm:prompt_tokens_by_source_total{{model_name="m",source="external_kv_transfer"}} {x}
vllm:prompt_tokens_by_source_total{{model_name="m",source="local_compute"}} {c}
# TYPE vllm:kv_offload_bytes_gpu_to_cpu counter
vllm:kv_offload_bytes_gpu_to_cpu_total{{model_name="m"}} {w}
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{{model_name="m"}} {u}
"""

SGLANG = """# TYPE sglang:prompt_tokens counter
sglang:prompt_tokens_total{{model_name="m",tp_rank="0"}} {p}
# TYPE sglang:cached_tokens counter
sglang:cached_tokens_total{{model_name="m",cache_source="device"}} {d}
sglang:cached_tokens_total{{model_name="m",cache_source="host"}} {hst}
# TYPE sglang:hicache_host_used_tokens gauge
sglang:hicache_host_used_tokens{{model_name="m"}} 250
# TYPE sglang:hicache_host_total_tokens gauge
sglang:hicache_host_total_tokens{{model_name="m"}} 1000
"""


def test_vllm_counters_are_differenced_over_the_window() -> None:
    before = parse_metrics(VLLM.format(q=1000, h=100, x=0, c=900, w=0, u=0.5))
    after = parse_metrics(VLLM.format(q=3000, h=1300, x=400, c=1300, w=4096, u=0.5))
    m = cache_metrics(before, after)
    assert m.engine == "vllm"
    assert m.prefix_cache_queries == 2000 and m.prefix_cache_hits == 1200
    # by source: (1200 GPU + 400 external) / 2000 prompt tokens of the window
    assert m.gpu_hit_rate == pytest.approx(0.6) and m.external_hit_rate == pytest.approx(0.2)
    assert m.overall_hit_rate == pytest.approx(0.8)
    assert m.offload_bytes_gpu_to_cpu == 4096 and m.gpu_kv_usage == 0.5


def test_an_idle_vllm_kv_cache_reads_zero_not_unknown() -> None:
    """A real vLLM at the window's end is often idle: 0.0 is its reading, not a missing one."""
    before = parse_metrics(VLLM.format(q=0, h=0, x=0, c=0, w=0, u=0.25))
    m = cache_metrics(before, parse_metrics(VLLM.format(q=10, h=5, x=0, c=5, w=0, u=0.0)))
    assert m.gpu_kv_usage == 0.0


def test_sglang_cached_tokens_by_tier() -> None:
    before = parse_metrics(SGLANG.format(p=0, d=0, hst=0))
    after = parse_metrics(SGLANG.format(p=1000, d=500, hst=200))
    m = cache_metrics(before, after)
    assert m.engine == "sglang"
    assert m.gpu_hit_rate == pytest.approx(0.5) and m.external_hit_rate == pytest.approx(0.2)
    assert m.overall_hit_rate == pytest.approx(0.7) and m.cpu_kv_usage == pytest.approx(0.25)


def test_a_server_without_engine_metrics_says_so() -> None:
    samples = parse_metrics("# TYPE up gauge\nup 1\n")
    assert cache_metrics(samples, samples).error == "no vllm: or sglang: metrics exported"
