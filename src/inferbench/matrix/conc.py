"""Concurrency expansion: the one definition of how a master entry's concurrencies become points.

A range `conc-start..conc-end` grows geometrically by `step` (default 2) and always ends on
`conc-end`: 4..100 gives 4, 8, 16, 32, 64, 100; with step 4, 4, 16, 64, 100. A list is used as
written. How `min_conc` / `max_conc` apply depends on the kind of entry, as in InferenceX's
generator (`ConcRule`):
- `CLAMP` (single-node fixed-seq-len): `min_conc` raises the start of a range and drops smaller
  list values; `max_conc` lowers the end of a range and drops larger list values, and when it is
  below every value the result is the single point `max_conc` (so a capped sweep still measures
  something). 4..100 with min 10 gives 10, 20, 40, 80, 100.
- `FILTER` (multinode fixed-seq-len): the values are expanded in full, then filtered the same
  way (max below every value -> `[max_conc]`). 4..100 with min 10 gives 16, 32, 64, 100.
- `STRICT` (agentic): the values are expanded in full and only those within the bounds stay;
  none left means no job.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

DEFAULT_STEP = 2


class ConcRule(StrEnum):
    """How the min/max concurrency filters apply (see the module docstring)."""

    CLAMP = "clamp"
    FILTER = "filter"
    STRICT = "strict"


def geometric_range(start: int, end: int, step: int = DEFAULT_STEP) -> list[int]:
    """start, start*step, ... below end, then end itself."""
    if start <= 0 or end < start:
        raise ValueError(f"concurrency range {start}..{end} must be positive with start <= end")
    if step <= 1:
        raise ValueError(f"concurrency step {step} must be greater than 1")
    values: list[int] = []
    conc = start
    while conc < end:
        values.append(conc)
        conc *= step
    values.append(end)
    return values


def expand_range(
    start: int,
    end: int,
    *,
    step: int = DEFAULT_STEP,
    min_conc: int | None = None,
    max_conc: int | None = None,
) -> list[int]:
    """A `conc-start`/`conc-end` range after the min/max filters; [] when min is above the end."""
    if min_conc is not None:
        if end < min_conc:
            return []
        start = max(start, min_conc)
    if max_conc is not None:
        if start > max_conc:
            return [max_conc]
        end = min(end, max_conc)
    return geometric_range(start, end, step)


def filter_list(
    values: Sequence[int], *, min_conc: int | None = None, max_conc: int | None = None
) -> list[int]:
    """A `conc-list` after the min/max filters; [] when every value is below min."""
    kept = list(values)
    if min_conc is not None:
        kept = [c for c in kept if c >= min_conc]
        if not kept:
            return []
    if max_conc is not None:
        below = [c for c in kept if c <= max_conc]
        kept = below or [max_conc]
    return kept


def expand_concurrency(
    *,
    conc_list: Sequence[int] | None = None,
    conc_start: int | None = None,
    conc_end: int | None = None,
    step: int = DEFAULT_STEP,
    min_conc: int | None = None,
    max_conc: int | None = None,
    rule: ConcRule = ConcRule.CLAMP,
) -> list[int]:
    """The concurrencies of one search-space entry: exactly one of a list or a start/end range."""
    if conc_list is not None:
        if conc_start is not None or conc_end is not None:
            raise ValueError("give conc-list or conc-start/conc-end, not both")
        values = list(conc_list)
    elif conc_start is None or conc_end is None:
        raise ValueError("conc-start and conc-end are both required without conc-list")
    elif rule is ConcRule.CLAMP:
        return expand_range(conc_start, conc_end, step=step, min_conc=min_conc, max_conc=max_conc)
    else:
        values = geometric_range(conc_start, conc_end, step)
    if rule is ConcRule.STRICT:
        low, high = min_conc or 0, max_conc
        return [c for c in values if c >= low and (high is None or c <= high)]
    return filter_list(values, min_conc=min_conc, max_conc=max_conc)
