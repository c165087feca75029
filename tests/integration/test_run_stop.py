"""`inferbench run` stopped every way a user stops it, then resumed, on the local backend:
Ctrl-C once (the point finishes), twice (it stops at once), SIGKILL, a second resume beside a
live one, a resume with other flags. In the end every point is measured exactly once and no
server outlives its orchestrator."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from runcli import (
    POINTS,
    finish,
    live_servers,
    measured,
    mid_point,
    no_live_servers,
    start,
    started,
    state,
    the_run,
    tiny_tree,
    wait_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_stop_and_resume_every_way_loses_and_repeats_nothing(tmp_path: Path) -> None:
    tree = tiny_tree(tmp_path / "tree")
    runs = tmp_path / "runs"
    # real-time serving: points that last over a second, and servers that must not outlive
    # the orchestrator (the virtual clock's stops: tests/launch/test_simclock.py)
    base = ("--engine", "sim", "--sim-realtime", "--max-prompts", "2", "--runs-dir", str(runs))

    # 1. Ctrl-C once while the second point runs: it finishes, nothing new starts, exit 130
    proc = start(tmp_path, "--root", str(tree), *base)
    wait_for(lambda: mid_point(runs, 1), what="the second point")
    proc.send_signal(signal.SIGINT)
    code, out = finish(proc, timeout=120)
    run = the_run(runs)
    assert code == 130, out
    assert f"inferbench run --resume {run.name} --runs-dir {runs}" in out
    assert "stopping after the current point" in out
    first = state(run)
    statuses = sorted(job.status for job in first.jobs.values())
    assert "interrupted" in statuses and not {"failed", "points_failed"} & set(statuses)
    assert sum(measured(run).values()) == 2  # the running point was let finish
    assert no_live_servers(run)

    # 2. other settings beside --resume are refused, saying which
    for extra, word in (
        (("--engine", "vllm"), "--engine"),
        (("--max-concurrency", "2"), "filters"),
        (("--root", str(tmp_path)), "--root"),
    ):
        code, out = finish(start(tmp_path, "--resume", run.name, "--runs-dir", str(runs), *extra))
        assert code == 2, out
        assert word in out and "run.json" in out and "Traceback" not in out

    # 3. the same settings repeated are fine; a second resume beside a live one is refused
    begun = started(run)
    live = start(tmp_path, "--resume", run.name, "--root", str(tree), *base)
    wait_for(lambda: started(run) > begun, what="the resumed run's first point")
    code, out = finish(start(tmp_path, "--resume", run.name, "--runs-dir", str(runs)), 60)
    assert code == 2 and "in use" in out, out

    # 4. SIGKILL the live one mid-point: its server dies with it
    os.kill(live.pid, signal.SIGKILL)
    live.wait(timeout=30)
    assert no_live_servers(run)

    # 5. Ctrl-C twice mid-point: stops at once, the cut point is left to do
    done_before, begun = sum(measured(run).values()), started(run)
    proc = start(tmp_path, "--resume", run.name, "--runs-dir", str(runs))
    wait_for(lambda: started(run) > begun, what="a point of the third session")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)  # two signals at once would arrive as one; a point lasts over a second
    proc.send_signal(signal.SIGINT)
    code, out = finish(proc, timeout=60)
    assert code == 130, out
    assert f"--resume {run.name}" in out
    assert sum(measured(run).values()) == done_before  # the cut point did not count
    assert no_live_servers(run)

    # 6. the last resume finishes the run: every point once, nothing failed
    code, out = finish(start(tmp_path, "--resume", run.name, "--runs-dir", str(runs)))
    assert code == 0, out
    counts = measured(run)
    assert len(counts) == POINTS and set(counts.values()) == {1}, counts
    assert len(list(run.glob("*/results/conc*.json"))) == POINTS
    assert {job.status for job in state(run).jobs.values()} == {"completed"}
    assert no_live_servers(run)


def test_ctrl_c_on_the_virtual_clock_finishes_the_point_and_resumes(tmp_path: Path) -> None:
    """The simulator's points run in the orchestrator itself: the first Ctrl-C still lets the
    running point finish (big points here: 20,480 to 81,920 requests, 0.5 to 4 s of
    estimate each), and the resume runs only the rest."""
    tree = tiny_tree(tmp_path / "tree", osl=1024)
    master = tree / "configs" / "nvidia-master.yaml"
    master.write_text(master.read_text().replace("[1, 2, 4]", "[2048, 4096, 8192]"))
    runs = tmp_path / "runs"
    proc = start(tmp_path, "--root", str(tree), "--engine", "sim", "--runs-dir", str(runs))
    wait_for(lambda: mid_point(runs, 0) or proc.poll() is not None, what="the first point")
    assert proc.poll() is None, finish(proc)[1]
    proc.send_signal(signal.SIGINT)
    code, out = finish(proc, timeout=120)
    run = the_run(runs)
    assert code == 130, out
    assert "stopping after the current point" in out and f"--resume {run.name}" in out
    done = sum(measured(run).values())
    assert done == started(run) and 1 <= done < POINTS  # the running point was let finish
    assert "interrupted" in {job.status for job in state(run).jobs.values()}
    assert not live_servers(run)  # nothing was started to serve it

    code, out = finish(start(tmp_path, "--resume", run.name, "--runs-dir", str(runs)))
    assert code == 0, out
    counts = measured(run)
    assert len(counts) == POINTS and set(counts.values()) == {1}, counts
    assert {c for _, c in counts} == {2048, 4096, 8192}
    assert {job.status for job in state(run).jobs.values()} == {"completed"}
