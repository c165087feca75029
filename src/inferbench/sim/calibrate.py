"""`inferbench sim calibrate`: fit a few bounded efficiency parameters per (GPU, engine)
from measured points, report fit and leave-one-out error, write a calibration file.

A measured point is a deployment (an InferenceX sweep job, plus `sim-flags` for engine
flags a job does not carry) and what was measured at one concurrency: total tok/s/GPU,
interactivity (tok/s/user = 1000 / TPOT ms) and TTFT. Points come from a points file (the
figures inline, or a result file per point) or from the results store.

The fit: for each (GPU, engine) group, `layer_overhead_s` and `attention_efficiency`
minimise the sum of squared log errors of the group's tok/s/GPU and interactivity (on an
interpolated grid, pulled gently towards the vendor's values so one point cannot push a
parameter to a bound it does not need); `front_latency_s` is one value for every entry,
the smallest gap between a measured and a simulated TTFT (see `_front_latency`). Fallback
entries for (vendor, engine), (GPU, *), (vendor, *), (*, engine) and (*, *) are
point-weighted geometric means of the fitted groups, so a
GPU/engine pair without measurements still gets its family's parameters. Leave-one-out
refits without each point in turn and predicts it from what is left.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from inferbench.errors import InputError, Location
from inferbench.fsread import MAX_CONFIG_BYTES, read_text_file
from inferbench.sim.calibration import FIT_BOUNDS, Calibration, CalibrationEntry, base_efficiency
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.estimate import estimate
from inferbench.sim.inputs import Overrides, from_job_data
from inferbench.sim.summary import point

METRICS = ("tok_s_gpu", "interactivity", "ttft_ms")
# the grid each point is simulated on; fits interpolate it (log-linear), no further runs
GRID: dict[str, tuple[float, ...]] = {
    "layer_overhead_s": (0.0, 20e-6, 40e-6, 80e-6, 160e-6, 320e-6, 640e-6),
    "attention_efficiency": (0.15, 0.3, 0.5, 0.8),
}
FINE = 48  # points per grid axis the interpolated loss is searched on
PRIOR = 0.05  # pull of a group's parameters towards its vendor's, per squared log-ratio
WAVES = 4  # closed-loop waves simulated per point beyond 2,048 requests (10 x conc below)


class Measured(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tok_s_gpu: float = Field(gt=0)
    interactivity: float | None = Field(None, gt=0)
    ttft_ms: float | None = Field(None, gt=0)


class MeasuredPoint(BaseModel):
    """One measured point: what ran (a sweep job) and what was measured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    job: dict[str, Any]
    measured: Measured
    stat: Literal["mean", "median"] = "median"  # which statistic TTFT and TPOT quote


@dataclass(frozen=True)
class Prediction:
    tok_s_gpu: float
    interactivity: float
    ttft_ms: float

    def value(self, metric: str) -> float:
        return float(getattr(self, metric))


@dataclass
class FitReport:
    calibration: Calibration
    predictions: dict[str, Prediction]  # in-sample, with the fitted calibration
    loo: dict[str, Prediction] = field(default_factory=dict)
    uncalibrated: dict[str, Prediction] = field(default_factory=dict)


def deployment(pt: MeasuredPoint, calibration: str | None = "none") -> SimDeployment:
    return from_job_data(pt.job, Overrides(calibration=calibration), path=Path(pt.name))


def simulate(
    pt: MeasuredPoint, params: dict[str, float] | None = None, dep: SimDeployment | None = None
) -> Prediction:
    """Simulate `pt` with `params` replacing the engine defaults.

    Runs 10 x concurrency requests as sa-bench does, or WAVES x concurrency when that is
    fewer and still above 2,048 (the very wide points: steady state, not every wave).
    """
    dep = dep or deployment(pt)
    eff = base_efficiency(dep.engine).model_copy(update=params or {})
    dep = dep.model_copy(update={"efficiency": eff})
    conc = dep.workload.concurrencies[0]
    prompts = min(dep.workload.prompts_for(conc), max(2048, WAVES * conc))
    p = point(estimate(dep, conc, num_prompts=prompts))
    tpot, ttft = p.tpot_p50_ms, p.ttft_p50_ms
    if pt.stat == "mean":
        tpot, ttft = p.tpot_mean_ms, p.ttft_mean_ms
    return Prediction(p.total_tok_s_per_gpu, 1000.0 / max(tpot, 1e-9), ttft)


@dataclass
class Surface:
    """One point's metrics on the GRID (log values), interpolated between grid nodes."""

    logs: dict[str, np.ndarray]  # metric -> array over the grid axes

    def at(self, overhead: np.ndarray, attention: np.ndarray) -> dict[str, np.ndarray]:
        ox = _axis(GRID["layer_overhead_s"], overhead, offset=10e-6)
        ax = _axis(GRID["attention_efficiency"], attention)
        out: dict[str, np.ndarray] = {}
        for metric, table in self.logs.items():
            i0, i1, wi = ox
            j0, j1, wj = ax
            out[metric] = (
                table[i0, j0] * (1 - wi) * (1 - wj)
                + table[i1, j0] * wi * (1 - wj)
                + table[i0, j1] * (1 - wi) * wj
                + table[i1, j1] * wi * wj
            )
        return out


def _axis(nodes: Sequence[float], values: np.ndarray, offset: float = 0.0) -> tuple[Any, Any, Any]:
    """Bracketing node indices and the log-space weight of `values` on `nodes`."""
    grid = np.log(np.asarray(nodes) + offset)
    x = np.log(np.clip(values, nodes[0], nodes[-1]) + offset)
    i1 = np.clip(np.searchsorted(grid, x), 1, len(nodes) - 1)
    i0 = i1 - 1
    w = (x - grid[i0]) / (grid[i1] - grid[i0])
    return i0, i1, w


def surface(
    pt: MeasuredPoint, dep: SimDeployment, progress: Callable[[str], None] | None
) -> Surface:
    shape = (len(GRID["layer_overhead_s"]), len(GRID["attention_efficiency"]))
    logs = {m: np.zeros(shape) for m in METRICS}
    if progress is not None:
        progress(f"simulating {pt.name} on the {shape[0]} x {shape[1]} grid")
    for i, overhead in enumerate(GRID["layer_overhead_s"]):
        for j, attention in enumerate(GRID["attention_efficiency"]):
            pred = simulate(
                pt, {"layer_overhead_s": overhead, "attention_efficiency": attention}, dep
            )
            for m in METRICS:
                logs[m][i, j] = math.log(max(pred.value(m), 1e-9))
    return Surface(logs)


_FINE_O = np.concatenate([[0.0], np.geomspace(2e-6, GRID["layer_overhead_s"][-1], FINE - 1)])
_FINE_A = np.geomspace(GRID["attention_efficiency"][0], GRID["attention_efficiency"][-1], FINE)
_MESH_O, _MESH_A = np.meshgrid(_FINE_O, _FINE_A, indexing="ij")


def _throughput_loss(points: Sequence[MeasuredPoint], surfaces: dict[str, Surface]) -> np.ndarray:
    """Squared log error of tok/s/GPU and interactivity, over the fine mesh."""
    loss = np.zeros_like(_MESH_O)
    for pt in points:
        at = surfaces[pt.name].at(_MESH_O, _MESH_A)
        for metric in ("tok_s_gpu", "interactivity"):
            want = getattr(pt.measured, metric)
            if want is not None:
                loss += (at[metric] - math.log(want)) ** 2
    return loss


def _best(loss: np.ndarray) -> dict[str, float]:
    i, j = np.unravel_index(int(np.argmin(loss)), loss.shape)
    return {"layer_overhead_s": float(_MESH_O[i, j]), "attention_efficiency": float(_MESH_A[i, j])}


def _prior(center: dict[str, float]) -> np.ndarray:
    o = np.log(_MESH_O + 10e-6) - math.log(center["layer_overhead_s"] + 10e-6)
    a = np.log(_MESH_A) - math.log(center["attention_efficiency"])
    return PRIOR * (o * o + a * a)


def _front_latency(
    points: Sequence[MeasuredPoint],
    surfaces: dict[str, Surface],
    params_of: Callable[[MeasuredPoint], dict[str, float]],
) -> float:
    """The fixed latency every request pays outside the GPU (HTTP front end, tokeniser,
    scheduler hand-off): the smallest gap, over all points, between the measured TTFT and
    the one simulated with the point's fitted parameters, within FIT_BOUNDS.

    The smallest, because a latency every request pays cannot be larger than any point's
    gap: a larger gap is queueing the model does not reproduce, and adding it to every
    request would charge it to points that do not queue (a median let one 8k point's
    queue put 0.5 s on a 1k point at concurrency 4). Over all points, because a point
    with a TTFT is rare (six of the ten published ones) and one group's is noise."""
    gaps = []
    for pt in points:
        if pt.measured.ttft_ms is None:
            continue
        params = params_of(pt)
        at = surfaces[pt.name].at(
            np.asarray(params["layer_overhead_s"]), np.asarray(params["attention_efficiency"])
        )
        gaps.append(max(pt.measured.ttft_ms - math.exp(float(at["ttft_ms"])), 0.0) / 1000.0)
    low, high = FIT_BOUNDS["front_latency_s"]
    return min(max(min(gaps), low), high) if gaps else 0.0


GroupCache = dict[tuple[str, ...], dict[str, float]]


def fit(
    points: Sequence[MeasuredPoint],
    surfaces: dict[str, Surface],
    deps: dict[str, SimDeployment],
) -> Calibration:
    """Vendor-level fit, then one entry per (GPU, engine) group pulled towards its vendor's,
    then fallbacks for (vendor, engine), (GPU, *) and (*, engine); (*, *) is all points."""
    vendors: dict[str, list[MeasuredPoint]] = {}
    groups: dict[tuple[str, str], list[MeasuredPoint]] = {}
    for pt in points:
        dep = deps[pt.name]
        vendors.setdefault(dep.gpu.vendor, []).append(pt)
        groups.setdefault((dep.gpu.key, dep.engine), []).append(pt)
    vendor_params: dict[str, dict[str, float]] = {}
    for vendor, members in vendors.items():
        vendor_params[vendor] = _best(_throughput_loss(members, surfaces))
    fitted: dict[tuple[str, str], dict[str, float]] = {}
    for (gpu, engine), members in groups.items():
        center = vendor_params[deps[members[0].name].gpu.vendor]
        fitted[(gpu, engine)] = _best(_throughput_loss(members, surfaces) + _prior(center))
    latency = _front_latency(
        points, surfaces, lambda pt: fitted[(deps[pt.name].gpu.key, deps[pt.name].engine)]
    )
    entries: list[CalibrationEntry] = []
    for vendor, params in vendor_params.items():
        params["front_latency_s"] = latency
        entries.append(
            CalibrationEntry(gpu=vendor, engine="*", params=params, points=len(vendors[vendor]))
        )
    for (gpu, engine), params in fitted.items():
        params["front_latency_s"] = latency
        entries.append(
            CalibrationEntry(
                gpu=gpu, engine=engine, params=params, points=len(groups[(gpu, engine)])
            )
        )
    vendor_of = {deps[pt.name].gpu.key: deps[pt.name].gpu.vendor for pt in points}
    for level in ("vendor-engine", "gpu", "engine"):
        buckets: dict[tuple[str, str], list[tuple[dict[str, float], int]]] = {}
        for (g, e), params in fitted.items():
            key = {"vendor-engine": (vendor_of[g], e), "gpu": (g, "*"), "engine": ("*", e)}[level]
            buckets.setdefault(key, []).append((params, len(groups[(g, e)])))
        for (g, e), items in buckets.items():
            entries.append(
                CalibrationEntry(
                    gpu=g, engine=e, params=_mean(items), points=sum(n for _, n in items)
                )
            )
    every = _best(_throughput_loss(points, surfaces))
    every["front_latency_s"] = latency
    entries.append(CalibrationEntry(params=every, points=len(points)))
    return Calibration(
        description=f"fitted on {len(points)} point(s): {', '.join(pt.name for pt in points)}",
        entries=tuple(entries),
    )


def _mean(items: Sequence[tuple[dict[str, float], int]]) -> dict[str, float]:
    """Point-weighted means: geometric for efficiencies and overheads, plain for latency."""
    weight = sum(n for _, n in items)
    out: dict[str, float] = {}
    for name in items[0][0]:
        if name == "front_latency_s":
            out[name] = sum(n * p[name] for p, n in items) / weight
        else:
            out[name] = math.exp(sum(n * math.log(p[name] + 1e-7) for p, n in items) / weight)
    return out


def predict(pt: MeasuredPoint, cal: Calibration, dep: SimDeployment | None = None) -> Prediction:
    dep = dep or deployment(pt)
    entry = cal.entry_for(dep.gpu, dep.engine)
    return simulate(pt, entry.params if entry else None, dep)


def evaluate(
    points: Sequence[MeasuredPoint],
    *,
    loo: bool = True,
    progress: Callable[[str], None] | None = None,
) -> FitReport:
    """Fit on all points, predict each in-sample, uncalibrated and (`loo`) left out."""
    deps = {pt.name: deployment(pt) for pt in points}
    surfaces = {pt.name: surface(pt, deps[pt.name], progress) for pt in points}
    cal = fit(points, surfaces, deps)
    report = FitReport(
        calibration=cal,
        predictions={pt.name: predict(pt, cal, deps[pt.name]) for pt in points},
    )
    report.uncalibrated = {pt.name: simulate(pt, None, deps[pt.name]) for pt in points}
    if loo and len(points) > 1:
        for pt in points:
            if progress is not None:
                progress(f"leave-one-out: {pt.name}")
            rest = [p for p in points if p.name != pt.name]
            report.loo[pt.name] = predict(pt, fit(rest, surfaces, deps), deps[pt.name])
    errors = {
        m: _mean_abs(
            [report.predictions[p.name].value(m) / v - 1 for p in points
             if (v := getattr(p.measured, m)) is not None]
        )
        for m in METRICS
    }  # fmt: skip
    report.calibration = cal.model_copy(
        update={
            "entries": tuple(
                e.model_copy(update={"fit_error": errors}) if e.gpu == "*" == e.engine else e
                for e in cal.entries
            )
        }
    )
    return report


def _mean_abs(values: list[float]) -> float:
    return sum(abs(v) for v in values) / len(values) if values else 0.0


def dump_calibration(cal: Calibration) -> str:
    """The calibration as YAML (what `--calibration FILE` reads)."""
    import io

    yaml = YAML()
    yaml.default_flow_style = None
    yaml.width = 4096  # one line per mapping: no wrapped lines with trailing blanks
    buf = io.StringIO()
    data = cal.model_dump(mode="json")
    for entry in data["entries"]:
        entry["params"] = {k: float(f"{v:.4g}") for k, v in entry["params"].items()}
        entry["fit_error"] = {k: float(f"{v:.3g}") for k, v in entry["fit_error"].items()}
    yaml.dump(data, buf)
    return buf.getvalue()


# -- reading points ------------------------------------------------------------------------


def load_points(path: Path) -> list[MeasuredPoint]:
    """A points file: `points:` entries of name, job, and `measured:` or `result: FILE`."""
    text = read_text_file(path, MAX_CONFIG_BYTES, what="points file")
    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        raise InputError(f"points file is not valid YAML: {exc}", location=Location(path)) from None
    items = (data or {}).get("points") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise InputError("a points file has a non-empty `points:` list", location=Location(path))
    out: list[MeasuredPoint] = []
    for i, item in enumerate(items):
        where = Location(path, key=f"points.{i}")
        if not isinstance(item, dict):
            raise InputError("a point is a mapping", location=where)
        body = dict(item)
        result = body.pop("result", None)
        if result is not None:
            body["measured"] = _measured_from_result(path.parent / str(result), body, where)
        try:
            out.append(MeasuredPoint.model_validate(body))
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"])
            raise InputError(
                f"invalid point: {err['msg']}", location=Location(path, key=f"points.{i}.{key}")
            ) from None
    names = [p.name for p in out]
    if len(set(names)) != len(names):
        raise InputError("point names must be unique", location=Location(path))
    return out


def _measured_from_result(result: Path, body: dict[str, Any], where: Location) -> dict[str, Any]:
    from inferbench.bench.result import read_point_result

    sa = read_point_result(result).sa
    job = body.get("job")
    if not isinstance(job, dict):
        raise InputError("a point needs a `job:` mapping", location=where)
    gpus = deployment(MeasuredPoint(name=str(body.get("name", "?")), job=job,
                                    measured=Measured(tok_s_gpu=1.0))).total_gpus  # fmt: skip
    stat = body.get("stat", "median")
    tpot = sa.mean_tpot_ms if stat == "mean" else sa.median_tpot_ms
    ttft = sa.mean_ttft_ms if stat == "mean" else sa.median_ttft_ms
    return {
        "tok_s_gpu": sa.total_token_throughput / gpus,
        "interactivity": 1000.0 / tpot if tpot else None,
        "ttft_ms": ttft or None,
    }


def points_from_store(url: str, **filters: Any) -> list[MeasuredPoint]:
    """Measured points from the results store (latest record per point)."""
    from inferbench.results.store import RecordFilter, open_store

    with open_store(url) as store:
        stored = store.latest_per_point(RecordFilter(**filters))
    out: list[MeasuredPoint] = []
    for item in stored:
        rec = item.record
        ident = rec.identity
        job: dict[str, Any] = {
            "model": ident.model,
            "precision": ident.precision,
            "runner": ident.runner or ident.hardware_decode,
            "framework": ident.framework,
            "conc": ident.concurrency,
            "isl": ident.isl,
            "osl": ident.osl,
            "spec-decoding": ident.spec_decoding,
        }
        pools = {p.role: p for p in ident.pools}
        if ident.disagg and "prefill" in pools and "decode" in pools:
            for role in ("prefill", "decode"):
                p = pools[role]
                job[role] = {"num-worker": p.workers, "tp": p.tp, "ep": p.ep,
                             "dp-attn": p.dp_attn, "pp": p.pp}  # fmt: skip
        else:
            p = ident.pools[0]
            job.update({"tp": p.tp, "ep": p.ep, "dp-attn": p.dp_attn, "pp": p.pp})
        inter = rec.derived.interactivity
        out.append(
            MeasuredPoint(
                name=f"{rec.series_label()} conc {ident.concurrency} #{item.id}",
                job=job,
                measured=Measured(
                    tok_s_gpu=rec.derived.total_tput_per_gpu,
                    interactivity=inter.median if inter and inter.median else None,
                    ttft_ms=rec.metrics.ttft_ms.median or None,
                ),
            )
        )
    if not out:
        raise InputError("the results store holds no points that match", hint="widen the filters")
    return out
