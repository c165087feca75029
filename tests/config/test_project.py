"""Project discovery: InferenceX layout, inferbench.toml, recipe resolution and escapes."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from inferbench.config.project import load_project
from inferbench.config.settings import RecipeRef
from inferbench.core.errors import ConfigError

WriteFile = Callable[[str, str], Path]
SEED_KEY = "minimaxm3-fp4-b200-dynamo-vllm"
SEED_RECIPE = "recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"


def test_inferencex_layout_without_config_file(example_tree: Path) -> None:
    project = load_project(example_tree)
    assert project.layout_file is None
    assert [p.name for p in project.master_files] == ["nvidia-master.yaml"]
    assert project.recipe_root == example_tree / "benchmarks/multi_node/srt-slurm-recipes"
    assert len(project.recipe_paths()) == 1
    assert [c.cluster.name for c in project.clusters_for_runner("b200-multinode")] == ["b200-dgxc"]
    assert project.masters[SEED_KEY].file == example_tree / "configs/nvidia-master.yaml"


def test_trees_before_the_configs_move(tmp_path: Path, example_tree: Path) -> None:
    """InferenceX kept configs/ in .github/configs/ until 2026-07: found as they are."""
    root = tmp_path / "old"
    shutil.copytree(example_tree, root)
    (root / ".github").mkdir()
    (root / "configs").rename(root / ".github" / "configs")
    project = load_project(root)
    assert project.layout_file is None
    assert project.masters[SEED_KEY].file == root / ".github/configs/nvidia-master.yaml"
    assert project.runners is not None
    assert project.runners.file == root / ".github/configs/runners.yaml"


def test_inferbench_toml_moves_files(tmp_path: Path, example_tree: Path) -> None:
    root = tmp_path / "custom"
    (root / "masters").mkdir(parents=True)
    shutil.copy(example_tree / "configs/nvidia-master.yaml", root / "masters/nv.yaml")
    shutil.copytree(example_tree / "benchmarks/multi_node/srt-slurm-recipes", root / "rec")
    (root / "inferbench.toml").write_text(
        'masters = "masters/*.yaml"\nrecipes = "rec"\nrunners = "none.yaml"\n', encoding="utf-8"
    )
    project = load_project(root)
    assert project.layout_file == root / "inferbench.toml"
    assert SEED_KEY in project.masters and project.runners is None and project.changelog is None
    assert project.recipe(SEED_RECIPE).name.startswith("minimax-m3")


def test_inferbench_toml_unknown_key(write: WriteFile, tmp_path: Path) -> None:
    write("inferbench.toml", 'master = ["configs/*.yaml"]\n')
    with pytest.raises(ConfigError) as err:
        load_project(tmp_path)
    assert err.value.hint == "did you mean 'masters'?"


def test_inferbench_toml_syntax_error(write: WriteFile, tmp_path: Path) -> None:
    write("inferbench.toml", "masters = [\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_project(tmp_path)


def test_not_a_tree(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no master configs"):
        load_project(tmp_path)


def test_recipe_resolution_and_cache(example_tree: Path) -> None:
    project = load_project(example_tree)
    resolved = project.resolve_recipe(SEED_RECIPE)
    assert resolved.exists and resolved.origin == "tree" and resolved.selector is None
    first = project.recipe(RecipeRef.parse(SEED_RECIPE))
    assert project.recipe(SEED_RECIPE) is first  # parsed once


@pytest.mark.parametrize(
    "reference",
    ["recipes/../../../configs/nvidia-master.yaml", "/etc/passwd", "recipes/../../x.yaml:base"],
)
def test_references_cannot_escape(example_tree: Path, reference: str) -> None:
    project = load_project(example_tree)
    with pytest.raises(ConfigError):
        project.resolve_recipe(reference)


def test_symlink_escape_refused(example_tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("name: x\n", encoding="utf-8")
    (example_tree / "benchmarks/multi_node/srt-slurm-recipes/link.yaml").symlink_to(outside)
    with pytest.raises(ConfigError, match="outside"):
        load_project(example_tree).resolve_recipe("recipes/link.yaml")


def test_missing_recipe_and_upstream_checkout(example_tree: Path, tmp_path: Path) -> None:
    project = load_project(example_tree)
    missing = project.resolve_recipe("recipes/sglang/nope.yaml")
    assert not missing.exists and missing.origin == "tree"
    with pytest.raises(ConfigError, match="no such recipe"):
        project.recipe("recipes/sglang/nope.yaml")
    upstream = tmp_path / "srt-slurm"
    (upstream / "recipes/sglang").mkdir(parents=True)
    (upstream / "recipes/sglang/nope.yaml").write_text("name: x\n", encoding="utf-8")
    found = project.resolve_recipe("recipes/sglang/nope.yaml", srt_slurm=upstream)
    assert found.exists and found.origin == "upstream"


def test_bad_master_entry_is_kept_aside(example_tree: Path) -> None:
    """One bad entry is an error on that entry; the others are still loaded."""
    path = example_tree / "configs/nvidia-master.yaml"
    before = set(load_project(example_tree).masters)
    path.write_text(path.read_text(encoding="utf-8").replace("multinode: false", "multinode: 3", 1))
    project = load_project(example_tree)
    (error,) = project.master_errors
    assert error.location.file == path and error.location.line is not None
    assert len(project.masters) == len(before) - 1 and set(project.masters) < before


def test_bad_master_file_is_config_error(example_tree: Path) -> None:
    path = example_tree / "configs/nvidia-master.yaml"
    path.write_text("- a list, not a map of entries\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="map of config-key") as err:
        load_project(example_tree)
    assert err.value.location.file == path


def test_cluster_name_must_match_file(example_tree: Path) -> None:
    path = example_tree / "clusters/b300-nv.yaml"
    path.rename(example_tree / "clusters/b300.yaml")
    with pytest.raises(ConfigError, match="differs from its file name"):
        load_project(example_tree)


def test_changelog_and_launchers_are_read_on_first_use(example_tree: Path) -> None:
    # `sweep` reads none of them: a broken one fails only the command that reads it
    (example_tree / "perf-changelog.yaml").write_text("- [unclosed\n", encoding="utf-8")
    project = load_project(example_tree)
    assert "changelog" not in vars(project) and "launchers" not in vars(project)
    with pytest.raises(ConfigError, match="invalid YAML"):
        project.read_all()
