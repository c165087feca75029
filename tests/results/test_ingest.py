from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from results_fixtures import point_result, sa_bench, write_json, write_point, write_run_dir

from inferbench.bench.result import SCHEMA_VERSION as BENCH_SCHEMA_VERSION
from inferbench.core.errors import InputError
from inferbench.results.benchfile import read_bench_file
from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store


def test_run_directory_points_carry_identity_and_provenance(db_url: str, tmp_path: Path) -> None:
    run = write_run_dir(tmp_path / "runs")
    report = ingest_paths([run], db_url)
    assert (report.found, report.inserted, report.skipped) == (2, 2, ())
    assert {o.status for o in report.outcomes} == {"completed", "failed"}
    stored = open_store(db_url).query()
    by_conc = {s.record.identity.concurrency: s.record for s in stored}
    rec = by_conc[64]
    assert rec.identity.disagg and rec.identity.topology() == "1P2D TEP4/DEP8"
    assert rec.identity.image == "docker.io/lmsysorg/sglang:v0.5.2-cu129"  # normalised
    assert rec.identity.hardware_prefill == "gb200"
    assert rec.provenance.run_id == "run-1" and rec.provenance.attempt == 2
    assert rec.provenance.host == "gb200-n01" and rec.provenance.started_at is not None
    assert rec.provenance.command == "python -m sglang.launch_server --tp 4"
    assert not rec.provenance.official
    assert rec.derived.total_tput_per_gpu == pytest.approx(600.0 / 20)
    assert rec.derived.output_tput_per_decode_gpu == pytest.approx(200.0 / 16)
    assert rec.derived.input_tput_per_prefill_gpu == pytest.approx(400.0 / 4)
    # per-request TPOTs from the ITLs: 10, 10, 20, 40 ms -> interactivity 100, 100, 50, 25
    inter = rec.derived.interactivity
    assert inter is not None and inter.source == "per_request"
    assert inter.median == pytest.approx(75.0) and inter.mean == pytest.approx(68.75)
    assert {o.job_fingerprint for o in open_store(db_url).outcomes()} == {
        "fp-disagg-1",
        "fp-broken",
    }


def test_ingest_is_idempotent(db_url: str, tmp_path: Path) -> None:
    run = write_run_dir(tmp_path / "runs")
    first = ingest_paths([run], db_url)
    again = ingest_paths([run, run / "fp-disagg-1"], db_url)
    assert first.inserted == 2 and (again.inserted, again.updated) == (0, 0)
    assert open_store(db_url).count() == 2
    # the result changes (re-run of the same point in the same run): replaced, not duplicated
    write_json(run / "fp-disagg-1" / "results" / "conc64.json", sa_bench(64, duration=20.0))
    third = ingest_paths([run], db_url)
    assert (third.inserted, third.updated, third.unchanged) == (0, 1, 1)
    assert open_store(db_url).count() == 2


IDENT = {
    "model-prefix": "qwen3.5",
    "precision": "bf16",
    "framework": "vllm",
    "hardware": "h100",
    "isl": "1000",
    "osl": "5",
    "conc": "8",
    "tp": "2",
    "run-id": "local-1",
    "tag": "nightly",
}


def test_inferbench_result_file_with_identity(db_url: str, tmp_path: Path) -> None:
    result = point_result()
    path = write_point(tmp_path / "conc8.json", result)
    report = ingest_paths([path], db_url, identity=IDENT)
    assert report.inserted == 1, report.skipped
    rec = open_store(db_url).query()[0].record
    m = rec.metrics
    assert m.failed == 2 and m.failures == {"timeout": 1, "http_status": 1}
    assert (m.completed, m.num_prompts, m.max_concurrency, m.duration_s) == (4, 6, 8, 10.0)
    assert rec.derived.failure_rate == pytest.approx(2 / 6)
    # the load generator's per-request percentiles: TPOTs 10, 10, 20, 40 ms
    inter = rec.derived.interactivity
    assert inter is not None and inter.source == "per_request"
    want = result.inferbench.interactivity
    assert (inter.p1, inter.p10, inter.median, inter.p90, inter.p99, inter.mean) == (
        want.p1,
        want.p10,
        want.median,
        want.p90,
        want.p99,
        want.mean,
    )
    assert inter.median == pytest.approx(75.0) and inter.mean == pytest.approx(68.75)
    assert m.tpot_ms.p999 == result.sa.p99_9_tpot_ms and m.queue_ms is not None
    assert m.complete is True and m.incomplete_reason is None and m.gate_failure is None
    assert m.achieved_request_rate == pytest.approx(2.5)
    assert m.in_flight_max == 2 and m.request_rate is None  # closed loop
    # the point's window dates the record
    p = rec.provenance
    assert p.started_at == datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)
    assert p.ended_at == datetime(2026, 1, 5, 10, 0, 11, tzinfo=UTC)
    assert p.tag == "nightly" and p.run_id == "local-1"
    assert p.inferbench_version == result.inferbench.client_version
    assert rec.identity.model == "m"  # from sa-bench model_id
    assert rec.derived.energy is None  # no power samples given
    again = ingest_paths([path], db_url, identity=IDENT)
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 1)


def test_incomplete_point_is_stored_as_such(db_url: str, tmp_path: Path) -> None:
    result = point_result(complete=False, incomplete_reason="interrupted")
    path = write_point(tmp_path / "conc8.json", result)
    assert ingest_paths([path], db_url, identity=IDENT).inserted == 1
    m = open_store(db_url).query()[0].record.metrics
    assert m.complete is False and m.incomplete_reason == "interrupted"


def test_inferbench_files_in_a_run_directory_with_power(db_url: str, tmp_path: Path) -> None:
    run = write_run_dir(tmp_path / "runs", failed_job=False)
    results = run / "fp-disagg-1" / "results"
    write_point(results / "conc64.json")
    rows = ["timestamp, index, power.draw [W]"]
    for k in range(0, 13):
        for gpu in range(2):
            rows.append(f"2026/01/05 10:00:{k:02d}.000, {gpu}, 250.00 W")
    (results / "power_conc64.csv").write_text("\n".join(rows) + "\n")
    report = ingest_paths([run], db_url)
    assert (report.inserted, report.skipped) == (2, ())
    by_conc = {s.record.identity.concurrency: s.record for s in open_store(db_url).query()}
    rec, plain = by_conc[64], by_conc[128]
    assert rec.metrics.failures == {"timeout": 1, "http_status": 1}
    # the measured window is the point's last 10 s (10:00:01..10:00:11): 2 GPUs x 250 W
    energy = rec.derived.energy
    assert energy is not None and energy.valid, energy
    assert energy.joules == pytest.approx(2 * 250.0 * 10)
    assert energy.joules_per_output_token == pytest.approx(5000.0 / 20)
    # the point's own times; the plain sa-bench point keeps the job's (outcome.json)
    assert rec.provenance.started_at == datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)
    assert plain.provenance.started_at == datetime(2026, 1, 5, 10, 1, 0, tzinfo=UTC)
    assert plain.metrics.complete is None and plain.metrics.failures == {}
    assert rec.provenance.command == plain.provenance.command is not None  # from plan.json
    again = ingest_paths([run], db_url)
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 2)


def _corrupt_cases() -> list[tuple[str, object, str, str | None]]:
    good = orjson.loads(point_result().to_json_bytes())
    no_failed = orjson.loads(orjson.dumps(good))
    del no_failed["inferbench"]["failed"]
    bad_sa = {**good, "completed": "four"}
    newer = orjson.loads(orjson.dumps(good))
    newer["inferbench"]["schema_version"] = BENCH_SCHEMA_VERSION + 1
    bad_time = orjson.loads(orjson.dumps(good))
    bad_time["inferbench"]["started_at"] = "yesterday"
    homemade = {**sa_bench(8), "inferbench": {"schema_version": 1, "failures": {"timeout": 1}}}
    return [
        ("truncated", point_result().to_json_bytes()[:-40], "not valid JSON", None),
        ("missing", no_failed, "invalid result file", "failed"),
        ("sa-type", bad_sa, "invalid result file", "completed"),
        ("newer", newer, "newer than this inferbench", "inferbench.schema_version"),
        ("time", bad_time, "not an ISO 8601 time", "inferbench.started_at"),
        ("homemade", homemade, "invalid result file", None),
        ("block", {**sa_bench(8), "inferbench": [1]}, "invalid result file", None),
    ]


@pytest.mark.parametrize("case", _corrupt_cases(), ids=lambda c: c[0])
def test_corrupt_inferbench_file_is_an_input_error_naming_it(
    db_url: str, tmp_path: Path, case: tuple[str, object, str, str | None]
) -> None:
    _, content, message, key = case
    path = tmp_path / "conc8.json"
    path.write_bytes(content if isinstance(content, bytes) else orjson.dumps(content))
    with pytest.raises(InputError, match=message) as exc:
        read_bench_file(path)
    assert exc.value.location.file == path
    if key is not None:
        assert exc.value.location.key == key
    report = ingest_paths([path], db_url, identity=IDENT)
    assert report.inserted == 0 and len(report.skipped) == 1
    assert message in report.skipped[0].reason and str(path) in report.skipped[0].reason
    assert open_store(db_url).count() == 0


def test_plain_sa_bench_identity_from_inferencex_name(db_url: str, tmp_path: Path) -> None:
    name = "dsr1_1k1k_fp4_trt_tp4-ep4-dpatrue_disagg-false_spec-none_conc16_b200-nb_0.json"
    path = write_json(tmp_path / name, sa_bench(16))
    report = ingest_paths([tmp_path], db_url)
    assert report.inserted == 1, report.skipped
    rec = open_store(db_url).query()[0].record
    assert (rec.identity.isl, rec.identity.osl, rec.identity.concurrency) == (1024, 1024, 16)
    assert rec.identity.hardware() == "b200" and rec.identity.total_gpus == 4
    assert rec.provenance.run_id.startswith("file-") and rec.provenance.source == str(path)


def test_srt_slurm_names_with_identity(db_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "logs" / "sa-bench_isl_8192_osl_1024"
    write_json(folder / "results_concurrency_64_gpus_24_ctx_8_gen_16.json", sa_bench(64))
    report = ingest_paths(
        [tmp_path / "logs"],
        db_url,
        identity={
            "model-prefix": "dsr1",
            "precision": "fp4",
            "framework": "dynamo-trt",
            "hardware": "gb200",
        },
    )
    assert report.inserted == 1, report.skipped
    rec = open_store(db_url).query()[0].record
    assert rec.identity.total_gpus == 24 and rec.identity.disagg
    assert rec.derived.output_tput_per_decode_gpu == pytest.approx(200.0 / 16)


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"duration": 10.0, "completed": ', "not valid JSON"),
        ("", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({**sa_bench(), "duration": "ten"}), "'duration' must be a number"),
        (json.dumps({"completed": 3}), "lacks 'duration'"),
        # Python's json writes NaN for a metric with no value; it is not JSON
        (json.dumps({**sa_bench(), "median_ttft_ms": float("nan")}), "NaN is not a JSON number"),
        (json.dumps({**sa_bench(), "completed": 10**30}), "less than or equal to"),
        ("null", "expected a JSON object, got null"),
    ],
)
def test_bad_files_are_reported_and_nothing_is_stored(
    db_url: str, tmp_path: Path, content: str, message: str
) -> None:
    bad = tmp_path / "dsr1_1k1k_fp8_vllm_tp8_conc16_h200-a_0.json"
    bad.write_text(content)
    report = ingest_paths([bad], db_url)
    assert report.inserted == 0 and len(report.skipped) == 1
    assert message in report.skipped[0].reason and str(bad) in report.skipped[0].reason
    assert "(fix: " in report.skipped[0].reason
    assert open_store(db_url).count() == 0


def test_newer_schema_and_missing_identity_are_skipped(db_url: str, tmp_path: Path) -> None:
    result = point_result()
    newer_block = result.inferbench.model_copy(update={"schema_version": BENCH_SCHEMA_VERSION + 1})
    newer = write_point(
        tmp_path / "a" / "newer.json", result.model_copy(update={"inferbench": newer_block})
    )
    anonymous = write_json(tmp_path / "b" / "bench.json", sa_bench())
    r1 = ingest_paths(
        [newer],
        db_url,
        identity={
            "model-prefix": "x",
            "precision": "fp8",
            "framework": "vllm",
            "hardware": "h100",
            "isl": 1,
            "osl": 1,
            "conc": 1,
        },
    )
    assert "newer than this inferbench" in r1.skipped[0].reason
    r2 = ingest_paths([anonymous], db_url)
    # the concurrency is the file's own max_concurrency; the rest must be given
    assert "no identity for: model-prefix, precision, framework, isl, osl (" in (
        r2.skipped[0].reason
    )
    assert open_store(db_url).count() == 0


def test_strict_writes_nothing_when_one_point_is_bad(db_url: str, tmp_path: Path) -> None:
    run = write_run_dir(tmp_path / "runs", failed_job=False)
    (run / "fp-disagg-1" / "results" / "conc128.json").write_text('{"trunc')
    report = ingest_paths([run], db_url, strict=True)
    assert len(report.skipped) == 1 and report.inserted == 0
    assert open_store(db_url).count() == 0
    lenient = ingest_paths([run], db_url)
    assert lenient.inserted == 1


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with pytest.raises(InputError, match="no such file"):
        ingest_paths([tmp_path / "nope"], url)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no benchmark results"):
        ingest_paths([tmp_path / "empty"], url)


def test_power_csv_next_to_run_results(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    run = write_run_dir(tmp_path / "runs", failed_job=False)
    rows = ["timestamp, index, power.draw [W]"]
    for k in range(0, 12):
        for gpu in range(2):
            rows.append(f"2026/01/05 10:00:{k:02d}.000, {gpu}, 250.00 W")
    csv = run / "fp-disagg-1" / "results" / "power_conc64.csv"
    csv.write_text("\n".join(rows) + "\n")
    ingest_paths([run], url)
    rec = {s.record.identity.concurrency: s.record for s in open_store(url).query()}[64]
    energy = rec.derived.energy
    # the sa-bench window (unix 1000..1010) is far from the CSV's 2026 timestamps
    assert energy is not None and not energy.valid and energy.gpus == 2
    assert any("cover" in r for r in energy.reasons)


@pytest.mark.parametrize("other_thread", [False, True], ids=["workers", "threads-alive"])
def test_worker_processes_read_the_same_as_one(tmp_path: Path, other_thread: bool) -> None:
    # Several runs, a corrupt file and a failed job: the parallel read must find, skip and
    # store exactly what the single-process read does, in the same order. With another
    # thread alive forking is unsafe, so the read stays in this process.
    stop = threading.Event()
    if other_thread:
        threading.Thread(target=stop.wait, daemon=True).start()
    for k in range(6):
        write_run_dir(tmp_path / "runs", f"run-{k}")
    bad = tmp_path / "runs" / "run-3" / "fp-disagg-1" / "results" / "conc256.json"
    bad.write_text("{ truncated")
    runs = sorted((tmp_path / "runs").iterdir())
    one = ingest_paths(runs, f"sqlite:///{tmp_path / 'one.sqlite'}", workers=1)
    seen: list[tuple[int, int]] = []
    two = ingest_paths(
        runs,
        f"sqlite:///{tmp_path / 'two.sqlite'}",
        workers=2,
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert len(seen) > 1 and seen[-1] == (12, 12)  # 6 runs x 2 job directories
    assert [d for d, _ in seen] == sorted({d for d, _ in seen})
    assert (
        (two.found, two.inserted, len(two.skipped))
        == (one.found, one.inserted, 1)
        == (
            13,
            12,
            1,
        )
    )
    assert two.skipped == one.skipped and str(bad) in two.skipped[0].reason
    assert two.outcomes == one.outcomes and two.run_ids == one.run_ids

    def stored(name: str) -> list[tuple[str, str]]:
        rows = open_store(f"sqlite:///{tmp_path / name}").query()
        return [(s.record.natural_key(), s.record.model_dump_json()) for s in rows]

    assert stored("two.sqlite") == stored("one.sqlite")
    stop.set()
