"""The report's axes, one table entry each: a new y metric or x axis is one `Axis` here.

Every value comes from the record's own derived metrics (`inferbench.results.derived`
holds their definitions); cost divides a deployment's $/hour by its token rate
(`$/M tokens = $/GPU-hour x 1e6 / (3600 x tok/s/GPU)`), energy is used only where the
record's energy verdict is valid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inferbench.report.prices import PriceTable
from inferbench.results.record import Record


@dataclass(frozen=True)
class Axis:
    key: str  # stable id, used in the page's URL state
    label: str  # axis title
    short: str  # table header
    higher_is_better: bool
    value: Callable[[Record, PriceTable], float | None]
    log: bool = False  # the default scale
    note: str = ""  # shown beside the chart when this axis is chosen


def _cost(tok_per_s: Callable[[Record], float]) -> Callable[[Record, PriceTable], float | None]:
    def value(r: Record, prices: PriceTable) -> float | None:
        per_hour, rate = prices.deployment_hour(r.identity), tok_per_s(r)
        if per_hour is None or rate <= 0:
            return None
        return per_hour * 1e6 / (3600.0 * rate)

    return value


def _per_joule(r: Record, _: PriceTable) -> float | None:
    e = r.derived.energy
    if e is None or not e.valid or not e.joules_per_total_token:
        return None
    return 1.0 / e.joules_per_total_token


def _output_per_joule(r: Record, _: PriceTable) -> float | None:
    e = r.derived.energy
    if e is None or not e.valid or not e.joules_per_output_token:
        return None
    return 1.0 / e.joules_per_output_token


def _interactivity(r: Record, _: PriceTable) -> float | None:
    inter = r.derived.interactivity
    return inter.median if inter else None


Y_AXES: tuple[Axis, ...] = (
    Axis(
        "total_tput",
        "total throughput per GPU (tok/s/GPU)",
        "tok/s/GPU",
        True,
        lambda r, _: r.derived.total_tput_per_gpu,
    ),
    Axis(
        "output_tput",
        "output throughput per GPU (tok/s/GPU)",
        "out tok/s/GPU",
        True,
        lambda r, _: r.derived.output_tput_per_gpu,
    ),
    Axis(
        "input_tput",
        "input throughput per GPU (tok/s/GPU)",
        "in tok/s/GPU",
        True,
        lambda r, _: r.derived.input_tput_per_gpu,
    ),
    Axis(
        "cost_total",
        "cost per million total tokens ($)",
        "$/M tok",
        False,
        _cost(lambda r: r.metrics.total_token_throughput),
        note="$/GPU-hour from {prices}",
    ),
    Axis(
        "cost_output",
        "cost per million output tokens ($)",
        "$/M out tok",
        False,
        _cost(lambda r: r.metrics.output_throughput),
        note="$/GPU-hour from {prices}",
    ),
    Axis(
        "tok_per_joule",
        "total tokens per joule (tok/J)",
        "tok/J",
        True,
        _per_joule,
        note="only points whose GPU power samples cover the benchmark window",
    ),
    Axis(
        "out_tok_per_joule",
        "output tokens per joule (tok/J)",
        "out tok/J",
        True,
        _output_per_joule,
        note="only points whose GPU power samples cover the benchmark window",
    ),
)

X_AXES: tuple[Axis, ...] = (
    Axis(
        "interactivity",
        "interactivity p50 (tok/s/user)",
        "tok/s/user",
        True,
        _interactivity,
    ),
    Axis(
        "ttft",
        "time to first token p50 (ms)",
        "TTFT ms",
        False,
        lambda r, _: r.metrics.ttft_ms.median,
        log=True,
    ),
    Axis(
        "e2el",
        "end-to-end latency p50 (ms)",
        "E2EL ms",
        False,
        lambda r, _: r.metrics.e2el_ms.median,
    ),
)


def axis(key: str, table: tuple[Axis, ...]) -> Axis:
    for a in table:
        if a.key == key:
            return a
    raise KeyError(key)
