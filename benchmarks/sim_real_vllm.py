"""Does the calibrated simulator predict a real engine? vLLM's CPU build, the tiny model.

Measures the batch-limit grid of tests/real_engines/vllm_cpu.py (max-num-seqs 4/16 x
chunked-prefill budget 64/512 tokens x concurrency 1/2/4/8/16, isl 256, osl 32, sa-bench
load) with inferbench's bench against one `vllm serve` per setting (server pinned to core
0, client to core 1), each cell `--repeats` times round-robin, keeping its fastest run
(benchmarks/harness/engine_grid.py), as if the server had its core alone: each run's
figures rescaled by the CPU share its processes had (their CPU seconds over the run's wall
seconds), since the simulator models the core, not the other sessions on it. Then, on the
`cpu` hardware entry (this machine's core as tools/cpu_roofline.py measured it) and the
tiny model's catalog entry:

- concurrency split: `sim calibrate`'s fit on concurrencies 1, 4 and 16 of every setting,
  prediction of 2 and 8 (target: tok/s/GPU and interactivity within 15%);
- leave-one-setting-out: each batch-limit setting predicted by a fit on the other three;
- uncalibrated: the engine defaults, no fit, for scale.

    .venv/bin/python benchmarks/sim_real_vllm.py [--repeats 3] [--save-grid grid.json]
    .venv/bin/python benchmarks/sim_real_vllm.py --grid grid.json   # re-analyse, no vLLM
    ... --grid grid.json --save-points points.json; inferbench sim calibrate points.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "real_engines"))

from vllm_cpu import grid_servers, tiny_grid, tiny_model, vllm_bin

from harness.engine_grid import (
    GridMeasurement,
    GridPoint,
    held_out_errors,
    leave_one_setting_out,
    measure_grid,
    read_grid,
    write_grid,
    write_points,
)
from inferbench.sim.calibrate import Measured, simulate
from inferbench.sim.holdout import HeldOutError, prepare

TARGET = 0.15
HELD_CONCURRENCIES = (2, 8)


def measure(repeats: int) -> GridMeasurement:
    bin_dir = vllm_bin()
    model = tiny_model(bin_dir)
    spec = tiny_grid(model, repeats=repeats, alone=True)
    logs = Path(tempfile.mkdtemp(prefix="sim-real-vllm-"))
    started = time.monotonic()

    def show(p: GridPoint) -> None:
        runs = ", ".join(f"{x:.0f}" for x in p.repeat_tok_s)
        alone = p.point.measured
        print(
            f"  {time.monotonic() - started:6.1f} s  {p.name:<24} raw: {p.total_tok_s:6.0f} "
            f"tok/s TPOT {p.median_tpot_ms:5.2f} ms (runs {runs}); CPU share "
            f"{p.cpu_share or 0:.2f}; alone: {alone.tok_s_gpu:6.0f} tok/s, "
            f"{alone.interactivity or 0:5.1f} tok/s/user",
            flush=True,
        )

    max_len = spec.isl + spec.osl + 64
    points = measure_grid(spec, grid_servers(bin_dir, model, logs, max_model_len=max_len),
                          on_point=show)  # fmt: skip
    notes = {
        "wall_s": round(time.monotonic() - started, 1),
        "cpus": os.cpu_count(),
        "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        "server_logs": str(logs),
    }
    return GridMeasurement(spec=spec, points=tuple(points), notes=notes)


def _fmt(value: float | None) -> str:
    return "   -   " if value is None else f"{value:+7.1%}"


def table(title: str, errors: list[HeldOutError], grid: GridMeasurement) -> dict[str, object]:
    by = grid.by_name()
    print(f"\n{title}")
    print(f"{'point':<24} {'held in':<16} {'tok/s meas':>10} {'pred':>8} {'err':>7}   "
          f"{'int meas':>8} {'pred':>7} {'err':>7}")  # fmt: skip
    for e in errors:
        m = by[e.name].point.measured
        print(f"{e.name:<24} {e.group:<16} {m.tok_s_gpu:>10.0f} {e.predicted.tok_s_gpu:>8.0f} "
              f"{_fmt(e.tok_s_gpu)}   {m.interactivity or 0:>8.1f} "
              f"{e.predicted.interactivity:>7.1f} {_fmt(e.interactivity)}")  # fmt: skip
    summary: dict[str, object] = {"points": len(errors)}
    for metric in ("tok_s_gpu", "interactivity"):
        errs = [abs(v) for e in errors if (v := e.error(metric)) is not None]
        inside = sum(v <= TARGET for v in errs)
        summary[metric] = {
            "within_15pct": inside,
            "of": len(errs),
            "mean_abs": statistics.fmean(errs),
            "median_abs": statistics.median(errs),
            "max_abs": max(errs),
        }
        print(f"  {metric:<14} within 15%: {inside}/{len(errs)}   mean |err| "
              f"{statistics.fmean(errs):.1%}  median {statistics.median(errs):.1%}  "
              f"max {max(errs):.1%}")  # fmt: skip
    return summary


def uncalibrated(grid: GridMeasurement) -> list[HeldOutError]:
    out = []
    for gp in grid.points:
        got = simulate(gp.point)  # engine defaults, no calibration
        inter = gp.point.measured.interactivity
        out.append(
            HeldOutError(
                name=gp.name, gpu="cpu", engine="vllm", group="no fit", predicted=got,
                tok_s_gpu=got.tok_s_gpu / gp.point.measured.tok_s_gpu - 1,
                interactivity=got.interactivity / inter - 1 if inter else None,
            )
        )  # fmt: skip
    return out


def raw(grid: GridMeasurement) -> GridMeasurement:
    """The grid with its points' figures as measured, without the CPU-share rescaling."""
    points = []
    for gp in grid.points:
        measured = Measured(
            tok_s_gpu=gp.total_tok_s,
            interactivity=1000.0 / gp.median_tpot_ms if gp.median_tpot_ms else None,
            ttft_ms=gp.median_ttft_ms or None,
        )
        point = gp.point.model_copy(update={"measured": measured})
        points.append(gp.model_copy(update={"point": point}))
    return grid.model_copy(update={"points": tuple(points)})


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--grid", type=Path, help="analyse this grid file; measure nothing")
    parser.add_argument("--save-grid", type=Path, help="write the measured grid here")
    parser.add_argument(
        "--save-points", type=Path, help="write the points file `sim calibrate FILE` reads"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()

    if args.grid:
        grid = read_grid(args.grid)
    else:
        print("measuring the grid (one vllm serve per setting) ...", flush=True)
        grid = measure(args.repeats)
        if args.save_grid:
            write_grid(args.save_grid, grid)
    if args.save_points:
        write_points(args.save_points, grid)
    print(f"grid: {len(grid.points)} points, repeats {grid.spec.repeats}, notes {grid.notes}")
    started = time.monotonic()
    prep = prepare(grid.measured_points())
    conc_split = held_out_errors(
        grid.points,
        lambda cell: cell.concurrency in HELD_CONCURRENCIES,
        label="conc 1/4/16",
        prepared=prep,
    )
    summary = {
        "concurrency_split": table(
            "fit on concurrencies 1, 4, 16 of every setting; predict 2 and 8", conc_split, grid
        ),
        "leave_one_setting_out": table(
            "leave-one-setting-out (fit on the other three settings)",
            list(leave_one_setting_out(grid.points, prepared=prep).errors),
            grid,
        ),
        "uncalibrated": table("uncalibrated (engine defaults)", uncalibrated(grid), grid),
    }
    if grid.spec.alone:
        as_measured = raw(grid)
        summary["concurrency_split_raw"] = table(
            "the concurrency split on the raw figures (no CPU-share rescaling)",
            held_out_errors(
                as_measured.points,
                lambda cell: cell.concurrency in HELD_CONCURRENCIES,
                label="conc 1/4/16",
                prepared=prepare(as_measured.measured_points()),
            ),
            as_measured,
        )
        shares = [p.cpu_share for p in grid.points if p.cpu_share is not None]
        print(f"\nCPU share of the server's core: min {min(shares):.2f}, "
              f"median {statistics.median(shares):.2f}, max {max(shares):.2f}")  # fmt: skip
        summary["cpu_share"] = {"min": min(shares), "median": statistics.median(shares),
                                "max": max(shares)}  # fmt: skip
    print(f"\nanalysis: {time.monotonic() - started:.1f} s")
    if args.json:
        payload = {"grid": grid.model_dump(mode="json"), "summary": summary}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
