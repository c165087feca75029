"""Calibrate the simulator on the ten published InferenceX points and report leave-one-out
and leave-one-group-out.

Reads the deployments from benchmarks/data/published_points.yaml and the measured figures
from the published-points table (a Markdown file of InferenceX's published figures, not
shipped with inferbench: pass it as --published FILE or in $INFERBENCH_PUBLISHED_POINTS;
matched by point name), fits the default calibration, predicts each point in-sample,
leave-one-out (fitted without it) and leave-one-group-out (fitted without every point of
its GPU, then without every point of its engine), and prints predicted/measured ratios.
Targets: LOO tok/s/GPU and interactivity within +/-25% on at least 8 of 10, TTFT within 2x
on at least 7 (issue 13); leave-one-group-out tok/s/GPU and interactivity within +/-25% on
at least 8 of 10 (issue 28).

    .venv/bin/python benchmarks/sim_calibration.py --published published-points.md \
        [--write src/inferbench/sim/calibration_default.yaml]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

from ruamel.yaml import YAML

from inferbench.core.fsio import atomic_write_bytes
from inferbench.sim.calibrate import METRICS, Measured, MeasuredPoint, dump_calibration, evaluate
from inferbench.sim.holdout import HoldoutReport, holdout, prepare

HERE = Path(__file__).parent
POINTS = HERE / "data" / "published_points.yaml"
PUBLISHED_ENV = "INFERBENCH_PUBLISHED_POINTS"
DESCRIPTION = (
    "default calibration, fitted on the ten published InferenceX points C1-C10 "
    "(their published-points table) by benchmarks/sim_calibration.py"
)
_NUMBER = re.compile(r"[\d,]+(?:\.\d+)?")


def _number(text: str) -> float | None:
    match = _NUMBER.search(text.replace("≈", ""))
    return float(match.group().replace(",", "")) if match else None


def published(path: Path) -> dict[str, Measured]:
    """Point name -> measured figures, from the markdown table."""
    out: dict[str, Measured] = {}
    for line in path.read_text("utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 11 or not re.fullmatch(r"C\d+", cells[0]):
            continue
        tput = _number(cells[8])
        tpot = re.search(r"\(([\d.]+)", cells[9])
        ttft = _number(cells[10]) if cells[10] not in ("–", "-", "") else None
        assert tput is not None
        out[cells[0]] = Measured(
            tok_s_gpu=tput,
            interactivity=1000.0 / float(tpot.group(1)) if tpot else _number(cells[9]),
            ttft_ms=ttft,
        )
    return out


def published_file(given: Path | None) -> Path | None:
    """The published-points table: `given`, else $INFERBENCH_PUBLISHED_POINTS; None (after
    saying how to give it) when neither names a file."""
    path = given or (Path(os.environ[PUBLISHED_ENV]) if os.environ.get(PUBLISHED_ENV) else None)
    if path is not None and path.is_file():
        return path
    what = f"{path} is not a file" if path is not None else "no published-points table given"
    print(
        f"{what}: this benchmark needs InferenceX's published figures (a Markdown table, not "
        f"shipped with inferbench); pass --published FILE or set {PUBLISHED_ENV}",
        file=sys.stderr,
    )
    return None


def load(points_file: Path, measured_file: Path) -> list[MeasuredPoint]:
    data = YAML(typ="safe").load(points_file.read_text("utf-8"))
    figures = published(measured_file)
    return [
        MeasuredPoint(name=p["name"], job=p["job"], stat=p["stat"], measured=figures[p["name"]])
        for p in data["points"]
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=Path, default=POINTS)
    parser.add_argument(
        "--published", type=Path, help=f"the published-points table (or ${PUBLISHED_ENV})"
    )
    parser.add_argument("--write", type=Path, help="write the fitted calibration here")
    args = parser.parse_args()
    measured = published_file(args.published)
    if measured is None:
        return 2
    points = load(args.points, measured)
    started = time.perf_counter()
    say = lambda msg: print(f"  {msg}", file=sys.stderr)  # noqa: E731
    prep = prepare(points, say)
    report = evaluate(points, progress=say, deps=prep.deps, surfaces=prep.surfaces)
    groups = {by: holdout(points, by, prepared=prep, progress=say) for by in ("gpu", "engine")}
    wall = time.perf_counter() - started
    print(
        f"{'pt':4} {'metric':14} {'measured':>10} {'uncal.':>7} {'fit':>7} {'LOO':>7} "
        f"{'LOGO gpu':>9} {'LOGO eng':>9}"
    )
    hits = {m: 0 for m in METRICS}
    totals = {m: 0 for m in METRICS}
    for pt in points:
        for metric in METRICS:
            want = getattr(pt.measured, metric)
            if want is None:
                continue
            ratios = [
                d[pt.name].value(metric) / want
                for d in (report.uncalibrated, report.predictions, report.loo)
            ]
            ok = (
                ratios[2] <= 2 and ratios[2] >= 0.5
                if metric == "ttft_ms"
                else (abs(ratios[2] - 1) <= 0.25)
            )
            hits[metric] += ok
            totals[metric] += 1
            held = "".join(f" {_group_ratio(groups[by], pt.name, metric):>9}" for by in groups)
            print(
                f"{pt.name:4} {metric:14} {want:10.1f} {ratios[0]:7.2f} {ratios[1]:7.2f} "
                f"{ratios[2]:7.2f}{held}{'' if ok else '  miss (LOO)'}"
            )
    print(
        f"LOO within target: tok/s/GPU {hits['tok_s_gpu']}/{totals['tok_s_gpu']} (+/-25%), "
        f"interactivity {hits['interactivity']}/{totals['interactivity']} (+/-25%), "
        f"TTFT {hits['ttft_ms']}/{totals['ttft_ms']} (2x; points with a published TTFT)"
    )
    for by, held in groups.items():
        tput, inter = held.within("tok_s_gpu"), held.within("interactivity")
        print(
            f"leave-one-{by}-out within +/-25%: tok/s/GPU {tput[0]}/{tput[1]}, "
            f"interactivity {inter[0]}/{inter[1]}; mean abs. error "
            f"{held.mean_abs('tok_s_gpu'):.0%} and {held.mean_abs('interactivity'):.0%}"
        )
    print(f"fit + leave-one-out + leave-one-group-out wall: {wall:.0f} s")
    if args.write:
        cal = report.calibration.model_copy(update={"description": DESCRIPTION})
        atomic_write_bytes(args.write, dump_calibration(cal).encode())
        print(f"wrote {args.write}")
    return 0


def _group_ratio(report: HoldoutReport, name: str, metric: str) -> str:
    """predicted / measured of `name` held out with its group; blank for TTFT."""
    if metric == "ttft_ms":
        return ""
    err = next(e for e in report.errors if e.name == name).error(metric)
    return "" if err is None else f"{1 + err:.2f}"


if __name__ == "__main__":
    sys.exit(main())
