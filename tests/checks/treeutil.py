"""Helpers for the checks tests: the example tree paths, edits, git."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BROKEN = EXAMPLES / "broken"
RECIPE = (
    "benchmarks/multi_node/srt-slurm-recipes/vllm/minimax-m3/b200-fp4/8k1k/2p1d-dep2-dep8-8k1k.yaml"
)
MASTER = "configs/nvidia-master.yaml"
CHANGELOG = "perf-changelog.yaml"


def copy_examples(dest: Path) -> Path:
    shutil.copytree(
        EXAMPLES, dest, ignore=shutil.ignore_patterns("broken"), copy_function=shutil.copy
    )
    return dest


def edit(tree: Path, rel: str, old: str, new: str) -> None:
    path = tree / rel
    text = path.read_text()
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1))


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return proc.stdout
