"""The local backend against real server processes: health, crashes, ports, teardown."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from inferbench.core.status import JobStatus
from inferbench.launch.local import LocalOptions, run_local
from inferbench.launch.rundir import JobDir

from .conftest import http_point, server_plan

FAST = LocalOptions(health_timeout_s=10, health_poll_s=0.02, stop_grace_s=2)


def _pid(job: JobDir) -> int:
    for line in (job.logs / "server.log").read_text().splitlines():
        if line.startswith("engine: pid "):
            return int(line.split()[-1])
    raise AssertionError("server never started")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_healthy_server_runs_every_point_and_is_stopped(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "job")
    result = run_local(server_plan(), job, server_plan().bench.points, http_point, options=FAST)
    assert result.status is JobStatus.COMPLETED, result.reason
    assert [p.concurrency for p in result.points] == [1, 2]
    assert job.result_file(1).is_file() and job.result_file(2).is_file()
    assert result.base_url and result.base_url.startswith("http://127.0.0.1:")
    assert _gone(_pid(job))  # the server was stopped, its log kept
    assert (job.logs / "server.log").stat().st_size > 0


def test_server_crash_at_start_fails_fast_with_the_log_tail(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "job")
    plan = server_plan("--crash-at-start")
    t0 = time.monotonic()
    result = run_local(plan, job, plan.bench.points, http_point, options=FAST)
    assert time.monotonic() - t0 < 5  # not the 10 s health deadline
    assert result.status is JobStatus.SERVER_CRASHED
    assert "status 7" in result.reason
    assert "CUDA out of memory" in result.log_tail
    assert not job.result_file(1).exists()


def test_server_never_healthy_hits_the_deadline(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "job")
    plan = server_plan("--never-ready")
    options = LocalOptions(health_timeout_s=1.0, health_poll_s=0.02, stop_grace_s=2)
    result = run_local(plan, job, plan.bench.points, http_point, options=options)
    assert result.status is JobStatus.UNHEALTHY
    assert "not healthy after 1 s" in result.reason
    assert _gone(_pid(job))


def test_server_dying_mid_run_is_recorded(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "job")
    plan = server_plan("--die-after", "0.6", concs=(1, 2, 4))

    def slow_point(*args: object) -> object:
        time.sleep(0.4)
        return http_point(*args)  # type: ignore[arg-type]

    result = run_local(plan, job, plan.bench.points, slow_point, options=FAST)  # type: ignore[arg-type]
    assert result.status is JobStatus.SERVER_CRASHED
    assert "mid-run" in result.reason or "during concurrency" in result.reason
    assert [p.concurrency for p in result.points] == [1]  # the point before the death is kept
    assert job.result_file(1).is_file()


def test_port_taken_is_an_outcome_not_a_crash(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        base = server_plan()
        proc = base.processes[0].model_copy(update={"port": port})
        plan = base.model_copy(update={"processes": (proc,)})
        result = run_local(
            plan, JobDir(tmp_path / "j"), plan.bench.points, http_point, options=FAST
        )
    assert result.status is JobStatus.PORT_IN_USE
    assert str(port) in result.reason


def test_interrupt_stops_the_server(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "job")
    plan = server_plan()

    def interrupted(*args: object) -> object:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_local(plan, job, plan.bench.points, interrupted, options=FAST)  # type: ignore[arg-type]
    assert _gone(_pid(job))


def test_health_detected_soon_after_readiness(tmp_path: Path) -> None:
    job = JobDir(tmp_path / "job")
    plan = server_plan("--ready-after", "0.5")
    result = run_local(plan, job, (), http_point, options=FAST)
    assert result.status is JobStatus.COMPLETED
    assert 0.5 <= result.timings_s["server_start"] < 3.0


def test_engine_not_installed_is_an_outcome(tmp_path: Path) -> None:
    base = server_plan()
    proc = base.processes[0].model_copy(update={"argv": ("no-such-engine-binary", "serve")})
    plan = base.model_copy(update={"processes": (proc,)})
    result = run_local(plan, JobDir(tmp_path / "j"), plan.bench.points, http_point, options=FAST)
    assert result.status is JobStatus.START_FAILED
    assert "no-such-engine-binary" in result.reason
