"""Published disaggregated TRT-LLM recipes size their prefill workers for the prompt alone
(`max_seq_len` = isl + 40): the simulator accepts them, judging a prefill pool on isl."""

from __future__ import annotations

from pathlib import Path

from inferbench.sim.inputs import Overrides, from_recipe

RECIPE = "recipes/trtllm/gb300-fp8/1k1k/mtp/ctx1_gen4_tep8_batch4_eplb0_mtp3_24.yaml"


def test_a_published_recipe_with_a_prompt_sized_prefill_pool_is_accepted(
    srt_slurm_tree: Path,
) -> None:
    dep = from_recipe(str(srt_slurm_tree / RECIPE), Overrides())
    assert dep.prefill is not None
    isl, osl = dep.workload.isl, dep.workload.osl
    assert isl <= dep.prefill.max_model_len < isl + osl  # type: ignore[operator]
    assert dep.max_model_len >= isl + osl
