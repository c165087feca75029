"""The seed's kind of change, made to a copy of the real InferenceX tree.

The pull request in `../shared/seed/` adds a MiniMax-M3 NVFP4 Dynamo-vLLM 2P1D B200 master
entry, its srt-slurm recipe (a port of the B300 2P1D DEP2/DEP8 recipe) and a changelog entry;
the files in `seed_change/` are that change, written as the upstream tree's own entries are
(the recipe is `vllm/minimax-m3/b300-fp4/1k1k/2p1d-dep2-dep8-1k1k.yaml` moved to B200 and
8k1k). `PLANTED` are three defects a reviewer found or could have found in such a change:
a model alias the b200-dgxc cluster does not register (its launcher writes
`nvidia/MiniMax-M3-NVFP4`), 3 prefill workers against the entry's 2, and a benchmark
concurrency of 4096 against the entry's 2048.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent / "seed_change"
MASTER = "configs/nvidia-master.yaml"
CHANGELOG = "perf-changelog.yaml"
RECIPE = (
    "benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"
)
CONFIG_KEY = "minimaxm3-fp4-b200-dynamo-vllm"

# (what the correct recipe says, what the planted one says instead, the key path it is at)
PLANTED = (
    ('path: "nvidia/MiniMax-M3-NVFP4"', 'path: "minimax-m3-nvfp4"', "model.path"),
    ("prefill_workers: 2", "prefill_workers: 3", "resources.prefill_workers"),
    ('concurrencies: "2048"', 'concurrencies: "4096"', "benchmark.concurrencies"),
)


def recipe_text(planted: bool) -> str:
    text = (HERE / "recipe.yaml").read_text()
    if planted:
        for good, bad, _ in PLANTED:
            assert text.count(good) == 1, good
            text = text.replace(good, bad)
    return text


def apply_seed_change(tree: Path, *, planted: bool) -> list[str]:
    """Add the entry, its recipe and the changelog entry to `tree`; the files changed."""
    for rel, extra in ((MASTER, "master-entry.yaml"), (CHANGELOG, "changelog-entry.yaml")):
        path = tree / rel
        path.write_text(path.read_text() + (HERE / extra).read_text())
    recipe = tree / RECIPE
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(recipe_text(planted))
    return [MASTER, CHANGELOG, RECIPE]
