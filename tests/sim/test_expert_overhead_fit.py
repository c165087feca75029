"""The calibration tells a per-expert overhead from the per-layer one and shares it between
a vendor's engines: an engine measured on dense models only still pays it on a MoE model."""

from __future__ import annotations

import pytest

from inferbench.catalog import load_catalog
from inferbench.sim.calibrate import Measured, MeasuredPoint, evaluate, predict, simulate

TRUTH = {
    "layer_overhead_s": 50e-6,
    "attention_efficiency": 0.4,
    "seq_overhead_s": 0.0,
    "expert_overhead_s": 1e-6,
}


def _job(model: str, precision: str, engine: str, conc: int) -> dict[str, object]:
    return {
        "model": model, "precision": precision, "runner": "h200", "framework": engine,
        "tp": 1, "conc": conc, "isl": 512, "osl": 128,
    }  # fmt: skip


def _dense(engine: str, conc: int) -> dict[str, object]:
    return _job("meta-llama/Llama-3.1-8B-Instruct", "bf16", engine, conc)


def _moe(engine: str, conc: int) -> dict[str, object]:
    return _job("openai/gpt-oss-120b", "fp4", engine, conc)


def _truth(name: str, job: dict[str, object]) -> MeasuredPoint:
    """A point 'measured' on a simulator whose overheads we know."""
    probe = MeasuredPoint(name=name, job=job, measured=Measured(tok_s_gpu=1.0))
    got = simulate(probe, TRUTH)
    return probe.model_copy(
        update={"measured": Measured(tok_s_gpu=got.tok_s_gpu, interactivity=got.interactivity)}
    )


def test_a_dense_only_engine_borrows_the_vendors_per_expert_overhead() -> None:
    points = [
        _truth("vllm-dense-8", _dense("vllm", 8)),
        _truth("vllm-dense-32", _dense("vllm", 32)),
        _truth("vllm-moe-32", _moe("vllm", 32)),
        _truth("sglang-dense-32", _dense("sglang", 32)),
    ]
    cal = evaluate(points, loo=False).calibration
    entry = cal.entry_for(load_catalog().gpu("h200"), "sglang")
    assert entry is not None and entry.points == 1
    assert entry.params["expert_overhead_s"] == pytest.approx(1e-6, rel=0.35)
    # SGLang was never measured on a MoE model: its MoE point is predicted with the
    # per-expert overhead vLLM's dense and MoE points told apart
    held = _truth("sglang-moe-32", _moe("sglang", 32))
    got = predict(held, cal)
    assert got.interactivity == pytest.approx(held.measured.interactivity, rel=0.08)
    # without the per-expert part the same MoE point would be clearly faster
    plain = simulate(held, {**TRUTH, "expert_overhead_s": 0.0})
    assert plain.interactivity / held.measured.interactivity > 1.12
