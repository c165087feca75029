"""DEP normalisation (both spellings), engine-flag layouts, and topology words."""

from __future__ import annotations

from inferbench.config.topology import (
    TokenKind,
    deployment_words,
    parse_tokens,
    worker_word,
)
from inferbench.engines import engine
from inferbench.engines.flags import engine_layout
from inferbench.engines.layout import Spelling, WorkerLayout, worker_layout

sglang_layout = engine("sglang").layout
trtllm_layout = engine("trtllm").layout


def test_two_dep_spellings_normalise_to_one_layout() -> None:
    gpus_spelling = worker_layout(tp=8, ep=8, dp_attn=True)
    engine_spelling = worker_layout(tp=1, ep=8, dp_attn=True)
    assert gpus_spelling.same_shape(engine_spelling)
    assert (gpus_spelling.gpus, gpus_spelling.tp, gpus_spelling.dp, gpus_spelling.ep) == (
        8,
        1,
        8,
        8,
    )
    assert gpus_spelling.spelling is Spelling.DEP_TP_IS_GPUS
    assert engine_spelling.spelling is Spelling.DEP_ENGINE_TP


def test_plain_tp_tep_and_pipeline() -> None:
    assert worker_layout(tp=4) == WorkerLayout(4, 4, spelling=Spelling.TP)
    tep = worker_layout(tp=8, ep=8)
    assert (tep.gpus, tep.tp, tep.dp, tep.ep, tep.spelling) == (8, 8, 1, 8, Spelling.TEP)
    assert worker_layout(tp=4, pp=2, pcp=2, dcp=2).gpus == 16


def test_engine_layouts_match_master_dep() -> None:
    master = worker_layout(tp=8, ep=8, dp_attn=True)
    vllm = engine_layout(
        "vllm",
        {"tensor-parallel-size": 1, "data-parallel-size": 8, "enable-expert-parallel": True}.get,
    )
    sglang = sglang_layout(
        {"tp-size": 8, "dp-size": 8, "ep-size": 8, "enable-dp-attention": True}.get
    )
    trt = trtllm_layout(
        {"tensor_parallel_size": 8, "moe_expert_parallel_size": 8, "enable_attention_dp": True}.get
    )
    assert master.same_shape(vllm) and master.same_shape(sglang) and master.same_shape(trt)
    no_ep = engine_layout("vllm", {"tensor-parallel-size": 4}.get)
    assert (no_ep.gpus, no_ep.ep) == (4, 1)


def test_topology_words() -> None:
    prefill = worker_layout(tp=2, ep=2, dp_attn=True)
    decode = worker_layout(tp=8, ep=8, dp_attn=True)
    words = deployment_words(decode, prefill=prefill, prefill_workers=2, decode_workers=1)
    assert str(words) == "2P1D DEP2/DEP8" and words.all() == ("2P1D", "DEP2", "DEP8")
    assert worker_word(worker_layout(tp=4, ep=4)) == "TEP4"
    assert worker_word(worker_layout(tp=4)) == "TP4"
    assert worker_word(worker_layout(tp=4, pp=2)) == "TP4PP2"
    assert deployment_words(worker_layout(tp=8)).all() == ("TP8",)


def test_parse_tokens_in_file_names_and_prose() -> None:
    words = [t.word for t in parse_tokens("2p1d-dep2-dep8-8k1k-c2048.yaml")]
    assert words == ["2P1D", "DEP2", "DEP8", "8k1k", "conc2048"]
    prose = parse_tokens("Port the B300 4P2D DEP2/DEP8 recipe; TP4 and mtp3 fp4 gpt-oss")
    assert [t.word for t in prose] == ["4P2D", "DEP2", "DEP8", "TP4"]
    trt = parse_tokens("ctx1_gen4_tep8_batch64_eplb0_mtp3.yaml")
    assert [(t.kind, t.word) for t in trt] == [
        (TokenKind.PD, "1P4D"),
        (TokenKind.WORKER, "TEP8"),
        (TokenKind.BATCH, "batch64"),
    ]
    pd = parse_tokens("2P1D")[0]
    assert (pd.first, pd.second, pd.start) == (2, 1, 0)


def test_atom_layout_reads_the_tree_scripts_flags() -> None:
    dep = engine("atom").layout(
        {"tensor-parallel-size": 8, "enable-dp-attention": True, "enable-expert-parallel": True}.get
    )
    assert dep.same_shape(worker_layout(tp=8, ep=8, dp_attn=True))
    assert engine("atom").layout({"tensor-parallel-size": 4}.get).same_shape(worker_layout(tp=4))
