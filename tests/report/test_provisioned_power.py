"""Power and cost as the InferenceX site shows them: tokens per provisioned MW from per-GPU
constants (no measurement), and cost per million input tokens beside total and output."""

from __future__ import annotations

import pytest

from inferbench.catalog.load import load_catalog
from inferbench.report.metrics import y_axes
from inferbench.report.prices import load_prices
from inferbench.results.derived import provisioned_mw
from inferbench.results.record import Identity, Pool

SITE_KW = {  # the site's all-in kW per GPU, as hardware.yaml cites them
    "h100": 1.73, "h200": 1.73, "b200": 2.17, "b300": 2.17, "gb200": 2.1, "gb300": 2.1,
    "mi300x": 1.79, "mi325x": 2.18, "mi355x": 2.65,
}  # fmt: skip


def test_every_gpu_the_site_prices_has_its_provisioned_power_with_a_source() -> None:
    catalog = load_catalog()
    for key, kw in SITE_KW.items():
        gpu = catalog.gpu(key)
        assert gpu.provisioned_kw == kw
        assert f"power {kw}" in gpu.sources["provisioned_kw"]
    assert catalog.gpu("cpu").provisioned_kw is None  # the test VM's core: never provisioned


def _disagg(prefill_hw: str, decode_hw: str) -> Identity:
    return Identity(
        model="m", model_prefix="m", precision="fp8", framework="dynamo-vllm",
        hardware_prefill=prefill_hw, hardware_decode=decode_hw, disagg=True,
        pools=(
            Pool(role="prefill", workers=2, gpus_per_worker=4, tp=4, hardware=prefill_hw),
            Pool(role="decode", workers=1, gpus_per_worker=8, tp=8, hardware=decode_hw),
        ),
        isl=1024, osl=1024, concurrency=64,
    )  # fmt: skip


def test_provisioned_power_counts_every_gpu_of_every_pool() -> None:
    assert provisioned_mw(_disagg("b200-dgxc", "b200")) == pytest.approx(16 * 2.17 / 1000)
    assert provisioned_mw(_disagg("cpu", "b200")) is None  # a pool without a constant
    assert provisioned_mw(_disagg("tpu-v9", "b200")) is None  # not in the catalog


def test_the_report_offers_input_cost_and_provisioned_power_axes() -> None:
    keys = [a.key for a in y_axes(load_prices())]
    assert "tput_per_provisioned_mw" in keys and "tput_per_mw" in keys
    for model in load_prices().models:
        costs = [k for k in keys if k.endswith(f".{model.key}")]
        assert costs[:3] == [f"cost_total.{model.key}", f"cost_output.{model.key}",
                             f"cost_input.{model.key}"]  # fmt: skip
