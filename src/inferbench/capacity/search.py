"""The search: the highest load of a grid whose measured point meets every target.

Latency grows with load, so the points that meet the targets are a prefix of the grid; a
binary search over the grid finds its end in about log2(n + 1) measurements instead of n.
From a start (the simulator's prediction) it steps 1, 2, 4 ... loads away from the known
side until both sides are known, then halves: a right prediction settles it in two. A
measurement whose value lies within `noise` of a bound is not trusted on its own: the point
is measured again (up to `repeats` times) and judged by the median of its measurements.

The measuring itself is a callable (one load -> one result file), so the same search runs
on any engine and backend that produces a `PointResult`, and on synthetic points in tests.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from inferbench.bench.result import PointResult
from inferbench.capacity.targets import Target
from inferbench.core.model import FrozenModel

Measure = Callable[[int], PointResult]


class TargetCheck(FrozenModel):
    """One target at one load: the median of its measurements and how far inside it is."""

    target: str
    values: tuple[float, ...]
    value: float
    slack: float  # relative: (bound - value) / bound for an upper bound; negative = missed
    met: bool


class LoadVerdict(FrozenModel):
    """Every target at one load, judged on `measurements` measurements."""

    load: int
    measurements: int
    checks: tuple[TargetCheck, ...]
    total_tok_s: float = 0.0  # median total token throughput of its measurements
    output_tok_s: float = 0.0
    valid: bool = True  # False: the point itself failed (its gate), so it meets nothing
    reason: str | None = None

    @property
    def met(self) -> bool:
        return self.valid and all(c.met for c in self.checks)

    @property
    def binding(self) -> TargetCheck:
        """The target with the least slack: the one that stops the load growing."""
        return min(self.checks, key=lambda c: c.slack)


class CapacityResult(FrozenModel):
    """The answer: the highest load of the grid that met every target (None: not even the
    lowest), the first that did not, what bound it, and what was measured to know."""

    targets: tuple[str, ...]
    grid: tuple[int, ...]
    capacity: int | None
    first_failing: int | None  # None: even the highest load of the grid met the targets
    binding: str | None  # the target missed at first_failing (or the tightest at capacity)
    verdicts: tuple[LoadVerdict, ...]  # in the order measured
    noise: float
    repeats: int

    @property
    def measured_loads(self) -> int:
        return len(self.verdicts)

    @property
    def measurements(self) -> int:
        return sum(v.measurements for v in self.verdicts)

    def verdict_at(self, load: int) -> LoadVerdict | None:
        return next((v for v in self.verdicts if v.load == load), None)

    def confidence(self) -> str:
        """What the answer rests on, in one sentence."""
        if self.capacity is None:
            lowest = self.verdict_at(self.grid[0])
            n = lowest.measurements if lowest else 0
            return f"the lowest load {self.grid[0]} missed a target ({n} measurement(s))"
        above = (
            "the highest load of the grid"
            if self.first_failing is None
            else f"load {self.first_failing} missed {self.binding}"
        )
        at = self.verdict_at(self.capacity)
        n = at.measurements if at else 0
        repeated = sum(1 for v in self.verdicts if v.measurements > 1)
        return (
            f"load {self.capacity} met every target on the median of {n} measurement(s), "
            f"{above}; {repeated} of {self.measured_loads} loads lay within "
            f"{self.noise:.0%} of a bound and were measured up to {self.repeats} times"
        )


@dataclass
class _Judge:
    targets: Sequence[Target]
    measure: Measure
    noise: float
    repeats: int
    verdicts: list[LoadVerdict] = field(default_factory=list)

    def judge(self, load: int) -> LoadVerdict:
        found = next((v for v in self.verdicts if v.load == load), None)
        if found is not None:
            return found
        results: list[PointResult] = []
        while True:
            results.append(self.measure(load))
            verdict = self._verdict(load, results)
            near = any(abs(c.slack) <= self.noise for c in verdict.checks)
            if not verdict.valid or not near or len(results) >= self.repeats:
                break
        self.verdicts.append(verdict)
        return verdict

    def _verdict(self, load: int, results: Sequence[PointResult]) -> LoadVerdict:
        last = results[-1]
        failed = last.inferbench.gate_failure or (
            None if last.complete else last.inferbench.incomplete_reason or "incomplete"
        )
        return LoadVerdict(
            load=load,
            measurements=len(results),
            checks=self._checks(results),
            total_tok_s=statistics.median(r.sa.total_token_throughput for r in results),
            output_tok_s=statistics.median(r.sa.output_throughput for r in results),
            valid=failed is None,
            reason=failed,
        )

    def _checks(self, results: Sequence[PointResult]) -> tuple[TargetCheck, ...]:
        checks = []
        for t in self.targets:
            values = tuple(t.value(r) for r in results)
            value = statistics.median(values)
            slack = t.slack(value)
            checks.append(
                TargetCheck(target=t.label, values=values, value=value, slack=slack, met=slack >= 0)
            )
        return tuple(checks)


def search_capacity(
    targets: Sequence[Target],
    grid: Sequence[int],
    measure: Measure,
    *,
    start: int | None = None,
    noise: float = 0.05,
    repeats: int = 3,
) -> CapacityResult:
    """The highest load of `grid` (ascending) whose point meets every target; `start`: a
    load to measure first (a prediction), else the middle of the grid."""
    loads = sorted(set(grid))
    if not loads:
        raise ValueError("an empty grid")
    judge = _Judge(targets, measure, noise, max(1, repeats))
    n = len(loads)
    lo, hi = -1, n  # loads[lo] met (-1: none known), loads[hi] missed (n: none known)
    probe = _index_near(loads, start) if start is not None else (n - 1) // 2
    stride = 1
    while hi - lo > 1:
        if judge.judge(loads[probe]).met:
            lo = probe
        else:
            hi = probe
        if start is None or (lo >= 0 and hi < n):  # halve (the grid's ends as sentinels)
            probe = (lo + hi) // 2
        else:  # from a prediction, one side known: gallop away from it (1, 2, 4 ... steps)
            probe = min(n - 1, lo + stride) if hi >= n else max(0, hi - stride)
            stride *= 2
    capacity = loads[lo] if lo >= 0 else None
    failing = judge.judge(loads[hi]) if hi < len(loads) else None
    binding = failing.binding.target if failing is not None and failing.checks else None
    if binding is None and capacity is not None:
        binding = judge.judge(capacity).binding.target
    return CapacityResult(
        targets=tuple(t.label for t in targets),
        grid=tuple(loads),
        capacity=capacity,
        first_failing=loads[hi] if hi < len(loads) else None,
        binding=binding,
        verdicts=tuple(judge.verdicts),
        noise=noise,
        repeats=judge.repeats,
    )


def _index_near(loads: Sequence[int], load: int) -> int:
    return min(range(len(loads)), key=lambda i: (abs(loads[i] - load), loads[i]))
