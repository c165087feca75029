"""What a step streams of a model's weights: every dense weight but an untied input
embedding table, of which a step gathers only its tokens' rows. On a tiny model the table
is half the weights (4.1M of the tests' 8.5M-parameter Llama): charging it to every step
put 0.25 ms of memory time on a 1.8 ms step of the real vLLM's CPU core."""

from __future__ import annotations

import pytest

from inferbench.catalog import load_catalog
from inferbench.sim.perf import EfficiencyParams, RankBatch

from .stepmodels import TINY, step_model


def test_an_untied_embedding_is_held_but_not_streamed_everystep_model() -> None:
    cat = load_catalog()
    tiny, cpu = cat.model(TINY), cat.gpu("cpu")
    assert tiny.tied_embeddings is False
    step = step_model(TINY, "cpu", EfficiencyParams(step_overhead_s=0.0, layer_overhead_s=0.0))
    # the KV pool is sized after every weight ...
    assert step.weight_bytes_per_gpu == pytest.approx(tiny.params_b * 1e9 * 2)
    # ... but a one-sequence decode step reads the layers and the LM head, not the input table
    streamed = (tiny.params_b * 1e9 - tiny.vocab_size * tiny.hidden_size) * 2
    kv = (100 + 1) * step.kv_bytes_per_token_gpu
    bandwidth = cpu.hbm_tbps * 1e12 * step.eff.memory_efficiency
    one = [RankBatch(decode_seqs=1, decode_ctx_tokens=100)]
    assert step.step_time(one) == pytest.approx((streamed + kv) / bandwidth, rel=1e-6)
    # a model whose table is not recorded as untied streams all of its dense weights
    llama = step_model("meta-llama/Llama-3.1-8B-Instruct", "h100", step.eff)
    assert llama._dense_read_bytes == llama.dense_weight_bytes
