"""Shared fixtures of the simulator tests: small deployments and a live loopback server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inferbench.sim.deployment import SimDeployment
from inferbench.sim.inputs import Overrides, from_flags, from_recipe
from inferbench.sim.server import ServeOptions, SimServer

FIXTURES = Path(__file__).parent / "fixtures"
SEED_RECIPE = FIXTURES / "seed_recipe.yaml"


def small_deployment(
    *,
    model: str = "meta-llama/Llama-3.1-8B-Instruct",
    gpu: str = "h100",
    tp: int = 1,
    isl: int = 256,
    osl: int = 64,
    max_num_seqs: int = 64,
    max_model_len: int = 2048,
    stream_interval: int = 1,
) -> SimDeployment:
    return from_flags(
        model=model,
        gpu=gpu,
        precision="bf16",
        tp=tp,
        dp=1,
        pp=1,
        expert_parallel=False,
        workers=1,
        engine={
            "max-num-seqs": max_num_seqs,
            "max-num-batched-tokens": 8192,
            "max-model-len": max_model_len,
            "stream-interval": stream_interval,
        },
        isl=isl,
        osl=osl,
        concurrency=(8,),
        overrides=Overrides(),
    )


@pytest.fixture
def small() -> SimDeployment:
    return small_deployment()


@pytest.fixture
def seed() -> SimDeployment:
    return from_recipe(str(SEED_RECIPE), Overrides())


@pytest.fixture
async def server(small: SimDeployment) -> AsyncIterator[SimServer]:
    srv = SimServer(small, ServeOptions(port=0))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.close()
