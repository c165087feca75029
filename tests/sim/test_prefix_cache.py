"""Prefix cache, DRAM offload tier and cache-aware routing of the simulator (agentic estimate)."""

from __future__ import annotations

import statistics

import pytest

from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.agentic.summary import agentic_block
from inferbench.bench.traces.model import TraceSet
from inferbench.bench.traces.source import synth_traces
from inferbench.bench.traces.synth import SynthSpec
from inferbench.sim.agentic import BlockHasher, estimate_agentic
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.inputs import Overrides, from_flags
from inferbench.sim.prefix import CacheSpec, PrefixCache, token_block_hashes


def _dep(gpu_util: float, dp: int = 1) -> SimDeployment:
    return from_flags(
        model="meta-llama/Llama-3.1-8B-Instruct",
        gpu="h100",
        precision="bf16",
        tp=1,
        dp=dp,
        pp=1,
        expert_parallel=False,
        workers=1,
        engine={"max-model-len": 40000, "gpu-memory-utilization": gpu_util},
        isl=1000,
        osl=100,
        concurrency=(8,),
        overrides=Overrides(),
    )


def _traces(sessions: int = 24) -> TraceSet:
    return synth_traces(
        SynthSpec(sessions=sessions, seed=3, turns=10, max_context=30000, first_input=4000)
    )


def test_lru_keeps_the_newest_blocks_and_spills_to_dram() -> None:
    cache = PrefixCache(4, cpu_blocks=2, bytes_per_token=10.0, link_bytes_per_s=1000.0)
    a, b = (1, 2, 3), (7, 8)
    assert cache.admit(a, 13) == 0
    cache.release(a)
    cache.fit(free_blocks=10)
    assert cache.lookup(a, 13) == (12, 0)  # all three full blocks cached on the GPU
    assert cache.lookup(a, 12) == (8, 0)  # the last token is always computed
    cache.admit(b, 9)
    cache.release(b)
    cache.fit(free_blocks=3)  # room for 3 cached blocks: a's oldest two go to DRAM
    assert cache.lookup(a, 13) == (0, 8)  # blocks 1, 2 in DRAM; block 3 alone is no prefix
    assert cache.lookup(b, 9) == (8, 0)
    assert cache.admit(a, 13) == 8
    assert cache.stats.load_bytes == 80.0 and cache.take_step_load() == pytest.approx(0.08)
    assert cache.stats.write_bytes == 80.0  # two 4-token blocks of 10 bytes per token


def test_block_hashes_agree_between_token_ids_and_segments() -> None:
    from inferbench.bench.agentic.tokens import TokenSource
    from inferbench.bench.traces.model import Segment

    prompt = (Segment(1, 40), Segment(2, 30), Segment(3, 5))
    longer = (*prompt[:2], Segment(3, 60))
    hasher = BlockHasher(16, salt=9)
    first, second = hasher(prompt), hasher(longer)
    assert len(first) == 4 and len(second) == 8 and second[:4] == first
    ids = TokenSource(b"s").prompt(longer)
    chain = token_block_hashes(ids, 16)
    assert len(chain) == 8 and chain != token_block_hashes(ids[::-1], 16)


def test_hit_rate_rises_with_turns() -> None:
    dep = _dep(0.9).model_copy(update={"cache": CacheSpec()})
    options = ReplayOptions(lanes=8, sessions=16, delay_scale=0.2)
    est = estimate_agentic(dep, _traces(16), options)
    block = agentic_block(est.run, _traces(16), options, est.server)
    rates = [t.server_hit_rate for t in block.per_turn if t.requests >= 4]
    assert rates[0] is not None and rates[0] < 0.05  # turn 1: a fresh session
    assert all(r is not None and r > 0.8 for r in rates[2:])
    assert rates[1] < rates[-1]
    assert block.server is not None and block.server.overall_hit_rate > 0.7


def _throughput(dep: SimDeployment, traces: TraceSet) -> tuple[float, float]:
    options = ReplayOptions(lanes=24, duration_s=240, delay_scale=1)
    est = estimate_agentic(dep, traces, options)
    block = agentic_block(est.run, traces, options, est.server)
    assert block.server is not None
    return block.output_throughput, block.server.overall_hit_rate or 0.0


@pytest.mark.slow  # two agentic simulations (1-1.5 s)
def test_dram_tier_raises_throughput_when_the_gpu_cache_is_too_small() -> None:
    traces = _traces()
    small = _dep(0.35)  # the GPU holds far less KV than 24 lanes of 30k-token sessions
    gpu_only, gpu_hit = _throughput(small.model_copy(update={"cache": CacheSpec()}), traces)
    dram = small.model_copy(update={"cache": CacheSpec(cpu_offload_gb=400)})
    with_dram, dram_hit = _throughput(dram, traces)
    assert dram_hit > gpu_hit + 0.3
    assert with_dram > 1.3 * gpu_only


@pytest.mark.slow  # an agentic simulation (1-2 s)
def test_cache_aware_routing_keeps_sessions_on_their_rank() -> None:
    traces = _traces(16)
    aware = _dep(0.9, dp=2).model_copy(update={"cache": CacheSpec()})
    blind = aware.model_copy(update={"cache": CacheSpec(cache_aware_routing=False)})
    _, aware_hit = _throughput(aware, traces)
    _, blind_hit = _throughput(blind, traces)
    # blind routing still hits often: a session's earlier turns left its prefix on both ranks
    assert aware_hit > blind_hit + 0.05 and aware_hit > 0.8


def _disaggregated(cache: CacheSpec | None) -> SimDeployment:
    """1P1D: one prefill and one decode worker, each a TP1 copy of `_dep`'s pool."""
    agg = _dep(0.9)
    return agg.model_copy(update={"prefill": agg.decode, "cache": cache})


def test_a_disaggregated_prefill_pool_caches_prefixes() -> None:
    """The prefill pool computes the prompts, so its ranks hold the prefix caches: later turns
    hit there and prefill less, and the first token comes sooner than without caching."""
    traces = _traces(8)
    options = ReplayOptions(lanes=8, sessions=8, delay_scale=0.2)
    ttft = []
    for cache in (CacheSpec(), CacheSpec(prefix_caching=False)):
        est = estimate_agentic(_disaggregated(cache), traces, options)
        ttft.append(statistics.median(t.record.ttft or 0.0 for t in est.run.turns if t.turn > 2))
        if cache.prefix_caching:
            block = agentic_block(est.run, traces, options, est.server)
            assert block.server is not None and (block.server.overall_hit_rate or 0.0) > 0.7
    assert ttft[0] < 0.7 * ttft[1]
