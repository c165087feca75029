"""Launcher reader and `inferbench clusters import`."""

from __future__ import annotations

import shutil
from pathlib import Path

import typer
from typer.testing import CliRunner

from inferbench.cli import clusters as clusters_cli
from inferbench.config.cluster import load_cluster
from inferbench.config.launcher import parse_launcher, read_launchers
from inferbench.core.errors import InputError

TREE = Path(__file__).resolve().parent / "fixtures" / "launcher_tree"


def _tables() -> dict:  # type: ignore[type-arg]
    return read_launchers(sorted((TREE / "runners").glob("*.sh")))


def test_symlinked_launchers_fold_into_one_table() -> None:
    tables = _tables()
    assert list(tables) == ["b200-dgxc"]
    table = tables["b200-dgxc"]
    assert table.names == ("launch_b200-dgxc-slurm.sh", "launch_b200-dgxc.sh")
    pinned = table.srt_slurm_ref
    assert pinned is not None and pinned.label == "NVIDIA/srt-slurm@v0.4.2"
    assert table.uses_slurm and table.uses_pyxis


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
    args = ["clusters", "import", "--root", str(TREE), "--output-dir", str(out)]
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


DEFAULTS_LAUNCHER = """\
#!/usr/bin/bash
ROOT="/scratch/models"
CACHE="${CACHE:-/hf-cache}"
SQUASH_FILE="/sq/$(echo "$IMAGE" | sed 's/[\\/:@#]/_/g').sqsh"
if [[ $MODEL_PREFIX == "dsv4" && $PRECISION == "fp4" ]]; then
    export MODEL_PATH="${MODEL_PATH:-$ROOT/DeepSeek-V4-Pro}"
    export SRT_SLURM_MODEL_PREFIX="deepseek-v4-pro"
elif [[ $MODEL_PREFIX == "kimik3" && $PRECISION == "fp4" ]]; then
    export MODEL_PATH="${PICKED:-${CACHE}/Kimi-K3}"
    export SRT_SLURM_MODEL_PREFIX="kimik3"
elif [[ $MODEL_PREFIX == "glm5" && $PRECISION == "fp4" ]]; then
    export MODEL_PATH="${PICKED:-$UNSET_ROOT/GLM-5}"
    export SRT_SLURM_MODEL_PREFIX="glm5-fp4"
fi
if [[ "$IS_AGENTIC" == "1" && $FRAMEWORK == "dynamo-trt" && $MODEL_PREFIX == "dsv4" ]]; then
    SRT_SLURM_MODEL_PREFIX="deepseek-ai/DeepSeek-V4-Pro"
fi
cat > srtslurm.yaml <<EOF
model_paths:
  "${SRT_SLURM_MODEL_PREFIX}": "${MODEL_PATH}"
  "${MODEL_PREFIX}": "${MODEL_PATH}"
containers:
  dynamo-trtllm: "${SQUASH_FILE}"
  "${IMAGE}": "${SQUASH_FILE}"
EOF
"""


def test_a_path_defaulted_in_the_launcher_is_read_as_its_default(tmp_path: Path) -> None:
    """`${MODEL_PATH:-$ROOT/X}`: what the launcher uses when nothing sets the variable (the
    workflows never do), top-level constants filled in; anything else stays unreadable."""
    table = parse_launcher(DEFAULTS_LAUNCHER, tmp_path / "launch_x-nv.sh")
    dsv4, kimi = table.lookup("dsv4", "fp4"), table.lookup("kimik3", "fp4")
    assert dsv4 is not None and dsv4.model_path == "/scratch/models/DeepSeek-V4-Pro"
    assert dsv4.model_path_default == "${MODEL_PATH:-$ROOT/DeepSeek-V4-Pro}"
    assert kimi is not None and kimi.model_path == "/hf-cache/Kimi-K3"
    assert table.lookup("glm5", "fp4") is None
    assert [u.line for u in table.unreadable] == [11]


def test_an_alias_override_branch_adds_its_alias(tmp_path: Path) -> None:
    """A branch that only renames the alias for some jobs (agentic dynamo-trt dsv4) keys
    the routed path by that name for them: an alias of the route, not an unreadable branch."""
    table = parse_launcher(DEFAULTS_LAUNCHER, tmp_path / "launch_x-nv.sh")
    (override,) = table.alias_overrides
    assert (override.model_prefix, override.framework, override.alias) == (
        "dsv4", "dynamo-trt", "deepseek-ai/DeepSeek-V4-Pro",
    )  # fmt: skip
    dsv4 = table.lookup("dsv4", "fp4")
    assert table.aliases(dsv4, "dsv4") == {"deepseek-v4-pro", "dsv4", "deepseek-ai/DeepSeek-V4-Pro"}
    assert "deepseek-ai/DeepSeek-V4-Pro" not in table.aliases(table.lookup("kimik3", "fp4"), "x")


def test_import_keeps_every_alias_and_the_image_aliases(tmp_path: Path) -> None:
    """What the launcher's srtslurm.yaml writes survives `clusters import`: the model-prefix
    and override aliases of each route, and the container names that are the job's image
    (the cause of IB401/IB301 false positives with an imported catalog)."""
    from inferbench.config.cluster_import import import_cluster

    table = parse_launcher(DEFAULTS_LAUNCHER, tmp_path / "launch_x-nv.sh")
    cluster = import_cluster(table).cluster
    assert cluster.image_aliases == ("dynamo-trtllm",)
    dsv4 = cluster.model_entry("dsv4", "fp4")
    assert dsv4 is not None and dsv4.alias == "deepseek-v4-pro"
    assert set(dsv4.aliases) == {"dsv4", "deepseek-ai/DeepSeek-V4-Pro"}
    for alias in ("deepseek-v4-pro", "dsv4", "deepseek-ai/DeepSeek-V4-Pro", "kimik3"):
        assert cluster.has_alias(alias), alias
    path = tmp_path / "clusters" / "x-nv.yaml"
    path.parent.mkdir()
    path.write_text(import_cluster(table).text)
    assert load_cluster(path).cluster == cluster


BY_MODEL_LAUNCHER = """\
if [[ $MODEL_PREFIX == "qwen3.5" && $PRECISION == "fp8" ]]; then
    export MODEL_PATH="/m/Qwen3.5-FP8"
    export SRT_SLURM_MODEL_PREFIX="qwen3.5-fp8"
elif [[ $MODEL_PREFIX == "qwen3.5" && $PRECISION == "fp4" && $MODEL == *NVFP4-V2 ]]; then
    export MODEL_PATH="/m/Qwen3.5-NVFP4-V2"
    export SRT_SLURM_MODEL_PREFIX="qwen3.5-fp4"
elif [[ $MODEL_PREFIX == "qwen3.5" && $PRECISION == "fp4" ]]; then
    export MODEL_PATH="/m/Qwen3.5-NVFP4"
    export SRT_SLURM_MODEL_PREFIX="qwen3.5-fp4"
fi
"""


def test_branches_on_the_jobs_model_are_routes_of_their_own(tmp_path: Path) -> None:
    """launch_b200-dgxc.sh picks qwen3.5 fp4 weights by `$MODEL == *NVFP4-V2` first, then
    the plain NVFP4 ones: two routes, not one read twice (the import dropped the second)."""
    from inferbench.config.cluster_import import import_cluster

    table = parse_launcher(BY_MODEL_LAUNCHER, tmp_path / "launch_b200-x.sh")
    assert not table.unreadable
    v2, plain = "nvidia/Qwen3.5-NVFP4-V2", "nvidia/Qwen3.5-NVFP4"
    for model, path in ((v2, "/m/Qwen3.5-NVFP4-V2"), (plain, "/m/Qwen3.5-NVFP4")):
        row = table.lookup("qwen3.5", "fp4", model=model)
        assert row is not None and row.model_path == path
    models = {(m.model, m.path) for m in import_cluster(table).cluster.models}
    assert {p for _, p in models} == {"/m/Qwen3.5-FP8", "/m/Qwen3.5-NVFP4-V2", "/m/Qwen3.5-NVFP4"}
