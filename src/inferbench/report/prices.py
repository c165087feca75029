"""$/GPU-hour figures for the cost metrics: a data file the user can edit or replace.

The default file (`data/gpu_prices.yaml`) cites a public list price for every entry.
Hardware names in records (`b200`, `h200-multinode`, `h200/b200` for a split
deployment) resolve to catalog GPU ids through the hardware catalog's aliases.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inferbench.catalog.load import load_catalog
from inferbench.config.yamlio import load_yaml, parse_yaml
from inferbench.errors import InputError, Location
from inferbench.fsread import check_regular
from inferbench.results.record import Identity

DEFAULT_PRICES = "data/gpu_prices.yaml"


class _Price(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    price: float = Field(gt=0)
    source: str = Field(min_length=1)


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str = "USD"
    per_gpu_hour: dict[str, _Price]


@dataclass(frozen=True)
class PriceTable:
    """Price per GPU-hour by catalog GPU id, with where each figure came from."""

    file: str
    currency: str
    prices: dict[str, float]
    sources: dict[str, str]
    _resolved: dict[str, float | None] = field(default_factory=dict, compare=False, repr=False)

    def gpu_hour(self, hardware: str) -> float | None:
        """The price of one GPU-hour of `hardware` (a catalog id, alias or runner label)."""
        if hardware not in self._resolved:
            self._resolved[hardware] = self._lookup(hardware.strip().lower())
        return self._resolved[hardware]

    def _lookup(self, name: str) -> float | None:
        if name in self.prices:
            return self.prices[name]
        try:
            spec = load_catalog().gpu(name)
        except InputError:
            return None
        for gpu_id, gpu in load_catalog().gpus.items():
            if gpu is spec:
                return self.prices.get(gpu_id)
        return None

    def deployment_hour(self, identity: Identity) -> float | None:
        """What all the deployment's GPUs cost per hour; None when a pool's GPU has no price."""
        total = 0.0
        for pool in identity.pools:
            price = self.gpu_hour(pool.hardware)
            if price is None:
                return None
            total += price * pool.gpus
        return total


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
        keys = tuple(first["loc"])
        raise InputError(
            f"invalid price file: {first['msg']}",
            location=doc.locate(keys),
            hint='write `per_gpu_hour: {h200: {price: 3.99, source: "where it came from"}}`',
        ) from None
    return PriceTable(
        file=str(file),
        currency=parsed.currency,
        prices={k.lower(): v.price for k, v in parsed.per_gpu_hour.items()},
        sources={k.lower(): v.source for k, v in parsed.per_gpu_hour.items()},
    )
