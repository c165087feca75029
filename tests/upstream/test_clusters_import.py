"""`inferbench clusters import` reads every launcher of the real InferenceX tree: no
traceback, every file written loads as a cluster file, and what it cannot read is a warning
naming the launcher and line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from inferbench.config.cluster import load_cluster
from inferbench.config.cluster_import import import_cluster
from inferbench.config.launcher import read_launcher, read_launchers
from inferbench.config.runners import load_runners

WARNING = re.compile(r"^runners/launch_[\w.-]+\.sh(:\d+)?: warning: \S")


def _launchers(tree: Path) -> list[Path]:
    return sorted((tree / "runners").glob("launch_*.sh"))


def test_every_launcher_imports(inferencex_tree: Path) -> None:
    runners = load_runners(inferencex_tree / "configs" / "runners.yaml")
    paths = _launchers(inferencex_tree)
    assert len(paths) > 10
    for path in paths:
        result = import_cluster(read_launcher(path), runners=runners)
        assert result.cluster.runners, path.name


@pytest.mark.parametrize("name", ["gb200-nv", "gb300-nv"])
def test_the_multinode_clusters_route_their_models(inferencex_tree: Path, name: str) -> None:
    """The clusters most multinode entries use (a pydantic traceback before)."""
    tables = read_launchers(_launchers(inferencex_tree))
    result = import_cluster(
        tables[name], runners=load_runners(inferencex_tree / "configs" / "runners.yaml")
    )
    assert len(result.cluster.models) >= 10
    assert result.cluster.runners and result.cluster.gpus_per_node == 4


def test_a_route_by_model_is_kept(inferencex_tree: Path) -> None:
    """launch_b200-dgxc.sh stages qwen3.5 fp4 twice, by the job's $MODEL (`*NVFP4-V2`, then
    the rest): the import keeps both, each named after the master model it serves."""
    from inferbench.config.master import load_masters

    tables = read_launchers(_launchers(inferencex_tree))
    masters = load_masters(sorted((inferencex_tree / "configs").glob("*-master.yaml")))
    cluster = import_cluster(tables["b200-dgxc"], masters=masters).cluster
    qwen = {(m.model, m.path) for m in cluster.models if m.matches("qwen3.5", "fp4")}
    assert qwen == {
        ("nvidia/Qwen3.5-397B-A17B-NVFP4-V2", "/scratch/fsw/models/Qwen3.5-397B-A17B-NVFP4-V2"),
        ("nvidia/Qwen3.5-397B-A17B-NVFP4", "/lustre/fsw/models/Qwen3.5-397B-A17B-NVFP4"),
    }


def test_cli_writes_loadable_files_and_warns_with_file_and_line(
    inferencex_tree: Path, tmp_path: Path
) -> None:
    out = tmp_path / "clusters"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "inferbench.cli.main",
            "clusters",
            "import",
            "--root",
            ".",
            "--output-dir",
            str(out),
        ],  # fmt: skip
        cwd=inferencex_tree,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    written = sorted(out.glob("*.yaml"))
    assert len(written) == len(read_launchers(_launchers(inferencex_tree)))
    for path in written:
        load_cluster(path)
    warnings = [line for line in done.stderr.splitlines() if line.strip()]
    assert warnings and all(WARNING.match(line) for line in warnings), warnings
