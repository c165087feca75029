from __future__ import annotations

from pathlib import Path

from inferbench.results.names import identity_from_name


def test_inferencex_current_name() -> None:
    name = (
        "dsr1_8k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep8-dpatrue_disagg-false_spec-mtp"
        "_conc64_b200-nvd_3.json"
    )
    got = identity_from_name(Path(name))
    assert got["model-prefix"] == "dsr1" and got["isl"] == "8192" and got["osl"] == "1024"
    assert got["precision"] == "fp8" and got["framework"] == "sglang"
    assert (got["tp"], got["ep"], got["dp-attn"], got["pp"]) == ("8", "8", "true", "1")
    assert got["spec-decoding"] == "mtp" and got["conc"] == "64"
    assert got["runner"] == "b200-nvd_3"


def test_inferencex_name_without_pp_and_with_dashed_framework() -> None:
    name = (
        "gptoss_1k1k_fp4_dynamo-trt_aiperf_tp4-ep1-dpafalse_disagg-false_spec-none_conc8_gb200-nv_0"
    )
    got = identity_from_name(Path(name + ".json"))
    assert got["framework"] == "dynamo-trt" and got["tp"] == "4" and "pp" not in got


def test_inferencex_old_name() -> None:
    got = identity_from_name(Path("llama70b_1k1k_fp8_vllm_tp2_conc16_h100-cw_1.json"))
    assert got["model-prefix"] == "llama70b" and got["tp"] == "2" and got["conc"] == "16"


def test_srt_slurm_names() -> None:
    got = identity_from_name(
        Path("sa-bench_isl_8192_osl_1024/results_concurrency_128_gpus_24_ctx_8_gen_16.json")
    )
    assert got == {
        "conc": "128",
        "total-gpus": "24",
        "disagg": "true",
        "prefill.gpus": "8",
        "decode.gpus": "16",
        "isl": "8192",
        "osl": "1024",
    }
    agg = identity_from_name(Path("results_concurrency_4_gpus_8.json"))
    assert agg == {"conc": "4", "total-gpus": "8"}


def test_unrelated_name() -> None:
    assert identity_from_name(Path("bench.json")) == {}
