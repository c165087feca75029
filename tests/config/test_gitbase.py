"""read_base against a real temporary git repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from inferbench.config.gitbase import read_base
from inferbench.core.errors import InputError


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


def _rewrite_keeping_stat(path: Path, text: str) -> None:
    """Rewrite `path` in place (same inode) with text of the same size, then restore its
    mtime: the stat data git's index caches for it stays what it was."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    with path.open("r+b") as f:
        f.write(text.encode())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


def test_racy_rewrite_with_old_size_and_mtime_is_changed(repo: Path) -> None:
    # ctime is the one stat field a rewrite cannot restore; git compares it only to the second
    # (and not at all with core.trustctime=false), so switch it off to make the miss certain
    git(repo, "config", "core.trustctime", "false")
    tree = repo / "tree"
    # an mtime well before the index's own, so git does not treat the entry as racily clean
    os.utime(tree / "a.yaml", (1_600_000_000, 1_600_000_000))
    git(repo, "update-index", "--refresh")  # the index caches a.yaml's stat data
    _rewrite_keeping_stat(tree / "a.yaml", "a: 9\n")
    base = read_base(tree, "main", [])
    assert base.changed == {(tree / "a.yaml").resolve()}


def test_deleted_and_staged_files_are_changed(repo: Path) -> None:
    tree = repo / "tree"
    (tree / "b.yaml").unlink()
    (tree / "staged.yaml").write_text("s: 1\n")
    git(repo, "add", "tree/staged.yaml")
    (tree / "ignored.yaml").write_text("i: 1\n")
    (repo / ".gitignore").write_text("ignored.yaml\n")
    base = read_base(tree, "main", [])
    assert base.changed == {(tree / "b.yaml").resolve(), (tree / "staged.yaml").resolve()}


def test_reading_the_base_leaves_the_index_alone(repo: Path) -> None:
    tree = repo / "tree"
    (tree / "a.yaml").write_text("a: 2\n")
    (tree / "new.yaml").write_text("n: 1\n")
    index = repo / ".git" / "index"
    before = index.read_bytes()
    read_base(tree, "main", [tree / "a.yaml"])
    assert index.read_bytes() == before


def test_symlinks_compare_by_target(repo: Path) -> None:
    tree = repo / "tree"
    (tree / "same.yaml").symlink_to("a.yaml")
    (tree / "moved.yaml").symlink_to("a.yaml")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "links")
    (tree / "moved.yaml").unlink()
    (tree / "moved.yaml").symlink_to("b.yaml")
    base = read_base(tree, "main", [])
    assert base.changed == {(tree / "moved.yaml").resolve()}  # resolved, as callers look up
