"""A rendered recipe of the real InferenceX tree through the real `srtctl apply` on the real
local Slurm. There are no GPUs, containers or weights here, so the job fails; what is tested
is that inferbench submits it, follows it and records the failure as the job's outcome with
its logs, without hanging and without a traceback.

srtctl's submit host needs what `make setup` downloads (NATS, etcd, uv, the Tachometer
scraper) in its srtctl_root; offline, the test's srtctl_root holds executable stand-ins that
say so and exit 1, so the job fails as soon as it reaches them on the node.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferbench.config.project import load_project
from inferbench.config.srt_job import RunnerLaunchers
from inferbench.config.srt_slurm_refs import SrtSlurmSources
from inferbench.core.errors import InferbenchError
from inferbench.launch.deployment import Deployment, group_jobs
from inferbench.launch.srtcluster import srtctl_catalog
from inferbench.launch.srtplan import SrtSources, srtctl_plan
from inferbench.matrix.expand import expand_project
from inferbench.matrix.filters import SweepFilters
from services import missing_service

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
SETUP_BINARIES = ("configs/nats-server", "configs/etcd", "bin/uv", "bin/tachometer-scraper")


@pytest.fixture(scope="module")
def slurm() -> str:
    """The default partition of the running local Slurm, or skip."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        missing_service("Slurm is not installed (.ci/services/20-slurm.sh)")
    done = subprocess.run(
        ["sinfo", "-h", "-o", "%P %a"], capture_output=True, text=True, timeout=30, check=False
    )
    up = [line.split()[0] for line in done.stdout.splitlines() if line.endswith(" up")]
    if done.returncode != 0 or not up:
        missing_service(f"no Slurm partition is up: {done.stderr.strip() or done.stdout.strip()}")
    default = [p for p in up if p.endswith("*")]
    return (default or up)[0].rstrip("*")


def _recipe(dep: Deployment, project: Any, catalog: Any, srt: SrtSources) -> dict[str, Any]:
    plan = srtctl_plan(dep, project, None, "/job", catalog=catalog, srt_slurm=srt)
    return dict(yaml.safe_load(plan.files[0].content))


def _nodes(recipe: dict[str, Any]) -> int:
    res = recipe.get("resources") or {}
    keys = ("agg_nodes", "prefill_nodes", "decode_nodes")
    dedicated = (recipe.get("infra") or {}).get("etcd_nats_dedicated_node")
    return sum(int(res.get(k) or 0) for k in keys) + bool(dedicated)


def _first_job(
    tree: Path, srt_slurm: Path, fits: bool, variants: bool = False
) -> tuple[Deployment, dict[str, Any]]:
    """The first deployment of a config key whose recipe (in the tree) needs one node
    (`fits`), or more nodes than this one-node Slurm has (not `fits`); srtctl runs one task
    per node for sglang and vllm. `variants`: one whose CONFIG_FILE names a recipe file with
    several variants and no selector (srtctl submits one Slurm job per variant)."""
    project = load_project(tree)
    catalog = srtctl_catalog(project)
    srt = SrtSources(SrtSlurmSources([srt_slurm]), RunnerLaunchers(project))
    seen: set[str] = set()
    for dep in group_jobs(expand_project(project, SweepFilters(node_type="multi-node"))):
        if dep.config_key in seen:
            continue
        seen.add(dep.config_key or "")
        try:
            recipe = _recipe(dep, project, catalog, srt)
        except InferbenchError:
            continue
        if variants:
            base = recipe.get("base") or {}
            backend = (base.get("backend") or {}).get("type", "sglang")
            if "base" in recipe and not dep.config_selector and backend != "trtllm":
                return dep, recipe
            continue
        backend = (recipe.get("backend") or {}).get("type", "sglang")
        if "base" in recipe or backend == "trtllm":
            continue
        in_tree = (tree / str(dep.config_file)).is_file()
        if (_nodes(recipe) == 1) == fits and (in_tree or not fits):
            return dep, recipe
    pytest.skip("the tree has no such multinode job")


def _without_sbatch_directives(source: Path) -> None:
    """The copy's recipe without its `sbatch_directives` (e.g. 144 CPUs per task, which a
    2-CPU Slurm can never grant; the other test covers such a job): so this job starts."""
    data = yaml.safe_load(source.read_text())
    for section in (data, data.get("base") or {}):
        section.pop("sbatch_directives", None)
    source.write_text(yaml.safe_dump(data, sort_keys=False))


def _local_cluster(tree: Path, dep: Deployment, recipe: dict[str, Any], partition: str) -> None:
    """A catalog entry for this machine's Slurm serving the job's runner: no GPU directive
    (no GPU gres here), no segment directive, weights staged in an empty folder."""
    weights = tree / "weights"
    weights.mkdir()
    res = recipe.get("resources") or {}
    cluster = {
        "name": "local-slurm",
        "runners": [dep.runner],
        "gpu": str(res.get("gpu_type") or "h200"),
        "gpus-per-node": int(res.get("gpus_per_node") or 8),
        "scheduler": {
            "type": "slurm",
            "partition": partition,
            "time-limit": "00:10:00",
            "use-gpus-per-node-directive": False,
            "use-segment-sbatch-directive": False,
        },
        "models": [
            {
                "model": dep.model,
                "model-prefix": dep.model_prefix,
                "precision": dep.precision,
                "path": str(weights),
                "alias": f"{dep.model_prefix}-{dep.precision}",
            }
        ],
    }
    (tree / "clusters").mkdir(exist_ok=True)
    (tree / "clusters/local-slurm.yaml").write_text(yaml.safe_dump(cluster, sort_keys=False))


def _srtctl_root(tmp_path: Path) -> Path:
    root = tmp_path / "srtctl-root"
    for name in SETUP_BINARIES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'#!/bin/sh\necho "{name}: stand-in, make setup did not run" >&2\nexit 1\n')
        path.chmod(0o755)
    return root


Ran = tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]


def _run(
    tmp_path: Path,
    fits: bool,
    srtctl_bin: Path,
    inferencex_tree: Path,
    slurm: str,
    srt_slurm_tree: Path,
    variants: bool = False,
) -> Ran:
    tree = tmp_path / "tree"
    shutil.copytree(inferencex_tree, tree)
    dep, recipe = _first_job(tree, srt_slurm_tree, fits, variants)
    if fits:
        _without_sbatch_directives(tree / str(dep.config_file))
    _local_cluster(tree, dep, recipe.get("base") or recipe, slurm)
    runs = tmp_path / "runs"
    env = {**os.environ, "PATH": f"{srtctl_bin.parent}{os.pathsep}{os.environ['PATH']}"}
    env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")  # offline
    done = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "run", "--root", str(tree)]
        + ["--backend", "srtctl", "--cluster", "local-slurm", "--max-jobs", "1"]
        + ["--config-keys", str(dep.config_key), "--runs-dir", str(runs)]
        + ["--srt-slurm", str(srt_slurm_tree), "--srtctl-root", str(_srtctl_root(tmp_path))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "COLUMNS": "200"},
        check=False,
    )
    (outcome_file,) = runs.glob("*/*/outcome.json")
    return done, json.loads(outcome_file.read_text()), outcome_file.parent


def test_a_job_that_starts_fails_on_the_node_and_is_recorded(
    tmp_path: Path, srtctl_bin: Path, inferencex_tree: Path, srt_slurm_tree: Path, slurm: str
) -> None:
    done, outcome, job_dir = _run(
        tmp_path, True, srtctl_bin, inferencex_tree, slurm, srt_slurm_tree
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert outcome["status"] == "failed" and outcome["slurm_job_id"]
    job_id = outcome["slurm_job_id"]
    assert f"Slurm job {job_id} ended FAILED" in outcome["reason"]
    assert "srtctl" in (job_dir / "logs/srtctl-apply.log").read_text()
    sweep_log = job_dir / f"srtctl-outputs/{job_id}/logs/sweep_{job_id}.log"
    assert sweep_log.is_file()  # the job ran on the node and left its log in the job folder
    assert "srtctl Sweep Orchestrator" in sweep_log.read_text()
    assert outcome["log_tail"] and outcome["log_tail"] in sweep_log.read_text()


def test_a_job_this_slurm_can_never_start_is_cancelled_not_waited_for(
    tmp_path: Path, srtctl_bin: Path, inferencex_tree: Path, srt_slurm_tree: Path, slurm: str
) -> None:
    done, outcome, job_dir = _run(
        tmp_path, False, srtctl_bin, inferencex_tree, slurm, srt_slurm_tree
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert outcome["status"] == "failed" and outcome["slurm_job_id"]
    assert "could never start here (pending: " in outcome["reason"]
    assert outcome["timings_s"]["total"] < 120
    assert (job_dir / "logs/srtctl-apply.log").is_file()
    squeue = subprocess.run(
        ["squeue", "-h", "-j", outcome["slurm_job_id"]], capture_output=True, text=True, check=False
    )
    assert squeue.stdout.strip() == ""  # nothing left behind in the queue

    # --resume takes the srtctl options from run.json: the plan needs --srt-slurm again
    run_id = job_dir.parent.name
    env = {**os.environ, "PATH": f"{srtctl_bin.parent}{os.pathsep}{os.environ['PATH']}"}
    resumed = subprocess.run(
        [sys.executable, "-m", "inferbench.cli.main", "run", "--resume", run_id]
        + ["--root", str(tmp_path / "tree"), "--runs-dir", str(tmp_path / "runs"), "--dry-run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "COLUMNS": "200"},
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    saved = json.loads((job_dir.parent / "run.json").read_text())["settings"]
    assert saved["srt_slurm"] == [str(srt_slurm_tree.resolve())]  # every --srt-slurm given
    assert saved["plan"]["srtctl_root"] == str((tmp_path / "srtctl-root").resolve())
    assert saved["plan"]["srtctl_root"] in resumed.stdout  # srtslurm.yaml's srtctl_root


def test_every_job_of_a_multi_variant_recipe_is_submitted_followed_and_recorded(
    tmp_path: Path,
    srtctl_bin: Path,
    srtctl_python: Path,
    inferencex_tree: Path,
    srt_slurm_tree: Path,
    slurm: str,
) -> None:
    """A CONFIG_FILE naming a recipe file with several variants and no selector: srtctl
    submits one Slurm job per variant, and each is followed to its end and recorded. None can
    start on this one-node Slurm (each asks for several nodes), so each is cancelled."""
    done, outcome, job_dir = _run(
        tmp_path, False, srtctl_bin, inferencex_tree, slurm, srt_slurm_tree, variants=True
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    # srtctl's own expansion of the rendered file says how many jobs it submits
    count = subprocess.run(
        [str(srtctl_python), "-c", "import sys, yaml; "
         "from srtctl.core.config import generate_override_configs as g; "
         "print(len(g(yaml.safe_load(open(sys.argv[1])))))", str(job_dir / "rendered/recipe.yaml")],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    expected = int(count.stdout.strip())
    assert expected > 1
    jobs = outcome["slurm_jobs"]
    ids = [j["job_id"] for j in jobs]
    assert len(jobs) == expected and len(set(ids)) == expected
    assert outcome["slurm_job_id"] == ids[0]
    assert (job_dir / "slurm-job-id").read_text().split() == ids
    for job in jobs:
        assert job["state"] == "CANCELLED" and "could never start here" in job["note"]
        assert (Path(job["output_dir"]) / f"{job['job_id']}.json").is_file()  # srtctl's record
        assert job["name"]
    assert outcome["status"] == "failed"
    assert all(f"Slurm job {i} ended CANCELLED" in outcome["reason"] for i in ids)
    squeue = subprocess.run(
        ["squeue", "-h", "-j", ",".join(ids)], capture_output=True, text=True, check=False
    )
    assert squeue.stdout.strip() == ""  # none of them left behind in the queue
