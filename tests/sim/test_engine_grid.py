"""The batch-limit grid (harness.engine_grid): one server per setting, each cell a
calibration point whose job carries the limits, and the JSON file round trip. The server
here is inferbench's own streaming test server, its inter-token time set by the setting."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.engine_grid import (
    BatchLimits,
    GridMeasurement,
    GridServer,
    GridSpec,
    measure_grid,
    read_grid,
    split,
    write_grid,
    write_points,
)
from harness.testserver import ServerConfig, serve_in_thread
from inferbench.bench.settings import Endpoint
from inferbench.core.errors import InputError
from inferbench.sim.calibrate import Measured, MeasuredPoint, deployment, load_points

SMALL = BatchLimits(max_num_seqs=2, max_num_batched_tokens=64)
LARGE = BatchLimits(max_num_seqs=8, max_num_batched_tokens=512, chunked_prefill=False)


def _spec() -> GridSpec:
    return GridSpec(
        model="inferbench/tiny-llama",
        runner="cpu",
        isl=16,
        osl=8,
        concurrencies=(1, 2),
        limits=(SMALL, LARGE),
    )


def test_settings_name_flags_and_jobs() -> None:
    spec = _spec()
    cells = spec.cells()
    assert [c.name for c in cells] == [
        "seqs2-chunk64-conc1",
        "seqs2-chunk64-conc2",
        "seqs8-nochunk512-conc1",
        "seqs8-nochunk512-conc2",
    ]
    assert LARGE.engine_args() == (
        "--max-num-seqs", "8", "--max-num-batched-tokens", "512", "--no-enable-chunked-prefill",
    )  # fmt: skip
    job = spec.job(cells[1])
    assert job["conc"] == 2 and job["runner"] == "cpu" and job["isl"] == 16
    assert job["sim-flags"] == {
        "max-num-seqs": 2,
        "max-num-batched-tokens": 64,
        "enable-chunked-prefill": True,
    }
    # the simulator reads the limits from the job: the CPU entry and the tiny model resolve
    dep = deployment(MeasuredPoint(name=cells[1].name, job=job, measured=Measured(tok_s_gpu=1.0)))
    assert dep.gpu.key == "cpu" and dep.model.key == "tiny-llama"
    assert dep.decode.max_num_seqs == 2 and dep.decode.max_num_batched_tokens == 64
    with pytest.raises(ValueError, match="at least max_num_seqs"):
        BatchLimits(max_num_seqs=16, max_num_batched_tokens=8)
    with pytest.raises(ValueError, match="distinct"):
        GridSpec(model="m", runner="cpu", isl=1, osl=1, concurrencies=(1,), limits=(SMALL, SMALL))


def test_one_server_per_setting_and_points_round_trip(tmp_path: Path) -> None:
    started: list[BatchLimits] = []

    @contextlib.contextmanager
    def serve(limits: BatchLimits) -> Iterator[GridServer]:
        started.append(limits)
        # the larger batch limit streams four times as fast: the points must tell them apart,
        # even on a loaded machine whose scheduling adds a few ms to every chunk
        itl = 0.006 if limits == SMALL else 0.0015
        with serve_in_thread(ServerConfig(ttft_s=0.005, itl_s=itl)) as srv:
            yield GridServer(Endpoint(base_url=f"http://127.0.0.1:{srv.port}", model="m"))

    spec = _spec().model_copy(update={"repeats": 2})
    seen: list[str] = []
    points = measure_grid(spec, serve, on_point=lambda p: seen.append(p.name))
    assert started == [SMALL, LARGE]
    assert seen == [c.name for c in spec.cells()] == [p.name for p in points]
    by = {p.name: p for p in points}
    slow, fast = by["seqs2-chunk64-conc1"], by["seqs8-nochunk512-conc1"]
    assert slow.completed == 10 and by["seqs2-chunk64-conc2"].completed == 20  # 10 x conc
    # two runs of each cell, the fastest kept; no meter, no CPU share
    assert len(slow.repeat_tok_s) == 2 and slow.total_tok_s == max(slow.repeat_tok_s)
    assert slow.cpu_share is None
    assert slow.point.measured.interactivity is not None
    assert fast.point.measured.interactivity is not None
    assert 50 < slow.point.measured.interactivity < 170  # 1000 / (6 ms + scheduling)
    assert fast.point.measured.interactivity > 1.3 * slow.point.measured.interactivity
    assert slow.point.measured.tok_s_gpu == pytest.approx(slow.total_tok_s)
    assert fast.engine_args == LARGE.engine_args()
    assert fast.point.job["sim-flags"]["enable-chunked-prefill"] is False

    path = tmp_path / "grid.json"
    write_grid(path, GridMeasurement(spec=spec, points=tuple(points), notes={"load": 1.0}))
    back = read_grid(path)
    assert back.points == tuple(points) and back.spec == spec
    assert [p.name for p in back.measured_points()] == seen
    # the points alone: a points file `sim calibrate` reads as it is
    write_points(tmp_path / "points.json", back)
    assert load_points(tmp_path / "points.json") == back.measured_points()
    fit, held = split(back.points, lambda cell: cell.concurrency == 2)
    assert [p.cell.concurrency for p in fit] == [1, 1]
    assert [p.cell.concurrency for p in held] == [2, 2]

    # only some cells: only their settings' servers start
    started.clear()
    some = measure_grid(spec, serve, cells=[spec.cells()[3]])
    assert started == [LARGE] and [p.name for p in some] == ["seqs8-nochunk512-conc2"]


def test_broken_grid_files_name_the_key(tmp_path: Path) -> None:
    path = tmp_path / "grid.json"
    path.write_text("{")
    with pytest.raises(InputError, match="not JSON"):
        read_grid(path)
    path.write_text(json.dumps({"version": 99}))
    with pytest.raises(InputError, match="version 99") as old:
        read_grid(path)
    assert old.value.location is not None and old.value.location.key == "version"
    data = GridMeasurement(spec=_spec()).model_dump(mode="json")
    data["spec"]["concurrencies"] = []
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="invalid grid file") as bad:
        read_grid(path)
    assert bad.value.location is not None and bad.value.location.key == "spec.concurrencies"


def test_alone_rescales_by_the_cpu_share_the_server_had() -> None:
    """A meter that says the server used half the wall time: as if alone, the point runs
    twice as fast (tok/s x 2, TPOT and TTFT / 2); the raw figures stay as measured."""
    clock = {"t0": 0.0}

    @contextlib.contextmanager
    def serve(limits: BatchLimits) -> Iterator[GridServer]:
        import time

        clock["t0"] = time.monotonic()
        with serve_in_thread(ServerConfig(ttft_s=0.01, itl_s=0.004)) as srv:
            endpoint = Endpoint(base_url=f"http://127.0.0.1:{srv.port}", model="m")
            yield GridServer(endpoint, lambda: (time.monotonic() - clock["t0"]) / 2)

    spec = _spec().model_copy(update={"alone": True, "concurrencies": (1,), "limits": (SMALL,)})
    (point,) = measure_grid(spec, serve)
    assert point.cpu_share == pytest.approx(0.5, rel=0.02)
    got = point.point.measured
    assert got.tok_s_gpu == pytest.approx(point.total_tok_s / point.cpu_share)
    assert got.interactivity == pytest.approx(1000 / (point.median_tpot_ms * point.cpu_share))
    assert got.ttft_ms == pytest.approx(point.median_ttft_ms * point.cpu_share)
    assert 100 < 1000 / point.median_tpot_ms < 260  # the raw TPOT: ~4 ms

    @contextlib.contextmanager
    def unmetered(limits: BatchLimits) -> Iterator[GridServer]:
        with serve_in_thread(ServerConfig()) as srv:
            yield GridServer(Endpoint(base_url=f"http://127.0.0.1:{srv.port}", model="m"))

    with pytest.raises(RuntimeError, match="needs a server with a CPU meter"):
        measure_grid(spec, unmetered)
