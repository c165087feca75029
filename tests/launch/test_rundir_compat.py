"""Run directories an older inferbench wrote are still read and resumed.

`data/run-0.1/` holds a run as inferbench 0.0.9 left it, interrupted after its first point:
run.json keeps `--srt-slurm` as one path, outcome.json's points say `ok: true` (before
PointStatus), env.json records no time zone and no accelerator (before either was kept).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.core.outcome import StoredOutcome
from inferbench.core.rundir import (
    EnvRecord,
    OutcomeRecord,
    PlanCommand,
    RunHeader,
    RunInfo,
    read_jobs,
    read_record,
    write_record,
)
from inferbench.core.status import JobStatus
from inferbench.launch.resume import load_saved_run
from inferbench.launch.runner import execute_run
from inferbench.power.hostzone import recorded_zone
from inferbench.results.sources import discover

from .test_runner import _healthy, _request

OLD = Path(__file__).parent / "data" / "run-0.1"
RUN_ID = "20261101-120000-ab12"
JOB = "8c2be5c7f6aa"


@pytest.fixture
def old_runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(OLD, runs)  # read-only fixture: resume writes into a copy
    return runs


def test_an_old_run_json_reads_as_run_info(old_runs: Path) -> None:
    info = read_record(old_runs / RUN_ID / "run.json", RunInfo, "run.json")
    assert info.settings.srt_slurm == ("/srv/srt-slurm",) and info.settings.adaptive is None
    header = read_record(old_runs / RUN_ID / "run.json", RunHeader, "run.json")
    assert (header.run_id, header.version, header.host) == (RUN_ID, "0.0.9", "login1")
    assert header.commit == "0f3c5a9e2b7d4c1a8e6f0b3d5c7a9e1f2b4d6c8a"


def test_an_old_job_directory_reads_as_records(old_runs: Path) -> None:
    job = old_runs / RUN_ID / JOB
    outcome = read_record(job / "outcome.json", OutcomeRecord, "outcome.json")
    assert outcome.status is JobStatus.INTERRUPTED and outcome.host == "gpu-node-3"
    assert outcome.started == datetime(2026, 11, 1, 12, 0, 1, tzinfo=UTC)
    env = read_record(job / "env.json", EnvRecord, "env.json")
    assert env.accelerator is None and env.timezone is None and recorded_zone(env) is None
    assert env.environment == {"CUDA_VISIBLE_DEVICES": "0,1"}
    assert [e.concurrencies for e in read_jobs(old_runs / RUN_ID / "jobs.json")] == [(1, 2)]


def test_an_old_run_resumes_and_runs_only_what_is_left(old_runs: Path, tmp_path: Path) -> None:
    saved = load_saved_run(old_runs, RUN_ID)
    options = saved.options(old_runs)
    assert options.srt_slurm == ("/srv/srt-slurm",) and options.retries == 1
    assert options.filters == {"max_conc": 2} and options.plan.max_prompts == 2
    request = _request(tmp_path, saved.deployments, _healthy, resume=RUN_ID)
    summary = execute_run(request)
    assert summary.ok and [o.status for _, o in summary.outcomes] == [JobStatus.COMPLETED]
    outcome = summary.outcomes[0][1]
    assert [p.concurrency for p in outcome.points] == [2]  # point 1 finished before
    # the resumed job's files are this version's: env.json has its zone now
    env = read_record(old_runs / RUN_ID / JOB / "env.json", EnvRecord, "env.json")
    assert env.timezone is not None and env.model_extra == {"backend": "local"}


def test_other_tools_spellings_read_as_one_field() -> None:
    header = RunHeader.model_validate(
        {"run-id": "r1", "inferbench_version": "0.0.1", "git-commit": "abc", "official": "true"}
    )
    assert (header.run_id, header.version, header.commit, header.official) == (
        "r1",
        "0.0.1",
        "abc",
        True,
    )
    assert RunHeader.model_validate({"id": "r2", "run_id": ""}).run_id == "r2"
    outcome = OutcomeRecord.model_validate(
        {"status": "succeeded", "times": {"start": 0, "end": "20260105-103000"}}
    )
    assert outcome.status is JobStatus.COMPLETED and outcome.attempt == 1
    assert outcome.started == datetime(1970, 1, 1, tzinfo=UTC)
    assert outcome.finished == datetime(2026, 1, 5, 10, 30, tzinfo=UTC)
    plan = PlanCommand.model_validate({"commands": [["vllm", "serve", "m"], "sleep 1"]})
    assert plan.command == "vllm serve m && sleep 1"
    assert PlanCommand.model_validate({"server_command": "x" * 5000}).command == "x" * 2000


def test_a_damaged_zone_or_accelerator_costs_only_that_field() -> None:
    env = EnvRecord.model_validate(
        {
            "host": "n1",
            "timezone": {"name": 3, "utc_offset_s": 90000},
            "accelerator": {"kind": "tpu"},
        }
    )
    assert env.host == "n1" and env.accelerator is None and recorded_zone(env) is None
    assert EnvRecord.model_validate({"timezone": "UTC", "accelerator": []}).timezone is None


def test_a_damaged_file_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps([{"job": {}, "concurrencies": ["x"]}]))
    with pytest.raises(InputError) as caught:
        read_jobs(path)
    assert caught.value.location.file == path and "concurrencies" in caught.value.message


def test_run_info_round_trips(tmp_path: Path) -> None:
    info = RunInfo(run_id="r", created="2026-12-07T00:00:00Z", backend="sim", engine=None, root=".")
    write_record(tmp_path / "run.json", info)
    assert read_record(tmp_path / "run.json", RunInfo, "run.json") == info


def test_a_damaged_plan_or_env_costs_only_its_field(old_runs: Path) -> None:
    job = old_runs / RUN_ID / JOB
    (job / "plan.json").write_text("{not json")
    (job / "env.json").write_text("[]")
    found = list(discover([old_runs / RUN_ID]))
    stored = [f for f in found if isinstance(f, StoredOutcome)]
    assert [(s.run_id, s.status) for s in stored] == [(RUN_ID, JobStatus.INTERRUPTED)]
    points = [f for f in found if not isinstance(f, StoredOutcome)]
    assert points and all("plan.json" not in str(p.error) for p in points)
