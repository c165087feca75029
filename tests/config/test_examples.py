"""The bundled example tree loads cleanly and reproduces the seed's deployment."""

from __future__ import annotations

from pathlib import Path

from inferbench.config.master import MultiNodeSearchSpace
from inferbench.config.project import load_project

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_examples_tree_loads() -> None:
    project = load_project(EXAMPLES)
    assert "minimaxm3-fp4-b200-dynamo-vllm" in project.masters
    assert set(project.clusters) >= {"b200-dgxc", "b300-nv"}
    assert project.runners is not None and project.changelog is not None


def test_seed_recipe_matches_its_master_entry() -> None:
    project = load_project(EXAMPLES)
    config = project.masters["minimaxm3-fp4-b200-dynamo-vllm"]
    (point,) = list(config.entry.search_spaces())
    space = point.space
    assert isinstance(space, MultiNodeSearchSpace) and space.config_file is not None
    recipe = project.recipe(space.config_file)
    assert recipe.layout("prefill").same_shape(space.prefill.layout)
    assert recipe.layout("decode").same_shape(space.decode.layout)
    assert recipe.resources.gpus_per_prefill_worker == 2
    assert recipe.resources.gpus_per_decode_worker == 8
    assert recipe.flags("decode").get("max-model-len") == 9472
    assert project.clusters["b200-dgxc"].cluster.has_alias(recipe.model.path)
    assert not project.clusters["b300-nv"].cluster.has_alias(recipe.model.path)
