"""Load shapes: closed loop at fixed concurrency, or arrivals at a request rate.

Arrival times are offsets from one start instant and every worker sleeps until
the absolute time `t0 + offset`, so timer rounding never accumulates into a
lower rate (relative sleeps drift low).
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field, model_validator

from inferbench.bench.naming import point_stem
from inferbench.core.concurrency import parse_concurrency_list as parse_list
from inferbench.core.errors import InputError, Location
from inferbench.core.limits import MAX_DURATION_S
from inferbench.core.model import FrozenModel


class LoadPoint(FrozenModel):
    """One measured point: how many requests, and how they arrive."""

    concurrency: int | None = Field(default=None, gt=0, description="cap on requests in flight")
    request_rate: float | None = Field(default=None, gt=0, description="req/s; None = closed loop")
    burstiness: float = Field(default=1.0, gt=0, description="gamma shape; 1 = Poisson")
    num_prompts: int = Field(gt=0)
    duration_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_DURATION_S,
        allow_inf_nan=False,
        description="stop sending after this",
    )
    warmups: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _shape(self) -> LoadPoint:
        if self.concurrency is None and self.request_rate is None:
            raise ValueError("a point needs a concurrency, a request rate, or both")
        return self

    @property
    def closed_loop(self) -> bool:
        return self.request_rate is None

    @property
    def label(self) -> str:
        """`conc64`, `rate2.5`, `rate2.5_conc64`: also the stem of the point's result file."""
        return point_stem(self.concurrency, self.request_rate)


def parse_concurrency_list(text: str) -> list[int]:
    """`4,8,16` or srt-slurm's `4x8x16` -> [4, 8, 16] (order kept, duplicates dropped)."""
    try:
        values = parse_list(text)
    except ValueError as exc:
        raise InputError(
            str(exc), location=Location(key="--concurrency"), hint="e.g. 4,8,16 or 4x8x16"
        ) from None
    return list(dict.fromkeys(values))


def arrival_offsets(n: int, rate: float, burstiness: float, seed: int) -> np.ndarray:
    """Seconds after t0 of `n` arrivals: gamma inter-arrivals with mean exactly 1/rate.

    Shape `burstiness` (1 = Poisson, <1 burstier, >1 more regular), scale
    1/(rate*burstiness), as vLLM defines it. The first request goes at t0. The
    gaps are then scaled so the last arrival lands at (n-1)/rate: the point runs
    at the rate asked for, not at that of one random draw (a 1,000-request
    Poisson draw is off by about 3%). For Poisson arrivals this is exact: given
    the number of arrivals in a window, Poisson arrival times are uniformly
    spread over it, so the scaled draw is still a Poisson draw.
    """
    if math.isinf(rate):
        return np.zeros(n)
    rng = np.random.default_rng([seed, 0x5EED])
    gaps = rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n)
    gaps[0] = 0.0
    offsets = np.cumsum(gaps)
    if n > 1 and offsets[-1] > 0:
        offsets *= ((n - 1) / rate) / offsets[-1]
    return offsets


def split_evenly(total: int, parts: int) -> list[int]:
    """`total` shared over `parts` as evenly as integers allow."""
    base, extra = divmod(total, parts)
    return [base + (1 if k < extra else 0) for k in range(parts)]
