"""Latency targets a point must meet: `ttft_p90<=2s,tpot_p90<=50ms,interactivity_p10>=20`.

A target names a metric, a statistic over the point's requests and a bound. Latencies
(`ttft`, `tpot`, `itl`, `e2el`) are upper bounds in ms (or with an `s` suffix, seconds);
`interactivity` (tok/s/user, 1000/TPOT per request) is a lower bound. The statistics are
the ones every result file carries: `mean`, `median` (or `p50`), `p90`, `p99`.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import Field

from inferbench.bench.result import PointResult
from inferbench.core.errors import InputError, Location
from inferbench.core.model import FrozenModel

Metric = Literal["ttft", "tpot", "itl", "e2el", "interactivity"]
Stat = Literal["mean", "median", "p90", "p99"]

_LATENCIES = ("ttft", "tpot", "itl", "e2el")
_SPEC = re.compile(
    r"^\s*(?P<metric>[a-z2]+)_(?P<stat>mean|median|p50|p90|p99)\s*"
    r"(?P<op><=|>=)\s*(?P<value>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>ms|s|tok/s)?\s*$"
)
EXAMPLE = "ttft_p90<=2s,tpot_p90<=50ms"


class Target(FrozenModel):
    """One bound: `metric`'s `stat` over the point's requests must stay within `bound`."""

    metric: Metric
    stat: Stat
    bound: float = Field(gt=0, allow_inf_nan=False)  # ms, or tok/s/user for interactivity

    @property
    def upper(self) -> bool:
        """Latencies are upper bounds; interactivity is a lower bound."""
        return self.metric != "interactivity"

    @property
    def label(self) -> str:
        unit = "tok/s/user" if self.metric == "interactivity" else "ms"
        return f"{self.metric}_{self.stat}{'<=' if self.upper else '>='}{self.bound:g} {unit}"

    def value(self, result: PointResult) -> float:
        """The point's value of this metric and statistic."""
        if self.metric == "interactivity":
            inter = result.inferbench.interactivity
            # interactivity's low percentiles are TPOT's high ones: p90 of users' speed is
            # the speed 90% of requests beat, so a lower bound reads the slow tail (p10)
            values = {"mean": inter.mean, "median": inter.median, "p90": inter.p10, "p99": inter.p1}
            return float(values[self.stat])
        return float(getattr(result.sa, f"{self.stat}_{self.metric}_ms"))

    def slack(self, value: float) -> float:
        """How far `value` is inside the bound, relative to it (negative: outside)."""
        if not math.isfinite(value):
            return -math.inf
        return (
            (self.bound - value) / self.bound if self.upper else (value - self.bound) / self.bound
        )


def parse_targets(text: str, *, option: str = "--slo") -> tuple[Target, ...]:
    """`ttft_p90<=2s,tpot_p90<=50ms` -> targets; a clear error naming the part that is not
    one."""
    targets: list[Target] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = _SPEC.match(part)
        if m is None:
            raise InputError(
                f"{part!r} is not a target",
                location=Location(key=option),
                hint=f"write METRIC_STAT<=BOUND, e.g. {EXAMPLE} or interactivity_p90>=20",
            )
        metric, stat, op = m["metric"], m["stat"], m["op"]
        stat = "median" if stat == "p50" else stat
        if metric not in (*_LATENCIES, "interactivity"):
            raise InputError(
                f"unknown metric {metric!r} in {part!r}",
                location=Location(key=option),
                hint="use ttft, tpot, itl, e2el (upper bounds) or interactivity (a lower bound)",
            )
        latency = metric in _LATENCIES
        if (op == "<=") != latency:
            want = "<=" if latency else ">="
            raise InputError(
                f"{part!r}: {metric} takes {want}",
                location=Location(key=option),
                hint="latencies are upper bounds, interactivity a lower bound",
            )
        unit = m["unit"]
        if latency and unit == "tok/s" or not latency and unit in ("ms", "s"):
            raise InputError(
                f"{part!r}: {unit} is not a unit of {metric}", location=Location(key=option)
            )
        bound = float(m["value"]) * (1000.0 if unit == "s" else 1.0)
        if bound <= 0:
            raise InputError(f"{part!r}: the bound must be above 0", location=Location(key=option))
        targets.append(Target(metric=metric, stat=stat, bound=bound))
    if not targets:
        raise InputError("no target given", location=Location(key=option), hint=f"e.g. {EXAMPLE}")
    return tuple(targets)
