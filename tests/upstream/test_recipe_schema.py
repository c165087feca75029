"""The built-in recipe schema agrees with the real srtctl on every recipe of the real trees.

srtctl (installed from ../shared/upstream/srt-slurm) is the authority: a recipe variant
inferbench calls invalid must be one srtctl rejects, and back. Also: the key table that
inferbench ships is the installed srtctl's.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from inferbench.config.recipe import RecipeNotTyped, load_recipe_file
from inferbench.config.srtctl_schema import srtctl_schema

HERE = Path(__file__).resolve().parent
INFERENCEX_RECIPES = "benchmarks/multi_node/srt-slurm-recipes"


def _run(python: Path, script: str, *args: str) -> str:
    done = subprocess.run(
        [str(python), str(HERE / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_shipped_key_table_is_the_installed_srtctls(srtctl_python: Path) -> None:
    live = json.loads(_run(srtctl_python, "srtctl_schema_tree.py"))
    shipped = srtctl_schema()
    assert live["srtctl"] == shipped.version
    assert live["recipe"] == shipped.recipe, "regenerate src/inferbench/config/srtctl_schema.yaml"
    assert live["backends"] == shipped.backends


def _suffix(selector: str | None) -> str:
    """inferbench's selector -> srtctl's variant suffix (override_x -> x, zip_override_g[1]
    -> g_1, a plain file -> "")."""
    if selector is None:
        return ""
    if selector.startswith("zip_override_"):
        group, _, index = selector.removeprefix("zip_override_").partition("[")
        return f"{group}_{index.rstrip(']')}"
    return selector.removeprefix("override_")


def _ours(root: Path, rel: str) -> dict[str, list[str]]:
    recipe_file = load_recipe_file(root / rel)
    try:
        recipe_file.variants()
    except RecipeNotTyped:  # valid, only not typed by inferbench (the mocker backend)
        return {_suffix(s): [] for s in recipe_file.selectors() or [None]}
    return {
        _suffix(recipe.source.selector): [p.message for p in recipe.problems]
        for recipe in recipe_file.variants()
    }


@pytest.mark.slow
@pytest.mark.parametrize("tree", ["inferencex", "srt-slurm"])
def test_builtin_schema_agrees_with_srtctl_on_every_real_recipe(
    tree: str, inferencex_tree: Path, srt_slurm_tree: Path, srtctl_python: Path
) -> None:
    root = inferencex_tree / INFERENCEX_RECIPES if tree == "inferencex" else srt_slurm_tree
    if tree == "srt-slurm":
        root = root / "recipes"
    theirs = json.loads(_run(srtctl_python, "srtctl_verdicts.py", str(root)))
    assert len(theirs) > 100
    disagree: list[str] = []
    rejected = 0
    for rel, variants in theirs.items():
        ours = _ours(root, rel)
        assert set(ours) == set(variants), rel
        for suffix, error in variants.items():
            rejected += error is not None
            if (error is None) != (not ours[suffix]):
                disagree.append(f"{rel}[{suffix}]: srtctl {error!r}, inferbench {ours[suffix]}")
    assert disagree == []
    if tree == "inferencex":
        assert rejected > 0  # the real tree holds recipes srtctl rejects; they must be found


def test_unknown_keys_are_named_with_srtctls_words(inferencex_tree: Path) -> None:
    """Each unknown key srtctl names is one inferbench names, at that key's line."""
    root = inferencex_tree / INFERENCEX_RECIPES
    for path in sorted(root.rglob("*.yaml")):
        recipe_file = load_recipe_file(path)
        for recipe in recipe_file.variants():
            for problem in recipe.problems:
                assert problem.message.startswith("srtctl rejects it: "), problem
                assert problem.location.line is not None
                line = path.read_text().splitlines()[problem.location.line - 1]
                key = problem.message.split(": ")[1].rpartition(".")[2]
                assert key in line or "Missing" in problem.message, (path, problem)


def test_shipped_key_table_parses() -> None:
    data = yaml.safe_load(
        (
            Path(__file__).resolve().parents[2] / "src/inferbench/config/srtctl_schema.yaml"
        ).read_text()
    )
    assert set(data) == {"srtctl", "recipe", "backends"}
