"""Concurrency expansion: the one definition of how a master entry's concurrencies become points.

A range `conc-start..conc-end` grows geometrically by `step` (default 2) and always ends on
`conc-end`: 4..100 gives 4, 8, 16, 32, 64, 100; with step 4, 4, 16, 64, 100. A list is used as
written. `min_conc` raises the start of a range and drops smaller list values; `max_conc` lowers
the end of a range and drops larger list values, and when it is below every value the result is
the single point `max_conc` (so a capped sweep still measures something).
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_STEP = 2


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
) -> list[int]:
    """The concurrencies of one search-space entry: exactly one of a list or a start/end range."""
    if conc_list is not None:
        if conc_start is not None or conc_end is not None:
            raise ValueError("give conc-list or conc-start/conc-end, not both")
        return filter_list(conc_list, min_conc=min_conc, max_conc=max_conc)
    if conc_start is None or conc_end is None:
        raise ValueError("conc-start and conc-end are both required without conc-list")
    return expand_range(conc_start, conc_end, step=step, min_conc=min_conc, max_conc=max_conc)
