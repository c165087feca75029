"""Grouped cross-validation of the simulator on aiconfigurator's silicon sample, side by side
with aiconfigurator's own predictions of the same rows.

The silicon sample (`aiconfigurator_core/systems/silicon_sample.csv` of aiconfigurator-core,
Apache-2.0: measured TTFT and TPOT of H100-GB300 deployments on TRT-LLM, SGLang and vLLM) is
read from the user's install of that package: a fit-time source, never shipped with or
needed by inferbench. Install it in an environment of its own:

    python3 -m venv ~/.cache/inferbench/aic
    ~/.cache/inferbench/aic/bin/pip install aiconfigurator-core aiconfigurator
    .venv/bin/python benchmarks/sim_silicon_cv.py --aic-env ~/.cache/inferbench/aic

Rows are mapped by `inferbench.sim.silicon` (rows it cannot express are counted and named
with the reason). A stratified sample keeps the run short: deployments (config, lengths)
drawn round-robin over the (GPU, backend, mode) strata with `--seed`, and from each curve
`--per-curve` concurrencies spread from its lowest to its highest (at most `--max-conc`).
Each fold fits `sim calibrate`'s hierarchical fit (`calibrate.fit`) on the rows outside the
held-out group, whole curves per deployment, and predicts the held-out rows: leave one
model out (the issue's target), one GPU out, one engine out, and disaggregated rows from a
fit on aggregated rows only. The fit's grid is coarsened (`--grid coarse`: 6 x 2 nodes
instead of 11 x 4) so each row costs 12 simulations, not 44. aiconfigurator predicts
every sampled row with `cli_estimate` at the row's backend and version (its own
environment, benchmarks/aic_silicon_predict.py), in the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from inferbench.sim import calibrate
from inferbench.sim.calibrate import MeasuredPoint, Prediction, Surface, deployment
from inferbench.sim.calibration import Calibration
from inferbench.sim.silicon import (
    Refused,
    SiliconPoint,
    concurrency,
    deployment_key,
    express,
    read_rows,
    to_job,
)

HERE = Path(__file__).parent
CSV_IN_PACKAGE = "aiconfigurator_core/systems/silicon_sample.csv"
COARSE = {
    "layer_overhead_s": (0.0, 40e-6, 160e-6, 640e-6, 2560e-6, 10240e-6),
    "attention_efficiency": (0.3, 0.8),
}
TARGETS = "LOMO: TPOT within +/-25% on >= 85%, median |TPOT error| <= 10%, TTFT within 2x >= 85%"


@dataclass(frozen=True)
class Outcome:
    """One row's prediction by one source: TPOT and TTFT over measured (None: not run)."""

    tpot: float | None
    ttft: float | None


def find_csv(given: Path | None, env: Path) -> Path:
    if given is not None:
        return given
    hits = sorted(env.glob(f"lib/python*/site-packages/{CSV_IN_PACKAGE}"))
    if not hits:
        sys.exit(f"no {CSV_IN_PACKAGE} under {env}: install aiconfigurator-core there or --csv")
    return hits[0]


def sample(
    rows: list[dict[str, str]], deployments: int, per_curve: int, max_conc: int, seed: int
) -> list[dict[str, str]]:
    """`deployments` curves round-robin over (GPU, backend, mode) strata, `per_curve` rows
    of each spread over its concurrencies."""
    curves: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        if (concurrency(row) or 0) <= max_conc:
            curves.setdefault(deployment_key(row), []).append(row)
    strata: dict[tuple[str, str, str], list[str]] = {}
    for key, members in sorted(curves.items()):
        head = members[0]
        strata.setdefault((head["system"], head["backend"], head["mode"]), []).append(key)
    rng = random.Random(seed)
    for keys in strata.values():
        rng.shuffle(keys)
    picked: list[str] = []
    while len(picked) < deployments and any(strata.values()):
        for stratum in sorted(strata):
            if strata[stratum] and len(picked) < deployments:
                picked.append(strata[stratum].pop())
    out: list[dict[str, str]] = []
    for key in picked:
        curve = sorted(curves[key], key=lambda r: concurrency(r) or 0)
        step = (len(curve) - 1) / max(per_curve - 1, 1)
        idx = sorted({round(i * step) for i in range(min(per_curve, len(curve)))})
        out += [curve[i] for i in idx]
    return out


def _surface(pt: MeasuredPoint) -> Surface:
    return calibrate.surface(pt, deployment(pt), None)


def _simulate(task: tuple[MeasuredPoint, dict[str, float] | None]) -> Prediction:
    return calibrate.simulate(task[0], task[1])


def outcome(sp: SiliconPoint, pred: Prediction) -> Outcome:
    m = sp.point.measured
    assert m.interactivity is not None and m.ttft_ms is not None
    return Outcome(m.interactivity / pred.interactivity, pred.ttft_ms / m.ttft_ms)


def cross_validate(
    points: list[SiliconPoint],
    surfaces: dict[str, Surface],
    group: Callable[[SiliconPoint], str | None],
    pool: ProcessPoolExecutor,
) -> dict[str, Outcome]:
    """Each group (`group` -> label; None: always trained on) predicted from a fit on the
    rest."""
    deps = {sp.id: deployment(sp.point) for sp in points}
    labels = {sp.id: group(sp) for sp in points}
    tasks: list[tuple[SiliconPoint, dict[str, float] | None]] = []
    for label in sorted({v for v in labels.values() if v is not None}):
        rest = [sp.point for sp in points if labels[sp.id] != label]
        cal = calibrate.fit(rest, surfaces, deps) if rest else Calibration()
        for sp in points:
            if labels[sp.id] == label:
                entry = cal.entry_for(deps[sp.id].gpu, deps[sp.id].engine)
                tasks.append((sp, entry.params if entry else None))
    preds = pool.map(_simulate, [(sp.point, params) for sp, params in tasks])
    return {sp.id: outcome(sp, pred) for (sp, _), pred in zip(tasks, preds, strict=True)}


def start_aic(env: Path, csv_path: Path, ids: Sequence[str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        ["nice", str(env / "bin" / "python"), str(HERE / "aic_silicon_predict.py"), str(csv_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # its data-fallback notices; refusals come per row
        text=True,
    )
    assert proc.stdin is not None
    proc.stdin.write("".join(f"{i}\n" for i in ids))
    proc.stdin.close()
    return proc


def read_aic(proc: subprocess.Popen[str], rows: dict[str, dict[str, str]]) -> dict[str, Outcome]:
    assert proc.stdout is not None
    out: dict[str, Outcome] = {}
    versions = {"row": 0, "default": 0}
    for line in proc.stdout:
        got = json.loads(line)
        row = rows[got["id"]]
        if "error" in got:
            print(f"  aic refused {got['id']}: {got['error']}", file=sys.stderr)
            continue
        versions["default" if got.get("version") == "default" else "row"] += 1
        out[got["id"]] = Outcome(
            got["tpot_ms"] / float(row["silicon_tpot_ms"]),
            got["ttft_ms"] / float(row["silicon_ttft_ms"]),
        )
    proc.wait()
    print(
        f"aic ran {len(out)} rows: {versions['row']} at the row's backend version, "
        f"{versions['default']} at its default for the system (no tables for the row's)"
    )
    return out


def _cells(results: list[Outcome]) -> str:
    """n | TPOT within 25% | median |TPOT err| | TTFT within 2x."""
    ok = [r for r in results if r.tpot is not None and r.ttft is not None]
    if not ok:
        return "0 | - | - | -"
    tpot = [abs(float(r.tpot) - 1) for r in ok]
    ttft = [0.5 <= float(r.ttft) <= 2 for r in ok]
    return (
        f"{len(ok)} | {sum(e <= 0.25 for e in tpot) / len(ok):.0%} | "
        f"{statistics.median(tpot):.0%} | {sum(ttft) / len(ok):.0%}"
    )


def table(
    title: str,
    sampled: list[SiliconPoint | Refused],
    ours: dict[str, Outcome],
    aic: dict[str, Outcome],
) -> None:
    print(f"\n{title}\n")
    print(
        "| GPU | engine | mode | not expressible | ours: rows | TPOT +/-25% | median abs. "
        "TPOT err | TTFT 2x | aic: rows | TPOT +/-25% | median abs. TPOT err | TTFT 2x |"
    )
    print("|" + "---|" * 12)
    keys = sorted({(r.gpu, r.engine, r.mode) for r in sampled})
    for key in [*keys, ("all", "", "")]:
        members = [r for r in sampled if key[0] == "all" or (r.gpu, r.engine, r.mode) == key]
        ids = [r.id for r in members]
        refused = sum(isinstance(r, Refused) for r in members)
        mine = [ours[i] for i in ids if i in ours]
        theirs = [aic[i] for i in ids if i in aic]
        print(f"| {' | '.join(key)} | {refused} | {_cells(mine)} | {_cells(theirs)} |")
    both = [i for i in ours if i in aic]
    print(
        f"\nrows both predicted: {len(both)}; ours {_cells([ours[i] for i in both])}; "
        f"aic {_cells([aic[i] for i in both])} (rows | TPOT +/-25% | median | TTFT 2x)"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--aic-env", type=Path, default=Path.home() / ".cache/inferbench/aic")
    parser.add_argument("--csv", type=Path, help="silicon_sample.csv (default: in --aic-env)")
    parser.add_argument("--deployments", type=int, default=10)
    parser.add_argument("--per-curve", type=int, default=3)
    parser.add_argument("--max-conc", type=int, default=256)
    parser.add_argument("--seed", type=int, default=20261207)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--grid", choices=("coarse", "full"), default="coarse")
    parser.add_argument("--no-aic", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.grid == "coarse":
        calibrate.GRID.update(COARSE)
    csv_path = find_csv(args.csv, args.aic_env)
    rows = read_rows(csv_path)
    structural: dict[str, int] = {}
    for row in rows:
        reason = to_job(row)
        if isinstance(reason, str):
            structural[reason] = structural.get(reason, 0) + 1
    print(f"{csv_path.name}: {len(rows)} rows; not expressible by layout alone:")
    for reason, n in sorted(structural.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5}  {reason}")
    chosen = sample(rows, args.deployments, args.per_curve, args.max_conc, args.seed)
    by_id = {r["id"]: r for r in chosen}
    aic_proc = None if args.no_aic else start_aic(args.aic_env, csv_path, list(by_id))
    sampled = [express(r) for r in chosen]
    points = [s for s in sampled if isinstance(s, SiliconPoint)]
    print(
        f"sample (seed {args.seed}): {len(chosen)} rows of {args.deployments} deployments, "
        f"{len(points)} simulated; not expressible:"
    )
    for r in sampled:
        if isinstance(r, Refused):
            print(f"  {r.id}: {r.reason}")
    with ProcessPoolExecutor(args.jobs) as pool:
        t0 = time.perf_counter()
        ids = [sp.id for sp in points]
        surfaces = dict(zip(ids, pool.map(_surface, [sp.point for sp in points]), strict=True))
        print(f"surfaces: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        folds: dict[str, Callable[[SiliconPoint], str | None]] = {
            "leave-one-model-out": lambda sp: sp.model,
            "leave-one-GPU-out": lambda sp: sp.gpu,
            "leave-one-engine-out": lambda sp: sp.engine,
            "disaggregated from aggregated-only fits": lambda sp: (
                "disagg" if sp.mode == "disagg" else None
            ),
        }
        results = {}
        for name, group in folds.items():
            t0 = time.perf_counter()
            results[name] = cross_validate(points, surfaces, group, pool)
            print(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    aic = read_aic(aic_proc, by_id) if aic_proc is not None else {}
    for name, ours in results.items():
        shown = [r for r in sampled if r.mode == "disagg"] if "disagg" in name else sampled
        table(name, shown, ours, aic)
    lomo = list(results["leave-one-model-out"].values())
    tpot = [abs(float(o.tpot) - 1) for o in lomo if o.tpot is not None]
    if tpot:
        print(
            f"\nLOMO vs targets ({TARGETS}): TPOT {sum(e <= 0.25 for e in tpot) / len(tpot):.0%}, "
            f"median {statistics.median(tpot):.0%}, TTFT "
            f"{sum(0.5 <= float(o.ttft or math.inf) <= 2 for o in lomo) / len(lomo):.0%}"
        )
    print(f"wall: {time.perf_counter() - started:.0f} s (jobs {args.jobs}, grid {args.grid})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
