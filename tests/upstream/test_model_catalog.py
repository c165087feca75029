"""Every model the real InferenceX and srt-slurm trees name is in the model catalog, and the
simulator estimates a job of each family the catalog gained for them.

A newer tree that benchmarks a model the catalog lacks fails here, naming the model and the
file that asks for it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from inferbench.catalog import load_catalog
from inferbench.cli.main import app
from inferbench.config.master import load_master_file
from inferbench.core.errors import InputError
from inferbench.matrix.api import sweep_tree
from inferbench.matrix.filters import SweepFilters

# srt-slurm recipe models the catalog cannot describe yet, with the reason
NOT_IN_CATALOG = {
    # Nemotron-H: Mamba-2, attention and latent-MoE blocks are separate layers (88 of them);
    # a catalog layer is attention plus MLP. Named by 6 srt-slurm recipes, no InferenceX master.
    "hf:nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4",
}


def _unresolved(names: dict[str, Path]) -> list[str]:
    catalog = load_catalog()
    missing = []
    for name, where in sorted(names.items()):
        try:
            catalog.model(name)
        except InputError:
            missing.append(f"{name} (named in {where})")
    return missing


def test_every_master_config_model_is_in_the_catalog(inferencex_tree: Path) -> None:
    configs = inferencex_tree / "configs"
    names: dict[str, Path] = {}
    for path in sorted(configs.glob("*-master.yaml")):
        for config in load_master_file(path):
            names.setdefault(config.entry.model, path.relative_to(inferencex_tree))
    assert len(names) >= 10  # the tree was read
    assert _unresolved(names) == []


def test_every_archived_master_model_is_in_the_catalog(inferencex_tree: Path) -> None:
    names: dict[str, Path] = {}
    for path in sorted((inferencex_tree / "configs" / "deprecated").glob("*-master.yaml")):
        data = YAML(typ="safe").load(path.read_text("utf-8")) or {}
        for entry in data.values():  # archived files may follow an older schema: read raw
            if isinstance(entry, dict) and isinstance(entry.get("model"), str):
                names.setdefault(entry["model"], path.relative_to(inferencex_tree))
    assert names
    assert _unresolved(names) == []


def _recipe_models(root: Path) -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in sorted(root.rglob("*.yaml")):
        try:
            data = YAML(typ="safe").load(path.read_text("utf-8"))
        except Exception:  # not every YAML file there is a recipe; the recipe tests read them
            continue
        model = data.get("model") if isinstance(data, dict) else None
        name = model.get("path") or model.get("repo") if isinstance(model, dict) else None
        if isinstance(name, str) and not name.startswith("$") and name not in NOT_IN_CATALOG:
            names.setdefault(name, path.relative_to(root))
    return names


def test_every_recipe_model_is_in_the_catalog(inferencex_tree: Path, srt_slurm_tree: Path) -> None:
    names = _recipe_models(srt_slurm_tree / "recipes")
    names.update(_recipe_models(inferencex_tree / "benchmarks" / "multi_node"))
    assert len(names) >= 20
    assert _unresolved(names) == []


@cache
def _jobs(root: Path, prefix: str) -> list[dict[str, object]]:
    filters = SweepFilters(model_prefixes=(prefix,))
    return [job.to_wire() for job in sweep_tree(root, filters)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("prefix", "key"),
    [("dsv4", "deepseek-v4-pro"), ("kimik3", "kimi-k3"), ("minimaxm3", "minimax-m3")],
)
def test_sim_estimate_runs_a_job_of_each_new_family(
    inferencex_tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    prefix: str,
    key: str,
) -> None:
    # the checkpoint's own precision: DeepSeek-V4-Pro's MI300X jobs say fp8 for a checkpoint
    # whose routed experts are FP4, which the simulator prices at FP8 and refuses (too big)
    jobs = [j for j in _jobs(inferencex_tree, prefix) if j["precision"] == "fp4"]
    assert jobs, f"the tree has no fp4 {prefix} job"
    job = min(jobs, key=lambda j: j.get("scenario-type") != "fixed-seq-len")  # fixed first
    assert load_catalog().model(str(job["model"])).key == key
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    out = tmp_path / "result.json"
    args = ["sim", "estimate", "--job", str(path), "--concurrency", "4", "--num-prompts", "8"]
    app([*args, "--isl", "1024", "--osl", "64", "--output", str(out)], standalone_mode=False)
    result = json.loads(out.read_text())
    assert result["completed"] >= 8  # an agentic job replays whole sessions
    name = load_catalog().model(key).name
    assert f"{name} on " in capsys.readouterr().out
