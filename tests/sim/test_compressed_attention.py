"""DeepSeek-V4's compressed KV (CSA every 4 tokens with a top-1024 indexer, HCA every 128
tokens, a 128-token raw window in every layer) in the catalog and the step model."""

from __future__ import annotations

from inferbench.catalog import Precision, load_catalog
from inferbench.sim.perf import EfficiencyParams, Parallelism, RankBatch, StepModel


def _step(model_key: str, *, compressed: bool = True) -> StepModel:
    catalog = load_catalog()
    model = catalog.model(model_key)
    if not compressed:  # the same layers as full attention, as before compression was modelled
        model = model.model_copy(update={"compressed_layers": (), "compressed_window": 0})
    return StepModel(
        model,
        catalog.gpu("b200"),
        Parallelism(tp=8, expert_parallel=True),
        precision=Precision.FP4,
        kv_precision=Precision.FP8,
        eff=EfficiencyParams(),
    )


def test_v4_kv_per_token_follows_the_compression_ratios() -> None:
    v4 = load_catalog().model("deepseek-ai/DeepSeek-V4-Pro")
    assert v4.full_attention_layers == 0 and v4.compressed_attention_layers == 61
    csa = 30 * (512 * 2 + 132) / 4  # one 512-wide K=V entry per 4 tokens, plus its index key
    hca = 31 * 512 * 2 / 128
    assert v4.kv_bytes(Precision.BF16) == csa + hca
    # about 7x less than 61 full layers of the same 512-wide entry
    assert 61 * 512 * 2 / v4.kv_bytes(Precision.BF16) > 6.5
    # the raw window is per sequence: 61 layers x 128 tokens
    assert v4.per_seq_kv_bytes(Precision.BF16, 10_000) == 61 * 128 * 512 * 2


def test_v4_holds_more_sequences_and_decodes_long_context_cheaper() -> None:
    v4, full = _step("deepseek-v4-pro"), _step("deepseek-v4-pro", compressed=False)
    assert v4.kv_capacity_tokens(0.9, 9216) > 5 * full.kv_capacity_tokens(0.9, 9216)
    long_ctx = RankBatch(decode_seqs=64, decode_ctx_tokens=64 * 65_536)
    assert v4.rank_time(long_ctx, 64) < 0.5 * full.rank_time(long_ctx, 64)


def test_csa_reads_are_capped_by_the_indexer_topk() -> None:
    v4 = _step("deepseek-v4-pro")
    # past 4 x 1024 tokens a CSA layer reads 1024 entries whatever the context; only the
    # HCA entries (context / 128) still grow
    t16k = v4.rank_time(RankBatch(decode_seqs=256, decode_ctx_tokens=256 * 16_384), 256)
    t64k = v4.rank_time(RankBatch(decode_seqs=256, decode_ctx_tokens=256 * 65_536), 256)
    assert t64k < 1.5 * t16k
    prefill = RankBatch(prefill_tokens=8192, prefill_attention_ctx=8192 * 4096.0)
    assert v4.rank_time(prefill, 8192) > 0
