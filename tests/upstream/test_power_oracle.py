"""Energy from power logs exactly as InferenceX's runners write them, against InferenceX's
own `utils/aggregate_power.py` (run from the upstream tree, in its venv) as the oracle.

`benchmarks/benchmark_lib.sh` `start_gpu_monitor` writes either nvidia-smi's CSV (units in
header and values, the host's wall clock without a zone) or amd-smi's watch CSV through
an awk filter (unix-second stamps). The host here is in a non-UTC zone (+05:30); the
oracle runs with that TZ, as it would on that host.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from inferbench.results.ingest import ingest_paths
from inferbench.results.store import open_store

HOST_TZ = "Asia/Kolkata"  # +05:30: an hour-only shift would not catch a half-hour slip
START, END = 1_767_600_000.25, 1_767_600_030.75  # the measured window, unix seconds
GPUS = 2
NVIDIA_HEADER = (
    "timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz],"
    " clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]"
)
AMD_HEADER = (
    "timestamp,gpu,gfx_activity,umc_activity,mm_activity,vcn_activity,jpeg_activity,"
    "gfx_busy_inst_xcp_0,jpeg_busy_xcp_0,vcn_busy_xcp_0,socket_power,gfx_voltage,"
    "soc_voltage,mem_voltage,throttle_status,power_management,gfx_0_clk,mem_0_clk,edge,"
    "hotspot,mem"
)


def _watts(t: float, gpu: int) -> float:
    """A load that swings within seconds, so the window's edges and shape matter."""
    return 400.0 + 150.0 * math.sin(t / 3.0 + gpu) + 40.0 * gpu


def nvidia_log(zone: ZoneInfo) -> str:
    """`nvidia-smi --query-gpu=<InferenceX's query> --format=csv -l 1` on a host in `zone`
    (ticks off the whole second, as nvidia-smi's are), then the one-shot sample
    stop_gpu_monitor appends with `--format=csv,noheader`."""
    lines = [NVIDIA_HEADER]
    t = START - 5.37
    while t <= END + 2:
        stamp = datetime.fromtimestamp(t, zone).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        for gpu in range(GPUS):
            lines.append(
                f"{stamp}, {gpu}, {_watts(t, gpu):.2f} W, 51, 1980 MHz, 2619 MHz, 93 %, 41 %"
            )
        t += 1.0
    return "\n".join(lines) + "\n"


def amd_log() -> str:
    """amd-smi's watch CSV after InferenceX's awk filter: one header, whole-second stamps."""
    lines = [AMD_HEADER]
    for t in range(int(START) - 3, int(END) + 4):
        for gpu in range(GPUS):
            lines.append(
                f"{t},{gpu},97,41,0,0,0,97,0,0,{_watts(t, gpu):.0f},N/A,N/A,N/A,0,ENABLED,"
                "2100,1900,61,72,60"
            )
    return "\n".join(lines) + "\n"


def sa_bench() -> dict[str, object]:
    """The fields of a sa-bench result the power step reads (and inferbench's ingest)."""
    return {
        "date": "20260105-101500",
        "backend": "openai",
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": 64,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": 8,
        "duration": END - START,
        "benchmark_start_time_unix": START,
        "benchmark_end_time_unix": END,
        "completed": 64,
        "total_input_tokens": 64 * 1024,
        "total_output_tokens": 64 * 1024,
        "request_throughput": 64 / (END - START),
        "output_throughput": 64 * 1024 / (END - START),
        "total_token_throughput": 2 * 64 * 1024 / (END - START),
        "median_ttft_ms": 50.0,
        "median_tpot_ms": 10.0,
        "input_lens": [1024] * 64,
        "output_lens": [1024] * 64,
    }


IDENTITY = {
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "model-prefix": "llama3.1-8b",
    "precision": "bf16",
    "framework": "vllm",
    "runner": "h200",
    "isl": 1024,
    "osl": 1024,
    "tp": GPUS,
    "conc": 8,
}


def oracle_energy(python: Path, tree: Path, folder: Path) -> float:
    """InferenceX's aggregate_power.py on the folder's gpu_metrics.csv, run on the host."""
    agg = folder / "agg.json"
    agg.write_text("{}")
    proc = subprocess.run(
        [str(python), str(tree / "utils" / "aggregate_power.py")]
        + ["--csv", str(folder / "gpu_metrics.csv"), "--bench-result", str(folder / "r.json")]
        + ["--agg-result", str(agg), "--expected-num-gpus", str(GPUS), "--require-power"],
        env={**os.environ, "TZ": HOST_TZ},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr  # power valid by InferenceX's own rules
    return float(json.loads(agg.read_text())["total_gpu_energy_j"])


def ingested_energy(paths: list[Path], tmp_path: Path) -> float:
    db = f"sqlite:///{tmp_path / 'results.sqlite'}"
    report = ingest_paths(paths, db, identity=IDENTITY)
    assert report.skipped == () and report.inserted == 1, report.skipped
    energy = open_store(db).query()[0].record.derived.energy
    assert energy is not None and energy.valid, energy
    assert energy.joules is not None
    return energy.joules


def _in_zone(monkeypatch: pytest.MonkeyPatch, zone: str) -> Iterator[None]:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def local_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process in the writing host's zone (what reading as local time means)."""
    yield from _in_zone(monkeypatch, HOST_TZ)


@pytest.fixture
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process on UTC: another host than the one that wrote the log."""
    yield from _in_zone(monkeypatch, "UTC")


@pytest.mark.parametrize("vendor", ["nvidia", "amd"])
def test_runner_power_log_beside_its_result_matches_aggregate_power(
    vendor: str,
    tmp_path: Path,
    inferencex_python: Path,
    inferencex_tree: Path,
    local_zone: None,
) -> None:
    """A runner's result directory as it is: one result JSON, gpu_metrics.csv beside it,
    ingested on the host that wrote it (local time is the log's zone)."""
    folder = tmp_path / "result"
    folder.mkdir()
    (folder / "r.json").write_text(json.dumps(sa_bench()))
    log = nvidia_log(ZoneInfo(HOST_TZ)) if vendor == "nvidia" else amd_log()
    (folder / "gpu_metrics.csv").write_text(log)
    expected = oracle_energy(inferencex_python, inferencex_tree, folder)
    assert ingested_energy([folder / "r.json"], tmp_path) == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("vendor", ["nvidia", "amd"])
def test_run_directory_reads_nvidia_times_in_the_zone_env_json_records(
    vendor: str, tmp_path: Path, inferencex_python: Path, inferencex_tree: Path, utc_zone: None
) -> None:
    """A run's job whose raw log came from a +05:30 host, ingested in a UTC process: the
    zone comes from the job's env.json, not from the ingesting host."""
    oracle_dir = tmp_path / "oracle"
    oracle_dir.mkdir()
    log = nvidia_log(ZoneInfo(HOST_TZ)) if vendor == "nvidia" else amd_log()
    (oracle_dir / "gpu_metrics.csv").write_text(log)
    (oracle_dir / "r.json").write_text(json.dumps(sa_bench()))
    expected = oracle_energy(inferencex_python, inferencex_tree, oracle_dir)

    job = tmp_path / "runs" / "run-1" / "fp-1"
    (job / "results").mkdir(parents=True)
    (job / "job.json").write_text(json.dumps({**IDENTITY, "fingerprint": "fp-1"}))
    env = {"host": "node1", "timezone": {"name": HOST_TZ, "utc_offset_s": 19800}}
    (job / "env.json").write_text(json.dumps(env))
    (job / "results" / "conc8.json").write_text(json.dumps(sa_bench()))
    (job / "results" / "gpu_metrics_conc8.csv").write_text(log)
    assert ingested_energy([job.parent], tmp_path) == pytest.approx(expected, rel=1e-3)
