"""The physics real deployments have: attention kinds, KV dtype, MTP, scale-up links,
mixed-precision checkpoints, per-layer overheads and the engines' memory rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferbench.catalog import Precision, load_catalog
from inferbench.sim.estimate import estimate
from inferbench.sim.inputs import Overrides, from_flags, from_job
from inferbench.sim.perf import EfficiencyParams, Parallelism, RankBatch, Speculation, StepModel
from inferbench.sim.summary import point


def _flags(
    model: str,
    gpu: str,
    precision: str,
    *,
    tp: int = 1,
    dp: int = 1,
    ep: bool = False,
    engine: dict[str, object] | None = None,
    isl: int = 1024,
    osl: int = 256,
    conc: int = 8,
    engine_key: str | None = None,
    **over: object,
):  # type: ignore[no-untyped-def]
    return from_flags(
        model=model, gpu=gpu, precision=precision, tp=tp, dp=dp, pp=1, expert_parallel=ep,
        workers=1, engine=engine or {"max-num-seqs": 256}, isl=isl, osl=osl,
        concurrency=(conc,), overrides=Overrides(calibration="none", engine=engine_key, **over),  # type: ignore[arg-type]
    )  # fmt: skip


def test_gb200_wide_ep_worker_uses_nvlink_inside_the_nvl72_domain() -> None:
    wide = _flags("deepseek-ai/DeepSeek-R1-0528", "gb200", "fp4", dp=32, ep=True)
    tray = _flags("deepseek-ai/DeepSeek-R1-0528", "gb200", "fp4", dp=4, ep=True)
    m32, m4 = wide.step_model(wide.decode), tray.step_model(tray.decode)
    # all-to-all bytes per token barely grow from EP4 to EP32; over the 50 GB/s NIC they would
    # cost 20x the NVLink time
    assert m32.comm_time(1024) < 2 * m4.comm_time(1024)
    over_nic = StepModel(
        wide.model, wide.gpu, m32.par, precision=Precision.FP4,
        kv_precision=Precision.BF16, eff=wide.efficiency, multi_node=True,
    )  # fmt: skip
    assert over_nic.comm_time(1024) > 5 * m32.comm_time(1024)


def test_mtp_job_is_costed_and_raises_interactivity(tmp_path: Path) -> None:
    job = {
        "model": "deepseek-ai/DeepSeek-R1-0528", "precision": "fp8", "runner": "b200",
        "framework": "trt", "tp": 8, "ep": 1, "conc": 4, "isl": 1024, "osl": 512,
        "spec-decoding": "mtp",
    }  # fmt: skip
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    mtp = from_job(str(path), Overrides(calibration="none"))
    spec = mtp.decode.speculation
    assert spec is not None and spec.draft_tokens == 1 and spec.acceptance == 0.85
    assert any("acceptance" in w for w in mtp.warnings)  # the default is said out loud
    job["spec-decoding"] = "none"
    path.write_text(json.dumps(job))
    plain = from_job(str(path), Overrides(calibration="none"))
    fast = point(estimate(mtp, 4, num_prompts=16)).interactivity_median
    slow = point(estimate(plain, 4, num_prompts=16)).interactivity_median
    assert 1.3 < fast / slow < 1.85  # at most the 1.85 tokens per step, less the draft cost


def test_tokens_per_step_follow_draft_length_and_acceptance() -> None:
    assert Speculation(draft_tokens=1, acceptance=0.85).tokens_per_step == pytest.approx(1.85)
    assert Speculation(draft_tokens=3, acceptance=0.5).tokens_per_step == pytest.approx(1.875)
    assert Speculation(draft_tokens=2, acceptance=1.0).tokens_per_step == 3


def test_sliding_window_layers_keep_only_the_window() -> None:
    gptoss = load_catalog().model("openai/gpt-oss-120b")
    assert gptoss.full_attention_layers == 18
    assert gptoss.kv_bytes(Precision.BF16) == 18 * 2 * 8 * 64 * 2
    assert gptoss.per_seq_kv_bytes(Precision.BF16, 8192) == 18 * 128 * 2 * 8 * 64 * 2


def _step(model_name: str, gpu: str, tp: int, **update: object) -> StepModel:
    catalog = load_catalog()
    model = catalog.model(model_name).model_copy(update=update)
    return StepModel(model, catalog.gpu(gpu), Parallelism(tp=tp), precision=Precision.FP8,
                     kv_precision=Precision.BF16, eff=EfficiencyParams())  # fmt: skip


def test_linear_attention_layers_hold_state_not_kv() -> None:
    hybrid = _step("Qwen/Qwen3.5-397B-A17B-FP8", "mi355x", 4)
    dense = _step("Qwen/Qwen3.5-397B-A17B-FP8", "mi355x", 4, linear_attention_layers=0,
                  linear_state_bytes=0)  # fmt: skip
    ctx = 9216.0
    assert hybrid.kv_capacity_tokens(0.9, ctx) > 3 * dense.kv_capacity_tokens(0.9, ctx)
    batch = RankBatch(decode_seqs=256, decode_ctx_tokens=256 * 8000)
    assert hybrid.step_time([batch]) < dense.step_time([batch])


def test_kv_cache_dtype_flag_halves_kv_bytes() -> None:
    bf16 = _flags("meta-llama/Llama-3.1-70B-Instruct", "h100", "fp8", tp=4)
    fp8 = _flags("meta-llama/Llama-3.1-70B-Instruct", "h100", "fp8", tp=4, kv_cache_dtype="fp8")
    assert fp8.decode.kv_cache_dtype == Precision.FP8
    a, b = bf16.step_model(bf16.decode), fp8.step_model(fp8.decode)
    assert a.kv_bytes_per_token_gpu == 2 * b.kv_bytes_per_token_gpu
    assert b.kv_capacity_tokens(0.9) > 1.9 * a.kv_capacity_tokens(0.9)


def test_b200_deepseek_fp8_tp4_fits_with_sglangs_memory_fraction() -> None:
    dep = _flags("deepseek-ai/DeepSeek-R1-0528", "b200", "fp8", tp=4, isl=8192, osl=1024,
                 engine={"max-num-seqs": 32, "gpu-memory-utilization": 0.95},
                 engine_key="sglang", kv_cache_dtype="fp8")  # fmt: skip
    assert dep.engine == "sglang"
    model = dep.step_model(dep.decode)
    assert model.kv_capacity_tokens(0.95, 9216) > 32 * 9216 // 4


def test_fp4_checkpoint_keeps_attention_and_shared_experts_at_fp8() -> None:
    dep = _flags("nvidia/DeepSeek-R1-0528-FP4-V2", "b200", "fp4", tp=8)
    model = dep.step_model(dep.decode)
    r1 = dep.model
    assert model.dense_weight_bytes == pytest.approx(r1.dense_params * 1.0 / 8)
    assert model.expert_weight_bytes == pytest.approx(r1.expert_params * 0.5625 / 8)


def test_layer_overhead_is_paid_per_layer_per_step() -> None:
    catalog = load_catalog()
    args = (catalog.model("llama-3.1-70b"), catalog.gpu("h100"), Parallelism(tp=8))
    base = StepModel(*args, precision=Precision.BF16, kv_precision=Precision.BF16,
                     eff=EfficiencyParams(layer_overhead_s=0.0))  # fmt: skip
    slow = StepModel(*args, precision=Precision.BF16, kv_precision=Precision.BF16,
                     eff=EfficiencyParams(layer_overhead_s=50e-6))  # fmt: skip
    batch = [RankBatch(decode_seqs=8, decode_ctx_tokens=8 * 1024)]
    assert slow.step_time(batch) - base.step_time(batch) == pytest.approx(80 * 50e-6)
