"""Launcher reader and `inferbench clusters import`."""

from __future__ import annotations

import shutil
from pathlib import Path

import typer
from typer.testing import CliRunner

from inferbench.cli import clusters as clusters_cli
from inferbench.config.cluster import load_cluster
from inferbench.config.launcher import parse_launcher, read_launchers
from inferbench.errors import InputError

TREE = Path(__file__).resolve().parent / "fixtures" / "launcher_tree"


def _tables() -> dict:  # type: ignore[type-arg]
    return read_launchers(sorted((TREE / "runners").glob("*.sh")))


def test_symlinked_launchers_fold_into_one_table() -> None:
    tables = _tables()
    assert list(tables) == ["b200-dgxc"]
    table = tables["b200-dgxc"]
    assert table.names == ("launch_b200-dgxc-slurm.sh", "launch_b200-dgxc.sh")
    assert table.srt_slurm_ref == "v0.4.2" and table.uses_slurm and table.uses_pyxis


def test_routing_rows() -> None:
    table = _tables()["b200-dgxc"]
    row = table.lookup("minimaxm3", "fp4")
    assert row is not None
    assert (row.model_path, row.alias) == (
        "/scratch/fsw/models/MiniMax-M3-NVFP4",
        "minimax-m3-nvfp4",
    )
    assert (row.line, row.model_path_line, row.alias_line) == (17, 19, 20)
    trt = table.lookup("dsv4", "fp4", "dynamo-trt")
    generic = table.lookup("dsv4", "fp4", "dynamo-sglang")
    assert trt is not None and trt.alias == "deepseek-v4-pro-trt"
    assert generic is not None and generic.alias == "deepseek-v4-pro"
    assert table.lookup("dsr1", "bf16") is None


def test_unreadable_branches_are_listed_with_reasons() -> None:
    reasons = {u.line: u.reason for u in _tables()["b200-dgxc"].unreadable}
    assert set(reasons) == {29, 32, 34, 37}
    assert "||" in reasons[29]
    assert "not an exact value" in reasons[32]
    assert "built from variables" in reasons[34]
    assert "else" in reasons[37]


def test_case_statement_is_unreadable(tmp_path: Path) -> None:
    text = (
        'if [[ $MODEL_PREFIX == "a" && $PRECISION == "fp8" ]]; then\n'
        '  case "$FRAMEWORK" in\n'
        '    vllm) export MODEL_PATH="/m/a";;\n'
        "  esac\n"
        "fi\n"
    )
    table = parse_launcher(text, tmp_path / "launch_x.sh")
    assert not table.rows and "case" in table.unreadable[0].reason


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    clusters_cli.register(app)
    return app


def test_clusters_import_writes_loadable_file(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    shutil.copytree(TREE, root, symlinks=True)
    runner = CliRunner()
    result = runner.invoke(_app(), ["clusters", "import", "--root", str(root)])
    assert result.exit_code == 0, result.output
    assert "written (6 model routes)" in result.output
    assert "launch_b200-dgxc.sh:29: warning: unreadable branch" in result.output
    cluster = load_cluster(root / "clusters" / "b200-dgxc.yaml").cluster
    assert cluster.runners == ("b200", "b200-multinode")
    assert cluster.srt_slurm is not None and cluster.srt_slurm.ref == "v0.4.2"
    entry = cluster.model_entry("minimaxm3", "fp4")
    assert entry is not None and entry.model == "nvidia/MiniMax-M3-NVFP4"
    assert cluster.srtslurm_config()["model_paths"]["minimax-m3-nvfp4"].endswith("MiniMax-M3-NVFP4")

    again = runner.invoke(_app(), ["clusters", "import", "--root", str(root)])
    assert again.exit_code == 0 and "unchanged" in again.output

    target = root / "clusters" / "b200-dgxc.yaml"
    target.write_text(target.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    refused = runner.invoke(_app(), ["clusters", "import", "--root", str(root)])
    assert refused.exit_code == 1 and target.read_text(encoding="utf-8").endswith("# edited\n")
    forced = runner.invoke(_app(), ["clusters", "import", "--root", str(root), "--force"])
    assert forced.exit_code == 0 and not target.read_text(encoding="utf-8").endswith("# edited\n")


def test_clusters_import_output_and_cluster_filter(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["clusters", "import", "--root", str(TREE), "--output", str(out)]
    result = CliRunner().invoke(_app(), [*args, "--cluster", "b200-dgxc-slurm"])
    assert result.exit_code == 0, result.output
    assert (out / "b200-dgxc.yaml").is_file()
    missing = CliRunner().invoke(
        _app(), [*args, "--cluster", "b200-dgxc-slurm", "--cluster", "nope"]
    )
    assert isinstance(missing.exception, InputError)  # exit 2 through the CLI's main
    assert "--cluster 'nope'" in missing.exception.render()
    assert "b200-dgxc" in missing.exception.render()  # the clusters there are


SRTSLURM_LAUNCHER = """\
#!/usr/bin/bash
SQUASH_FILE="/sq/$(echo "$IMAGE" | sed 's/[\\/:@#]/_/g').sqsh"
NGINX_SQUASH_FILE="/sq/nginx.sqsh"
MODEL_PATHS_EXTRA=""
if [[ $MODEL_PREFIX == "dsv4" && $PRECISION == "fp4" ]]; then
    export MODEL_PATH="/models/DeepSeek-V4-Pro"
    export SRT_SLURM_MODEL_PREFIX="deepseek-v4-pro"
    MODEL_PATHS_EXTRA='  "deepseek-v4-pro-mxfp4": "/models/DeepSeek-V4-Pro"'
fi
cat > srtslurm.yaml <<EOF
model_paths:
  "${SRT_SLURM_MODEL_PREFIX}": "${MODEL_PATH}"
  "${MODEL_PREFIX}": "${MODEL_PATH}"
${MODEL_PATHS_EXTRA}
containers:
  dynamo-sglang: ${SQUASH_FILE}
  "${IMAGE}": ${SQUASH_FILE}
  nginx-sqsh: ${NGINX_SQUASH_FILE}
EOF
"""


def test_srtslurm_block_aliases_and_containers(tmp_path: Path) -> None:
    """The srtslurm.yaml a launcher writes: every model_paths line (the routed alias, the
    model prefix, a branch's extra entries) and the container aliases of the job's image."""
    table = parse_launcher(SRTSLURM_LAUNCHER, tmp_path / "launch_x-nv.sh")
    row = table.lookup("dsv4", "fp4")
    assert row is not None and row.extra_aliases == ("deepseek-v4-pro-mxfp4",)
    assert table.aliases(row, "dsv4") == {"deepseek-v4-pro", "dsv4", "deepseek-v4-pro-mxfp4"}
    assert table.aliases(None, "qwen3.5") == {None, "qwen3.5"}
    assert table.container_aliases == {"dynamo-sglang", "nginx-sqsh"}
    assert table.container_source("dynamo-sglang") == "image"
    assert table.container_source("nginx-sqsh") == "other"  # a fixed file, not the image
    assert table.container_source("lmsysorg/sglang:v1") is None


def test_a_symlink_checked_out_as_a_file_is_read_through(tmp_path: Path) -> None:
    runners = tmp_path / "runners"
    runners.mkdir()
    (runners / "launch_x-nv.sh").write_text(SRTSLURM_LAUNCHER)
    (runners / "launch_x-nv-slurm.sh").write_text("launch_x-nv.sh")  # git, core.symlinks off
    tables = read_launchers(sorted(runners.glob("*.sh")))
    assert list(tables) == ["x-nv"]
    assert tables["x-nv"].names == ("launch_x-nv-slurm.sh", "launch_x-nv.sh")
