"""The report counts a job as failed by its JobStatus, as the launcher recorded it."""

from __future__ import annotations

import json
from pathlib import Path

from harness.synthetic import SyntheticConfig, write_run_dir
from inferbench.core.outcome import Outcome, PointOutcome, StoredOutcome
from inferbench.core.status import JobStatus, PointStatus
from inferbench.report.outcomes import outcomes_payload
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store


def _launcher_outcome(status: JobStatus) -> dict[str, object]:
    """outcome.json exactly as launch/runner.py writes it."""
    ok = status is JobStatus.COMPLETED
    point = PointOutcome(
        concurrency=4,
        status=PointStatus.PASSED if ok else PointStatus.INCOMPLETE,
        result_file="results/conc4.json" if ok else None,
    )
    outcome = Outcome(
        status=status,
        attempt=1,
        backend="local",
        engine="sim",
        host="localhost",
        started="2026-01-01T12:00:00+00:00",
        finished="2026-01-01T12:01:00+00:00",
        reason="" if ok else "server exited with code 1",
        points=(point,),
    )
    return outcome.model_dump(mode="json")


def test_completed_jobs_are_not_failed(tmp_path: Path) -> None:
    configs = [SyntheticConfig(), SyntheticConfig(framework="vllm", tp=4, precision="fp4")]
    run = write_run_dir(tmp_path / "runs", "r1", configs, concurrencies=(4,))
    jobs = sorted(p.parent for p in run.rglob("job.json"))
    statuses = (JobStatus.COMPLETED, JobStatus.SERVER_CRASHED)
    for job_dir, status in zip(jobs, statuses, strict=True):
        (job_dir / "outcome.json").write_text(json.dumps(_launcher_outcome(status)))
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    ingest_paths([run], url)
    with open_store(url) as store:
        outcomes = store.outcomes()
    data = outcomes_payload(outcomes)
    assert {o.status for o in outcomes} == set(statuses)
    assert data["total"] == 2 and data["failed"] == 1
    (failure,) = data["failures"]
    assert "server_crashed" in failure and "completed" not in failure


def test_all_completed_run_reports_no_failures() -> None:
    outcomes = [
        StoredOutcome(
            run_id="r", job_fingerprint=f"fp{i}", label="x", status=JobStatus.COMPLETED, attempt=1
        )
        for i in range(3)
    ]
    data = outcomes_payload(outcomes)
    assert (data["total"], data["failed"], data["failures"]) == (3, 0, [])


def test_other_tools_spellings_of_success_count_as_completed() -> None:
    for word in ("succeeded", "success", "ok", "done", "completed"):
        assert JobStatus.parse(word) is JobStatus.COMPLETED
    assert JobStatus.parse("weird") is JobStatus.UNKNOWN and JobStatus.UNKNOWN.failed
