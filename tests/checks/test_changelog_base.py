"""changelog-entry-missing (IB503) sees a recipe changed since --base whatever its stat data."""

from __future__ import annotations

import os
from pathlib import Path

from inferbench.checks.engine import CheckOptions, check_tree

from .treeutil import RECIPE, git


def test_recipe_rewritten_with_old_size_and_mtime_needs_an_entry(repo: Path) -> None:
    bench = repo / "bench"
    recipe = bench / RECIPE
    # the index caches the recipe's stat data; its mtime is well before the index's, so git
    # does not take it as racily clean, and ctime (which a rewrite cannot restore) is ignored
    os.utime(recipe, (1_600_000_000, 1_600_000_000))
    git(repo, "config", "core.trustctime", "false")
    git(repo, "update-index", "--refresh")
    before = recipe.stat()
    text = recipe.read_text().replace(
        "max-num-batched-tokens: 16384", "max-num-batched-tokens: 16383"
    )
    with recipe.open("r+b") as f:  # in place: same inode, same size
        f.write(text.encode())
    os.utime(recipe, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (recipe.stat().st_size, recipe.stat().st_ino) == (before.st_size, before.st_ino)
    report = check_tree(bench, CheckOptions(base="main", select=("IB503",)))
    assert [(f.rule, f.message.split(" since ")[0]) for f in report.findings] == [
        ("IB503", f"minimaxm3-fp4-b200-dynamo-vllm was its recipe {recipe.name} changed")
    ]
