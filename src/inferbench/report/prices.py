"""$/GPU-hour figures for the cost metrics: a data file the user can edit or replace.

The default file (`data/gpu_prices.yaml`) holds several cost models (on-demand rental and
the InferenceX site's three TCO tiers: owned by a hyperscaler, owned by a neocloud giant,
3-year rental), each citing where every figure came from. A file
with a single top-level `per_gpu_hour` table is one model (the shape of earlier files).
Hardware names in records (`b200`, `h200-multinode`, `h200/b200` for a split
deployment) resolve to catalog GPU ids through the hardware catalog's aliases.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Self

from pydantic import Field, ValidationError, model_validator

from inferbench.catalog.load import load_catalog
from inferbench.config.yamlio import load_yaml, parse_yaml
from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import check_regular
from inferbench.core.model import FrozenModel
from inferbench.results.record import Identity

DEFAULT_PRICES = "data/gpu_prices.yaml"
SINGLE_MODEL = "custom"  # the key of a file's only model when it has no `models:`
_KEY = re.compile(r"^[a-z0-9_]+$")  # model keys go into the page's URL


class _Price(FrozenModel):
    price: float = Field(gt=0)
    source: str = Field(min_length=1)


class _Model(FrozenModel):
    label: str = Field(min_length=1)
    note: str = ""
    per_gpu_hour: dict[str, _Price]


class _PriceFile(FrozenModel):
    currency: str = "USD"
    per_gpu_hour: dict[str, _Price] | None = None
    models: dict[str, _Model] | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> Self:
        if (self.per_gpu_hour is None) == (self.models is None):
            raise ValueError("give either `models:` or one `per_gpu_hour:` table")
        for key in self.models or {}:
            if not _KEY.match(key):
                raise ValueError(f"model key {key!r}: use lower-case letters, digits and _")
        return self


def _resolve(name: str, prices: dict[str, float]) -> float | None:
    if name in prices:
        return prices[name]
    try:
        spec = load_catalog().gpu(name)
    except InputError:
        return None
    for gpu_id, gpu in load_catalog().gpus.items():
        if gpu is spec:
            return prices.get(gpu_id)
    return None


@dataclass(frozen=True)
class CostModel:
    """One way to price a GPU-hour (on-demand, reserved, owned), by catalog GPU id."""

    key: str  # stable id, part of the cost metrics' keys (`cost_total.on_demand`)
    label: str
    note: str
    prices: dict[str, float]
    sources: dict[str, str]
    _resolved: dict[str, float | None] = field(default_factory=dict, compare=False, repr=False)

    def gpu_hour(self, hardware: str) -> float | None:
        """The price of one GPU-hour of `hardware` (a catalog id, alias or runner label)."""
        if hardware not in self._resolved:
            self._resolved[hardware] = _resolve(hardware.strip().lower(), self.prices)
        return self._resolved[hardware]

    def deployment_hour(self, identity: Identity) -> float | None:
        """What all the deployment's GPUs cost per hour; None when a pool's GPU has no price."""
        total = 0.0
        for pool in identity.pools:
            price = self.gpu_hour(pool.hardware)
            if price is None:
                return None
            total += price * pool.gpus
        return total


@dataclass(frozen=True)
class PriceTable:
    """The cost models of one price file; the first is the default."""

    file: str
    currency: str
    models: tuple[CostModel, ...]

    @property
    def default(self) -> CostModel:
        return self.models[0]

    # the default model's figures, as a one-model table had them
    @property
    def prices(self) -> dict[str, float]:
        return self.default.prices

    @property
    def sources(self) -> dict[str, str]:
        return self.default.sources

    def gpu_hour(self, hardware: str) -> float | None:
        return self.default.gpu_hour(hardware)

    def deployment_hour(self, identity: Identity) -> float | None:
        return self.default.deployment_hour(identity)

    def model(self, key: str) -> CostModel:
        return next(m for m in self.models if m.key == key)


def _cost_model(key: str, label: str, note: str, table: dict[str, _Price]) -> CostModel:
    return CostModel(
        key=key,
        label=label,
        note=note,
        prices={k.lower(): v.price for k, v in table.items()},
        sources={k.lower(): v.source for k, v in table.items()},
    )


def load_prices(path: Path | str | None = None) -> PriceTable:
    """Read a price file (the packaged defaults when `path` is None)."""
    if path is None:
        text = (resources.files("inferbench.report") / DEFAULT_PRICES).read_text(encoding="utf-8")
        file = Path("inferbench/report") / DEFAULT_PRICES
        doc = parse_yaml(text, file)
    else:
        file = Path(path)
        if not file.is_file():
            if os.path.lexists(file):  # a FIFO, device or folder: say which
                check_regular(file, option="--prices")
            raise InputError(
                "price file not found",
                location=Location(file, key="--prices"),
                hint="give a $/GPU-hour YAML file, or leave --prices out for the cited list",
            )
        doc = load_yaml(file)
    try:
        parsed = _PriceFile.model_validate(doc.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        keys = tuple(k for k in first["loc"] if k != "_one_shape")
        raise InputError(
            f"invalid price file: {first['msg']}",
            location=doc.locate(keys),
            hint='write `per_gpu_hour: {h200: {price: 3.99, source: "where it came from"}}` '
            "or several such tables under `models: {on_demand: {label: ..., per_gpu_hour: ...}}`",
        ) from None
    if parsed.models is not None:
        models = tuple(
            _cost_model(k, m.label, m.note, m.per_gpu_hour) for k, m in parsed.models.items()
        )
    else:
        models = (_cost_model(SINGLE_MODEL, "$/GPU-hour", "", parsed.per_gpu_hour or {}),)
    if not models:
        raise InputError(
            "invalid price file: `models:` is empty",
            location=doc.locate(("models",)),
            hint="give at least one model with its per_gpu_hour table",
        )
    return PriceTable(file=str(file), currency=parsed.currency, models=models)
