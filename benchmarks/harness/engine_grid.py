"""Measure a real serving engine over a small grid of its batch limits, as calibration points.

The grid is concurrency x max-num-seqs x chunked-prefill token budget (vLLM's
`--max-num-seqs` and `--max-num-batched-tokens`). One server runs per batch-limit setting
(the limits are start-up flags); inferbench's own bench measures each concurrency against it
with InferenceX's sa-bench load (10 x concurrency prompts, 2 x concurrency warm-ups, lengths
U[0.8 L, L]), the load the simulator simulates a job with. Every measured cell becomes the
`MeasuredPoint` that `sim calibrate` takes, its job carrying the limits as `sim-flags`, plus
the engine flags the server ran with, written together to one JSON file.

It serves the real-engine tests and benchmarks only, so it ships in neither the package
nor the wheel (`benchmarks/harness/`); its product is `sim calibrate`'s points. It knows no
engine binary: the caller hands it a `ServerFactory` that starts a server for a setting (the
real-vLLM tests and benchmarks start vLLM's CPU build), so the same grid serves
`sim calibrate` checks and the adaptive sweep's real-engine check alike.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from inferbench.bench.api import BenchOptions, run_point, sa_bench_point, sa_bench_workload
from inferbench.bench.settings import Endpoint
from inferbench.bench.workload import RandomWorkload
from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import atomic_write_text
from inferbench.core.fsread import MAX_CONFIG_BYTES, read_text_file
from inferbench.core.model import FrozenModel
from inferbench.sim.calibrate import Measured, MeasuredPoint, fit, predict
from inferbench.sim.holdout import (
    HeldOutError,
    HoldoutReport,
    Prepared,
    held_out_error,
    prepare,
)

FORMAT_VERSION = 1


class BatchLimits(FrozenModel):
    """One server setting: the batch limits a server is started with."""

    max_num_seqs: int = Field(ge=1)
    max_num_batched_tokens: int = Field(ge=1, description="a step's token budget (the chunk)")
    chunked_prefill: bool = True

    @model_validator(mode="after")
    def _budget_holds_the_batch(self) -> BatchLimits:
        # vLLM refuses a token budget below max-num-seqs (a decode step could not fit)
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError("max_num_batched_tokens must be at least max_num_seqs")
        return self

    @property
    def label(self) -> str:
        # the budget names the setting with chunking off too: it still caps a step's tokens
        chunk = "chunk" if self.chunked_prefill else "nochunk"
        return f"seqs{self.max_num_seqs}-{chunk}{self.max_num_batched_tokens}"

    def engine_args(self) -> tuple[str, ...]:
        """The server's command-line flags (vLLM spelling)."""
        chunked = (
            "--enable-chunked-prefill" if self.chunked_prefill else "--no-enable-chunked-prefill"
        )
        return (
            "--max-num-seqs",
            str(self.max_num_seqs),
            "--max-num-batched-tokens",
            str(self.max_num_batched_tokens),
            chunked,
        )

    def sim_flags(self) -> dict[str, Any]:
        """The same limits as a job's `sim-flags` (what the simulator reads)."""
        return {
            "max-num-seqs": self.max_num_seqs,
            "max-num-batched-tokens": self.max_num_batched_tokens,
            "enable-chunked-prefill": self.chunked_prefill,
        }


class GridSpec(FrozenModel):
    """What to measure: the deployment (as a sweep job names it), the lengths and the grid."""

    model: str = Field(min_length=1, description="the model id the server serves")
    runner: str = Field(
        min_length=1, description="the hardware, as the simulator's catalog names it"
    )
    framework: str = "vllm"
    precision: str = "bf16"
    isl: int = Field(ge=1)
    osl: int = Field(ge=1)
    concurrencies: tuple[int, ...] = Field(min_length=1)
    limits: tuple[BatchLimits, ...] = Field(min_length=1)
    tokenizer: Path | None = Field(None, description="send text (None: token ids)")
    alone: bool = Field(
        False,
        description="points as if the server had its CPU to itself (needs a CPU meter): "
        "figures rescaled by the CPU share the server had (GridPoint.cpu_share)",
    )
    repeats: int = Field(
        1, ge=1, description="runs of each cell, interleaved; the fastest is the point"
    )

    @model_validator(mode="after")
    def _distinct(self) -> GridSpec:
        if len(set(self.concurrencies)) != len(self.concurrencies) or min(self.concurrencies) < 1:
            raise ValueError("concurrencies must be distinct whole numbers of at least 1")
        if len({lim.label for lim in self.limits}) != len(self.limits):
            raise ValueError("batch-limit settings must be distinct")
        return self

    def cells(self) -> list[GridCell]:
        """Every (setting, concurrency), setting-major: the order one server each measures."""
        return [
            GridCell(limits=lim, concurrency=c) for lim in self.limits for c in self.concurrencies
        ]

    def job(self, cell: GridCell) -> dict[str, Any]:
        """The sweep job of one cell, in the form `sim calibrate` reads."""
        return {
            "model": self.model,
            "runner": self.runner,
            "framework": self.framework,
            "precision": self.precision,
            "tp": 1,
            "conc": cell.concurrency,
            "isl": self.isl,
            "osl": self.osl,
            "sim-flags": cell.limits.sim_flags(),
        }


class GridCell(FrozenModel):
    limits: BatchLimits
    concurrency: int = Field(ge=1)

    @property
    def name(self) -> str:
        return f"{self.limits.label}-conc{self.concurrency}"


class GridPoint(FrozenModel):
    """One measured cell: the calibration point, the flags the server ran with, raw figures.

    `cpu_share` is the share of its CPU the server had while the run lasted (its processes'
    CPU seconds over the run's wall seconds; None when the server gave no meter). With
    `GridSpec.alone`, the point's figures are the raw ones rescaled to a share of 1: a
    CPU-bound server given a share s of its core runs 1/s times slower in every step."""

    cell: GridCell
    engine_args: tuple[str, ...]
    point: MeasuredPoint
    output_tok_s: float = Field(ge=0)
    total_tok_s: float = Field(ge=0)
    median_tpot_ms: float = Field(ge=0)
    median_ttft_ms: float = Field(ge=0)
    completed: int = Field(ge=0)
    duration_s: float = Field(ge=0)
    cpu_share: float | None = Field(None, gt=0)
    repeat_tok_s: tuple[float, ...] = Field((), description="total tok/s of every run")

    @property
    def name(self) -> str:
        return self.point.name


class GridMeasurement(FrozenModel):
    """The JSON file: the spec and every measured point, in measuring order."""

    version: int = FORMAT_VERSION
    spec: GridSpec
    points: tuple[GridPoint, ...] = ()
    notes: dict[str, Any] = Field(default_factory=dict, description="machine, load, timings")

    def measured_points(self) -> list[MeasuredPoint]:
        return [p.point for p in self.points]

    def by_name(self) -> dict[str, GridPoint]:
        return {p.name: p for p in self.points}


@dataclass(frozen=True)
class GridServer:
    """A started server: where it listens and, optionally, the CPU seconds its processes
    have used so far (a monotonic meter, read before and after each run)."""

    endpoint: Endpoint
    cpu_seconds: Callable[[], float] | None = None


# Starts a server with the given limits for the length of the block.
ServerFactory = Callable[[BatchLimits], AbstractContextManager[GridServer]]


def measured_point(
    spec: GridSpec, cell: GridCell, result: Any, cpu_share: float | None = None
) -> GridPoint:
    """A bench point result (`PointResult`) as a grid point. One server is one device: the
    throughput per GPU is the server's total (prompt + output) tokens per second."""
    sa = result.sa
    tpot, ttft = sa.median_tpot_ms, sa.median_ttft_ms
    scale = 1.0
    if spec.alone:
        if cpu_share is None:
            raise RuntimeError(f"{cell.name}: `alone` needs a server with a CPU meter")
        scale = min(cpu_share, 1.0)
    measured = Measured(
        tok_s_gpu=sa.total_token_throughput / scale,
        interactivity=1000.0 / (tpot * scale) if tpot and tpot > 0 else None,
        ttft_ms=ttft * scale if ttft and ttft > 0 else None,
    )
    return GridPoint(
        cell=cell,
        engine_args=cell.limits.engine_args(),
        point=MeasuredPoint(name=cell.name, job=spec.job(cell), measured=measured, stat="median"),
        output_tok_s=sa.output_throughput,
        total_tok_s=sa.total_token_throughput,
        median_tpot_ms=tpot or 0.0,
        median_ttft_ms=ttft or 0.0,
        completed=sa.completed,
        duration_s=sa.duration,
        cpu_share=cpu_share,
    )


def measure_grid(
    spec: GridSpec,
    serve: ServerFactory,
    *,
    cells: Iterable[GridCell] | None = None,
    options: BenchOptions | None = None,
    on_point: Callable[[GridPoint], None] | None = None,
) -> list[GridPoint]:
    """Measure `cells` (default: the whole grid), one server per batch-limit setting, the
    settings in the order the cells first name them. With `spec.repeats` > 1 a setting's
    cells are run that many times round-robin and each keeps its fastest run (highest total
    tok/s): on a shared machine other load only ever slows a run down, and interleaving
    keeps one slow minute from taking every run of a cell. A run whose requests fail beyond
    the bench's failure gate, or that finishes none, raises RuntimeError naming the cell."""
    todo = list(spec.cells() if cells is None else cells)
    order: list[BatchLimits] = []
    for cell in todo:
        if cell.limits not in order:
            order.append(cell.limits)
    workload = sa_bench_workload(spec.isl, spec.osl)
    if spec.tokenizer is not None:
        workload = workload.model_copy(update={"tokenizer": spec.tokenizer})
    options = options or BenchOptions(backend="vllm")
    out: list[GridPoint] = []
    for limits in order:
        cells_here = [c for c in todo if c.limits == limits]
        runs: dict[str, list[GridPoint]] = {c.name: [] for c in cells_here}
        with serve(limits) as server:
            for _ in range(spec.repeats):
                for cell in cells_here:
                    runs[cell.name].append(_run(spec, cell, server, workload, options))
        for cell in cells_here:
            tried = runs[cell.name]
            best = max(tried, key=lambda p: p.total_tok_s)
            point = best.model_copy(update={"repeat_tok_s": tuple(p.total_tok_s for p in tried)})
            out.append(point)
            if on_point is not None:
                on_point(point)
    return out


def _run(
    spec: GridSpec,
    cell: GridCell,
    server: GridServer,
    workload: RandomWorkload,
    options: BenchOptions,
) -> GridPoint:
    meter = server.cpu_seconds
    cpu0, wall0 = (meter() if meter else 0.0), time.monotonic()
    measurement = run_point(server.endpoint, workload, sa_bench_point(cell.concurrency), options)
    wall = time.monotonic() - wall0
    share = (meter() - cpu0) / wall if meter and wall > 0 else None
    result = measurement.result
    failure = result.inferbench.gate_failure
    if failure or not result.complete or not result.sa.completed:
        raise RuntimeError(f"{cell.name}: {failure or 'incomplete'}")
    return measured_point(spec, cell, result, share if share and share > 0 else None)


def write_grid(path: Path, measurement: GridMeasurement) -> None:
    atomic_write_text(path, measurement.model_dump_json(indent=2) + "\n")


def write_points(path: Path, measurement: GridMeasurement) -> None:
    """The points alone, as the points file `inferbench sim calibrate FILE` reads (JSON is
    YAML): each cell's name, job (with its limits as sim-flags) and measured figures."""
    points = [p.point.model_dump(mode="json") for p in measurement.points]
    atomic_write_text(path, json.dumps({"points": points}, indent=2) + "\n")


def read_grid(path: Path) -> GridMeasurement:
    """A grid file `write_grid` wrote; a broken one is an InputError naming the key."""
    text = read_text_file(path, MAX_CONFIG_BYTES, what="grid measurement file")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"grid file is not JSON: {exc}", location=Location(path)) from None
    if isinstance(data, dict) and data.get("version") != FORMAT_VERSION:
        raise InputError(
            f"grid file version {data.get('version')!r} is not {FORMAT_VERSION}",
            location=Location(path, key="version"),
            hint="measure the grid again with this inferbench",
        )
    try:
        return GridMeasurement.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise InputError(
            f"invalid grid file: {err['msg']}", location=Location(path, key=key)
        ) from None


def split(
    points: Sequence[GridPoint], held_out: Callable[[GridCell], bool]
) -> tuple[list[GridPoint], list[GridPoint]]:
    """(fit points, held-out points) by a predicate on the cell."""
    fit = [p for p in points if not held_out(p.cell)]
    rest = [p for p in points if held_out(p.cell)]
    return fit, rest


def held_out_errors(
    points: Sequence[GridPoint],
    held_out: Callable[[GridCell], bool],
    *,
    label: str = "held out",
    prepared: Prepared | None = None,
) -> list[HeldOutError]:
    """Fit a calibration (`calibrate.fit`) on the points whose cell `held_out` rejects and
    predict the others: their relative errors (predicted / measured - 1)."""
    train, test = split(points, held_out)
    if not train or not test:
        raise ValueError("a split needs points on both sides")
    prep = prepared or prepare([p.point for p in points])
    cal = fit([p.point for p in train], prep.surfaces, prep.deps)
    out = []
    for gp in test:
        pt, dep = gp.point, prep.deps[gp.name]
        out.append(held_out_error(pt, dep, label, predict(pt, cal, dep)))
    return out


def _setting_is(limits: BatchLimits) -> Callable[[GridCell], bool]:
    return lambda cell: cell.limits == limits


def leave_one_setting_out(
    points: Sequence[GridPoint], *, prepared: Prepared | None = None
) -> HoldoutReport:
    """Each batch-limit setting predicted by a fit on the others: how the calibration
    carries to limits it never saw (the whole held-out server's concurrencies)."""
    prep = prepared or prepare([p.point for p in points])
    settings: list[BatchLimits] = []
    for p in points:
        if p.cell.limits not in settings:
            settings.append(p.cell.limits)
    errors: list[HeldOutError] = []
    for limits in settings:
        errors += held_out_errors(points, _setting_is(limits), label=limits.label, prepared=prep)
    return HoldoutReport(by="point", errors=tuple(errors), pairs=())
