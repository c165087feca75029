"""`sim serve`'s context: --max-model-len or the recipe's/job's, else the model's own (catalog),
never isl + osl, so a replayed trace's long turns are served rather than refused with 400."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from inferbench.core.errors import InputError
from inferbench.sim.request import DeploymentRequest, build_deployment
from inferbench.sim.server import ServeOptions, SimServer

from .test_catalog import USER_CATALOG

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _serve(**flags: object) -> int:
    opts = DeploymentRequest(model=MODEL, gpu="h100", **flags)  # type: ignore[arg-type]
    return build_deployment(opts, serving=True).max_model_len


def test_the_served_context_is_the_models_not_isl_plus_osl() -> None:
    assert _serve() == 131072  # no --isl/--osl needed: requests bring their own lengths
    assert _serve(isl=1024, osl=1024) == 131072  # was 2048: every longer turn answered 400
    assert _serve(max_model_len=4096) == 4096  # the engine's flag wins
    # the estimate still sizes its workload by them, and its check is the same as before
    estimate = build_deployment(DeploymentRequest(model=MODEL, gpu="h100", isl=1024, osl=1024))
    assert estimate.workload.isl + estimate.workload.osl == 2048


def test_a_model_without_a_known_context_needs_max_model_len(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"
    mine.write_text(USER_CATALOG)
    opts = DeploymentRequest(model="acme/tiny", gpu="x1", catalog=(mine,))
    with pytest.raises(InputError, match="--max-model-len") as err:
        build_deployment(opts, serving=True)
    assert "context_length" in err.value.render()
    served = build_deployment(
        DeploymentRequest(**{**opts.__dict__, "max_model_len": 2048}), serving=True
    )
    assert served.max_model_len == 2048 and served.workload.isl + served.workload.osl <= 2048


async def test_a_long_turn_is_served_where_isl_plus_osl_would_refuse_it() -> None:
    dep = build_deployment(
        DeploymentRequest(model=MODEL, gpu="h100", isl=128, osl=16), serving=True
    )
    server = SimServer(dep, ServeOptions(port=0))
    await server.start()
    try:
        body = {"model": MODEL, "prompt": list(range(6000)), "max_tokens": 4}
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{server.url}/v1/completions", json=body) as resp,
        ):
            assert resp.status == 200, await resp.text()
            usage = (await resp.json())["usage"]
        assert usage["prompt_tokens"] == 6000 and usage["completion_tokens"] == 4
    finally:
        await server.close()
