"""The parse cache: same document from the cache as from the parser, keyed by content."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.config import parse_cache
from inferbench.config.yamlio import load_yaml

TEXT = "a:\n  b: [1, 2.5, yes, null, '3']\n  b: 4\nc: {d: x}\n"


def test_a_cached_parse_is_the_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "x.yaml"
    path.write_text(TEXT)
    first = load_yaml(path, duplicates="last")
    entries = list((tmp_path / "cache").rglob("*"))
    assert any(p.is_file() for p in entries)
    second = load_yaml(path, duplicates="last")
    assert second.data == first.data == {"a": {"b": 4}, "c": {"d": "x"}}
    assert second.positions == first.positions
    assert second.duplicates == first.duplicates and second.duplicates[0].location.line == 3
    assert second.locate("c.d") == first.locate("c.d")
    second.data["c"]["d"] = "changed"  # each load is a fresh object
    assert load_yaml(path, duplicates="last").data["c"]["d"] == "x"


def test_an_edit_is_a_new_key_and_errors_are_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    assert load_yaml(path).data == {"a": 1}
    path.write_text("a: 2\n")
    assert load_yaml(path).data == {"a": 2}
    path.write_text("a: 1\na: 2\n")
    for _ in range(2):
        with pytest.raises(Exception, match="duplicate key"):
            load_yaml(path)  # the default mode rejects what duplicates="last" keeps


def test_no_cache_and_an_unwritable_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\n")
    monkeypatch.setenv("INFERBENCH_NO_CACHE", "1")
    assert parse_cache.cache_dir() is None and load_yaml(path).data == {"a": 1}
    monkeypatch.delenv("INFERBENCH_NO_CACHE")
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(blocker))  # not a folder: writes fail
    assert load_yaml(path).data == {"a": 1}
