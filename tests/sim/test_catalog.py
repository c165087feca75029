from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.catalog import CATALOG_ENV, Precision, load_catalog
from inferbench.core.errors import InputError

REQUIRED_GPUS = ("h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x")


def test_every_required_gpu_has_figures_and_sources() -> None:
    catalog = load_catalog()
    for key in REQUIRED_GPUS:
        gpu = catalog.gpu(key)
        assert gpu.flops(Precision.BF16) > 0 and gpu.hbm_tbps > 0
        assert {"tflops", "hbm", "scale_up", "scale_out"} <= set(gpu.sources)
    assert catalog.gpu("b200").tflops[Precision.FP4] == 9000
    assert Precision.FP4 not in catalog.gpu("h100").tflops


def test_hbm_capacity_is_binary_as_the_gpu_reports_it() -> None:
    # nvidia-smi reports 81,559 MiB for an "80 GB" H100 and 143,771 MiB for a "141 GB" H200:
    # vendor memory GB are 2^30 bytes (decimal GB would leave 7% of every KV pool out)
    catalog = load_catalog()
    for key, reported_mib in (("h100", 81_559), ("h200", 143_771)):
        reported = reported_mib * 2**20
        assert abs(catalog.gpu(key).hbm_bytes - reported) / reported < 0.01


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("nvidia/MiniMax-M3-NVFP4", "minimax-m3"),
        ("minimax-m3-nvfp4", "minimax-m3"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-r1"),
        ("hf:nvidia/DeepSeek-R1-0528-FP4-V2", "deepseek-r1"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("/models/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"),
    ],
)
def test_model_ids_resolve(name: str, key: str) -> None:
    assert load_catalog().model(name).key == key


def test_runner_labels_resolve_to_gpus() -> None:
    catalog = load_catalog()
    assert catalog.gpu("b200-multinode").key == "b200"
    assert catalog.gpu("H200").key == "h200"
    assert catalog.gpu("mi355x-disagg").key == "mi355x"  # InferenceX runner labels
    assert catalog.gpu("b200-dsv4").key == "b200"


def test_unknown_names_list_known_ones() -> None:
    catalog = load_catalog()
    with pytest.raises(InputError) as err:
        catalog.model("acme/Unknown-7B")
    assert "minimax-m3" in err.value.render() and "llama-3.1-8b" in err.value.render()
    with pytest.raises(InputError) as gpu_err:
        catalog.gpu("tpu-v9")
    assert "mi355x" in gpu_err.value.render()


def test_kv_bytes_match_the_attention_shape() -> None:
    catalog = load_catalog()
    r1 = catalog.model("deepseek-r1")
    assert r1.kv_bytes(Precision.BF16) == 61 * (512 + 64) * 2  # MLA latent + rope per layer
    llama = catalog.model("llama-3.1-70b")
    assert llama.kv_bytes(Precision.FP8) == 80 * 2 * 8 * 128
    assert catalog.model("minimax-m3").hidden_size == 6144  # its own config, not M2's


USER_CATALOG = """
gpus:
  x1:
    name: Example accelerator
    tflops: {bf16: 100}
    hbm_gb: 64
    hbm_tbps: 1.0
    scale_up_gbps: 100
    scale_up_domain: 4
    scale_out_gbps: 25
    gpus_per_node: 4
    sources: {all: "test data"}
models:
  tiny:
    name: Tiny
    aliases: [acme/tiny]
    params_b: 1
    active_params_b: 1
    expert_params_b: 0
    layers: 4
    hidden_size: 512
    vocab_size: 1000
    attention: {kind: gqa, heads: 8, kv_heads: 8, head_dim: 64}
    experts: 0
    experts_per_token: 0
    source: test
"""


def test_user_catalog_adds_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = tmp_path / "mine.yaml"
    extra.write_text(USER_CATALOG)
    catalog = load_catalog([extra])
    assert catalog.gpu("x1").hbm_gb == 64
    assert catalog.model("acme/tiny").layers == 4
    monkeypatch.setenv(CATALOG_ENV, str(extra))
    assert load_catalog().model("tiny").key == "tiny"


def test_inconsistent_kv_figure_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        USER_CATALOG.replace(
            "    source: test", "    source: test\n    kv_bytes_per_token: {bf16: 123}"
        )
    )
    with pytest.raises(InputError, match="attention shape gives"):
        load_catalog([bad])
