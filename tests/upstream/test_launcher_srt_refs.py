"""One reading of a launcher's srt-slurm clones, checked against the real launch_gb200-nv.sh.

The launcher clones one srt-slurm per job from an if/elif chain: 11 repository@ref outcomes
(NVIDIA/srt-slurm at seven refs and at its default branch, a power-lane fork at a pinned
commit, two refs of a fork). Every reader (clusters import's pin, check/plan/run's job ref)
asks the clone table; none reads the script a second way (that second reading once gave
1 ref where the table gave 10).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from inferbench.config.cluster_import import import_cluster
from inferbench.config.launcher import read_launcher
from inferbench.config.launcher_srt_ref import (
    DEFAULT_BRANCH,
    SrtClone,
    job_variables,
)
from inferbench.config.runners import load_runners

LAUNCHER = "runners/launch_gb200-nv.sh"


def _literal_refs(text: str) -> set[str]:
    """The refs the script names for srt-slurm, read plainly: each `--branch B` of a clone
    of an srt-slurm repository, each `git checkout REF` (a `$VAR` is the script's own
    top-level assignment), and the default branch for a clone with neither."""
    assigned = dict(re.findall(r'(?m)^(\w+)="([^"$]*)"\s*$', text))
    refs: set[str] = set()
    lines = text.splitlines()
    for number, line in enumerate(lines):
        words = shlex.split(line.split("||")[0], comments=True) if "git " in line else []
        if words[:2] == ["git", "clone"] and any("srt-slurm" in w for w in words):
            if "--branch" in words:
                refs.add(words[words.index("--branch") + 1])
            elif not any("git checkout" in later for later in lines[number + 1 : number + 4]):
                refs.add(DEFAULT_BRANCH)
        if words[:2] == ["git", "checkout"]:
            ref = words[2]
            refs.add(assigned.get(ref.strip("${}"), ref) if ref.startswith("$") else ref)
    return refs


def test_the_clone_table_holds_every_ref_the_launcher_names(inferencex_tree: Path) -> None:
    path = inferencex_tree / LAUNCHER
    table = read_launcher(path)
    assert table.srt_clones is not None
    assert table.srt_clones.single() is None
    labels = {c.label for c in table.srt_clones.outcomes() if isinstance(c, SrtClone)}
    named = _literal_refs(path.read_text())
    assert len(labels) == len(named) == 11
    assert {label.split("@", 1)[1] for label in labels} == named
    assert all(isinstance(c, SrtClone) for c in table.srt_clones.outcomes())  # all literal


def test_clusters_import_pins_no_ref_for_a_launcher_of_many(inferencex_tree: Path) -> None:
    table = read_launcher(inferencex_tree / LAUNCHER)
    assert table.srt_slurm_ref is None  # the launcher picks per job: no cluster-wide pin
    runners = load_runners(inferencex_tree / "configs" / "runners.yaml")
    assert import_cluster(table, runners=runners).cluster.srt_slurm is None


@pytest.mark.parametrize(
    ("framework", "prefix", "precision", "scenario", "power", "wanted"),
    [
        ("dynamo-trt", "glm5", "fp4", "fixed-seq-len", False, "NVIDIA/srt-slurm@v1.0.26"),
        ("dynamo-vllm", "dsv4", "fp4", "fixed-seq-len", False, "NVIDIA/srt-slurm@v1.0.31"),
        ("dynamo-sglang", "dsv4", "fp4", "fixed-seq-len", False, "NVIDIA/srt-slurm@HEAD"),
        (
            "dynamo-sglang",
            "dsv4",
            "fp4",
            "fixed-seq-len",
            True,
            "edwingao28/srt-slurm@6fc1bed01a0b82dae0088a105c03ce0cfb353443",
        ),
        ("dynamo-sglang", "kimik3", "fp4", "agentic-coding", False, "NVIDIA/srt-slurm@v1.0.53"),
    ],
)
def test_a_job_clones_the_ref_of_its_branch(
    inferencex_tree: Path,
    framework: str,
    prefix: str,
    precision: str,
    scenario: str,
    power: bool,
    wanted: str,
) -> None:
    table = read_launcher(inferencex_tree / LAUNCHER)
    assert table.srt_clones is not None
    variables = job_variables(
        framework=framework,
        model_prefix=prefix,
        precision=precision,
        model="m",
        scenario=scenario,
        spec_decoding="none",
        config_file="recipes/x.yaml",
        recipe_text="telemetry:\n  provider: dcgm-power\n  enabled: true\n" if power else None,
    )
    clone = table.srt_clones.resolve(variables)
    assert isinstance(clone, SrtClone), clone
    assert clone.label == wanted
