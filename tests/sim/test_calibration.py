"""Calibration: files and their lookup, the fit recovering known parameters, the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from inferbench.catalog import load_catalog
from inferbench.cli.main import app, main
from inferbench.core.errors import InputError
from inferbench.sim.calibrate import (
    Measured,
    MeasuredPoint,
    deployment,
    dump_calibration,
    evaluate,
    load_points,
    simulate,
)
from inferbench.sim.calibration import (
    Calibration,
    CalibrationEntry,
    efficiency_for,
    load_calibration,
    parse_calibration,
)


def _job(conc: int, isl: int = 512) -> dict[str, object]:
    return {
        "model": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "runner": "h100",
        "framework": "vllm", "tp": 1, "conc": conc, "isl": isl, "osl": 128,
    }  # fmt: skip


def _truth(name: str, job: dict[str, object], params: dict[str, float]) -> MeasuredPoint:
    """A point 'measured' on a simulator whose overheads we know."""
    probe = MeasuredPoint(name=name, job=job, measured=Measured(tok_s_gpu=1.0))
    got = simulate(probe, params)
    return probe.model_copy(
        update={
            "measured": Measured(
                tok_s_gpu=got.tok_s_gpu, interactivity=got.interactivity, ttft_ms=got.ttft_ms
            )
        }  # fmt: skip
    )


def test_the_fit_recovers_a_known_overhead_and_predicts_a_held_out_point() -> None:
    truth = {"layer_overhead_s": 80e-6, "attention_efficiency": 0.4, "front_latency_s": 0.05}
    points = [_truth(f"p{c}", _job(c), truth) for c in (2, 16, 64)]
    report = evaluate(points)
    entry = report.calibration.entry_for(load_catalog().gpu("h100"), "vllm")
    assert entry is not None
    assert entry.params["layer_overhead_s"] == pytest.approx(80e-6, rel=0.35)
    assert entry.params["front_latency_s"] == pytest.approx(0.05, abs=0.02)
    for pt in points:  # each held-out point is predicted from the other two
        assert report.loo[pt.name].interactivity == pytest.approx(
            pt.measured.interactivity, rel=0.1
        )
    # uncalibrated (20 us per layer, no front latency) the same points are clearly off
    off = report.uncalibrated["p2"].interactivity / points[0].measured.interactivity
    assert off > 1.15


def test_lookup_falls_back_from_gpu_and_engine_to_vendor_to_all() -> None:
    cal = Calibration(
        entries=(
            CalibrationEntry(gpu="h100", engine="vllm", params={"layer_overhead_s": 1e-5}),
            CalibrationEntry(gpu="nvidia", engine="*", params={"layer_overhead_s": 2e-5}),
            CalibrationEntry(params={"layer_overhead_s": 3e-5}),
        )
    )
    gpus = load_catalog().gpus
    assert cal.entry_for(gpus["h100"], "vllm").params["layer_overhead_s"] == 1e-5  # type: ignore[union-attr]
    assert cal.entry_for(gpus["h200"], "sglang").params["layer_overhead_s"] == 2e-5  # type: ignore[union-attr]
    assert cal.entry_for(gpus["mi355x"], "vllm").params["layer_overhead_s"] == 3e-5  # type: ignore[union-attr]


def test_calibration_file_round_trips_and_bad_values_are_refused(tmp_path: Path) -> None:
    cal = Calibration(entries=(CalibrationEntry(gpu="h100", engine="vllm",
                                                params={"layer_overhead_s": 5e-5}),))  # fmt: skip
    path = tmp_path / "cal.yaml"
    path.write_text(dump_calibration(cal))
    assert load_calibration(str(path)) == cal
    eff = efficiency_for("vllm", load_catalog().gpu("h100"), str(path))
    assert eff.layer_overhead_s == 5e-5
    bad = path.read_text().replace("5e-05", "0.5")
    with pytest.raises(InputError, match=r"outside \[0.0, 0.01\]"):
        parse_calibration(bad, path)
    with pytest.raises(InputError, match="not one the simulator fits"):
        parse_calibration(bad.replace("layer_overhead_s", "memory_speedup"), path)


def test_default_calibration_is_used_unless_none_is_asked() -> None:
    h200 = load_catalog().gpu("h200")
    fitted = efficiency_for("sglang", h200, None)
    plain = efficiency_for("sglang", h200, "none")
    assert plain.front_latency_s == 0.0
    assert fitted != plain


def test_points_file_with_a_result_file_and_the_cli(tmp_path: Path) -> None:
    job = _job(8)
    result = tmp_path / "measured.json"
    runner = CliRunner()
    out = runner.invoke(app, ["sim", "estimate", "--job", str(_write_job(tmp_path, job)),
                              "--calibration", "none", "--output", str(result)])  # fmt: skip
    assert out.exit_code == 0, out.output
    points = tmp_path / "points.yaml"
    points.write_text(
        "points:\n"
        f"  - {{name: a, job: {_flow(job)}, result: measured.json}}\n"
        f"  - {{name: b, job: {_flow(_job(32))},\n"
        "      measured: {tok_s_gpu: 9000, interactivity: 60}}\n"
    )
    loaded = load_points(points)
    assert loaded[0].measured.tok_s_gpu > 0 and loaded[0].measured.ttft_ms is not None
    target = tmp_path / "cal.yaml"
    out = runner.invoke(app, ["sim", "calibrate", str(points), "--output", str(target), "--no-loo"])
    assert out.exit_code == 0, out.output
    assert "h100" in target.read_text()
    out = runner.invoke(app, ["sim", "estimate", "--job", str(_write_job(tmp_path, job)),
                              "--calibration", str(target)])  # fmt: skip
    assert out.exit_code == 0, out.output
    with pytest.raises(SystemExit) as stop:
        main(["sim", "calibrate", str(tmp_path / "missing.yaml"), "-o", str(target)])
    assert stop.value.code == 2


def _flow(job: dict[str, object]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in job.items()) + "}"


def _write_job(tmp_path: Path, job: dict[str, object]) -> Path:
    import json

    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    return path


def test_deployment_of_a_point_reads_sim_flags() -> None:
    job = {**_job(8), "sim-flags": {"gpu-memory-utilization": 0.5, "kv-cache-dtype": "fp8"}}
    dep = deployment(MeasuredPoint(name="x", job=job, measured=Measured(tok_s_gpu=1)))
    assert dep.decode.gpu_memory_utilization == 0.5 and dep.decode.kv_cache_dtype == "fp8"


def _on(gpu: str, engine: str, conc: int) -> dict[str, object]:
    return {**_job(conc), "runner": gpu, "framework": engine}


def test_an_unmeasured_pair_borrows_from_its_gpu_and_engine_not_another_gpus_point() -> None:
    # B200 runs 2.5x leaner per layer than H100 on every engine; vLLM is measured on H100
    # alone. The (B200, vLLM) pair takes B200's factor with NVIDIA's vLLM factor.
    def truth(gpu: str) -> dict[str, float]:
        layer = {"h100": 100e-6, "b200": 40e-6}[gpu]
        return {"layer_overhead_s": layer, "attention_efficiency": 0.4, "seq_overhead_s": 0.0}

    points = [
        _truth(f"{gpu}-{engine}-{conc}", _on(gpu, engine, conc), truth(gpu))
        for gpu, engine in (("h100", "vllm"), ("h100", "trtllm"), ("b200", "trtllm"))
        for conc in (4, 32)
    ]
    report = evaluate(points, loo=False)
    gpus = load_catalog().gpus
    b200_vllm = report.calibration.entry_for(gpus["b200"], "vllm")
    h100_vllm = report.calibration.entry_for(gpus["h100"], "vllm")
    assert b200_vllm is not None and h100_vllm is not None
    assert (b200_vllm.gpu, b200_vllm.engine, b200_vllm.points) == ("b200", "vllm", 0)
    assert b200_vllm.params["layer_overhead_s"] == pytest.approx(40e-6, rel=0.4)
    assert h100_vllm.params["layer_overhead_s"] == pytest.approx(100e-6, rel=0.4)
    # a vendor with no measurement keeps its own prior, not NVIDIA's fit
    from inferbench.sim.priors import load_priors

    amd = report.calibration.entry_for(gpus["mi300x"], "vllm")
    assert amd is not None and amd.gpu == "amd" and amd.points == 0
    prior = load_priors().vendor("amd").layer_overhead_s.value
    assert amd.params["layer_overhead_s"] == pytest.approx(prior)


def test_calibrate_reports_leave_one_group_out_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = tmp_path / "points.yaml"
    points.write_text(
        "points:\n"
        + "".join(
            f"  - {{name: {gpu}-{conc}, job: {_flow(_on(gpu, 'vllm', conc))},\n"
            f"      measured: {{tok_s_gpu: {tput}, interactivity: {inter}}}}}\n"
            for gpu, conc, tput, inter in (("h100", 4, 900, 110), ("h200", 8, 1900, 100))
        )
    )
    runner = CliRunner()
    target = tmp_path / "cal.yaml"
    args = ["sim", "calibrate", str(points), "-o", str(target), "--no-loo"]
    out = runner.invoke(app, [*args, "--holdout", "gpu"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "out by gpu err" in out.output
    with pytest.raises(SystemExit) as stop:
        main([*args, "--holdout", "model"])
    assert stop.value.code == 2
    assert "--holdout 'model' is not a grouping" in capsys.readouterr().err
