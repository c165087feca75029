"""The report's axes, one table entry each: a new y metric or x axis is one `Axis` here.

Every value comes from the record's own derived metrics (`inferbench.results.derived`
holds their definitions); cost divides a deployment's $/hour by its token rate
(`$/M tokens = $/GPU-hour x 1e6 / (3600 x tok/s/GPU)`) once per cost model of the price
file, and energy is used only where the record's energy verdict is valid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inferbench.report.prices import CostModel, PriceTable
from inferbench.results.derived import provisioned_mw
from inferbench.results.record import Record, RecordStats

Value = Callable[[Record, PriceTable], float | None]


@dataclass(frozen=True)
class Axis:
    key: str  # stable id, used in the page's URL state
    label: str  # axis title
    short: str  # table header
    higher_is_better: bool
    value: Value
    log: bool = False  # the default scale
    note: str = ""  # shown beside the chart when this axis is chosen
    group: str = ""  # the menu section


def _cost(model: CostModel, tok_per_s: Callable[[Record], float], *, per_dollar: bool) -> Value:
    def value(r: Record, _: PriceTable) -> float | None:
        per_hour, rate = model.deployment_hour(r.identity), tok_per_s(r)
        if per_hour is None or rate <= 0:
            return None
        dollars_per_million = per_hour * 1e6 / (3600.0 * rate)
        return 1e6 / dollars_per_million if per_dollar else dollars_per_million

    return value


def _energy(r: Record) -> tuple[float | None, float | None]:
    """(J per total token, J per output token) of a valid measurement, else (None, None)."""
    e = r.derived.energy
    if e is None or not e.valid:
        return None, None
    return e.joules_per_total_token or None, e.joules_per_output_token or None


def _per_joule(r: Record, _: PriceTable) -> float | None:
    j = _energy(r)[0]
    return 1.0 / j if j else None


def _output_per_joule(r: Record, _: PriceTable) -> float | None:
    j = _energy(r)[1]
    return 1.0 / j if j else None


def _per_mw(r: Record, _: PriceTable) -> float | None:
    # tok/s per measured W is tok/J; a megawatt of the same GPUs serves 1e6 times that
    j = _energy(r)[0]
    return 1e6 / j if j else None


def _per_provisioned_mw(r: Record, _: PriceTable) -> float | None:
    mw = provisioned_mw(r.identity)
    return r.metrics.total_token_throughput / mw if mw else None


def _interactivity(r: Record, _: PriceTable) -> float | None:
    inter = r.derived.interactivity
    return inter.median if inter else None


def _e2e_interactivity(stat: str) -> Value:
    """Output tokens a request got per second of its whole latency (TTFT included):
    the mean output length over the chosen E2E latency percentile, so p90 is the
    interactivity of the slowest 10% of requests."""

    def value(r: Record, _: PriceTable) -> float | None:
        m = r.metrics
        e2el = getattr(m.e2el_ms, stat)
        if not e2el or not m.completed:
            return None
        return (m.total_output_tokens / m.completed) / (e2el / 1000.0)

    return value


def _latency(field: str, stat: str) -> Value:
    def value(r: Record, _: PriceTable) -> float | None:
        stats: RecordStats = getattr(r.metrics, field)
        return getattr(stats, stat)

    return value


THROUGHPUT_AXES: tuple[Axis, ...] = (
    Axis(
        "total_tput",
        "total throughput per GPU (tok/s/GPU)",
        "tok/s/GPU",
        True,
        lambda r, _: r.derived.total_tput_per_gpu,
        group="throughput",
    ),
    Axis(
        "output_tput",
        "output throughput per GPU (tok/s/GPU)",
        "out tok/s/GPU",
        True,
        lambda r, _: r.derived.output_tput_per_gpu,
        group="throughput",
    ),
    Axis(
        "input_tput",
        "input throughput per GPU (tok/s/GPU)",
        "in tok/s/GPU",
        True,
        lambda r, _: r.derived.input_tput_per_gpu,
        group="throughput",
    ),
)

ENERGY_NOTE = "only points whose GPU power samples cover the benchmark window"
ENERGY_AXES: tuple[Axis, ...] = (
    Axis(
        "tok_per_joule",
        "total tokens per joule (tok/J)",
        "tok/J",
        True,
        _per_joule,
        note=ENERGY_NOTE,
        group="energy",
    ),
    Axis(
        "out_tok_per_joule",
        "output tokens per joule (tok/J)",
        "out tok/J",
        True,
        _output_per_joule,
        note=ENERGY_NOTE,
        group="energy",
    ),
    Axis(
        "tput_per_mw",
        "total throughput per measured MW of GPU power (tok/s/MW)",
        "tok/s/MW",
        True,
        _per_mw,
        note=ENERGY_NOTE + "; GPU board power only (no host, network or cooling)",
        group="energy",
    ),
    Axis(
        "tput_per_provisioned_mw",
        "total throughput per provisioned MW (tok/s/MW)",
        "tok/s/prov. MW",
        True,
        _per_provisioned_mw,
        note="every GPU at its all-in provisioned kW (the InferenceX site's constants, "
        "cited in the hardware catalog): no measurement needed",
        group="provisioned power",
    ),
)


def cost_axes(model: CostModel) -> tuple[Axis, ...]:
    """Cost per million total / output / input tokens and total tokens per dollar, under
    `model` (the InferenceX site shows input and output costs apart)."""
    note = f"{model.label}: $/GPU-hour from {{prices}}"
    return (
        Axis(
            f"cost_total.{model.key}",
            f"cost per million total tokens ($, {model.label})",
            "$/M tok",
            False,
            _cost(model, lambda r: r.metrics.total_token_throughput, per_dollar=False),
            note=note,
            group=f"cost: {model.label}",
        ),
        Axis(
            f"cost_output.{model.key}",
            f"cost per million output tokens ($, {model.label})",
            "$/M out tok",
            False,
            _cost(model, lambda r: r.metrics.output_throughput, per_dollar=False),
            note=note,
            group=f"cost: {model.label}",
        ),
        Axis(
            f"cost_input.{model.key}",
            f"cost per million input tokens ($, {model.label})",
            "$/M in tok",
            False,
            _cost(
                model,
                lambda r: r.metrics.total_input_tokens / r.metrics.duration_s,
                per_dollar=False,
            ),
            note=note,
            group=f"cost: {model.label}",
        ),
        Axis(
            f"tok_per_dollar.{model.key}",
            f"total tokens per dollar (tok/$, {model.label})",
            "tok/$",
            True,
            _cost(model, lambda r: r.metrics.total_token_throughput, per_dollar=True),
            note=note,
            group=f"cost: {model.label}",
        ),
    )


def y_axes(prices: PriceTable) -> tuple[Axis, ...]:
    """Every y metric: throughput, cost under each of the price file's models, energy."""
    costs = tuple(a for m in prices.models for a in cost_axes(m))
    return THROUGHPUT_AXES + costs + ENERGY_AXES


X_AXES: tuple[Axis, ...] = (
    Axis(
        "interactivity",
        "interactivity p50 (tok/s/user)",
        "tok/s/user",
        True,
        _interactivity,
        group="interactivity",
    ),
    Axis(
        "e2e_inter",
        "E2E interactivity p50 (output tok/s/user over the whole request)",
        "E2E tok/s/user",
        True,
        _e2e_interactivity("median"),
        group="interactivity",
    ),
    Axis(
        "e2e_inter_p90",
        "E2E interactivity of the p90 request (tok/s/user)",
        "E2E tok/s/user p90",
        True,
        _e2e_interactivity("p90"),
        group="interactivity",
    ),
    Axis(
        "e2e_inter_p99",
        "E2E interactivity of the p99 request (tok/s/user)",
        "E2E tok/s/user p99",
        True,
        _e2e_interactivity("p99"),
        group="interactivity",
    ),
    Axis(
        "ttft",
        "time to first token p50 (ms)",
        "TTFT ms",
        False,
        _latency("ttft_ms", "median"),
        log=True,
        group="latency",
    ),
    Axis(
        "ttft_p90",
        "time to first token p90 (ms)",
        "TTFT p90 ms",
        False,
        _latency("ttft_ms", "p90"),
        log=True,
        group="latency",
    ),
    Axis(
        "ttft_p99",
        "time to first token p99 (ms)",
        "TTFT p99 ms",
        False,
        _latency("ttft_ms", "p99"),
        log=True,
        group="latency",
    ),
    Axis(
        "e2el",
        "end-to-end latency p50 (ms)",
        "E2EL ms",
        False,
        _latency("e2el_ms", "median"),
        group="latency",
    ),
    Axis(
        "e2el_p90",
        "end-to-end latency p90 (ms)",
        "E2EL p90 ms",
        False,
        _latency("e2el_ms", "p90"),
        group="latency",
    ),
    Axis(
        "e2el_p99",
        "end-to-end latency p99 (ms)",
        "E2EL p99 ms",
        False,
        _latency("e2el_ms", "p99"),
        group="latency",
    ),
)


def axis(key: str, table: tuple[Axis, ...]) -> Axis:
    for a in table:
        if a.key == key:
            return a
    raise KeyError(key)
