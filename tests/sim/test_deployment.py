"""Deployments from recipes, jobs and flags; impossible topologies refused with the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.sim.deployment import Mode, SimDeployment
from inferbench.sim.inputs import Overrides, from_job, from_recipe

from .conftest import SEED_RECIPE, small_deployment


def test_seed_recipe(seed: SimDeployment) -> None:
    assert seed.mode is Mode.DISAGGREGATED and seed.describe() == "2P1D DEP2/DEP8"
    assert seed.model.key == "minimax-m3" and seed.gpu.key == "b200"
    assert seed.total_gpus == 12 and seed.workload.concurrencies == (2048,)
    assert seed.decode.max_num_seqs == 1024 and seed.max_model_len == 9472


def test_overrides_replace_recipe_values() -> None:
    dep = from_recipe(
        str(SEED_RECIPE), Overrides(isl=1024, osl=128, concurrency=(4, 8), gpu="b300")
    )
    assert (dep.workload.isl, dep.workload.osl, dep.gpu.key) == (1024, 128, "b300")
    assert dep.workload.concurrencies == (4, 8)


def _edit_recipe(tmp_path: Path, old: str, new: str) -> str:
    text = SEED_RECIPE.read_text()
    assert old in text
    path = tmp_path / "recipe.yaml"
    path.write_text(text.replace(old, new))
    return str(path)


def test_layout_not_matching_worker_gpus_is_refused(tmp_path: Path) -> None:
    path = _edit_recipe(tmp_path, "data-parallel-size: 8", "data-parallel-size: 4")
    with pytest.raises(InputError, match=r"uses 4 GPUs but each decode worker has 8 \(4 idle\)"):
        from_recipe(path, Overrides())


def test_workers_beyond_their_nodes_are_refused(tmp_path: Path) -> None:
    path = _edit_recipe(tmp_path, "prefill_workers: 2", "prefill_workers: 5")
    with pytest.raises(InputError, match=r"need 10 GPUs but 1 node\(s\) hold 8 \(2 over\)"):
        from_recipe(path, Overrides())


def test_tp_not_dividing_heads_is_refused() -> None:
    with pytest.raises(InputError, match=r"does not divide the 64 attention heads .*64 % 5 = 4"):
        small_deployment(model="minimax-m3", gpu="b200", tp=5)


def test_weights_not_fitting_hbm_are_refused() -> None:
    with pytest.raises(InputError, match=r"GB of weights per GPU .* GB over"):
        small_deployment(model="llama-3.1-70b", gpu="h100", tp=1)


def test_gpus_per_worker_above_node_are_refused() -> None:
    with pytest.raises(InputError, match=r"needs 16 GPUs but a h100 node holds 8 \(8 over\)"):
        small_deployment(model="llama-3.1-70b", gpu="h100", tp=16)


def test_max_model_len_above_one_sequence_kv_is_refused() -> None:
    with pytest.raises(InputError, match=r"max-model-len 1000000 needs .* short\)"):
        small_deployment(model="llama-3.1-70b", gpu="h100", tp=4, max_model_len=1_000_000)


def test_isl_osl_above_max_model_len_is_refused() -> None:
    with pytest.raises(InputError, match=r"above max-model-len 256 by 64"):
        small_deployment(isl=256, osl=64, max_model_len=256)


def test_trtllm_prompt_above_its_token_budget_is_refused(tmp_path: Path) -> None:
    # TRT-LLM schedules a prompt whole unless chunked prefill is on
    job = {"model": "openai/gpt-oss-120b", "precision": "fp4", "runner": "h200",
           "framework": "trt", "tp": 1, "conc": 4, "isl": 8192, "osl": 128,
           "sim-flags": {"max-num-batched-tokens": 4096}}  # fmt: skip
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    with pytest.raises(
        InputError, match=r"prompts of 8192 tokens do not fit .* 4096 \(4096 over\)"
    ):
        from_job(str(path), Overrides())
    job["sim-flags"] = {"max-num-batched-tokens": 4096, "enable-chunked-prefill": True}
    path.write_text(json.dumps(job))
    dep = from_job(str(path), Overrides())
    assert dep.limits(dep.decode).chunked_prefill
    job["framework"] = "vllm"  # chunked by default
    job["sim-flags"] = {"max-num-batched-tokens": 4096}
    path.write_text(json.dumps(job))
    vllm = from_job(str(path), Overrides())
    assert vllm.limits(vllm.decode).chunked_prefill


def test_single_node_job(tmp_path: Path) -> None:
    job = {
        "model": "deepseek-ai/DeepSeek-R1-0528",
        "precision": "fp8",
        "runner": "h200",
        "framework": "sglang",
        "tp": 8,
        "ep": 8,
        "dp-attn": True,
        "pp": 1,
        "conc": 64,
        "isl": 1024,
        "osl": 1024,
        "max-model-len": 2248,
    }
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    dep = from_job(str(path), Overrides())
    assert dep.model.key == "deepseek-r1" and dep.gpu.key == "h200"
    assert (dep.decode.tp, dep.decode.dp, dep.decode.expert_parallel) == (1, 8, True)
    assert dep.workload.concurrencies == (64,)


def test_multinode_job_list(tmp_path: Path) -> None:
    job = {
        "model": "nvidia/MiniMax-M3-NVFP4",
        "precision": "fp4",
        "runner": "b200-multinode",
        "framework": "dynamo-vllm",
        "isl": 8192,
        "osl": 1024,
        "conc": [512, 2048],
        "prefill": {"num-worker": 2, "tp": 2, "ep": 2, "dp-attn": True},
        "decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True},
    }
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps([{"model": "x"}, job]))
    dep = from_job(f"{path}:1", Overrides())
    assert dep.describe() == "2P1D DEP2/DEP8" and dep.workload.concurrencies == (512, 2048)


def test_unknown_model_suggests_model_spec(tmp_path: Path) -> None:
    path = _edit_recipe(tmp_path, '"nvidia/MiniMax-M3-NVFP4"', '"acme/secret-model"')
    with pytest.raises(InputError, match="--model-spec"):
        from_recipe(path, Overrides())
    dep = from_recipe(path, Overrides(model_spec="minimax-m2"))
    assert dep.model.key == "minimax-m2" and dep.served_model == "acme/secret-model"
