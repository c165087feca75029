"""InferenceX's own benchmark scripts, unchanged, through `inferbench run` on the real vLLM.

A copy of the real tree (../shared/upstream/inferencex) whose master config has two vLLM
entries pointed at the tiny model (tiny lengths, one concurrency each): a fixed-seq-len job
(`benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh`) and an agentic one
(`benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh`), each with the tree's own
`benchmarks/benchmark_lib.sh`. The model is given as launchers give a staged model
(MODEL_PATH, the HF cache mount). What cannot exist here stands in on PATH and says so in
the logs: `nvidia-smi` (no GPU), `uv`/`aiperf` (inferbench's replay for aiperf, as its
bench stands in for sa-bench), `pip` (nothing installed), and `vllm` is vLLM's CPU build
behind cpu_vllm.py (the GPU flags dropped, listed in the server log). Then InferenceX's
processing reads the outputs (`utils/process_result.py`; the script's own
`process_agentic_result` and the workflow's `validate_agentic_result`), and the points are
stored by `inferbench results ingest`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from runcli import no_live_servers

from evals.known_answers import write_dataset
from upstream.oracles import upstream_tree

from .conftest import ingest
from .cpu_vllm import write_cpu_vllm
from .vllm_cpu import TinyModel, alive, listening, logged_pids, server_env

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.upstream]

FIXED = "dsv4-fp8-h200-vllm"
AGENTIC = "dsv4-fp4-b200-vllm-agentic-mtp"
SCRIPTS = {
    FIXED: "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh",
    AGENTIC: "benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh",
}
SYNTH = "sessions=6,turns=3,first_input=128,input=32,output=8,delay=0,max_context=1000"


def _tree(upstream: Path, target: Path, model: str, *, evals: bool = False) -> Path:
    """The real tree, its master config down to the two entries, each at the tiny model's
    size (the scripts, benchmark_lib.sh, the launchers and utils/ as they are); `evals`:
    the fixed-seq-len entry at 8k1k and 16 instead, where InferenceX's policy puts evals."""
    shutil.copytree(upstream, target, symlinks=True)
    for path in (target, target / "configs", target / "configs" / "nvidia-master.yaml"):
        path.chmod(path.stat().st_mode | 0o200)
    master = target / "configs" / "nvidia-master.yaml"
    entries = yaml.safe_load(master.read_text())
    fixed, agentic = entries[FIXED], entries[AGENTIC]
    space = {"tp": 1, "ep": 1, "dp-attn": False, "conc-list": [16 if evals else 2]}
    isl, osl = (8192, 1024) if evals else (64, 16)
    fixed["scenarios"]["fixed-seq-len"] = [{"isl": isl, "osl": osl, "search-space": [space]}]
    scenario = agentic["scenarios"]["agentic-coding"][0]
    scenario["search-space"] = [
        {"tp": 1, "kv-offloading": "none", "spec-decoding": "mtp", "conc-list": [2]}
    ]
    for entry in (fixed, agentic):
        entry["model"] = model
    master.write_text(yaml.safe_dump({FIXED: fixed, AGENTIC: agentic}, sort_keys=False))
    return target


def _nothing_left(run: Path) -> None:
    """No process vLLM logged is alive, none runs in the run folder, the ports are free."""
    pids = set().union(*(logged_pids(log) for log in run.glob("*/logs/server-conc*.log")))
    assert pids, "vLLM logged no process ids"
    # vLLM's engine core can take tens of seconds to exit on a loaded 2-core machine
    assert no_live_servers(run, timeout=60), "a process still runs inside the run directory"
    assert not [pid for pid in pids if alive(pid)], f"alive after the run: {pids}"
    for plan in run.glob("*/plan.json"):
        for point in json.loads(plan.read_text())["script"]["points"]:
            assert not listening(int(point["env"]["PORT"]))


def _environment(
    tmp_path: Path, vllm_bin_dir: Path, tiny_llama: TinyModel, tmpdir: Path
) -> dict[str, str]:
    env = server_env(vllm_bin_dir, tiny_llama)
    cpu = write_cpu_vllm(tmp_path / "cpu-vllm", vllm_bin_dir)
    env.update(
        PATH=f"{cpu}{os.pathsep}{env['PATH']}",
        MODEL_PATH=str(tiny_llama.path),  # a staged model, as launch_b200-dgxc.sh gives it
        TMPDIR=str(tmpdir),
    )
    return env


def _run(tree: Path, runs: Path, env: dict[str, str], *args: str) -> tuple[Path, dict[str, Path]]:
    """`inferbench run` of the tree; the run folder and its job folders by config key."""
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "run", "--root", str(tree),
         "--runs-dir", str(runs), *args],
        capture_output=True, text=True, timeout=1100, check=False, env=env,
    )  # fmt: skip
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    logs = "\n".join(
        f"--- {log}\n{log.read_text(errors='replace')[-3000:]}"
        for log in sorted(run.glob("*/logs/*.log"))
    )
    assert done.returncode == 0, done.stdout + done.stderr + logs
    jobs = {
        json.loads((p / "plan.json").read_text())["config_key"]: p
        for p in run.iterdir()
        if (p / "plan.json").is_file()
    }
    return run, jobs


@pytest.mark.timeout(1200)
def test_the_trees_scripts_run_on_the_real_vllm_and_are_processed_and_stored(
    tmp_path: Path, vllm_bin_dir: Path, tiny_llama: TinyModel
) -> None:
    tree = _tree(upstream_tree("inferencex"), tmp_path / "tree", tiny_llama.model_id)
    runs, tmpdir = tmp_path / "runs", tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = _environment(tmp_path, vllm_bin_dir, tiny_llama, tmpdir)
    run, jobs = _run(
        tree, runs, env, "--config-keys", f"{FIXED},{AGENTIC}", "--duration", "20",
        "--synth", SYNTH,
    )  # fmt: skip
    assert set(jobs) == {FIXED, AGENTIC}
    for key, job in jobs.items():
        plan = json.loads((job / "plan.json").read_text())
        assert plan["script"]["script"] == SCRIPTS[key]
        # the script and benchmark_lib.sh ran as the tree has them, the workspace mapped
        staged = (job / "workspace" / SCRIPTS[key]).read_text()
        original = (tree / SCRIPTS[key]).read_text()
        assert staged == original.replace("/workspace", str((job / "workspace").resolve()))
        script_log = (job / "logs" / "script-conc2.log").read_text()
        assert "inferbench: stand-in nvidia-smi" in script_log
        outcome = json.loads((job / "outcome.json").read_text())
        assert [(p["concurrency"], p["status"]) for p in outcome["points"]] == [(2, "passed")]
        result = json.loads((job / "results" / "conc2.json").read_text())
        assert result["completed"] > 0 and result["model_id"] == tiny_llama.model_id
        server_log = next(job.glob("logs/server-conc2.log")).read_text()
        assert "inferbench CPU test stand-in for vllm" in server_log
        assert "--quantization deepseek_v4_fp8" in server_log or key == AGENTIC
    # InferenceX's processing read what the scripts wrote
    agg = json.loads((jobs[FIXED] / "results" / "agg_conc2.json").read_text())
    assert agg["conc"] == 2 and agg["framework"] == "vllm" and agg["tput_per_gpu"] > 0
    assert "utils/process_result.py" in (jobs[FIXED] / "logs" / "process-conc2.log").read_text()
    agentic_agg = json.loads((jobs[AGENTIC] / "results" / "agg_conc2.json").read_text())
    assert agentic_agg["request_metrics"] and agentic_agg["server_metrics"]
    script_log = (jobs[AGENTIC] / "logs" / "script-conc2.log").read_text()
    assert "inferbench: aiperf stand-in" in script_log
    assert "Validated required AIPerf server metrics prefix 'vllm:'" in script_log
    assert "validate_agentic_result" in (jobs[AGENTIC] / "logs" / "process-conc2.log").read_text()
    assert list(tmpdir.iterdir()) == []
    assert ingest(run, tmp_path / "results.sqlite") == [2, 2]
    _nothing_left(run)


@pytest.mark.timeout(900)
def test_the_fixed_seq_len_scripts_eval_runs_and_is_collected(
    tmp_path: Path, vllm_bin_dir: Path, tiny_llama: TinyModel
) -> None:
    """The eval path of the same script (RUN_EVAL, as InferenceX's eval-only job runs it:
    8k1k at 16 is where its policy puts evals, too long to benchmark on a CPU): lm-eval
    through `run_eval`, on two GSM8K questions of a local file (EVAL_TASKS_DIR, the tree's
    task file reading it; EVAL_LIMIT 2), and collect_eval_results.py reads the artifacts."""
    tree = _tree(upstream_tree("inferencex"), tmp_path / "tree", tiny_llama.model_id, evals=True)
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    data = write_dataset(tmp_path / "gsm8k.jsonl")
    env = _environment(tmp_path, vllm_bin_dir, tiny_llama, tmpdir)
    run, jobs = _run(
        tree, tmp_path / "runs", env, "--config-keys", FIXED, "--evals-only",
        "--eval-limit", "2", "--eval-dataset", str(data),
    )  # fmt: skip
    job = jobs[FIXED]
    point = json.loads((job / "plan.json").read_text())["script"]["points"][0]
    assert point["env"]["RUN_EVAL"] == "true" and point["env"]["EVAL_ONLY"] == "true"
    outcome = json.loads((job / "outcome.json").read_text())
    assert [(p["concurrency"], p["status"]) for p in outcome["points"]] == [(16, "passed")]
    script_log = (job / "logs" / "script-conc16.log").read_text()
    assert "python3 -m lm_eval" in script_log and "EVAL_ONLY mode" in script_log
    rows = json.loads((job / "results" / "agg_eval_conc16.json").read_text())
    assert [(r["task"], r["conc"], r["n_eff"]) for r in rows] == [("gsm8k", 16, 2)]
    (artifact,) = (job / "eval_results" / "conc16").iterdir()
    assert (artifact / "meta_env.json").is_file() and list(artifact.glob("results*.json"))
    assert list(tmpdir.iterdir()) == []
    _nothing_left(run)
