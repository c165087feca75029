"""Calibration files: fitted efficiency parameters per (GPU, engine), and their lookup.

A calibration file (YAML) holds entries keyed by GPU (a catalog key, a vendor such as
`nvidia` or `amd`, or `*`) and engine (an engine registry key or `*`); each entry sets a few
`EfficiencyParams` fields. A deployment takes the most specific entry that matches:
(gpu, engine), (vendor, engine), (gpu, *), (vendor, *), (*, engine), (*, *). The packaged
default calibration (calibration_default.yaml) is fitted on published measurements;
`inferbench sim calibrate` fits one from a team's own results.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from inferbench.catalog.schema import GpuSpec
from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_CONFIG_BYTES, read_text_file
from inferbench.core.model import FrozenModel
from inferbench.sim.engines import engine_profile
from inferbench.sim.perf import EfficiencyParams

DEFAULT = "default"  # the packaged calibration
NONE = "none"  # physics and engine defaults only

# The parameters a calibration may fit, with their bounds (kept physical: an efficiency
# is a fraction of a datasheet peak). The overheads' upper bounds are a CPU host's, not a
# GPU's: vLLM's CPU build on a core without AVX2 spends about 3 ms per running sequence and
# 1.4 ms per layer of a 2-layer model in each step (the real-vLLM grid, docs/simulator.md).
FIT_BOUNDS: dict[str, tuple[float, float]] = {
    "layer_overhead_s": (0.0, 1e-2),
    "seq_overhead_s": (0.0, 1e-2),
    "chunk_overhead_s": (0.0, 2e-2),
    "attention_efficiency": (0.05, 0.9),
    "expert_overhead_s": (0.0, 1e-5),
    "front_latency_s": (0.0, 0.5),
}


class CalibrationEntry(FrozenModel):
    gpu: str = "*"
    engine: str = "*"
    params: dict[str, float]
    points: int = Field(0, ge=0)  # measured points the entry was fitted on
    fit_error: dict[str, float] = Field(default_factory=dict)  # metric -> mean |rel. error|


class Calibration(FrozenModel):
    version: int = 1
    description: str = ""
    entries: tuple[CalibrationEntry, ...] = ()

    def entry_for(self, gpu: GpuSpec, engine: str) -> CalibrationEntry | None:
        index = {(e.gpu.lower(), e.engine.lower()): e for e in self.entries}
        for key in (
            (gpu.key, engine),
            (gpu.vendor, engine),
            (gpu.key, "*"),
            (gpu.vendor, "*"),
            ("*", engine),
            ("*", "*"),
        ):
            if key in index:
                return index[key]
        return None


def _check_params(params: dict[str, float], where: Location) -> None:
    for name, value in params.items():
        if name not in FIT_BOUNDS:
            raise InputError(
                f"calibration parameter {name!r} is not one the simulator fits",
                location=where,
                hint=f"use {', '.join(FIT_BOUNDS)}",
            )
        low, high = FIT_BOUNDS[name]
        if not low <= value <= high:
            raise InputError(
                f"calibration parameter {name} = {value} is outside [{low}, {high}]",
                location=where,
            )


def parse_calibration(text: str, path: Path) -> Calibration:
    try:
        data = YAML(typ="safe").load(text)
        cal = Calibration.model_validate(data or {})
    except YAMLError as exc:
        raise InputError(
            f"calibration file is not valid YAML: {exc}", location=Location(path)
        ) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise InputError(
            f"invalid calibration file: {err['msg']}", location=Location(path, key=key)
        ) from None
    for i, entry in enumerate(cal.entries):
        _check_params(entry.params, Location(path, key=f"entries.{i}.params"))
    return cal


@lru_cache(maxsize=8)
def load_calibration(spec: str | None) -> Calibration:
    """`None`/"default": the packaged calibration; "none": none; else a file path."""
    if spec is None or spec == DEFAULT:
        packaged = resources.files("inferbench.sim").joinpath("calibration_default.yaml")
        return parse_calibration(packaged.read_text("utf-8"), Path("calibration_default.yaml"))
    if spec == NONE:
        return Calibration()
    path = Path(spec)
    text = read_text_file(path, MAX_CONFIG_BYTES, what="calibration file", option="--calibration")
    return parse_calibration(text, path)


def base_efficiency(engine: str) -> EfficiencyParams:
    """Physics defaults with the engine's memory rule and starting overheads."""
    prof = engine_profile(engine)
    return EfficiencyParams(
        step_overhead_s=prof.step_overhead_s,
        layer_overhead_s=prof.layer_overhead_s,
        activation_reserve_gb=prof.activation_reserve_gb,
        fraction_after_weights=prof.memory == "after_weights",
    )


def efficiency_for(engine: str, gpu: GpuSpec, calibration: str | None) -> EfficiencyParams:
    """The efficiency parameters a deployment on `gpu` with `engine` runs with."""
    base = base_efficiency(engine)
    entry = load_calibration(calibration).entry_for(gpu, engine)
    if entry is None:
        return base
    return base.model_copy(update=entry.params)
