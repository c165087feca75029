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

A concurrency list written as text (`4,8,16` on a command line, srt-slurm's `4x8x16` in a
recipe) is read by `parse_concurrency_list`, the one parser of that form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

DEFAULT_STEP = 2
MAX_CONCURRENCY = 10_000_000  # beyond any server; a 20-digit number is a typo, not a load


def parse_concurrency_list(value: object, *, separators: str = ",x") -> tuple[int, ...]:
    """`2048`, `"4x8x16"`, `"4,8,16"` or `[4, 8]` -> (4, 8, 16), in the order written.

    Raises ValueError (with a message that says the accepted form) on anything else: empty
    text, a non-integer, zero or a negative value, a value above MAX_CONCURRENCY.
    `separators` narrows the text form (srt-slurm recipes take `x` only).
    """
    if isinstance(value, bool):
        raise ValueError(f"concurrency must be an integer, not {value!r}")
    if isinstance(value, int):
        values: list[object] = [value]
    elif isinstance(value, str):
        shown = " or ".join(repr(c) for c in separators)
        example = separators[0].join(("4", "8", "16"))
        pattern = rf"^\s*\d+(\s*[{re.escape(separators)}]\s*\d+)*\s*$"
        if not re.match(pattern, value):
            raise ValueError(
                f"{value!r} is not a concurrency list: use positive integers separated by "
                f"{shown}, e.g. {example}"
            )
        values = [int(v) for v in re.split(f"[{re.escape(separators)}]", value.replace(" ", ""))]
    elif isinstance(value, list | tuple):
        values = list(value)
    else:
        raise ValueError(f"cannot read a concurrency list from {value!r}")
    out: list[int] = []
    for item in values:
        if isinstance(item, bool) or not isinstance(item, int):
            raise ValueError(f"concurrency {item!r} is not an integer")
        if not 1 <= item <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency {item} must be between 1 and {MAX_CONCURRENCY:,}")
        out.append(item)
    if not out:
        raise ValueError("the concurrency list is empty")
    return tuple(out)


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
