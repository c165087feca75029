"""Priors of the calibration fit (calibration_priors.yaml): per vendor and per engine, each
with its source. See that file for what is shared with what."""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources

from pydantic import Field
from ruamel.yaml import YAML

from inferbench.core.model import FrozenModel

ANY = "*"


class Prior(FrozenModel):
    """A log-normal prior: centre `value`, one standard deviation a factor of `spread`."""

    value: float = Field(gt=0)
    spread: float = Field(gt=1)
    source: str

    @property
    def log_value(self) -> float:
        return math.log(self.value)

    @property
    def log_sd(self) -> float:
        return math.log(self.spread)


class VendorPriors(FrozenModel):
    layer_overhead_s: Prior
    seq_overhead_s: Prior
    attention_efficiency: Prior
    expert_overhead_s: Prior


class EnginePriors(FrozenModel):
    layer_factor: Prior
    seq_factor: Prior


class Priors(FrozenModel):
    measurement_spread: float = Field(gt=1)
    chunk_factor: Prior  # the per-chunk overhead over the per-sequence one
    gpu_spread: dict[str, float]
    vendors: dict[str, VendorPriors]
    engines: dict[str, EnginePriors]

    def vendor(self, name: str) -> VendorPriors:
        return self.vendors.get(name, self.vendors[ANY])

    def engine(self, name: str) -> EnginePriors:
        return self.engines.get(name, self.engines[ANY])


@lru_cache(maxsize=1)
def load_priors() -> Priors:
    text = resources.files("inferbench.sim").joinpath("calibration_priors.yaml").read_text("utf-8")
    return Priors.model_validate(YAML(typ="safe").load(text))
