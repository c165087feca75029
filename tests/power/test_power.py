"""Power samples from what nvidia-smi, amd-smi and a DCGM exporter print, and the sampler
process that records them beside a point."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, tzinfo
from pathlib import Path

import pytest

from inferbench.core.errors import InputError
from inferbench.core.rundir import EnvRecord, ZoneRecord
from inferbench.launch.rundir import environment_record
from inferbench.power.hostzone import host_zone, recorded_zone
from inferbench.power.parse import (
    ParseError,
    parse_amd_smi_csv,
    parse_dcgm_metrics,
    parse_nvidia_smi,
)
from inferbench.power.sampler import PowerSampler, PowerSource, detect_source
from inferbench.results.derived import energy_per_token
from inferbench.results.power import read_power_csv

# Recorded outputs: nvidia-smi --query-gpu=timestamp,index,power.draw,clocks.sm
# --format=csv,nounits -lms 100; amd-smi metric -p -c -t -u -w 1 --csv (AMDSMI 26.x,
# preamble and repeated header included); a dcgm-exporter 3.x /metrics scrape.
FIXTURES = Path(__file__).parent / "fixtures"

NVIDIA = (FIXTURES / "nvidia-smi.csv").read_text()

AMD = (FIXTURES / "amd-smi-watch.csv").read_text()

DCGM = (FIXTURES / "dcgm-metrics.txt").read_text()


def _utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_nvidia_smi_rows_and_na() -> None:
    samples = parse_nvidia_smi(NVIDIA)
    assert [(s.gpu, s.watts, s.sm_mhz) for s in samples] == [
        ("0", 412.34, 1980.0),
        ("1", 398.10, 1965.0),
        ("0", 415.02, 1980.0),
    ]  # the [N/A] reading is dropped, not read as zero
    assert samples[2].t - samples[0].t == pytest.approx(0.1)
    assert samples[0].t == pytest.approx(_utc("2026-12-03T10:00:00"))


def test_amd_smi_watch_csv_skips_preamble_and_repeated_header() -> None:
    samples = parse_amd_smi_csv(AMD)
    assert [(s.gpu, s.watts, s.sm_mhz) for s in samples] == [
        ("0", 1012.0, 2100.0),
        ("1", 998.0, 2095.0),
        ("0", 1020.0, 2100.0),
    ]
    assert samples[2].t - samples[0].t == pytest.approx(1.0)


def test_dcgm_exporter_metrics() -> None:
    samples = parse_dcgm_metrics(DCGM, t=100.0)
    assert [(s.gpu, s.watts, s.sm_mhz, s.t) for s in samples] == [
        ("0", 612.5, 1980.0, 100.0),
        ("1", 598.25, 1965.0, 100.0),
    ]


def test_foreign_output_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse_nvidia_smi("index, name\n0, H200\n")
    with pytest.raises(ParseError):
        parse_amd_smi_csv("timestamp,gpu,edge\n")


def test_no_tool_means_a_reason(tmp_path: Path) -> None:
    source, why = detect_source({"PATH": str(tmp_path)})
    assert source is None and "nvidia-smi" in why and "INFERBENCH_DCGM_URL" in why
    source, _ = detect_source({"PATH": str(tmp_path), "INFERBENCH_DCGM_URL": "http://x/metrics"})
    assert source == PowerSource("dcgm", "http://x/metrics")


def _wait_for_samples(out: Path, lines: int = 3, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if out.is_file() and len(out.read_text().splitlines()) > lines:
            return
        time.sleep(0.05)
    raise AssertionError(f"no samples in {out} after {timeout_s} s")


FAKE_NVIDIA_SMI = """#!/usr/bin/env python3
# Prints what `nvidia-smi --query-gpu=... --format=csv,nounits -lms N` prints, for 2 GPUs.
import sys, time
from datetime import datetime
ms = int([a for a in sys.argv if a.startswith("-lms=")][0].split("=")[1])
print("timestamp, index, power.draw [W], clocks.current.sm [MHz]", flush=True)
while True:
    now = datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
    for gpu, watts in ((0, 500.0), (1, 300.0)):
        print(f"{now}, {gpu}, {watts:.2f}, 1980", flush=True)
    time.sleep(ms / 1000)
"""


@pytest.mark.integration
def test_sampler_process_records_a_window_and_stops(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "nvidia-smi"
    tool.parent.mkdir()
    tool.write_text(FAKE_NVIDIA_SMI)
    tool.chmod(0o755)
    source, _ = detect_source({"PATH": str(tool.parent)})
    assert source is not None and source.kind == "nvidia-smi"
    out = tmp_path / "power_conc4.csv"
    sampler = PowerSampler(source, out, interval_s=0.05)
    sampler.start()
    _wait_for_samples(out)  # both processes started (seconds on a loaded machine)
    start = time.time()
    time.sleep(1.0)
    end = time.time()
    time.sleep(0.3)
    assert sampler.stop() == 0
    samples = read_power_csv(out)  # the results stage reads the sampler's file as it is
    assert {s.gpu for s in samples} == {"0", "1"}
    energy = energy_per_token(samples, window=(start, end), output_tokens=1000, total_tokens=5000)
    assert energy.valid, energy.reasons
    assert energy.joules == pytest.approx(800.0 * (end - start), rel=0.05)
    assert energy.joules_per_output_token == pytest.approx(energy.joules / 1000)


@pytest.fixture
def dcgm_url() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return None

        def do_GET(self) -> None:
            body = DCGM.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.integration
def test_sampler_polls_a_dcgm_exporter(dcgm_url: str, tmp_path: Path) -> None:
    out = tmp_path / "power.csv"
    sampler = PowerSampler(PowerSource("dcgm", dcgm_url), out, interval_s=0.1)
    sampler.start()
    _wait_for_samples(out, lines=6)
    assert sampler.stop() == 0
    samples = read_power_csv(out)
    assert len(samples) >= 6 and {s.watts for s in samples} == {612.5, 598.25}


RAW_AMD_WATCH = """WARNING: User is missing the following required groups: render, video
timestamp,gpu,gfx_activity,umc_activity,socket_power,gfx_voltage,power_management,gfx_0_clk
1767600000,0,98,40,1012,N/A,ENABLED,2100
1767600000,1,97,41,998,N/A,ENABLED,2095

timestamp,gpu,gfx_activity,umc_activity,socket_power,gfx_voltage,power_management,gfx_0_clk
1767600001,0,99,42,N/A,N/A,ENABLED,2100
1767600001,1,99,42,1000,N/A,ENABLED,2100
"""


def test_raw_amd_smi_watch_stream_is_read_as_the_results_stage_reads_power(
    tmp_path: Path,
) -> None:
    """The unfiltered watch stream (a preamble, the header every tick, N/A readings):
    ingest reads it instead of skipping the point; unix-second stamps need no zone."""
    path = tmp_path / "gpu_metrics_conc8.csv"
    path.write_text(RAW_AMD_WATCH)
    samples = read_power_csv(path, tz=None)
    assert [(s.t, s.gpu, s.watts) for s in samples] == [
        (1767600000.0, "0", 1012.0),
        (1767600000.0, "1", 998.0),
        (1767600001.0, "1", 1000.0),
    ]


def _zone_of(env: dict[str, object]) -> tzinfo | None:
    """The zone of an env.json holding `env`, as ingest reads it."""
    return recorded_zone(EnvRecord.model_validate(env))


def test_nvidia_smi_times_are_read_in_the_writing_hosts_zone(tmp_path: Path) -> None:
    path = tmp_path / "gpu_metrics.csv"
    path.write_text(
        "timestamp, index, power.draw [W], clocks.current.sm [MHz]\n"
        "2026/12/03 10:00:00.500, 0, 412.34 W, 1980 MHz\n"
    )
    kolkata = _zone_of({"timezone": {"name": "Asia/Kolkata", "utc_offset_s": 19800}})
    assert read_power_csv(path, kolkata)[0].t == pytest.approx(
        _utc("2026-12-03T04:30:00.500")  # 10:00 at +05:30
    )
    # a zone name the reader does not know: the recorded offset still places the samples
    fixed = _zone_of({"timezone": {"name": "Nowhere/Unknown", "utc_offset_s": -18000}})
    assert read_power_csv(path, fixed)[0].t == pytest.approx(_utc("2026-12-03T15:00:00.500"))
    assert _zone_of({}) is None and _zone_of({"timezone": "x"}) is None
    assert _zone_of({"timezone": {"utc_offset_s": 90000}}) is None  # not an offset of a day


def test_env_json_records_the_hosts_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    try:
        zone = host_zone()
        assert zone["name"] == "America/New_York"
        assert zone["utc_offset_s"] in (-18000, -14400)  # EST or EDT
        assert environment_record().timezone == ZoneRecord.model_validate(zone)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_power_file_without_a_power_column_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "power_conc8.csv"
    path.write_text("timestamp,gpu,edge\n1,0,50\n")
    with pytest.raises(InputError) as err:
        read_power_csv(path)
    assert err.value.location.file == path and err.value.location.line == 1
