"""`inferbench sim calibrate`: fit a few bounded efficiency parameters from measured points,
report fit and leave-one-out error, write a calibration file.

A measured point is a deployment (an InferenceX sweep job, plus `sim-flags` for engine
flags a job does not carry) and what was measured at one concurrency: total tok/s/GPU,
interactivity (tok/s/user = 1000 / TPOT ms) and TTFT. Points come from a points file (the
figures inline, or a result file per point) or, read by the CLI, from the results store:
this module takes them as values and never opens the store.

The fit shares parameters where the physics is shared, as a hierarchy vendor -> engine ->
GPU with priors from vendor figures and papers (calibration_priors.yaml, each cited): a
per-layer and a per-sequence step overhead per vendor, scaled per (vendor, engine), the
per-layer one and the attention efficiency scaled per GPU, and a per-prefill-chunk
overhead as a factor per vendor on the per-sequence one. It minimises the
squared log error of each point's tok/s/GPU and interactivity plus each parameter's distance
from its prior (on an interpolated grid of simulations, no further runs); `front_latency_s` is one
value for every entry, the smallest gap between a measured and a simulated TTFT (see
`_front_latency`). Entries are written for every cell the lookup may reach, so a
GPU/engine pair without measurements gets its GPU's and its engine's parameters (or their
priors), never another GPU's point. Leave-one-out refits without each point in turn and
predicts it from what is left; `sim.holdout` holds out whole GPUs or engines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_CONFIG_BYTES, read_text_file
from inferbench.core.model import FrozenModel
from inferbench.sim.calibration import FIT_BOUNDS, Calibration, CalibrationEntry, base_efficiency
from inferbench.sim.deployment import SimDeployment
from inferbench.sim.estimate import estimate
from inferbench.sim.inputs import Overrides, from_job_data
from inferbench.sim.priors import ANY, Priors, load_priors
from inferbench.sim.summary import point

METRICS = ("tok_s_gpu", "interactivity", "ttft_ms")
# the grid each point is simulated on; fits interpolate it (log-linear), no further runs
GRID: dict[str, tuple[float, ...]] = {
    "layer_overhead_s": (
        0.0,
        20e-6,
        40e-6,
        80e-6,
        160e-6,
        320e-6,
        640e-6,
        1280e-6,
        2560e-6,
        5120e-6,
        10240e-6,
    ),  # fmt: skip
    "attention_efficiency": (0.15, 0.3, 0.5, 0.8),
}
WAVES = 4  # closed-loop waves simulated per point beyond 2,048 requests (10 x conc below)


class Measured(FrozenModel):
    tok_s_gpu: float = Field(gt=0)
    interactivity: float | None = Field(None, gt=0)
    ttft_ms: float | None = Field(None, gt=0)


class MeasuredPoint(FrozenModel):
    """One measured point: what ran (a sweep job) and what was measured."""

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
    return _simulate_run(pt, params, dep)[0]


def _simulate_run(
    pt: MeasuredPoint, params: dict[str, float] | None, dep: SimDeployment | None
) -> tuple[Prediction, tuple[float, float]]:
    """`simulate`, and what a rank's step held on average: (prediction, (sequences
    scheduled, of them prefill chunks))."""
    dep = dep or deployment(pt)
    eff = base_efficiency(dep.engine).model_copy(update=params or {})
    dep = dep.model_copy(update={"efficiency": eff})
    conc = dep.workload.concurrencies[0]
    prompts = min(dep.workload.prompts_for(conc), max(2048, WAVES * conc))
    run = estimate(dep, conc, num_prompts=prompts)
    p = point(run)
    tpot, ttft = p.tpot_p50_ms, p.ttft_p50_ms
    if pt.stat == "mean":
        tpot, ttft = p.tpot_mean_ms, p.ttft_mean_ms
    rank_steps = max(run.steps * dep.decode.dp, 1)
    per_step = (run.scheduled_seqs / rank_steps, run.prefill_chunks / rank_steps)
    return Prediction(p.total_tok_s_per_gpu, 1000.0 / max(tpot, 1e-9), ttft), per_step


@dataclass
class Surface:
    """One point's metrics on the GRID (log values), interpolated between grid nodes.

    The grid's overhead axis is the fixed per-layer overhead; a per-sequence overhead is
    mapped onto it at the sequences a rank's step of the point holds on average (`seqs`, as
    simulated: a token budget can hold the batch below the concurrency; `layers` layers):
    both are time added to every step, and a step of `seqs` sequences pays `seq_overhead x
    seqs` = `layers x` that much per layer. A per-chunk overhead is mapped the same way at
    `chunks`, the prefill chunks a step holds on average. So is the per-expert overhead:
    each layer pays it for the `experts` its busiest rank runs at the steady batch.
    Predictions (`predict`) simulate the parameters themselves."""

    logs: dict[str, np.ndarray]  # metric -> array over the grid axes
    seqs: float = 1.0
    layers: int = 1
    experts: float = 0.0
    chunks: float = 0.0

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

    def at_params(
        self, layer: Any, seq: Any, attention: Any, expert: Any = 0.0, chunk: Any = 0.0
    ) -> dict[str, np.ndarray]:
        """Metrics at a per-layer, a per-sequence, a per-expert and a per-chunk overhead and
        an attention efficiency (arrays broadcast)."""
        per_step = np.asarray(seq) * self.seqs + np.asarray(chunk) * self.chunks
        effective = np.asarray(layer) + per_step / self.layers + np.asarray(expert) * self.experts
        return self.at(effective, np.asarray(attention))


def _axis(nodes: Sequence[float], values: np.ndarray, offset: float = 0.0) -> tuple[Any, Any, Any]:
    """Bracketing node indices and the log-space weight of `values` on `nodes`."""
    grid = np.log(np.asarray(nodes) + offset)
    x = np.log(np.clip(values, nodes[0], nodes[-1]) + offset)
    i1 = np.clip(np.searchsorted(grid, x), 1, len(nodes) - 1)
    i0 = i1 - 1
    w = (x - grid[i0]) / (grid[i1] - grid[i0])
    return i0, i1, w


def steady_batch(dep: SimDeployment) -> float:
    """Decode sequences on one rank in steady state: the concurrency over the decode ranks,
    at most the rank's batch limit."""
    pool = dep.decode
    conc = dep.workload.concurrencies[0]
    return float(max(1.0, min(conc / (pool.workers * pool.dp), pool.max_num_seqs)))


def steady_experts(dep: SimDeployment) -> float:
    """Experts one rank runs per layer in a steady decode step (the worker routes every
    rank's batch, each sequence verifying 1 + draft tokens)."""
    pool = dep.decode
    width = 1 + (pool.speculation.draft_tokens if pool.speculation else 0)
    return dep.step_model(pool).touched_experts(steady_batch(dep) * pool.dp * width)


def surface(
    pt: MeasuredPoint, dep: SimDeployment, progress: Callable[[str], None] | None
) -> Surface:
    shape = (len(GRID["layer_overhead_s"]), len(GRID["attention_efficiency"]))
    logs = {m: np.zeros(shape) for m in METRICS}
    if progress is not None:
        progress(f"simulating {pt.name} on the {shape[0]} x {shape[1]} grid")
    per_step: list[tuple[float, float]] = []
    for i, overhead in enumerate(GRID["layer_overhead_s"]):
        for j, attention in enumerate(GRID["attention_efficiency"]):
            pred, held = _simulate_run(
                pt,
                {"layer_overhead_s": overhead, "attention_efficiency": attention,
                 "seq_overhead_s": 0.0, "chunk_overhead_s": 0.0},
                dep,
            )  # fmt: skip
            per_step.append(held)
            for m in METRICS:
                logs[m][i, j] = math.log(max(pred.value(m), 1e-9))
    seqs, chunks = (float(v) for v in np.mean(per_step, axis=0))
    if dep.prefill is not None:  # steps of two pools: the decode pool's steady batch
        seqs, chunks = steady_batch(dep), 0.0
    return Surface(
        logs, seqs=seqs, layers=dep.model.layers, experts=steady_experts(dep), chunks=chunks
    )


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
        at = surfaces[pt.name].at_params(
            params["layer_overhead_s"],
            params["seq_overhead_s"],
            params["attention_efficiency"],
            params["expert_overhead_s"],
            params["chunk_overhead_s"],
        )
        gaps.append(max(pt.measured.ttft_ms - math.exp(float(at["ttft_ms"])), 0.0) / 1000.0)
    low, high = FIT_BOUNDS["front_latency_s"]
    return min(max(min(gaps), low), high) if gaps else 0.0


# -- the hierarchical fit ------------------------------------------------------------------
#
# Unknowns, all logs, as a hierarchy vendor -> engine -> GPU: per vendor v a per-layer,
# a per-sequence and a per-expert overhead, an attention efficiency and a per-chunk factor
# on the per-sequence overhead (host work on the same host: a slow host is slow at both);
# per (vendor, engine) a factor on each overhead (centred on the engine's prior factor); per
# GPU g a factor on the per-layer overhead and on the attention efficiency (centre 1). A
# point on (g of v, e):
#   layer = exp(L[v] + k[v/e] + l[g]),  seq = exp(S[v] + s[v/e]),  attention = exp(A[v] + a[g]),
#   expert = exp(E[v]),  chunk = seq x exp(c[v]).
# The per-expert overhead is the vendor's alone, shared by its engines and GPUs (they run
# the same vendor kernel libraries for routed experts): it is told apart from the per-layer
# one by how many experts each point's ranks run per layer (none for a dense model, 512
# slices for Qwen3.5 at a wide batch).
# The loss is the squared log error of each measured tok/s/GPU and interactivity over the
# measurement spread, plus each unknown's squared distance from its prior over the prior's
# spread (calibration_priors.yaml): a MAP fit, by coordinate descent over 1-D grids of each
# unknown on the interpolated surfaces (no further simulation).

SWEEPS = 8  # coordinate-descent passes
_STEPS = 97  # candidates per unknown and pass
_BOUNDS = {  # of each unknown's value (not its log)
    "layer": (1e-6, FIT_BOUNDS["layer_overhead_s"][1]),
    "attention": FIT_BOUNDS["attention_efficiency"],
    "seq": (1e-8, FIT_BOUNDS["seq_overhead_s"][1]),
    "expert": (1e-9, FIT_BOUNDS["expert_overhead_s"][1]),
    "chunk": (1e-8, FIT_BOUNDS["chunk_overhead_s"][1]),
}


@dataclass
class _Unknown:
    """One log-space unknown: its value, prior centre and sd, and the range it may take."""

    value: float
    centre: float
    sd: float
    low: float
    high: float


@dataclass
class _Model:
    priors: Priors
    unknowns: dict[tuple[str, str], _Unknown]  # (kind, key) -> unknown
    point_keys: dict[str, tuple[str, str, str]]  # point -> (vendor, gpu, engine)

    def params(self, vendor: str, gpu: str | None, engine: str | None) -> dict[str, float]:
        """Parameters of a (GPU or vendor, engine or none) cell: a level not given, or not
        fitted, sits at its prior centre (factor 1, or the engine prior's factor)."""

        def log(kind: str, key: str | None, default: float) -> float:
            u = self.unknowns.get((kind, key)) if key is not None else None
            return u.value if u is not None else default

        ven = self.priors.vendor(vendor)
        eng = self.priors.engine(engine) if engine else None
        pair = f"{vendor}/{engine}" if engine else None
        layer = (
            log("L", vendor, ven.layer_overhead_s.log_value)
            + log("k", pair, eng.layer_factor.log_value if eng else 0.0)
            + log("l", gpu, 0.0)
        )
        seq = log("S", vendor, ven.seq_overhead_s.log_value) + log(
            "s", pair, eng.seq_factor.log_value if eng else 0.0
        )
        chunk = seq + log("c", vendor, self.priors.chunk_factor.log_value)
        attention = log("A", vendor, ven.attention_efficiency.log_value) + log("a", gpu, 0.0)
        expert = log("E", vendor, ven.expert_overhead_s.log_value)
        return {
            "layer_overhead_s": _clip(math.exp(layer), "layer"),
            "attention_efficiency": _clip(math.exp(attention), "attention"),
            "seq_overhead_s": _clip(math.exp(seq), "seq"),
            "expert_overhead_s": _clip(math.exp(expert), "expert"),
            "chunk_overhead_s": _clip(math.exp(chunk), "chunk"),
        }

    def logs_of(self, point: str) -> tuple[tuple[str, str], ...]:
        vendor, gpu, engine = self.point_keys[point]
        pair = f"{vendor}/{engine}"
        return (
            ("L", vendor), ("k", pair), ("l", gpu), ("S", vendor), ("s", pair),
            ("A", vendor), ("a", gpu), ("E", vendor), ("c", vendor),
        )  # fmt: skip


def _clip(value: float, kind: str) -> float:
    low, high = _BOUNDS[kind]
    return min(max(value, low), high)


def _log_bounds(kind: str) -> tuple[float, float]:
    low, high = _BOUNDS[kind]
    return math.log(low), math.log(high)


def _build_model(points: Sequence[MeasuredPoint], deps: dict[str, SimDeployment]) -> _Model:
    priors = load_priors()
    unknowns: dict[tuple[str, str], _Unknown] = {}
    keys: dict[str, tuple[str, str, str]] = {}
    lay = _log_bounds("layer")
    att = _log_bounds("attention")
    seq = _log_bounds("seq")
    expert = _log_bounds("expert")
    factor = math.log(_BOUNDS["chunk"][1] / _BOUNDS["seq"][0])
    gpu_l = math.log(priors.gpu_spread["layer_overhead_s"])
    gpu_a = math.log(priors.gpu_spread["attention_efficiency"])
    for pt in points:
        dep = deps[pt.name]
        vendor, gpu, engine = dep.gpu.vendor, dep.gpu.key, dep.engine
        keys[pt.name] = (vendor, gpu, engine)
        ven, eng = priors.vendor(vendor), priors.engine(engine)
        span, pair = lay[1] - lay[0], f"{vendor}/{engine}"
        specs: list[tuple[tuple[str, str], float, float, float, float]] = [
            (("L", vendor), ven.layer_overhead_s.log_value, ven.layer_overhead_s.log_sd, *lay),
            (("k", pair), eng.layer_factor.log_value, eng.layer_factor.log_sd, -span, span),
            (("l", gpu), 0.0, gpu_l, -span, span),
            (("S", vendor), ven.seq_overhead_s.log_value, ven.seq_overhead_s.log_sd, *seq),
            (("s", pair), eng.seq_factor.log_value, eng.seq_factor.log_sd, -span, span),
            (("A", vendor), ven.attention_efficiency.log_value, ven.attention_efficiency.log_sd,
             *att),
            (("a", gpu), 0.0, gpu_a, att[0] - att[1], att[1] - att[0]),
            (("E", vendor), ven.expert_overhead_s.log_value, ven.expert_overhead_s.log_sd,
             *expert),
            (("c", vendor), priors.chunk_factor.log_value, priors.chunk_factor.log_sd,
             -factor, factor),
        ]  # fmt: skip
        for key, centre, sd, low, high in specs:
            unknowns.setdefault(key, _Unknown(centre, centre, sd, low, high))
    return _Model(priors, unknowns, keys)


def _point_loss(
    model: _Model, pt: MeasuredPoint, surf: Surface, override: tuple[tuple[str, str], np.ndarray]
) -> np.ndarray:
    """Squared log errors of `pt` (over the measurement spread) with one unknown set to
    each of the candidate values in `override`."""
    key, values = override
    logs = {k: (values if k == key else model.unknowns[k].value) for k in model.logs_of(pt.name)}
    vendor, gpu, engine = model.point_keys[pt.name]
    pair = f"{vendor}/{engine}"
    layer = np.exp(logs[("L", vendor)] + logs[("k", pair)] + logs[("l", gpu)])
    attention = np.exp(logs[("A", vendor)] + logs[("a", gpu)])
    seq = np.exp(logs[("S", vendor)] + logs[("s", pair)])
    expert = np.exp(logs[("E", vendor)])
    chunk = seq * np.exp(logs[("c", vendor)])
    at = surf.at_params(
        np.clip(layer, *_BOUNDS["layer"]),
        np.clip(seq, *_BOUNDS["seq"]),
        np.clip(attention, *_BOUNDS["attention"]),
        np.clip(expert, *_BOUNDS["expert"]),
        np.clip(chunk, *_BOUNDS["chunk"]),
    )
    sd = math.log(model.priors.measurement_spread)
    loss = np.zeros_like(np.asarray(values, dtype=float))
    for metric in ("tok_s_gpu", "interactivity"):
        want = getattr(pt.measured, metric)
        if want is not None:
            loss = loss + ((at[metric] - math.log(want)) / sd) ** 2
    return loss


def _descend(model: _Model, points: Sequence[MeasuredPoint], surfaces: dict[str, Surface]) -> None:
    users: dict[tuple[str, str], list[MeasuredPoint]] = {}
    for pt in points:
        for key in model.logs_of(pt.name):
            users.setdefault(key, []).append(pt)
    for sweep in range(SWEEPS):
        for key, u in model.unknowns.items():
            # a coarse pass over the whole range first, then finer around the best so far
            half = (u.high - u.low) / 2 / (2**sweep)
            lo, hi = max(u.low, u.value - half), min(u.high, u.value + half)
            candidates = np.linspace(lo, hi, _STEPS)
            loss = ((candidates - u.centre) / u.sd) ** 2
            for pt in users.get(key, ()):
                loss = loss + _point_loss(model, pt, surfaces[pt.name], (key, candidates))
            u.value = float(candidates[int(np.argmin(loss))])


def fit(
    points: Sequence[MeasuredPoint],
    surfaces: dict[str, Surface],
    deps: dict[str, SimDeployment],
) -> Calibration:
    """The hierarchical fit (above), written as calibration entries for every cell the
    lookup may reach: each measured GPU and each vendor with a prior, crossed with each
    engine measured or with a prior, and with `*`; (`*`, engine) and (`*`, `*`) from the
    generic vendor prior with the fitted engines."""
    model = _build_model(points, deps)
    _descend(model, points, surfaces)
    latency = _front_latency(points, surfaces, lambda pt: model.params(*model.point_keys[pt.name]))
    counts: dict[tuple[str, str], int] = {}
    for vendor, gpu, engine in model.point_keys.values():
        for cell in ((gpu, engine), (vendor, engine), (gpu, ANY), (vendor, ANY), (ANY, engine)):
            counts[cell] = counts.get(cell, 0) + 1
    counts[(ANY, ANY)] = len(points)
    gpus = {gpu: vendor for vendor, gpu, _ in model.point_keys.values()}
    vendors = sorted({*model.priors.vendors, *gpus.values()} - {ANY})
    engines = sorted({*model.priors.engines, *(e for *_, e in model.point_keys.values())} - {ANY})
    cells: list[tuple[str, str, dict[str, float]]] = []
    for gpu, vendor in gpus.items():
        cells += [(gpu, e, model.params(vendor, gpu, e)) for e in engines]
        cells.append((gpu, ANY, model.params(vendor, gpu, None)))
    for vendor in vendors:
        cells += [(vendor, e, model.params(vendor, None, e)) for e in engines]
        cells.append((vendor, ANY, model.params(vendor, None, None)))
    cells += [(ANY, e, model.params(ANY, None, e)) for e in engines]
    cells.append((ANY, ANY, model.params(ANY, None, None)))
    entries = tuple(
        CalibrationEntry(
            gpu=g, engine=e, params={**params, "front_latency_s": latency},
            points=counts.get((g, e), 0),
        )
        for g, e, params in cells
    )  # fmt: skip
    return Calibration(
        description=f"fitted on {len(points)} point(s): {', '.join(pt.name for pt in points)}",
        entries=entries,
    )


def predict(pt: MeasuredPoint, cal: Calibration, dep: SimDeployment | None = None) -> Prediction:
    dep = dep or deployment(pt)
    entry = cal.entry_for(dep.gpu, dep.engine)
    return simulate(pt, entry.params if entry else None, dep)


def evaluate(
    points: Sequence[MeasuredPoint],
    *,
    loo: bool = True,
    progress: Callable[[str], None] | None = None,
    deps: dict[str, SimDeployment] | None = None,
    surfaces: dict[str, Surface] | None = None,
) -> FitReport:
    """Fit on all points, predict each in-sample, uncalibrated and (`loo`) left out.

    `deps` and `surfaces` (as `sim.holdout.prepare` makes them) save simulating again."""
    deps = deps or {pt.name: deployment(pt) for pt in points}
    surfaces = surfaces or {pt.name: surface(pt, deps[pt.name], progress) for pt in points}
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
