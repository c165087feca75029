"""Fixtures: a private copy of the clean example tree, and a git repository holding it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .treeutil import copy_examples, git


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    return copy_examples(tmp_path / "tree")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A git repository whose base commit holds the clean examples under `bench/`."""
    git(tmp_path, "init", "-q", "-b", "main")
    copy_examples(tmp_path / "bench")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path
