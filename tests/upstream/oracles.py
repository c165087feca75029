"""Where the upstream trees and the oracle virtual environments are.

The conformance suite reads the real InferenceX and srt-slurm trees unchanged at
`../shared/upstream/` (relative to the repository root) and runs upstream tools in
their own virtual environments. Each oracle venv is built by a `.ci/services/NN-*.sh`
script that exports the interpreter's path in an environment variable; without it, the
fixture runs the same script itself (it caches the venv outside the repository) and
skips with the script's reason when that fails. To add an oracle, describe it with an
`Oracle` and give it a fixture in conftest.py that calls `oracle_python`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from services import missing_service

REPO_ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = REPO_ROOT.parent / "shared" / "upstream"
# InferenceX's published figures the simulator's default calibration is fitted on: a table
# inferbench does not ship (benchmarks/sim_calibration.py takes it as --published FILE)
PUBLISHED_POINTS_ENV = "INFERBENCH_PUBLISHED_POINTS"
PUBLISHED_POINTS = REPO_ROOT.parent / "shared" / "calibration" / "published-points.md"


@dataclass(frozen=True)
class Oracle:
    """An upstream tool's virtual environment: how it is built and how it is checked."""

    name: str
    env_var: str  # the interpreter's path, exported by the build script
    script: Path  # builds (or reuses) the venv; run as a script it prints the interpreter
    probe: str  # Python code the interpreter must run for the venv to count as usable


INFERENCEX = Oracle(
    name="InferenceX tools (pydantic, PyYAML)",
    env_var="INFERBENCH_INFERENCEX_PYTHON",
    script=REPO_ROOT / ".ci" / "services" / "25-inferencex-oracle.sh",
    probe="import pydantic, yaml",
)

SRTCTL = Oracle(
    name="srtctl (srt-slurm installed from ../shared/upstream/srt-slurm)",
    env_var="INFERBENCH_SRTCTL_PYTHON",
    script=REPO_ROOT / ".ci" / "services" / "30-srtctl.sh",
    probe="import srtctl.core.config, srtctl.core.schema",
)


def upstream_tree(name: str) -> Path:
    """`../shared/upstream/<name>`, or skip the test with a reason."""
    path = UPSTREAM / name
    if not path.is_dir():
        missing_service(f"upstream tree {name!r} not found at {path} (../shared/upstream)")
    return path


def upstream_file(name: str) -> Path:
    """`../shared/upstream/<name>` (a file: a git bundle), or skip the test with a reason."""
    path = UPSTREAM / name
    if not path.is_file():
        missing_service(f"upstream file {name!r} not found at {path} (../shared/upstream)")
    return path


def published_points() -> Path:
    """The published-points table: $INFERBENCH_PUBLISHED_POINTS, else the one beside the
    upstream trees, else skip the test with a reason."""
    exported = os.environ.get(PUBLISHED_POINTS_ENV)
    path = Path(exported) if exported else PUBLISHED_POINTS
    if not path.is_file():
        missing_service(
            f"published-points table not found at {path} (not shipped with inferbench; "
            f"set {PUBLISHED_POINTS_ENV}=FILE)"
        )
    return path


def _usable(python: Path, probe: str) -> bool:
    try:
        done = subprocess.run(
            [str(python), "-c", probe], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def oracle_python(oracle: Oracle) -> Path:
    """The oracle venv's interpreter: from its env var, else built by its script, else skip."""
    exported = os.environ.get(oracle.env_var)
    if exported:
        python = Path(exported)
        if _usable(python, oracle.probe):
            return python
        missing_service(f"{oracle.env_var}={exported} cannot run {oracle.probe!r}")
    try:
        done = subprocess.run(
            ["bash", str(oracle.script)], capture_output=True, text=True, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        missing_service(f"{oracle.name}: {oracle.script.name} did not finish: {exc}")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        reason = done.stderr.strip().splitlines()[-1:] or ["no output"]
        missing_service(f"{oracle.name}: {oracle.script.name} failed: {reason[0]}")
    python = Path(lines[-1])
    if not _usable(python, oracle.probe):
        missing_service(f"{oracle.name}: {python} cannot run {oracle.probe!r}")
    return python


def srtctl_executable(python: Path) -> Path:
    """The `srtctl` console script installed beside the srtctl venv's interpreter."""
    exe = python.parent / "srtctl"
    if not exe.is_file():
        missing_service(f"srtctl venv at {python.parent.parent} has no bin/srtctl")
    return exe
