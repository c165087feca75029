"""`inferbench run --backend slurm` against the real one-node Slurm, stopped every way a user
stops it: Ctrl-C once (the allocation finishes its point), SIGKILL (the job lives on and the
resume re-attaches to it), a second resume beside a live one, Ctrl-C twice (the job is
cancelled at once). In the end every point is measured exactly once, nothing is left in the
queue and no server outlives its job."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from runcli import (
    POINTS,
    finish,
    measured,
    mid_point,
    no_live_servers,
    queue_drained,
    queued_jobs,
    slurm_answers,
    start,
    started,
    state,
    the_run,
    tiny_tree,
    wait_for,
)

from services import needs_service

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.integration,
    pytest.mark.slow,
    needs_service(not slurm_answers(), "no Slurm: sinfo does not answer"),
]


def test_slurm_run_stops_and_resumes_exactly(tmp_path: Path) -> None:
    tree = tiny_tree(tmp_path / "tree")
    runs = tmp_path / "runs"
    base = ("--engine", "sim", "--max-prompts", "2", "--runs-dir", str(runs))

    # 1. Ctrl-C once while the allocation drives its second point: it finishes, exit 130
    proc = start(tmp_path, "--root", str(tree), "--backend", "slurm", *base)
    wait_for(lambda: mid_point(runs, 1), timeout=240, what="the allocation's second point")
    proc.send_signal(signal.SIGINT)
    code, out = finish(proc, timeout=180)
    run = the_run(runs)
    assert code == 130, out
    assert f"inferbench run --resume {run.name} --runs-dir {runs}" in out
    assert sum(measured(run).values()) == 2
    assert "interrupted" in {job.status for job in state(run).jobs.values()}
    assert queue_drained(run) and no_live_servers(run)

    # 2. a resume re-submits; SIGKILL its orchestrator mid-point: the job lives on
    begun = started(run)
    proc = start(tmp_path, "--resume", run.name, "--runs-dir", str(runs))
    wait_for(lambda: started(run) > begun, timeout=240, what="the resumed job's point")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert queued_jobs(run), "the Slurm job outlives a killed orchestrator"

    # 3. the next resume re-attaches to it; one beside it is refused
    live = start(tmp_path, "--resume", run.name, "--runs-dir", str(runs))
    time.sleep(3)
    code, out = finish(start(tmp_path, "--resume", run.name, "--runs-dir", str(runs)), 60)
    assert code == 2 and "in use" in out, out
    # 4. Ctrl-C twice once it drives a point of its own: the job is cancelled at once
    begun = started(run)
    wait_for(lambda: started(run) > begun, timeout=240, what="a point after re-attaching")
    live.send_signal(signal.SIGINT)
    time.sleep(0.3)  # two signals at once would arrive as one
    live.send_signal(signal.SIGINT)
    code, out = finish(live, timeout=120)
    assert code == 130, out
    assert queue_drained(run) and no_live_servers(run)

    # 5. the last resume finishes the run: every point once, nothing failed
    code, out = finish(start(tmp_path, "--resume", run.name, "--runs-dir", str(runs)), 300)
    assert code == 0, out
    counts = measured(run)
    assert len(counts) == POINTS and set(counts.values()) == {1}, counts
    assert len(list(run.glob("*/results/conc*.json"))) == POINTS
    assert {job.status for job in state(run).jobs.values()} == {"completed"}
    assert queue_drained(run) and no_live_servers(run)
