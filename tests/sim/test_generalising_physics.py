"""Physics that carries across concurrency, GPU and engine: a step overhead that grows with
the batch, speculative acceptance that falls with draft position, EPLB, and per-pool limits
(a prefill-only pool is judged on the prompt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.catalog import Precision, load_catalog
from inferbench.core.errors import InputError
from inferbench.sim.inputs import Overrides, from_job_data, from_recipe
from inferbench.sim.perf import EfficiencyParams, Parallelism, RankBatch, Speculation, StepModel

from .conftest import SEED_RECIPE


def _llama_step(eff: EfficiencyParams) -> StepModel:
    cat = load_catalog()
    return StepModel(
        cat.model("meta-llama/Llama-3.1-8B-Instruct"),
        cat.gpu("h100"),
        Parallelism(tp=1),
        precision=Precision.BF16,
        kv_precision=Precision.BF16,
        eff=eff,
    )


def _decode(seqs: int) -> list[RankBatch]:
    return [RankBatch(decode_seqs=seqs, decode_ctx_tokens=seqs * 1024)]


def test_step_overhead_has_a_per_sequence_part_that_grows_with_the_batch() -> None:
    fixed = _llama_step(EfficiencyParams(layer_overhead_s=50e-6))
    per_seq = _llama_step(EfficiencyParams(layer_overhead_s=50e-6, seq_overhead_s=20e-6))
    for seqs in (1, 4, 64, 256):
        extra = per_seq.step_time(_decode(seqs)) - fixed.step_time(_decode(seqs))
        assert extra == pytest.approx(20e-6 * seqs, rel=1e-9)
    # lockstep ranks: the busiest rank's batch sets the per-sequence part
    two = [RankBatch(decode_seqs=8, decode_ctx_tokens=8192), RankBatch(decode_seqs=2)]
    assert per_seq._seq_time(two) == pytest.approx(8 * 20e-6)


def test_a_job_carries_the_per_sequence_overhead_to_its_concurrency() -> None:
    # the same fitted parameters cost a wide batch more per step than a narrow one
    job = {"model": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "runner": "h100",
           "framework": "vllm", "tp": 1, "isl": 512, "osl": 64}  # fmt: skip
    dep = from_job_data({**job, "conc": 4}, Overrides(calibration="none"), path=Path("j"))
    step = dep.step_model(dep.decode)
    slow = dep.model_copy(
        update={"efficiency": dep.efficiency.model_copy(update={"seq_overhead_s": 30e-6})}
    ).step_model(dep.decode)
    narrow = slow.step_time(_decode(4)) - step.step_time(_decode(4))
    wide = slow.step_time(_decode(64)) - step.step_time(_decode(64))
    assert narrow == pytest.approx(4 * 30e-6) and wide == pytest.approx(64 * 30e-6)


def test_acceptance_falls_with_draft_position_by_default() -> None:
    job = {"model": "deepseek-ai/DeepSeek-R1-0528", "precision": "fp8", "runner": "b200",
           "framework": "sglang", "tp": 8, "conc": 8, "isl": 1024, "osl": 1024,
           "spec-decoding": "mtp"}  # fmt: skip
    one = from_job_data(job, Overrides(calibration="none"), path=Path("j")).decode.speculation
    three = from_job_data(
        job, Overrides(calibration="none", spec_draft_tokens=3), path=Path("j")
    ).decode.speculation
    assert one is not None and three is not None
    # one draft token: the DeepSeek-V3 report's 0.85, as before
    assert one.tokens_per_step == pytest.approx(1.85)
    rates = three.position_acceptance()
    assert rates[0] == pytest.approx(0.85) and rates[0] > rates[1] > rates[2]
    # a constant 0.85 would yield (1 - 0.85^4) / 0.15 = 3.19 tokens per step
    assert three.tokens_per_step == pytest.approx(1 + 0.85 + 0.85 * 0.714 + 0.85 * 0.714 * 0.6,
                                                  rel=0.01)  # fmt: skip
    assert three.tokens_per_step < 2.9


def test_a_job_overrides_acceptance_by_position_or_with_one_rate() -> None:
    job = {"model": "deepseek-ai/DeepSeek-R1-0528", "precision": "fp8", "runner": "b200",
           "framework": "sglang", "tp": 8, "conc": 8, "isl": 1024, "osl": 1024,
           "spec-decoding": "mtp"}  # fmt: skip
    over = Overrides(calibration="none", spec_draft_tokens=3)
    by_pos = from_job_data({**job, "spec-acceptance": [0.9, 0.5, 0.2]}, over, path=Path("j"))
    spec = by_pos.decode.speculation
    assert spec is not None and spec.tokens_per_step == pytest.approx(1 + 0.9 + 0.45 + 0.09)
    assert not any("acceptance rate not given" in w for w in by_pos.warnings)
    flat = from_job_data({**job, "spec-acceptance": 0.7}, over, path=Path("j")).decode.speculation
    assert flat is not None and flat.position_acceptance() == pytest.approx((0.7, 0.7, 0.7))
    with pytest.raises(InputError, match="spec-acceptance"):
        from_job_data({**job, "spec-acceptance": [0.9, 1.5]}, over, path=Path("j"))
    # the last given rate repeats for positions beyond the list
    short = Speculation(draft_tokens=4, acceptance=0.9, acceptances=(0.9, 0.6))
    assert short.position_acceptance() == (0.9, 0.6, 0.6, 0.6)


def _trtllm(tmp_path: Path, prefill: str, decode: str, bench: str) -> Path:
    text = SEED_RECIPE.read_text("utf-8").split("backend:")[0] + (
        "backend:\n"
        "  type: trtllm\n"
        "  trtllm_config:\n"
        f"    prefill: {{{prefill}}}\n"
        f"    decode: {{{decode}}}\n"
        f"benchmark: {{type: sa-bench, {bench}}}\n"
    )
    recipe = tmp_path / "trtllm.yaml"
    recipe.write_text(text, "utf-8")
    return recipe


def test_a_prefill_only_pool_is_judged_on_the_prompt(tmp_path: Path) -> None:
    # as published disaggregated TRT-LLM recipes write it: prefill max_seq_len = isl + 40
    recipe = _trtllm(
        tmp_path,
        "tensor_parallel_size: 2, moe_expert_parallel_size: 2, max_num_tokens: 8448,"
        " max_seq_len: 1064",
        "tensor_parallel_size: 8, moe_expert_parallel_size: 8, enable_attention_dp: true,"
        " max_batch_size: 64, max_num_tokens: 512, max_seq_len: 2088",
        "isl: 1024, osl: 1024, concurrencies: '64'",
    )
    dep = from_recipe(str(recipe), Overrides())
    assert dep.prefill is not None and dep.prefill.max_model_len == 1064
    assert dep.max_model_len == 2088
    # a prompt the prefill workers cannot hold is still refused, naming the prefill pool
    recipe.write_text(recipe.read_text("utf-8").replace("max_seq_len: 1064", "max_seq_len: 1000"))
    with pytest.raises(InputError, match=r"isl = 1024 tokens is above the prefill workers'"):
        from_recipe(str(recipe), Overrides())
    # and the decode pool still holds the whole sequence
    recipe.write_text(recipe.read_text("utf-8").replace("max_seq_len: 2088", "max_seq_len: 1500"))
    recipe.write_text(recipe.read_text("utf-8").replace("max_seq_len: 1000", "max_seq_len: 1064"))
    with pytest.raises(InputError, match=r"isl \+ osl = 2048 tokens is above max-model-len 1500"):
        from_recipe(str(recipe), Overrides())


def test_eplb_slots_hold_weights_and_balance_the_experts(tmp_path: Path) -> None:
    decode = ("tensor_parallel_size: 8, moe_expert_parallel_size: 8, enable_attention_dp: true,"
              " max_batch_size: 64, max_num_tokens: 512")  # fmt: skip
    prefill = "tensor_parallel_size: 2, moe_expert_parallel_size: 2, max_num_tokens: 8448"
    bench = "isl: 1024, osl: 1024, concurrencies: '64'"
    plain = from_recipe(str(_trtllm(tmp_path, prefill, decode, bench)), Overrides())
    balanced_recipe = _trtllm(
        tmp_path, prefill, decode + ", moe_config: {load_balancer: {num_slots: 288}}", bench
    )
    balanced = from_recipe(str(balanced_recipe), Overrides())
    assert plain.decode.expert_slots == 0 and balanced.decode.expert_slots == 288
    assert not any("EPLB" in w for w in balanced.warnings)
    off, on = plain.step_model(plain.decode), balanced.step_model(balanced.decode)
    experts = plain.model.experts
    assert on.expert_weight_bytes == pytest.approx(off.expert_weight_bytes * 288 / experts)
    eff = plain.efficiency
    assert on._expert_flops_per_token == pytest.approx(
        off._expert_flops_per_token * eff.eplb_imbalance / eff.moe_imbalance
    )
    # a compute-heavy step (a wide prefill) is faster balanced
    wide = [RankBatch(prefill_tokens=8192, prefill_attention_ctx=8192 * 4096)] * 8
    assert on.step_time(wide) < off.step_time(wide)


def _moe_step(model: str, gpu: str, tp: int, eff: EfficiencyParams) -> StepModel:
    cat = load_catalog()
    return StepModel(
        cat.model(model),
        cat.gpu(gpu),
        Parallelism(tp=tp),
        precision=Precision.FP8,
        kv_precision=Precision.FP8,
        eff=eff,
    )


def test_each_routed_expert_a_rank_runs_costs_a_fixed_time_per_layer() -> None:
    # DeepSeek-R1 on TP8 (tensor-parallel experts): every rank runs a slice of each of the
    # 256 experts that the batch touches; 64 sequences with 8 experts each touch most
    base = _moe_step("deepseek-ai/DeepSeek-R1-0528", "mi355x", 8, EfficiencyParams())
    per_expert = _moe_step(
        "deepseek-ai/DeepSeek-R1-0528", "mi355x", 8, EfficiencyParams(expert_overhead_s=1e-6)
    )
    touched = 256 * (1 - (1 - 8 / 256) ** 64)
    assert per_expert.touched_experts(64) == pytest.approx(touched)
    extra = per_expert.step_time(_decode(64)) - base.step_time(_decode(64))
    assert extra == pytest.approx(1e-6 * 61 * touched, rel=1e-9)
    # a narrow batch touches few experts and pays little of it
    assert per_expert.touched_experts(1) == pytest.approx(8)
    # a dense model runs no routed experts and pays nothing
    dense = _llama_step(EfficiencyParams(expert_overhead_s=1e-6))
    assert dense.step_time(_decode(64)) == _llama_step(EfficiencyParams()).step_time(_decode(64))
