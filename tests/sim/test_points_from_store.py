"""`points_from_store`: calibration points read back from a results store that the ingest
path wrote, for an aggregated result file and a disaggregated run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inferbench.bench.result import read_point_result
from inferbench.core.errors import InputError
from inferbench.results.calibration_points import points_from_store
from inferbench.results.ingest import ingest_paths
from inferbench.sim.calibrate import deployment, simulate
from inferbench.sim.estimate import estimate
from inferbench.sim.inputs import Overrides, from_job_data
from inferbench.sim.summary import write_result


def _measure(job: dict[str, Any], path: Path) -> Path:
    """A result file 'measured' on the simulator (default calibration) for `job`."""
    dep = from_job_data(job, Overrides(), path=Path("job.json"))
    conc = dep.workload.concurrencies[0]
    return write_result(estimate(dep, conc), dep, path)


AGG_JOB: dict[str, Any] = {
    "model": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "runner": "h100",
    "framework": "vllm", "tp": 2, "ep": 1, "dp-attn": False, "conc": 8, "isl": 512, "osl": 64,
}  # fmt: skip


def test_an_ingested_result_file_comes_back_as_the_point_that_produced_it(
    tmp_path: Path,
) -> None:
    result = _measure(AGG_JOB, tmp_path / "conc8.json")
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    identity = {"model-prefix": "llama3.1-8b", "precision": "bf16", "framework": "vllm",
                "hardware": "h100", "isl": "512", "osl": "64", "conc": "8", "tp": "2",
                "run-id": "local-1"}  # fmt: skip
    report = ingest_paths([result], url, identity=identity)
    assert report.inserted == 1, report.skipped
    (pt,) = points_from_store(url, hardware="h100", framework="vllm")
    for key in ("precision", "runner", "framework", "conc", "isl", "osl", "tp"):
        assert pt.job[key] == AGG_JOB[key], key
    sa = read_point_result(result).sa
    assert pt.measured.tok_s_gpu == pytest.approx(sa.total_token_throughput / 2)
    assert pt.measured.ttft_ms == pytest.approx(sa.median_ttft_ms)
    assert pt.stat == "median"
    # the stored point rebuilds the same deployment: simulated with the calibration that
    # produced it, it predicts what was measured
    dep = deployment(pt, calibration="default")
    assert (dep.model.key, dep.gpu.key, dep.decode.tp, dep.engine) == (
        "llama-3.1-8b",
        "h100",
        2,
        "vllm",
    )
    again = simulate(pt, dep.efficiency.model_dump(), deployment(pt))
    assert again.tok_s_gpu == pytest.approx(pt.measured.tok_s_gpu, rel=1e-6)
    assert again.ttft_ms == pytest.approx(pt.measured.ttft_ms, rel=1e-6)
    assert pt.measured.interactivity is not None
    assert again.interactivity == pytest.approx(pt.measured.interactivity, rel=0.02)
    with pytest.raises(InputError, match="holds no points that match"):
        points_from_store(url, hardware="b200")


DISAGG_JOB: dict[str, Any] = {
    "model": "meta-llama/Llama-3.1-70B-Instruct", "model-prefix": "llama3.3-70b",
    "precision": "fp8", "framework": "dynamo-vllm", "runner": "h200-multinode",
    "isl": 1024, "osl": 128, "spec-decoding": "none", "conc": [16], "exp-name": "l70b_1k",
    "disagg": True, "fingerprint": "fp-l70b",
    "prefill": {"num-worker": 2, "tp": 2, "ep": 1, "dp-attn": False},
    "decode": {"num-worker": 1, "tp": 4, "ep": 1, "dp-attn": False},
}  # fmt: skip


def test_a_disaggregated_run_directory_keeps_both_pools(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "run-1"
    job_dir = run / "fp-l70b"
    (job_dir / "results").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"run_id": "run-1", "backend": "slurm"}))
    (job_dir / "job.json").write_text(json.dumps(DISAGG_JOB))
    (job_dir / "outcome.json").write_text(json.dumps({"status": "completed", "attempt": 1}))
    _measure({**DISAGG_JOB, "conc": 16}, job_dir / "results" / "conc16.json")
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    report = ingest_paths([run], url)
    assert report.inserted == 1, report.skipped
    (pt,) = points_from_store(url, model_prefix="llama3.3-70b")
    assert pt.job["prefill"] == {"num-worker": 2, "tp": 2, "ep": 1, "dp-attn": False, "pp": 1}
    assert pt.job["decode"] == {"num-worker": 1, "tp": 4, "ep": 1, "dp-attn": False, "pp": 1}
    dep = deployment(pt)
    assert dep.total_gpus == 8 and dep.prefill is not None and dep.prefill.workers == 2
    assert pt.measured.tok_s_gpu > 0 and pt.measured.ttft_ms is not None


def test_engine_flags_go_through_the_store_into_the_fit(tmp_path: Path) -> None:
    # a run whose job carries engine flags (as the calibration points file writes them):
    # stored and read back, the point is the same deployment, and the same fit
    flags = {"max-num-seqs": 16, "gpu-memory-utilization": 0.6, "max-num-batched-tokens": 2048}
    job = {**AGG_JOB, "model-prefix": "llama3.1-8b", "exp-name": "l8b", "fingerprint": "fp-l8b",
           "conc": [8], "kv-cache-dtype": "fp8", "sim-flags": flags}  # fmt: skip
    run = tmp_path / "runs" / "run-1"
    job_dir = run / "fp-l8b"
    (job_dir / "results").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"run_id": "run-1", "backend": "local"}))
    (job_dir / "job.json").write_text(json.dumps(job))
    (job_dir / "outcome.json").write_text(json.dumps({"status": "completed", "attempt": 1}))
    _measure({**job, "conc": 8}, job_dir / "results" / "conc8.json")
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    assert ingest_paths([run], url).inserted == 1
    (stored,) = points_from_store(url, model_prefix="llama3.1-8b")
    assert stored.job["sim-flags"] == flags and stored.job["kv-cache-dtype"] == "fp8"
    dep = deployment(stored)
    assert (dep.decode.max_num_seqs, dep.decode.gpu_memory_utilization) == (16, 0.6)
    assert dep.decode.max_num_batched_tokens == 2048 and dep.decode.kv_cache_dtype == "fp8"
    # the same point from a points file (flags inline) fits to the same calibration
    from inferbench.sim.calibrate import MeasuredPoint, evaluate

    direct = MeasuredPoint(
        name=stored.name,
        job={**{k: v for k, v in job.items() if k not in ("conc",)}, "conc": 8},
        measured=stored.measured,
    )
    assert deployment(direct).decode == dep.decode
    via_store = evaluate([stored], loo=False).calibration
    via_file = evaluate([direct], loo=False).calibration
    assert via_store.entries == via_file.entries
