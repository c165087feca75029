"""The parse cache: same document from the cache as from the parser, keyed by content."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from inferbench.config import parse_cache
from inferbench.config.yamlio import PRELOAD_MIN_FILES, load_yaml, preload
from inferbench.core.cpus import usable_cores
from inferbench.core.errors import ConfigError

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


def _recipes(folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    paths = []
    for k in range(count):
        path = folder / f"r{k:03d}.yaml"
        path.write_text(f"name: r{k}\nbackend:\n  type: vllm\n  n: {k}\n  n: {k + 1}\n")
        paths.append(path)
    broken = folder / "broken.yaml"
    broken.write_text("a: [1, 2\n")
    return [*paths, broken]


@pytest.mark.skipif(usable_cores() < 2, reason="preload forks only with a second core to run on")
def test_preload_fills_the_cache_with_what_load_yaml_would_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # pytest may run a timer thread
    paths = _recipes(tmp_path / "recipes", PRELOAD_MIN_FILES + 8)
    preload(paths, duplicates="last")
    stored = [parse_cache.has(parse_cache.key(p.read_bytes(), "last")) for p in paths]
    assert stored == [True] * (len(paths) - 1) + [False]  # the broken file is left to load_yaml
    docs = [load_yaml(p, duplicates="last") for p in paths[:-1]]
    with pytest.raises(ConfigError):
        load_yaml(paths[-1], duplicates="last")
    monkeypatch.setenv("INFERBENCH_NO_CACHE", "1")
    fresh = [load_yaml(p, duplicates="last") for p in paths[:-1]]
    assert [d.data for d in docs] == [d.data for d in fresh]
    assert [d.duplicates for d in docs] == [d.duplicates for d in fresh]
    assert docs[5].data == {"name": "r5", "backend": {"type": "vllm", "n": 6}}


@pytest.mark.skipif(usable_cores() < 2, reason="preload forks only with a second core to run on")
def test_a_file_edited_after_preload_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    paths = _recipes(tmp_path / "recipes", PRELOAD_MIN_FILES + 8)
    preload(paths, duplicates="last")
    preload(paths, duplicates="last")  # all cached now: each file's hash is kept for load_yaml
    edited = paths[3]
    before = edited.stat()
    edited.write_text(edited.read_text().replace("vllm", "sglg"))  # same size
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert load_yaml(edited, duplicates="last").data["backend"]["type"] == "sglg"


def test_preload_does_nothing_without_a_cache_or_beside_other_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _recipes(tmp_path / "recipes", PRELOAD_MIN_FILES + 8)
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    preload(paths, duplicates="last")
    assert not (tmp_path / "cache").exists()
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setenv("INFERBENCH_NO_CACHE", "1")
    preload(paths, duplicates="last")
    assert not (tmp_path / "cache").exists()
