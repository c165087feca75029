"""The simulator reads each engine's limits from its own flags in a recipe."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.inputs import Overrides, from_recipe

from .conftest import SEED_RECIPE


def _sglang(tmp_path: Path, prefill: str, decode: str) -> SimDeployment:
    """The seed recipe's resources with an SGLang backend of these worker flags."""
    text = SEED_RECIPE.read_text("utf-8").split("backend:")[0] + (
        "backend:\n"
        "  type: sglang\n"
        "  sglang_config:\n"
        f"    prefill: {{{prefill}}}\n"
        f"    decode: {{{decode}}}\n"
        "benchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: '2048'}\n"
    )
    recipe = tmp_path / "sglang.yaml"
    recipe.write_text(text, "utf-8")
    return from_recipe(str(recipe), Overrides())


def test_an_sglang_recipe_sets_its_limits_with_sglang_flags(tmp_path: Path) -> None:
    # the seed recipe as SGLang writes it: TP spans the worker, DP attention splits it
    dep = _sglang(
        tmp_path,
        "tp-size: 2, dp-size: 2, enable-dp-attention: true, ep-size: 2, context-length: 9472",
        "tp-size: 8, dp-size: 8, enable-dp-attention: true, ep-size: 8, context-length: 9472,"
        " max-running-requests: 1024, chunked-prefill-size: 16384, page-size: 64",
    )
    assert dep.describe() == "2P1D DEP2/DEP8"
    # SGLang's max-running-requests is the worker's, shared by its 8 DP ranks
    assert dep.decode.max_num_seqs == 1024 // 8 and dep.decode.max_model_len == 9472
    assert dep.decode.max_num_batched_tokens == 16384 and dep.decode.block_size == 64


def test_plain_sglang_dp_replicas_keep_the_full_batch_limit(tmp_path: Path) -> None:
    # without DP attention each of SGLang's DP replicas schedules the whole limit itself
    dep = _sglang(
        tmp_path,
        "tp-size: 1, dp-size: 2, context-length: 9472",
        "tp-size: 1, dp-size: 8, context-length: 9472, max-running-requests: 256",
    )
    assert dep.decode.dp == 8 and dep.decode.max_num_seqs == 256


def test_a_trtllm_recipe_sets_its_scheduling_with_trtllm_names(tmp_path: Path) -> None:
    # TRT-LLM's own names; its decode workers' small max_num_tokens is no refusal (they
    # receive their KV), and batch waiting applies without attention DP only
    text = SEED_RECIPE.read_text("utf-8").split("backend:")[0] + (
        "backend:\n"
        "  type: trtllm\n"
        "  trtllm_config:\n"
        "    prefill: {tensor_parallel_size: 2, moe_expert_parallel_size: 2,\n"
        "              max_num_tokens: 8448, batch_wait_timeout_iters: 40,\n"
        "              batch_wait_max_tokens_ratio: 0.8}\n"
        "    decode: {tensor_parallel_size: 8, moe_expert_parallel_size: 8,\n"
        "             enable_attention_dp: true, max_batch_size: 128, max_num_tokens: 512,\n"
        "             batch_wait_timeout_iters: 40, batch_wait_max_tokens_ratio: 0.8}\n"
        "benchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: '256'}\n"
    )
    recipe = tmp_path / "trtllm.yaml"
    recipe.write_text(text, "utf-8")
    dep = from_recipe(str(recipe), Overrides())
    assert dep.engine == "trtllm" and dep.prefill is not None
    prefill, decode = dep.limits(dep.prefill), dep.limits(dep.decode)
    assert not prefill.chunked_prefill and prefill.max_num_batched_tokens == 8448
    assert (prefill.batch_wait_iters, prefill.batch_wait_tokens) == (40, int(0.8 * 8448))
    assert dep.decode.dp == 8 and (decode.batch_wait_iters, decode.batch_wait_tokens) == (0, 0)
    # a prefill budget below the prompt is refused: TRT-LLM schedules a prompt whole
    recipe.write_text(text.replace("max_num_tokens: 8448", "max_num_tokens: 4096"), "utf-8")
    with pytest.raises(InputError, match=r"prompts of 8192 tokens do not fit"):
        from_recipe(str(recipe), Overrides())
