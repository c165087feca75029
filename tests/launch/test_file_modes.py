"""Output files follow the user's umask (they were all 0600): atomic writes, a whole run
directory, rendered executables and the results store."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.synthetic import SyntheticConfig, write_run_dir
from inferbench.core.fsio import atomic_write_text, current_umask
from inferbench.launch.runner import execute_run
from inferbench.results.ingest import ingest_paths

from .test_runner import _deps, _healthy, _request


@pytest.fixture
def umask_027() -> Iterator[int]:
    old = os.umask(0o027)
    try:
        yield 0o027
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_current_umask_reads_without_changing(umask_027: int) -> None:
    assert current_umask() == 0o027 and current_umask() == 0o027


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_atomic_writes_take_the_umask(tmp_path: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        atomic_write_text(tmp_path / "f.json", "{}")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "f.json") == 0o666 & ~mask


def test_a_run_directory_and_the_store_follow_the_umask(tmp_path: Path, umask_027: int) -> None:
    run = execute_run(_request(tmp_path, _deps(1), _healthy)).run
    files = [p for p in run.path.rglob("*") if p.is_file() and p.name != "run.lock"]
    assert any(p.name == "conc1.json" for p in files) and any(p.name == "state.json" for p in files)
    assert {p.name: _mode(p) for p in files} == {p.name: 0o640 for p in files}

    runs = write_run_dir(tmp_path / "synthetic", "run-a", [SyntheticConfig()], (4,))
    db = tmp_path / "store" / "results.sqlite"
    ingest_paths([runs], f"sqlite:///{db}")
    assert _mode(db) == 0o640
