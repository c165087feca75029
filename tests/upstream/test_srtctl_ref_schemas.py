"""srtctl's schema read from source (`srtctl_source_schema`) is the real srtctl's, at every
srt-slurm ref the launchers clone.

Each ref of ../shared/upstream/srt-slurm-refs.bundle is unpacked into tmp; the real
marshmallow schema of that ref (srtctl_schema_tree.py, run by the srtctl venv's interpreter
with the ref's `src/` first on its path) must equal the tree derived from its source.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from inferbench.config.srt_slurm_refs import tree_schema
from inferbench.config.srtctl_schema import srtctl_schema
from inferbench.config.srtctl_source_schema import derive_tree

HERE = Path(__file__).resolve().parent


def _reader(src: Path):  # type: ignore[no-untyped-def]
    def read(name: str) -> str | None:
        path = src / name
        return path.read_text() if path.is_file() else None

    return read


def test_source_schema_of_the_checkout_is_the_shipped_table(srt_slurm_tree: Path) -> None:
    shipped = srtctl_schema()
    derived = derive_tree(_reader(srt_slurm_tree / "src"), shipped.version)
    assert derived["recipe"] == shipped.recipe
    assert derived["backends"] == shipped.backends
    assert tree_schema(srt_slurm_tree, "checkout").recipe == shipped.recipe


def _refs(bundle: Path, clone: Path) -> list[str]:
    subprocess.run(["git", "clone", "-q", "--mirror", str(bundle), str(clone)], check=True)
    listed = subprocess.run(
        ["git", f"--git-dir={clone}", "for-each-ref", "--format=%(refname:short)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return listed.stdout.split()


@pytest.mark.slow
def test_source_schema_is_the_real_srtctls_at_every_ref(
    srt_slurm_refs_bundle: Path, srtctl_python: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "refs.git"
    refs = _refs(srt_slurm_refs_bundle, clone)
    assert len(refs) >= 10, refs
    differ = []
    for ref in refs:
        tree = tmp_path / ref.replace("/", "_")
        tree.mkdir()
        archive = subprocess.run(
            ["git", f"--git-dir={clone}", "archive", ref, "src"], capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        done = subprocess.run(
            [str(srtctl_python), str(HERE / "srtctl_schema_tree.py")],
            capture_output=True, text=True, timeout=300, check=False,
            env={**os.environ, "PYTHONPATH": str(tree / "src")},
        )  # fmt: skip
        assert done.returncode == 0, f"{ref}: {done.stderr[-400:]}"
        live = json.loads(done.stdout)
        derived = derive_tree(_reader(tree / "src"), live["srtctl"])
        if derived != live:
            differ.append(ref)
    assert differ == []
