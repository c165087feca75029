"""Silicon-sample rows (aiconfigurator's CSV layout, rows written here) as simulator points.

Unmarked: the fast tier."""

from __future__ import annotations

import csv
import io

import pytest

from inferbench.sim.silicon import Refused, SiliconPoint, concurrency, express, to_job

HEADER = (  # the silicon sample's header line
    "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,"
    "gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,"
    "moe_ep_size,prefill_batch_size,prefill_num_workers,prefill_tp_size,prefill_pp_size,"
    "prefill_attention_dp_size,prefill_moe_tp_size,prefill_moe_ep_size,decode_batch_size,"
    "decode_num_workers,decode_tp_size,decode_pp_size,decode_attention_dp_size,"
    "decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms"
)
COLUMNS = HEADER.split(",")
QWEN = {"model_path": "Qwen/Qwen3-32B", "precision": "fp8", "gemm_quant_mode": "fp8"}
R1 = {"model_path": "deepseek-ai/DeepSeek-R1", "backend": "sglang", "system": "h200_sxm"}
R1_DISAGG = {
    **R1, "precision": "fp8", "mode": "disagg", "silicon_data_source": "silicon_concurrency=64",
    "prefill_tp_size": "8", "prefill_moe_ep_size": "8", "decode_tp_size": "8",
    "decode_moe_ep_size": "8", "decode_batch_size": "64",
}  # fmt: skip
ROWS = {
    "agg_tp2": {**QWEN, "silicon_data_source": "src; silicon_concurrency=16", "backend": "vllm",
                "system": "h100_sxm", "osl": "256", "batch_size": "16", "tp_size": "2",
                "moe_tp_size": "2", "silicon_ttft_ms": "100.0", "silicon_tpot_ms": "20.0"},
    "agg_dep4": {"model_path": "deepseek-ai/DeepSeek-R1", "backend": "trtllm",
                 "system": "b200_sxm", "precision": "fp4",
                 "silicon_data_source": "silicon_concurrency=512", "batch_size": "128",
                 "attention_dp_size": "4", "moe_ep_size": "4"},
    "agg_nosrc": {**QWEN, "backend": "sglang", "system": "h200_sxm", "batch_size": "8"},
    "disagg_workers": {**R1_DISAGG, "prefill_num_workers": "2", "decode_num_workers": "1"},
    "disagg_bare": R1_DISAGG,
    "mixed": {**QWEN, "backend": "vllm", "system": "h100_sxm", "tp_size": "2",
              "attention_dp_size": "2", "silicon_data_source": "silicon_concurrency=8"},
    "tpu": {**QWEN, "backend": "vllm", "system": "tpu_v5",
            "silicon_data_source": "silicon_concurrency=8"},
}  # fmt: skip
DEFAULTS = {"mode": "agg", "isl": "1024", "osl": "1024", "backend_version": "0.1", "tp_size": "1",
            "pp_size": "1", "attention_dp_size": "1", "moe_tp_size": "1", "moe_ep_size": "1",
            "silicon_ttft_ms": "50.0", "silicon_tpot_ms": "10.0"}  # fmt: skip


def rows() -> dict[str, dict[str, str]]:
    """ROWS written out in the CSV's column layout and read back as the benchmark reads it."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS)
    writer.writeheader()
    for name, fields in ROWS.items():
        writer.writerow({**DEFAULTS, **fields, "id": name})
    return {row["id"]: row for row in csv.DictReader(io.StringIO(out.getvalue()))}


def test_aggregated_row_maps_layout_and_measurements() -> None:
    got = express(rows()["agg_tp2"])
    assert isinstance(got, SiliconPoint)
    job = got.point.job
    assert (job["runner"], job["framework"], job["tp"], job["ep"], job["conc"]) == (
        "h100", "vllm", 2, 1, 16
    )  # fmt: skip
    m = got.point.measured
    assert m.interactivity == pytest.approx(50.0) and m.ttft_ms == 100.0
    # closed loop: 16 users, each request 100 + 255 x 20 ms for 1280 tokens, over 2 GPUs
    assert m.tok_s_gpu == pytest.approx(16 * 1280 / 5.2 / 2)


def test_attention_dp_is_a_dp_attn_worker_of_all_its_gpus() -> None:
    job = to_job(rows()["agg_dep4"])
    assert not isinstance(job, str)
    fields, gpus = job
    assert (fields["tp"], fields["ep"], fields.get("dp-attn"), fields["conc"], gpus) == (
        4, 4, True, 512, 4
    )  # fmt: skip


def test_concurrency_falls_back_to_batch_times_attention_ranks() -> None:
    assert concurrency(rows()["agg_nosrc"]) == 8


def test_disaggregated_rows_need_worker_counts() -> None:
    job = to_job(rows()["disagg_workers"])
    assert not isinstance(job, str)
    fields, gpus = job
    assert fields["framework"] == "dynamo-sglang"
    assert fields["prefill"] == {"num-worker": 2, "tp": 8, "ep": 8, "pp": 1}
    assert gpus == 2 * 8 + 8
    bare = express(rows()["disagg_bare"])
    assert isinstance(bare, Refused)
    assert "worker counts" in bare.reason and bare.mode == "disagg"


def test_inexpressible_rows_name_their_reason() -> None:
    mixed = express(rows()["mixed"])
    assert isinstance(mixed, Refused) and "attention TP 2 x DP 2" in mixed.reason
    tpu = express(rows()["tpu"])
    assert isinstance(tpu, Refused) and "tpu_v5" in tpu.reason
