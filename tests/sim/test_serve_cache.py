"""`sim serve` with a prefix cache: the replay client reads its hit rate from /metrics."""

from __future__ import annotations

import aiohttp
import pytest

from inferbench.bench.agentic.api import replay_with_metrics
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.agentic.server_metrics import parse_metrics
from inferbench.bench.settings import ClientOptions, Endpoint, RequestOptions
from inferbench.bench.traces.source import synth_traces
from inferbench.bench.traces.synth import SynthSpec
from inferbench.sim.prefix import CacheSpec
from inferbench.sim.server import ServeOptions, SimServer

from .conftest import small_deployment


@pytest.mark.slow  # a real-time replay against the served simulator: about 5 s
async def test_served_prefix_cache_hits_show_in_metrics() -> None:
    dep = small_deployment(max_model_len=16384).model_copy(
        update={"cache": CacheSpec(cpu_offload_gb=50)}
    )
    srv = SimServer(dep, ServeOptions(port=0))
    await srv.start()
    try:
        traces = synth_traces(
            SynthSpec(
                sessions=4,
                seed=2,
                turns=5,
                first_input=1200,
                input=100,
                output=16,
                delay=0.0,
                subagent_p=0.0,
                max_context=12000,
            )
        )
        options = ReplayOptions(lanes=2, sessions=4, delay_scale=0)
        endpoint = Endpoint(base_url=srv.url, model=dep.served_model)
        run, server = await replay_with_metrics(
            endpoint, traces, options, RequestOptions(), ClientOptions()
        )
        async with aiohttp.ClientSession() as s, s.get(f"{srv.url}/metrics") as r:
            samples = parse_metrics(await r.text())
    finally:
        await srv.close()
    assert all(t.record.ok for t in run.turns) and len(run.turns) > 8
    assert server is not None and server.engine == "vllm" and server.error is None
    # later turns repeat their conversation: most prompt tokens come from the cache
    assert server.overall_hit_rate is not None and server.overall_hit_rate > 0.5
    hits = samples["vllm:prompt_tokens_by_source_total"]
    assert (
        sum(hits.values())
        == samples["vllm:prefix_cache_queries_total"][(("model_name", dep.served_model),)]
    )
