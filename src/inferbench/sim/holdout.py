"""Hold-out validation of a calibration: leave-one-out and leave-one-group-out.

Each held-out point (or group of points) is predicted by a calibration fitted without it
(`calibrate.fit` on the rest), so the error says how the fit carries to deployments it
never saw. Grouping by GPU or by engine holds out everything measured on that GPU or
engine at once: the pair is then predicted from its vendor's and the other engines'
parameters, the case a user with a new GPU or engine is in. The per-(GPU, engine)
summary is the mean absolute held-out error of the pair's points, usable as the
uncertainty of a prediction for that pair.

Each point's grid surface is simulated once (`prepare`) and reused by every fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from inferbench.core.errors import InputError, Location
from inferbench.sim.calibrate import (
    MeasuredPoint,
    Prediction,
    Surface,
    deployment,
    fit,
    predict,
    surface,
)
from inferbench.sim.calibration import Calibration
from inferbench.sim.deployment import SimDeployment

GroupBy = Literal["point", "gpu", "engine", "gpu-engine"]
GROUP_BYS: tuple[GroupBy, ...] = ("point", "gpu", "engine", "gpu-engine")
HELD_METRICS = ("tok_s_gpu", "interactivity")


def group_by(text: str) -> GroupBy:
    """A grouping `--holdout` names (every one but the single point, which LOO reports)."""
    grouping = next((g for g in GROUP_BYS if g == text and g != "point"), None)
    if grouping is None:
        raise InputError(
            f"--holdout {text!r} is not a grouping",
            location=Location(key="--holdout"),
            hint="use gpu, engine or gpu-engine",
        )
    return grouping


@dataclass(frozen=True)
class Prepared:
    """Each point's deployment and simulated grid surface, shared by every fit."""

    deps: dict[str, SimDeployment]
    surfaces: dict[str, Surface]


def prepare(
    points: Sequence[MeasuredPoint], progress: Callable[[str], None] | None = None
) -> Prepared:
    deps = {pt.name: deployment(pt) for pt in points}
    return Prepared(deps, {pt.name: surface(pt, deps[pt.name], progress) for pt in points})


@dataclass(frozen=True)
class HeldOutError:
    """One point predicted by a fit that did not see its group."""

    name: str
    gpu: str
    engine: str
    group: str  # the label of the group held out with it ("h100", "vllm", "h100/vllm", name)
    predicted: Prediction
    tok_s_gpu: float  # relative error: predicted / measured - 1
    interactivity: float | None  # None when the point has no measured interactivity

    def error(self, metric: str) -> float | None:
        value: float | None = getattr(self, metric)
        return value


@dataclass(frozen=True)
class PairSummary:
    """Mean absolute held-out error of one (GPU, engine) pair's points."""

    gpu: str
    engine: str
    points: int
    tok_s_gpu: float
    interactivity: float | None

    @property
    def uncertainty(self) -> float:
        """The larger of the two mean errors: a relative +/- band for the pair."""
        return max(self.tok_s_gpu, self.interactivity or 0.0)


@dataclass(frozen=True)
class HoldoutReport:
    by: GroupBy
    errors: tuple[HeldOutError, ...]
    pairs: tuple[PairSummary, ...]

    def within(self, metric: str, tolerance: float = 0.25) -> tuple[int, int]:
        """(points within +/- tolerance, points with the metric measured)."""
        values = [e.error(metric) for e in self.errors]
        known = [abs(v) for v in values if v is not None]
        return sum(v <= tolerance for v in known), len(known)

    def mean_abs(self, metric: str) -> float:
        known = [abs(v) for e in self.errors if (v := e.error(metric)) is not None]
        return sum(known) / len(known) if known else 0.0

    def pair(self, gpu: str, engine: str) -> PairSummary | None:
        for summary in self.pairs:
            if (summary.gpu, summary.engine) == (gpu, engine):
                return summary
        return None


def group_of(dep: SimDeployment, name: str, by: GroupBy) -> str:
    if by == "gpu":
        return dep.gpu.key
    if by == "engine":
        return dep.engine
    if by == "gpu-engine":
        return f"{dep.gpu.key}/{dep.engine}"
    return name


def holdout(
    points: Sequence[MeasuredPoint],
    by: GroupBy = "point",
    *,
    prepared: Prepared | None = None,
    progress: Callable[[str], None] | None = None,
) -> HoldoutReport:
    """Predict every point from a fit on the points outside its group.

    A group that holds every point leaves nothing to fit: it is predicted uncalibrated
    (physics and engine defaults), which is what a user without measurements gets.
    """
    prep = prepared or prepare(points, progress)
    groups: dict[str, list[MeasuredPoint]] = {}
    for pt in points:
        groups.setdefault(group_of(prep.deps[pt.name], pt.name, by), []).append(pt)
    errors: list[HeldOutError] = []
    for label, members in groups.items():
        if progress is not None:
            progress(f"leave-{by}-out: {label}")
        held = {pt.name for pt in members}
        rest = [pt for pt in points if pt.name not in held]
        cal = fit(rest, prep.surfaces, prep.deps) if rest else Calibration()
        for pt in members:
            dep = prep.deps[pt.name]
            errors.append(held_out_error(pt, dep, label, predict(pt, cal, dep)))
    order = {pt.name: i for i, pt in enumerate(points)}
    errors.sort(key=lambda e: order[e.name])
    return HoldoutReport(by=by, errors=tuple(errors), pairs=_pairs(errors))


def _pairs(errors: Sequence[HeldOutError]) -> tuple[PairSummary, ...]:
    by_pair: dict[tuple[str, str], list[HeldOutError]] = {}
    for e in errors:
        by_pair.setdefault((e.gpu, e.engine), []).append(e)
    out = []
    for (gpu, engine), members in by_pair.items():
        tput = [abs(e.tok_s_gpu) for e in members]
        inter = [abs(e.interactivity) for e in members if e.interactivity is not None]
        out.append(
            PairSummary(
                gpu=gpu,
                engine=engine,
                points=len(members),
                tok_s_gpu=sum(tput) / len(tput),
                interactivity=sum(inter) / len(inter) if inter else None,
            )
        )
    return tuple(out)


def held_out_error(
    pt: MeasuredPoint, dep: SimDeployment, group: str, got: Prediction
) -> HeldOutError:
    """How far the prediction `got` of the held-out point `pt` lands from its measurement."""
    inter = pt.measured.interactivity
    return HeldOutError(
        name=pt.name,
        gpu=dep.gpu.key,
        engine=dep.engine,
        group=group,
        predicted=got,
        tok_s_gpu=got.tok_s_gpu / pt.measured.tok_s_gpu - 1,
        interactivity=got.interactivity / inter - 1 if inter else None,
    )
