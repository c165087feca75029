"""`inferbench run --repeats N`: each point measured N times, one result file each."""

from __future__ import annotations

from pathlib import Path

from harness.testserver import ServerConfig, serve_in_thread
from inferbench.bench.result import read_point_result
from inferbench.core.status import PointStatus
from inferbench.launch.benchpoint import bench_point_runner
from inferbench.launch.plan import BenchPoint, BenchSpec


def test_point_runner_measures_each_repeat_into_its_own_file(tmp_path: Path) -> None:
    spec = BenchSpec(
        model="org/Tiny-1B",
        isl=64,
        osl=8,
        points=(BenchPoint(concurrency=2, num_prompts=4, num_warmups=0),),
        repeats=3,
    )
    results = tmp_path / "job" / "results"
    results.mkdir(parents=True)
    log = tmp_path / "job" / "logs" / "bench.log"
    with serve_in_thread(ServerConfig()) as server:
        outcome = bench_point_runner()(
            f"http://127.0.0.1:{server.port}",
            spec,
            spec.points[0],
            results / "conc2.json",
            log,
        )
    assert outcome.status is PointStatus.PASSED and outcome.result_file == "results/conc2.json"
    files = sorted(p.name for p in results.glob("conc2*.json"))
    assert files == ["conc2.json", "conc2_r2.json", "conc2_r3.json"]
    for name in files:  # three measurements, not one file copied
        assert read_point_result(results / name).sa.completed == 4
    starts = {read_point_result(results / n).sa.benchmark_start_time_unix for n in files}
    assert len(starts) == 3
    assert "done conc=2 repeat=3 completed=4" in log.read_text()
