"""A point measured on other hardware than its entry names is stored, listed, compared and
drawn under the hardware it ran on (the entry's kept as `planned_hardware`); the simulator's
points stay predictions for the entry's hardware; a run without an accelerator is as before.

The run directories carry the env.json the runner writes (`environment_record`), with the
accelerator detection finds: the CPU (no GPU tool on an empty PATH) or a stand-in
nvidia-smi."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from cli_helper import run_cli
from results_fixtures import sa_bench, write_json

from inferbench.core.accelerator import Accelerator
from inferbench.launch.accelerator import detect_accelerator
from inferbench.launch.rundir import environment_record
from inferbench.report.dashboard import DashboardInputs, dashboard_data
from inferbench.report.prices import load_prices
from inferbench.results.ingest import ingest_paths
from inferbench.results.pareto import build_curves
from inferbench.results.record import Record
from inferbench.results.store import open_store

JOB = {
    "config-key": "llama-bf16-h200-vllm",
    "image": "vllm/vllm-openai:v0.10.2",
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "model-prefix": "llama",
    "precision": "bf16",
    "framework": "vllm",
    "runner": "h200",
    "isl": 1024,
    "osl": 1024,
    "tp": 1,
    "ep": 1,
    "dp-attn": False,
    "conc": [1, 2],
    "exp-name": "llama_1k1k",
    "fingerprint": "fp-llama-1",
}


def cpu() -> Accelerator:
    return detect_accelerator(path="")  # no GPU tool on an empty PATH: this machine's CPU


def h200(tmp_path: Path) -> Accelerator:
    folder = tmp_path / "gpu-bin"
    folder.mkdir(exist_ok=True)
    smi = folder / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H200'\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    return detect_accelerator(path=str(folder))


def run_dir(root: Path, run_id: str, accelerator: Accelerator | None, engine: str = "vllm") -> Path:
    run = root / run_id
    write_json(run / "run.json", {"run_id": run_id, "backend": "local", "engine": engine})
    job = run / "fp-llama-1"
    write_json(job / "job.json", JOB)
    outcome: dict[str, Any] = {"status": "completed", "backend": "local", "engine": engine}
    write_json(job / "outcome.json", outcome)
    write_json(
        job / "env.json",
        environment_record({"backend": "local"}, accelerator).model_dump(mode="json"),
    )
    if accelerator is None:  # a run from before accelerators were recorded
        env = json.loads((job / "env.json").read_text())
        del env["accelerator"]
        write_json(job / "env.json", env)
    for conc in (1, 2):
        write_json(job / "results" / f"conc{conc}.json", sa_bench(conc))
    return run


def stored(db_url: str, run_id: str) -> list[Record]:
    with open_store(db_url) as store:
        return [s.record for s in store.query() if s.record.provenance.run_id == run_id]


def test_a_cpu_run_of_an_h200_entry_is_stored_as_cpu(db_url: str, tmp_path: Path) -> None:
    report = ingest_paths([run_dir(tmp_path, "cpu-run", cpu())], db_url)
    assert (report.inserted, report.skipped) == (2, ())
    records = stored(db_url, "cpu-run")
    for r in records:
        assert r.identity.hardware() == "cpu" and {p.hardware for p in r.identity.pools} == {"cpu"}
        assert r.provenance.planned_hardware == "h200"
        assert r.provenance.accelerator is not None and r.provenance.accelerator.kind == "cpu"
    (curve,) = build_curves(records)
    assert curve.key.label() == "llama 1024/1024 cpu vllm bf16 (entry h200)"


def test_measured_and_planned_hardware_never_share_a_series(db_url: str, tmp_path: Path) -> None:
    ingest_paths([run_dir(tmp_path, "cpu-run", cpu())], db_url)
    ingest_paths([run_dir(tmp_path, "gpu-run", h200(tmp_path))], db_url)
    on_gpu = stored(db_url, "gpu-run")
    assert {r.identity.hardware() for r in on_gpu} == {"h200"}
    assert {r.provenance.planned_hardware for r in on_gpu} == {None}
    assert {r.provenance.accelerator.model for r in on_gpu if r.provenance.accelerator} == {
        "NVIDIA H200"
    }
    on_cpu = stored(db_url, "cpu-run")
    assert not {r.point_key() for r in on_cpu} & {r.point_key() for r in on_gpu}
    labels = sorted(c.key.label() for c in build_curves([*on_cpu, *on_gpu]))
    assert labels == [
        "llama 1024/1024 cpu vllm bf16 (entry h200)",
        "llama 1024/1024 h200 vllm bf16",
    ]
    # compare pairs no CPU point with an H200 one
    cmp = run_cli("results", "compare", "gpu-run", "cpu-run", "--db", db_url)
    assert cmp.code == 0 and "2 only in base, 2 only in head" in cmp.out, cmp.out + cmp.err
    # the dashboard draws two series: the CPU one under `cpu`, never under h200
    with open_store(db_url) as store:
        latest = [s.record for s in store.latest_per_point()]
        data = dashboard_data(
            DashboardInputs(
                latest=latest,
                outcomes=store.outcomes(),
                history=[],
                comparison=None,
                prices=load_prices(),
                stored=store.count(),
            )
        )
    series = {s["label"]: s["hw"] for s in data["series"]}
    assert series == {
        "llama 1024/1024 cpu vllm bf16 (entry h200)": "cpu",
        "llama 1024/1024 h200 vllm bf16": "h200",
    }


def test_list_and_filter_show_what_it_ran_on(db_url: str, tmp_path: Path) -> None:
    ingest_paths([run_dir(tmp_path, "cpu-run", cpu())], db_url)
    out = run_cli("results", "list", "--db", db_url, "--format", "json")
    assert out.code == 0, out.err
    rows = json.loads(out.out)["points"]
    assert {(r["hardware"], r["planned_hardware"]) for r in rows} == {("cpu", "h200")}
    assert all(r["accelerator"].startswith("CPU ") for r in rows)
    table = run_cli("results", "list", "--db", db_url)
    assert "planned" in table.out and "h200" in table.out
    # `--hardware h200` is the entry's series: the CPU points are not in it
    only = run_cli("results", "list", "--db", db_url, "--hardware", "h200", "--format", "json")
    assert json.loads(only.out)["points"] == []


@pytest.mark.parametrize(
    ("engine", "accelerator"),
    [("sim", "cpu"), ("vllm", None)],
    ids=["simulated-predictions-keep-the-entry", "no-accelerator-recorded"],
)
def test_the_entry_hardware_stays_where_nothing_else_was_measured(
    db_url: str, tmp_path: Path, engine: str, accelerator: str | None
) -> None:
    run = run_dir(tmp_path, "r", cpu() if accelerator else None, engine=engine)
    ingest_paths([run], db_url)
    for r in stored(db_url, "r"):
        assert r.identity.hardware() == "h200" and r.provenance.planned_hardware is None
        assert r.provenance.accelerator is None
