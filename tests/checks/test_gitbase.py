"""read_base against a real temporary git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from inferbench.checks.gitbase import read_base
from inferbench.errors import InputError


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.yaml").write_text("a: 1\n")
    (tree / "b.yaml").write_text("b: 1\n")
    (tmp_path / "outside.txt").write_text("x\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def test_reads_base_text_and_changed_files(repo: Path) -> None:
    tree = repo / "tree"
    (tree / "a.yaml").write_text("a: 2\n")
    (tree / "new.yaml").write_text("n: 1\n")
    (repo / "outside.txt").write_text("y\n")
    base = read_base(tree, "main", [tree / "a.yaml", tree / "missing.yaml"])
    assert base.text(tree / "a.yaml") == "a: 1\n"
    assert base.text(tree / "missing.yaml") is None
    assert base.changed == {(tree / "a.yaml").resolve(), (tree / "new.yaml").resolve()}


def test_bad_revision_is_an_input_error(repo: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_base(repo / "tree", "no-such-branch", [])
    with pytest.raises(InputError, match="not a revision"):
        read_base(repo / "tree", "--output=x", [])


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not inside a git repository"):
        read_base(tmp_path, "HEAD", [])
