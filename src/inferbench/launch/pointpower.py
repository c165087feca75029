"""What every point does beside its load: a log line per step, GPU power while it runs.

Shared by fixed-length points (`benchpoint`) and agentic replay points (`replaypoint`),
so both leave the same `power_<point>.csv` (or `.unavailable` note) that the results
stage integrates into joules per token.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from inferbench.core.fsio import atomic_write_text


def log_line(log_path: Path, text: str) -> None:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8") as log:
        log.write(text + "\n")


@contextmanager
def sampling_power(result_path: Path, log_path: Path) -> Iterator[None]:
    """GPU power beside the point, into `power_<point>.csv` next to its result (the name
    the results stage reads); with no tool on this node, a `.unavailable` note says why."""
    from inferbench.power.sampler import PowerSampler, detect_source

    stem = result_path.stem
    source, why = detect_source()
    if source is None:
        atomic_write_text(result_path.with_name(f"power_{stem}.unavailable"), why + "\n")
        yield
        return
    sampler = PowerSampler(source, result_path.with_name(f"power_{stem}.csv"))
    sampler.start()
    log_line(log_path, f"power: sampling {source.kind} into power_{stem}.csv")
    try:
        yield
    finally:
        sampler.stop()
