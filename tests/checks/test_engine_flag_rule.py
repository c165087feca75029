"""IB309 engine-flag-unknown: a recipe's engine flag that the engine release does not know,
the typo that otherwise fails only on the cluster."""

from __future__ import annotations

import shutil
from pathlib import Path

from inferbench.checks.engine import CheckOptions, check_tree

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED = (
    "benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"
)
IMAGE = "vllm/vllm-openai:vllm-minimax-m3-perf-x86_64-13.0.1-8b00f41"


def _tree(tmp_path: Path, old: str, new: str, image: str | None = None) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    recipe = tree / SEED
    text = recipe.read_text()
    assert old in text
    recipe.write_text(text.replace(old, new))
    if image is not None:
        master = tree / "configs/nvidia-master.yaml"
        master.write_text(master.read_text().replace(IMAGE, image))
    return tree


def _ib309(tree: Path) -> list:
    return list(check_tree(tree, CheckOptions(select=("IB309",))).findings)


def test_the_examples_are_clean() -> None:
    assert _ib309(EXAMPLES) == []


def test_a_typo_is_caught_with_the_closest_flag(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "      max-num-seqs: 1024", "      max-num-seqss: 1024")
    (finding,) = _ib309(tree)
    assert "--max-num-seqss" in finding.message and "decode" in finding.message
    assert finding.hint == "did you mean --max-num-seqs?"
    assert finding.location.file is not None and finding.location.file.name == Path(SEED).name
    assert finding.location.line is not None


def test_the_parsers_spellings_are_accepted(tmp_path: Path) -> None:
    """Underscores, unique abbreviations (argparse), vLLM's --no-<flag> and <flag>.<key>."""
    tree = _tree(
        tmp_path,
        "      max-num-seqs: 1024",
        "      max_num_seqs: 1024\n      max-num-batched: 8\n      no-enable-prefix-caching: true\n"
        "      compilation-config.mode: 3",
    )
    assert _ib309(tree) == []


def test_a_flag_newer_than_the_images_release_is_caught(tmp_path: Path) -> None:
    """`--device-ids` is in vLLM 0.27.1's table, not in 0.20.1's."""
    line = "      max-num-seqs: 1024"
    tree = _tree(tmp_path, line, f"{line}\n      device-ids: '0'", image="vllm/vllm-openai:v0.20.1")
    (finding,) = _ib309(tree)
    assert "vLLM 0.20.1 has no flag --device-ids" in finding.message
    newer = _tree(
        tmp_path / "b", line, f"{line}\n      device-ids: '0'", image="vllm/vllm-openai:v0.27.1"
    )
    assert _ib309(newer) == []
