"""Whether a stored point measured what it claims: the validity gates.

A point can "succeed" and still say nothing about the deployment: srt-slurm users have seen
sa-bench report a clean run with 0 generated tokens when the KV transfer between prefill and
decode failed (NVIDIA/srt-slurm#429), and MLPerf and InferenceX discard runs whose windows
or accuracies are out of bounds. A point is invalid when

- no request completed, or the server generated no tokens at all;
- the mean generated (or prompt) length per request is further than `length_tolerance`
  from what the workload asked (ignore-EOS fixed-length points only: an agentic replay or
  a dataset's lengths are not fixed by the identity);
- more requests failed than `max_failure_rate` allows (the client's own default);
- the load generator judged it untrustworthy (`gate_failure`), or the point stopped before
  its requests were all sent (`complete: false`: the measured window is not the asked one).

An invalid point is stored with its reasons and never drawn, ranked or compared as valid.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from pydantic import Field

from inferbench.bench.metrics import Lengths
from inferbench.bench.preset import SA_BENCH
from inferbench.bench.workload import RangeMode, length_bounds
from inferbench.core.model import FrozenModel
from inferbench.results.record import Identity, Metrics, PointValidity, Record


class ValidityBounds(FrozenModel):
    """The bounds a point must hold to be valid (defaults documented in docs/report.md)."""

    max_failure_rate: float = Field(default=SA_BENCH.max_failure_rate, ge=0, le=1)
    # mean achieved length against the mean asked: 10% absorbs tokenizer round trips of
    # text prompts (a few %) but not a server that stops early or ignores max_tokens
    length_tolerance: float = Field(default=0.10, ge=0)


DEFAULT_BOUNDS = ValidityBounds()


def judge_point(
    identity: Identity,
    metrics: Metrics,
    *,
    lengths: Lengths | None = None,
    fixed_lengths: bool = True,
    bounds: ValidityBounds = DEFAULT_BOUNDS,
) -> PointValidity:
    """The verdict on one point. `lengths`: the client's nominal and achieved means where
    the file recorded them (inferbench's own results); else the asked means come from the
    identity's lengths and range ratio. `fixed_lengths`: False for replays and datasets."""
    reasons = [*_output_reasons(metrics), *_client_reasons(metrics, bounds)]
    if fixed_lengths and metrics.completed and metrics.total_output_tokens:
        reasons += _length_reasons(identity, metrics, lengths, bounds)
    return PointValidity(valid=not reasons, reasons=tuple(reasons))


def validity_of(record: Record) -> PointValidity:
    """The stored verdict, or (records stored before validity was judged) the verdict their
    metrics give now."""
    if record.validity is not None:
        return record.validity
    return judge_point(
        record.identity,
        record.metrics,
        fixed_lengths=record.agentic is None and record.identity.dataset == "random",
    )


def split_valid(records: Iterable[Record]) -> tuple[list[Record], list[Record]]:
    """`records` as (valid, invalid), each in the order given."""
    valid: list[Record] = []
    invalid: list[Record] = []
    for r in records:
        (valid if validity_of(r).valid else invalid).append(r)
    return valid, invalid


def _output_reasons(metrics: Metrics) -> list[str]:
    if metrics.completed == 0:
        return ["no request completed"]
    if metrics.total_output_tokens == 0:
        return [
            f"the server generated no tokens ({metrics.completed} requests completed empty;"
            " a failed KV transfer or a broken engine reads like this)"
        ]
    return []


def _client_reasons(metrics: Metrics, bounds: ValidityBounds) -> list[str]:
    reasons = []
    attempted = metrics.completed + metrics.failed
    if attempted and metrics.failed / attempted > bounds.max_failure_rate:
        reasons.append(
            f"{metrics.failed} of {attempted} requests failed ({metrics.failed / attempted:.1%},"
            f" above {bounds.max_failure_rate:.1%})"
        )
    if metrics.gate_failure and not reasons:  # the failure rate says it already
        reasons.append(f"the load generator judged it untrustworthy: {metrics.gate_failure}")
    if metrics.complete is False:
        why = metrics.incomplete_reason or "stopped early"
        reasons.append(f"the point did not run to the end ({why})")
    return reasons


def _length_reasons(
    identity: Identity, metrics: Metrics, lengths: Lengths | None, bounds: ValidityBounds
) -> list[str]:
    if lengths is not None and lengths.nominal_mean_output > 0:
        asked = [
            (lengths.nominal_mean_output, lengths.nominal_mean_output),
            (lengths.nominal_mean_input, lengths.nominal_mean_input),
        ]
    else:
        asked = [_asked_means(identity, identity.osl), _asked_means(identity, identity.isl)]
    got = (
        metrics.total_output_tokens / metrics.completed,
        metrics.total_input_tokens / metrics.completed,
    )
    reasons = []
    tol = bounds.length_tolerance
    for what, (low, high), have in zip(("generated", "prompt"), asked, got, strict=True):
        if low > 0 and not low * (1 - tol) <= have <= high * (1 + tol):
            want = f"{low:.1f}" if low == high else f"{low:.1f} to {high:.1f}"
            reasons.append(
                f"{have:.1f} {what} tokens per request on average, {want} asked (beyond ±{tol:.0%})"
            )
    return reasons


def _asked_means(identity: Identity, length: int) -> tuple[float, float]:
    """The mean of the asked length distribution (uniform between the range's bounds); a
    range from ratio 0 to 1 where the point does not record its ratio."""
    return _means_of(length, identity.range_ratio, identity.range_mode)


_RANGE_MODES = frozenset(m.value for m in RangeMode)


@functools.lru_cache(maxsize=4096)  # pure, and an ingest asks the same few 100,000s of times
def _means_of(length: int, ratio: float | None, range_mode: str | None) -> tuple[float, float]:
    mode = RangeMode(range_mode) if range_mode in _RANGE_MODES else RangeMode.INFERENCEX
    ratios = (0.0, 1.0) if ratio is None else (ratio, ratio)
    means = sorted(sum(length_bounds(length, r, mode)) / 2 for r in ratios)
    return means[0], means[-1]
