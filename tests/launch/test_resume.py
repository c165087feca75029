"""Resume from run.json/jobs.json, conflicting flags refused, the run lock, stop requests."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from rich.console import Console

from inferbench.cli.run import render_summary
from inferbench.core.errors import InputError
from inferbench.core.outcome import PointOutcome
from inferbench.core.rundir import RunSettings
from inferbench.core.status import JobStatus
from inferbench.launch.deployment import Deployment
from inferbench.launch.local import LocalExecutor
from inferbench.launch.lock import RunInUse, run_lock
from inferbench.launch.plan import Backend, Engine, Plan
from inferbench.launch.planner import PlanOptions
from inferbench.launch.resume import load_saved_run, refuse_conflicts
from inferbench.launch.rundir import JobDir
from inferbench.launch.runner import RunRequest, execute_run
from inferbench.launch.session import RunOptions, settings_of
from inferbench.launch.state import RunState
from inferbench.launch.stop import StopRequest

from .conftest import http_point, server_plan
from .test_runner import OPTS, _deps, _healthy, _request


def test_run_json_and_jobs_json_give_back_every_setting(tmp_path: Path) -> None:
    deps = _deps(2)
    settings = RunSettings(retries=2, max_jobs=2, plan={"max_prompts": 3}, local={})
    request = _request(tmp_path, deps, _healthy, settings=settings, filters={"max_conc": 2})
    run = execute_run(request).run
    saved = load_saved_run(tmp_path / "runs", run.run_id)
    assert [d.fingerprint for d in saved.deployments] == [d.fingerprint for d in deps]
    assert [d.concurrencies for d in saved.deployments] == [(1, 2), (1, 2)]
    options = saved.options(tmp_path / "runs")
    assert options.resume == run.run_id and options.retries == 2 and options.max_jobs == 2
    assert options.plan == PlanOptions(max_prompts=3) and options.filters == {"max_conc": 2}
    assert options.backend is Backend.LOCAL and options.root == tmp_path


def test_srtctl_options_come_back_from_run_json(tmp_path: Path) -> None:
    """`--srt-slurm` (each source, a copy's ref kept) and `--srtctl-root` are kept in
    run.json; a resume restores them, and one given beside `--resume` replaces only itself
    (the sources may have moved)."""
    srt, copy, root = tmp_path / "refs.bundle", tmp_path / "copy", tmp_path / "srtctl-root"
    srt.write_bytes(b"")
    copy.mkdir()
    started = RunOptions(
        root=tmp_path,
        backend=Backend.SRTCTL,
        cluster="gb200-nv",
        srt_slurm=(str(srt), f"{copy}@v1.0.50"),
        plan=PlanOptions(srtctl_root=str(root)),
    )
    request = _request(tmp_path, _deps(1), _healthy, settings=settings_of(started))
    run = execute_run(request).run
    kept = json.loads(run.run_json.read_text())["settings"]["srt_slurm"]
    assert kept == [str(srt), f"{copy}@v1.0.50"]
    saved = load_saved_run(tmp_path / "runs", run.run_id)
    options = saved.options(tmp_path / "runs")
    assert options.srt_slurm == tuple(kept) and options.plan.srtctl_root == str(root)
    moved = tmp_path / "moved"
    moved.mkdir()
    options = saved.options(tmp_path / "runs", srt_slurm=[f"{moved}@main"])
    assert options.srt_slurm == (f"{moved}@main",) and options.plan.srtctl_root == str(root)
    options = saved.options(tmp_path / "runs", srtctl_root=moved)
    assert options.srt_slurm == tuple(kept) and options.plan.srtctl_root == str(moved)


def test_a_run_json_of_one_srt_slurm_checkout_still_resumes() -> None:
    """An older inferbench kept `--srt-slurm` as one path (or null)."""
    assert RunSettings.model_validate({"srt_slurm": "/x/srt-slurm"}).srt_slurm == ("/x/srt-slurm",)
    assert RunSettings.model_validate({"srt_slurm": None}).srt_slurm == ()


def test_conflicting_flags_are_refused_by_name(tmp_path: Path) -> None:
    run = execute_run(_request(tmp_path, _deps(1), _healthy, filters={"max_conc": 2})).run
    info = load_saved_run(tmp_path / "runs", run.run_id).info
    same = RunOptions(root=tmp_path, filters={"max_conc": 2})
    refuse_conflicts(info, same, {"backend", "filters", "retries"})
    other = RunOptions(root=tmp_path, engine=Engine("vllm"), retries=3, filters={"max_conc": 4})
    refuse_conflicts(info, other, set())  # a setting not typed beside --resume is the run's
    with pytest.raises(InputError) as err:
        refuse_conflicts(info, other, {"engine", "filters"})
    text = err.value.render()
    assert "--engine 'vllm' (this run: None)" in text and "sweep filters" in text
    assert "run.json" in text and "--resume" in text


def test_a_second_holder_of_the_run_lock_is_refused(tmp_path: Path) -> None:
    with run_lock(tmp_path, "r1"):
        with pytest.raises(RunInUse) as err, run_lock(tmp_path, "r1"):
            pass
        assert "in use by inferbench pid" in err.value.render()
    with run_lock(tmp_path, "r1"):  # released on exit
        pass


def test_a_live_run_refuses_a_resume_of_itself(tmp_path: Path) -> None:
    deps = _deps(1)
    first = execute_run(_request(tmp_path, deps, _healthy, stop=_stopped()))
    with run_lock(first.run.path, first.run.run_id), pytest.raises(RunInUse):
        execute_run(_request(tmp_path, deps, _healthy, resume=first.run.run_id))


def _stopped() -> StopRequest:
    stop = StopRequest()
    stop.request()
    return stop


def test_a_stop_request_finishes_the_point_and_leaves_the_rest_to_resume(tmp_path: Path) -> None:
    deps = _deps(2)
    stop = StopRequest()

    def stop_after_first(base: str, spec: object, pt: object, out: Path, log: Path) -> PointOutcome:
        result = http_point(base, spec, pt, out, log)  # type: ignore[arg-type]
        stop.request()  # Ctrl-C while this point ran
        return result

    request = _request(tmp_path, deps, _healthy, stop=stop)
    request = RunRequest(**{**request.__dict__, "executor": LocalExecutor(stop_after_first, OPTS)})
    summary = execute_run(request)
    assert summary.interrupted and not summary.ok and summary.points_left == 3
    ((_, outcome),) = summary.outcomes
    assert outcome.status is JobStatus.INTERRUPTED
    assert [p.concurrency for p in outcome.points] == [1]
    state = RunState.model_validate_json(summary.run.state_json.read_text())
    assert state.jobs[deps[0].fingerprint].status == "interrupted"
    assert deps[1].fingerprint not in state.jobs  # never started

    resumed = execute_run(_request(tmp_path, deps, _healthy, resume=summary.run.run_id))
    assert resumed.ok and resumed.points_left == 0
    state = RunState.model_validate_json(resumed.run.state_json.read_text())
    assert all(sorted(j.finished) == [1, 2] for j in state.jobs.values())
    # the resumed job ran one point, yet both are done: the summary counts both
    assert [len(o.points) for _, o in resumed.outcomes] == [1, 2]
    assert resumed.points_ok == {d.fingerprint: 2 for d in deps}
    console = Console(record=True, width=120)
    render_summary(resumed, console)
    rows = [line for line in console.export_text().splitlines() if "completed" in line]
    assert len(rows) == 2 and all(" 2/2 " in row for row in rows), rows


def test_resume_reruns_infrastructure_failures_not_configuration_failures(tmp_path: Path) -> None:
    deps = _deps(2)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    busy = sock.getsockname()[1]

    def planner(dep: Deployment, job_dir: JobDir) -> Plan:
        if dep is deps[1]:  # a crash: a result about the configuration
            return server_plan("--crash-at-start", concs=dep.concurrencies, fp=dep.fingerprint)
        plan = server_plan(concs=dep.concurrencies, fp=dep.fingerprint)
        proc = plan.processes[0].model_copy(update={"port": busy})  # infrastructure
        return plan.model_copy(update={"processes": (proc,)})

    try:
        first = execute_run(_request(tmp_path, deps, planner))
    finally:
        sock.close()
    assert [o.status for _, o in first.outcomes] == [
        JobStatus.PORT_IN_USE,
        JobStatus.SERVER_CRASHED,
    ]
    resumed = execute_run(_request(tmp_path, deps, _healthy, resume=first.run.run_id))
    assert [d.fingerprint for d, _ in resumed.outcomes] == [deps[0].fingerprint]
    assert [d.fingerprint for d in resumed.skipped] == [deps[1].fingerprint]
    outcome = json.loads(resumed.run.job(deps[0].fingerprint).outcome_json.read_text())
    assert outcome["status"] == "completed" and outcome["attempt"] == 2


def test_engine_args_come_back_on_resume_and_others_are_refused(tmp_path: Path) -> None:
    plan = PlanOptions(engine_args=("--enforce-eager",), engine_env={"VLLM_A": "1"})
    started = RunOptions(root=tmp_path, plan=plan)
    request = _request(tmp_path, _deps(1), _healthy, settings=settings_of(started))
    saved = load_saved_run(tmp_path / "runs", execute_run(request).run.run_id)
    options = saved.options(tmp_path / "runs")
    assert tuple(options.plan.engine_args) == ("--enforce-eager",)
    assert dict(options.plan.engine_env) == {"VLLM_A": "1"}
    refuse_conflicts(saved.info, started, {"engine_args", "engine_env"})
    seeded = RunOptions(root=tmp_path, plan=PlanOptions(engine_args=("--seed", "1")))
    with pytest.raises(InputError, match="--engine-args"):
        refuse_conflicts(saved.info, seeded, {"engine_args"})
