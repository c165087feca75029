"""A throwaway git history of the real InferenceX tree, one branch per changelog case.

The base commit is the real tree as it is. Each case is one or more commits on a branch from
the base: changelog entries appended (one or several per commit, with `evals-only`,
`all-evals`, `scenario-type`, `append-only`, `eval-min-prefill-ep`), entries inserted between
old ones, old entries edited, master configs changed for append-only points.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

Edit = Callable[[Path], None]
CHANGELOG = "perf-changelog.yaml"
NVIDIA = "configs/nvidia-master.yaml"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def entry(*keys: str, description: str = "Test change.", **flags: object) -> str:
    """One changelog entry in InferenceX's layout (a leading empty separator line)."""
    lines = ["", "- config-keys:", *(f"    - {key}" for key in keys)]
    for name, value in flags.items():
        flag = name.replace("_", "-")
        if isinstance(value, list | tuple):
            lines += [f"  {flag}:", *(f"    - {item}" for item in value)]
        else:
            lines.append(f"  {flag}: {str(value).lower() if isinstance(value, bool) else value}")
    lines += ["  description:", f'    - "{description}"']
    lines.append("  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/9999")
    return "\n".join(lines) + "\n"


def append(*entries: str) -> Edit:
    def edit(repo: Path) -> None:
        path = repo / CHANGELOG
        path.write_text(path.read_text() + "".join(entries))

    return edit


def replace(path: str, old: str, new: str, count: int = 1) -> Edit:
    def edit(repo: Path) -> None:
        file = repo / path
        text = file.read_text()
        assert text.count(old) >= count, f"{old!r} not in {path}"
        file.write_text(text.replace(old, new, count))

    return edit


def insert_before_last(text: str) -> Edit:
    """Put a new entry between the last two entries of the changelog."""

    def edit(repo: Path) -> None:
        path = repo / CHANGELOG
        body = path.read_text()
        at = body.rindex("\n- config-keys:")
        path.write_text(body[:at] + "\n" + text.strip("\n") + "\n" + body[at:])

    return edit


@dataclass(frozen=True)
class Case:
    id: str
    commits: tuple[tuple[Edit, ...], ...]  # each inner tuple: the edits of one commit
    flags: tuple[str, ...] = ()  # process_changelog's global flags (= inferbench's)
    rejected: bool = False  # InferenceX's processing refuses the range
    note: str = ""


@dataclass
class History:
    repo: Path
    base: str
    heads: dict[str, str] = field(default_factory=dict)


def build(tree: Path, root: Path, cases: tuple[Case, ...]) -> History:
    """Copy `tree` to `root`, commit it as the base, then one branch per case."""
    shutil.copytree(tree, root, symlinks=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "test@example.invalid")
    git(root, "config", "user.name", "test")
    git(root, "config", "commit.gpgsign", "false")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base: the real tree")
    history = History(repo=root, base=git(root, "rev-parse", "HEAD"))
    for case in cases:
        git(root, "checkout", "-q", "-B", f"case/{case.id}", history.base)
        for number, edits in enumerate(case.commits):
            for edit in edits:
                edit(root)
            git(root, "commit", "-q", "-a", "-m", f"{case.id} {number}")
        history.heads[case.id] = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    return history
