"""The check result cache: a stored result is what an uncached run gives, on the same bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inferbench.checks import engine, result_cache
from inferbench.checks.engine import CheckOptions, CheckReport, check_tree


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("INFERBENCH_NO_CACHE", raising=False)


def _uncached(tree: Path, monkeypatch: pytest.MonkeyPatch) -> CheckReport:
    with monkeypatch.context() as m:
        m.setenv("INFERBENCH_NO_CACHE", "1")
        return check_tree(tree)


def _no_recheck(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("checked again instead of taken from the cache")

    monkeypatch.setattr(engine, "check_project", fail)


def test_a_stored_result_is_the_uncached_result(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe = sorted((tree / "benchmarks").rglob("*.yaml"))[0]
    recipe.write_text(recipe.read_text() + "bogus_key: 1\n")  # srtctl: Unknown field.
    first = check_tree(tree)
    assert first.findings, "the edit is a finding: the comparison below compares something"
    assert first == _uncached(tree, monkeypatch)
    with monkeypatch.context() as m:
        _no_recheck(m)
        assert check_tree(tree) == first
        lookup = result_cache.lookup(tree, CheckOptions())
        assert lookup.key is not None and lookup.report == first


def test_any_change_is_a_new_key(tree: Path) -> None:
    key = result_cache.result_key(tree, CheckOptions())
    assert key is not None
    assert result_cache.result_key(tree, CheckOptions(select=("IB2",))) != key
    recipe = next((tree / "benchmarks").rglob("*.yaml"))
    recipe.write_text(recipe.read_text() + "\n# an edit\n")
    edited = result_cache.result_key(tree, CheckOptions())
    assert edited != key
    (tree / "benchmarks" / "empty").mkdir()  # a folder can decide a finding (IB001)
    assert result_cache.result_key(tree, CheckOptions()) != edited


def test_what_is_not_cached(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert result_cache.result_key(tree, CheckOptions(base="HEAD")) is None
    assert result_cache.result_key(tree, CheckOptions(srtctl=True)) is None
    os.symlink(tree.parent, tree / "link")  # leads out of what is hashed
    assert result_cache.result_key(tree, CheckOptions()) is None
    (tree / "link").unlink()
    monkeypatch.setenv("INFERBENCH_NO_CACHE", "1")
    assert result_cache.result_key(tree, CheckOptions()) is None


def test_a_damaged_entry_is_checked_again(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = result_cache.result_key(tree, CheckOptions())
    assert key is not None
    from inferbench.config import parse_cache

    parse_cache.store(key, ("not", "a", "report"), result_cache.FOLDER)
    assert check_tree(tree) == _uncached(tree, monkeypatch)


@pytest.mark.timeout(60)
def test_a_fifo_or_device_in_the_tree_is_named_never_opened(tree: Path) -> None:
    """A FIFO nobody writes to would block a reader forever: the key must come back."""
    import stat

    key = result_cache.result_key(tree, CheckOptions())
    os.mkfifo(tree / "benchmarks" / "pipe.yaml")  # even where a check reads YAML
    with_fifo = result_cache.result_key(tree, CheckOptions())
    assert with_fifo is not None and with_fifo != key
    try:
        os.mknod(tree / "zero", 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # like /dev/zero
    except PermissionError:
        pytest.skip("mknod needs root (CI and the dev container run as root)")
    with_device = result_cache.result_key(tree, CheckOptions())
    assert with_device is not None and with_device not in (key, with_fifo)


def test_only_the_files_a_check_reads_are_read(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big file no check reads (a model, a log) is hashed by name and size, unread; a big
    file a check reads makes the tree uncached without being read past the budget."""
    big = tree / "weights.bin"
    with big.open("wb") as handle:
        handle.truncate(result_cache.MAX_BYTES + 1)  # sparse: costs no disk
    opened: list[str] = []
    real_read = result_cache.read_file

    def spy(path: str, limit: int) -> bytes:
        opened.append(os.path.basename(path))
        return real_read(path, limit)

    monkeypatch.setattr(result_cache, "read_file", spy)
    key = result_cache.result_key(tree, CheckOptions())
    assert key is not None and "weights.bin" not in opened
    assert "nvidia-master.yaml" in opened  # what a check reads is hashed by content
    with big.open("ab") as handle:
        handle.write(b"x")  # another size: another key
    assert result_cache.result_key(tree, CheckOptions()) != key
    big.rename(tree / "configs" / "huge.yaml")  # a file a check reads: past the budget
    opened.clear()
    assert result_cache.result_key(tree, CheckOptions()) is None
    assert "huge.yaml" not in opened  # refused by its size, not read


def test_a_symlink_inside_the_tree_is_hashed_as_a_link(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As git checks out InferenceX (`runners/launch_b200-dgxc-slurm.sh` ->
    `launch_b200-dgxc.sh`): cached, and a new target, or new bytes at it, is a new key."""
    plain = result_cache.result_key(tree, CheckOptions())
    configs = tree / "configs"
    (configs / "one.yaml").write_text("a: 1\n")
    (configs / "two.yaml").write_text("a: 2\n")
    link = tree / "benchmarks" / "linked.yaml"
    link.symlink_to(os.path.relpath(configs / "one.yaml", link.parent))
    (tree / "folder-link").symlink_to("configs")  # a folder: hashed where it lies
    (tree / "dangling").symlink_to("nowhere")
    key = result_cache.result_key(tree, CheckOptions())
    assert key is not None and key != plain
    first = check_tree(tree)
    assert first == _uncached(tree, monkeypatch)
    with monkeypatch.context() as m:
        _no_recheck(m)
        assert check_tree(tree) == first
    link.unlink()
    link.symlink_to(os.path.relpath(configs / "two.yaml", link.parent))  # same size
    retargeted = result_cache.result_key(tree, CheckOptions())
    assert retargeted not in (None, key)
    (configs / "two.yaml").write_text("a: 3\n")
    assert result_cache.result_key(tree, CheckOptions()) not in (None, key, retargeted)
    (tree / "benchmarks" / "out.yaml").symlink_to(tree.parent / "elsewhere.yaml")
    assert result_cache.result_key(tree, CheckOptions()) is None  # leads out of the tree
