"""Hold-out validation: leave-one-out and leave-one-group-out over measured points."""

from __future__ import annotations

import pytest

from inferbench.sim.calibrate import Measured, MeasuredPoint, simulate
from inferbench.sim.holdout import holdout, prepare


def _job(gpu: str, conc: int) -> dict[str, object]:
    return {
        "model": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "runner": gpu,
        "framework": "vllm", "tp": 1, "conc": conc, "isl": 512, "osl": 64,
    }  # fmt: skip


def _truth(name: str, job: dict[str, object], params: dict[str, float]) -> MeasuredPoint:
    probe = MeasuredPoint(name=name, job=job, measured=Measured(tok_s_gpu=1.0))
    got = simulate(probe, params)
    return probe.model_copy(
        update={"measured": Measured(tok_s_gpu=got.tok_s_gpu, interactivity=got.interactivity)}
    )


def test_leave_one_gpu_out_predicts_a_gpu_from_the_others_and_sums_up_per_pair() -> None:
    truth = {"layer_overhead_s": 80e-6, "attention_efficiency": 0.4}
    points = [_truth(f"{g}-{c}", _job(g, c), truth) for g in ("h100", "h200") for c in (4, 32)]
    prep = prepare(points)
    by_gpu = holdout(points, "gpu", prepared=prep)
    assert [e.name for e in by_gpu.errors] == [pt.name for pt in points]
    assert {e.group for e in by_gpu.errors} == {"h100", "h200"}
    # the same physics on both GPUs: each is predicted from the other within 15%
    assert by_gpu.within("tok_s_gpu", 0.15) == (4, 4)
    assert by_gpu.within("interactivity", 0.15) == (4, 4)
    pair = by_gpu.pair("h100", "vllm")
    assert pair is not None and pair.points == 2
    assert pair.uncertainty == pytest.approx(max(pair.tok_s_gpu, pair.interactivity or 0.0))
    assert pair.tok_s_gpu == pytest.approx(
        sum(abs(e.tok_s_gpu) for e in by_gpu.errors if e.gpu == "h100") / 2
    )
    # holding out the only engine leaves nothing to fit: predicted uncalibrated, farther off
    by_engine = holdout(points, "engine", prepared=prep)
    assert {e.group for e in by_engine.errors} == {"vllm"}
    assert by_engine.mean_abs("interactivity") > by_gpu.mean_abs("interactivity")
    loo = holdout(points, prepared=prep)
    assert [e.group for e in loo.errors] == [pt.name for pt in points]
