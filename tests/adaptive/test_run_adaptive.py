"""`inferbench run --adaptive` on the simulator's virtual clock: rounds, adaptive.json, and a
resume that continues an interrupted adaptive run from its measurements."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from inferbench.adaptive.planner import AdaptiveSettings
from inferbench.adaptive.session import AdaptiveOptions, execute_adaptive
from inferbench.launch.plan import Backend, Engine
from inferbench.launch.runner import RunRequest, RunSummary, execute_run
from inferbench.launch.session import RunOptions, build_request
from inferbench.launch.sweep import load_deployments
from inferbench.matrix.filters import SweepFilters
from inferbench.sim.points import open_job

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# one 1-GPU deployment at three concurrencies and one of two: quick to simulate
FILTERS = SweepFilters(config_keys=("llama3.1-8b-bf16-h200-vllm",), conc=(4, 8, 16))

pytestmark = pytest.mark.integration


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )


def _request(runs: Path) -> RunRequest:
    project, deployments = load_deployments(EXAMPLES, FILTERS)
    options = RunOptions(
        root=EXAMPLES,
        backend=Backend.LOCAL,
        engine=Engine.SIM,
        runs_dir=runs,
        adaptive=AdaptiveOptions().as_dict(),
    )
    return build_request(options, project, deployments, simulator=open_job)


def _mtimes(run: Path) -> dict[str, int]:
    return {str(p.relative_to(run)): p.stat().st_mtime_ns for p in run.glob("*/results/conc*.json")}


def test_interrupted_adaptive_run_resumes_from_its_measurements(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    request = _request(runs)
    calls: list[RunRequest] = []

    def stop_in_round_three(req: RunRequest) -> RunSummary:
        calls.append(req)
        if len(calls) == 3:
            req.stop.request()  # a Ctrl-C before the round's first point
        return execute_run(req)

    cut = execute_adaptive(request, AdaptiveOptions(), stop_in_round_three)
    assert cut.interrupted and len(calls) == 3
    run = cut.run.path
    first = json.loads((run / "adaptive.json").read_text())
    assert len(first["rounds"]) == 3 and not first["done"]
    before = _mtimes(run)
    # rounds one and two measured their points (one per frontier: 1k1k and 8k1k)
    assert len(before) == len(first["rounds"][0]) + len(first["rounds"][1]) == 4

    out = _cli("run", "--resume", cut.run.run_id, "--runs-dir", str(runs), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "round 3: measuring" in out.stdout  # it goes on where it stopped
    # progress in rounds: a job reopened for the points its round chose is not a retry
    assert "(round 3)" in out.stdout and "attempt" not in out.stdout, out.stdout
    assert re.search(r"round \d+ completed, \d+ of its \d+ points measured so far", out.stdout)
    final = json.loads((run / "adaptive.json").read_text())
    assert final["done"] and final["rounds"][:2] == first["rounds"][:2]
    after = _mtimes(run)
    assert {k: after[k] for k in before} == before  # nothing measured twice
    statuses = {p["key"]: p["status"] for p in final["points"]}
    assert len(after) == sum(s == "measured" for s in statuses.values())
    assert set(statuses.values()) <= {"measured", "dominated", "near"}
    assert (run / "calibration.yaml").is_file()
    assert json.loads((run / "run.json").read_text())["settings"]["adaptive"]["confidence"] == 0.95


def test_plan_adaptive_prints_the_first_round_and_a_projection(tmp_path: Path) -> None:
    out = _cli("plan", "--adaptive", "--root", str(EXAMPLES), "--model-prefix", "llama3.1-8b",
               cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "adaptive plan: round 1" in out.stdout and "next" in out.stdout
    assert "not planned: llama3.1-8b-bf16-h200-vllm-agentic" in out.stdout
    assert "projection (every measurement on its prediction" in out.stdout
    assert not (tmp_path / "runs").exists()


def test_plan_adaptive_takes_the_real_engine_settings(tmp_path: Path) -> None:
    args = ("plan", "--adaptive", "--root", str(EXAMPLES), "--model-prefix", "llama3.1-8b")
    out = _cli(*args, "--run-noise", "0.1", "--local-correction", "--both-axes", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    line = out.stdout.replace("\n", " ")
    assert "frontier x 1.03 on both axes" in line and "kriged residuals" in line
    assert "run noise at least 0.1)" in line
    out = _cli(*args, "--run-noise", "0", cwd=tmp_path)
    assert out.returncode == 2 and "--run-noise" in out.stderr


def test_adaptive_options_keep_their_settings_across_a_resume() -> None:
    opts = AdaptiveOptions(run_noise=0.1, local_correction=True, both_axes=True)
    again = AdaptiveOptions.from_dict(json.loads(json.dumps(opts.as_dict())))
    assert again == opts
    s = again.settings()
    assert (s.noise, s.local, s.both_axes) == (0.1, True, True)
    # a run.json written before these options resumes with the defaults
    old = AdaptiveOptions.from_dict({"confidence": 0.9, "tolerance": 0.05}).settings()
    assert (old.noise, old.local, old.both_axes) == (AdaptiveSettings().noise, False, False)


def test_adaptive_flag_errors_are_one_line(tmp_path: Path) -> None:
    out = _cli("run", "--adaptive", "--dry-run", "--root", str(EXAMPLES), cwd=tmp_path)
    assert out.returncode == 2 and "--dry-run does not combine with --adaptive" in out.stderr
    out = _cli("plan", "--root", str(EXAMPLES), cwd=tmp_path)
    assert out.returncode == 2 and "Missing argument 'SELECTOR'" in out.stderr
    assert "Traceback" not in out.stderr


def test_skipped_points_are_stored_apart_and_drawn_as_predicted(tmp_path: Path) -> None:
    runs, db = tmp_path / "runs", f"sqlite:///{tmp_path / 'results.sqlite'}"
    out = _cli("run", "--adaptive", "--engine", "sim", "--root", str(EXAMPLES),
               "--model-prefix", "llama3.1-70b", "--runs-dir", str(runs), cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "GPU-hours" in out.stdout and "saved" in out.stdout
    (run,) = [p for p in runs.iterdir() if (p / "adaptive.json").is_file()]
    rows = json.loads((run / "adaptive.json").read_text())["points"]
    skipped = [r for r in rows if r["status"] in ("dominated", "near")]
    measured = [r for r in rows if r["status"] == "measured"]
    assert skipped and measured

    out = _cli("results", "ingest", str(run), "--db", db, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{len(skipped)} predicted points of adaptive runs" in out.stdout
    listed = json.loads(_cli("results", "list", "--db", db, "--format", "json",
                             cwd=tmp_path).stdout)  # fmt: skip
    assert len(listed["points"]) == len(measured)  # measurements only
    predicted = json.loads(_cli("results", "predicted", "--db", db, "--format", "json",
                                cwd=tmp_path).stdout)  # fmt: skip
    assert sorted(p["point"] for p in predicted) == sorted(r["key"] for r in skipped)
    for p in predicted:
        assert p["tok_s_gpu_low"] < p["tok_s_gpu"] < p["tok_s_gpu_high"]
        assert p["reason"].startswith(("dominated", "within"))

    out = _cli("report", "--db", db, "--output", str(tmp_path / "report"), "--no-plots",
               cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    html = (tmp_path / "report" / "index.html").read_text()
    assert "predicted (not measured)" in html
    assert all(f'"why":"{p["reason"]}"' in html for p in predicted)
