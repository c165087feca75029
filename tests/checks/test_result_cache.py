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
    os.symlink(tree / "configs", tree / "link")  # may lead out of what is hashed
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
