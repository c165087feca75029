"""Serve and estimate run the same engine: on one workload their timings agree.

Tolerance: mean TPOT and the run's duration within 10 %, mean TTFT within 25 % or
15 ms (TTFT is a few steps long, so event-loop wake-up jitter weighs more there).
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from inferbench.sim.deployment import SimDeployment
from inferbench.sim.estimate import estimate
from inferbench.sim.server import ServeOptions, SimServer

from .conftest import small_deployment

CONC, PROMPTS, ISL, OSL = 8, 24, 256, 48


async def _closed_loop(url: str) -> tuple[list[float], list[float], float]:
    """A minimal sa-bench-like client: all requests at t0, at most CONC in flight."""
    gate = asyncio.Semaphore(CONC)
    ttfts: list[float] = []
    tpots: list[float] = []
    body = {"prompt": list(range(ISL)), "max_tokens": OSL, "stream": True, "ignore_eos": True}

    async def one(session: aiohttp.ClientSession) -> None:
        async with gate:
            sent = time.perf_counter()
            stamps: list[float] = []
            async with session.post(f"{url}/v1/completions", json=body) as resp:
                async for raw in resp.content:
                    if raw.startswith(b"data: {") and b'"text":" tok' in raw:
                        stamps.append(time.perf_counter())
            assert len(stamps) == OSL
            ttfts.append(stamps[0] - sent)
            tpots.append((stamps[-1] - stamps[0]) / (OSL - 1))

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        start = time.perf_counter()
        await asyncio.gather(*(one(session) for _ in range(PROMPTS)))
        duration = time.perf_counter() - start
    return ttfts, tpots, duration


def _exact(dep: SimDeployment) -> SimDeployment:
    load = dep.workload.model_copy(update={"random_range_ratio": 1.0})
    return dep.model_copy(update={"workload": load})


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


@pytest.mark.slow
async def test_serve_matches_estimate() -> None:
    dep = _exact(small_deployment(isl=ISL, osl=OSL))
    run = estimate(dep, CONC, num_prompts=PROMPTS)
    est_ttft = _mean([r.ttft or 0 for r in run.records])
    est_tpot = _mean([r.tpot or 0 for r in run.records])
    server = SimServer(dep, ServeOptions(port=0))
    await server.start()
    try:
        ttfts, tpots, duration = await _closed_loop(server.url)
    finally:
        await server.close()
    assert _mean(tpots) == pytest.approx(est_tpot, rel=0.10)
    assert duration == pytest.approx(run.duration_s, rel=0.10)
    assert abs(_mean(ttfts) - est_ttft) <= max(0.25 * est_ttft, 0.015)
