"""SIGKILL the orchestrator mid-sweep, resume it: no point lost, none duplicated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from inferbench.launch.state import RunState

DRIVER = Path(__file__).resolve().parents[1] / "launch" / "sweep_driver.py"
pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _driver(runs: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(DRIVER), str(runs), "--point-delay", "0.3", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_sigkill_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    log = runs / "executed.log"
    proc = _driver(runs)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # kill during the second deployment
        if log.is_file() and len(log.read_text().splitlines()) >= 4:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    before = log.read_text().splitlines()
    assert 4 <= len(before) < 9, "the kill should land mid-sweep"
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]

    resumed = _driver(runs, "--resume", run_dir.name)
    out, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, out

    lines = log.read_text().splitlines()
    counts = Counter(lines)
    assert all(n == 1 for n in counts.values()), f"duplicated points: {counts}"
    assert len(counts) == 9  # 3 deployments x 3 concurrencies, none lost
    state = RunState.model_validate_json((run_dir / "state.json").read_text())
    assert len(state.jobs) == 3
    for job in state.jobs.values():
        assert job.status == "completed" and sorted(job.finished) == [1, 2, 4]
    results = sorted(p.relative_to(run_dir) for p in run_dir.glob("*/results/conc*.json"))
    assert len(results) == 9
    # no server outlived the killed orchestrator (they die with their parent)
    pids = [
        int(line.split()[-1])
        for f in run_dir.glob("*/logs/server.log")
        for line in f.read_text().splitlines()
        if line.startswith("engine: pid ")
    ]
    time.sleep(0.5)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
