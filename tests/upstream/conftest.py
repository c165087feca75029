"""Fixtures of the conformance suite: the real upstream trees and the oracle venvs.

Every test collected under tests/upstream/ gets the `upstream` marker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .oracles import (
    INFERENCEX,
    REPO_ROOT,
    SRTCTL,
    oracle_python,
    published_points,
    srtctl_executable,
    upstream_file,
    upstream_tree,
)

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.upstream)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def inferencex_tree() -> Path:
    """The real InferenceX tree, read-only (copy into tmp_path before writing)."""
    return upstream_tree("inferencex")


@pytest.fixture(scope="session")
def srt_slurm_tree() -> Path:
    """The real srt-slurm tree, read-only (copy into tmp_path before writing)."""
    return upstream_tree("srt-slurm")


@pytest.fixture(scope="session")
def srt_slurm_refs_bundle() -> Path:
    """The srt-slurm refs bundle (every ref InferenceX's launchers clone that NVIDIA's
    repository holds, one commit each), read-only."""
    return upstream_file("srt-slurm-refs.bundle")


@pytest.fixture(scope="session")
def inferencex_python() -> Path:
    """The interpreter of the venv that runs InferenceX's own tools (pydantic, PyYAML)."""
    return oracle_python(INFERENCEX)


@pytest.fixture(scope="session")
def srtctl_python() -> Path:
    """The interpreter of the venv the real srtctl is installed in (imports `srtctl`)."""
    return oracle_python(SRTCTL)


@pytest.fixture(scope="session")
def srtctl_bin(srtctl_python: Path) -> Path:
    """The real `srtctl` executable, installed from ../shared/upstream/srt-slurm."""
    return srtctl_executable(srtctl_python)


@pytest.fixture(scope="session")
def published_points_file() -> Path:
    """InferenceX's published-points table (read-only), or skip with the reason."""
    return published_points()
