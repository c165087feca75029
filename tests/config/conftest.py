"""Helpers for the config tests: write small YAML trees into a temporary folder."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

WriteFile = Callable[[str, str], Path]


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    """`write("configs/x.yaml", text)` writes dedented text under tmp_path."""

    def _write(relative: str, text: str) -> Path:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


@pytest.fixture
def example_tree(tmp_path: Path) -> Path:
    """A private copy of the examples tree to modify."""
    target = tmp_path / "tree"
    shutil.copytree(EXAMPLES, target, symlinks=True)
    return target
