"""The real srtctl runs: installed from ../shared/upstream/srt-slurm into its own venv."""

from __future__ import annotations

import subprocess
from pathlib import Path


def test_real_srtctl_answers(srtctl_bin: Path, srt_slurm_tree: Path) -> None:
    done = subprocess.run(
        [str(srtctl_bin), "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    for command in ("apply", "dry-run"):
        assert command in done.stdout


def test_srtctl_venv_holds_the_checkouts_version(srtctl_python: Path, srt_slurm_tree: Path) -> None:
    """The installed package is the checkout's: same version as its pyproject.toml."""
    code = "from importlib.metadata import version; print(version('srtctl'))"
    done = subprocess.run(
        [str(srtctl_python), "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    pyproject = (srt_slurm_tree / "pyproject.toml").read_text()
    assert f'version = "{done.stdout.strip()}"' in pyproject
