"""GPU power samples from a CSV (nvidia-smi `--format=csv` style or plain t,gpu,watts).

Columns are found by name: a time column (`timestamp`, `time`, `t`), an optional GPU
column (`index`, `gpu`, `gpu_index`), and a power column (`power.draw [W]`, `power`,
`watts`). Times are unix seconds or date-times (`2025/01/31 12:00:00.123`, ISO 8601).
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

from inferbench.errors import InputError, Location
from inferbench.results.derived import PowerSample

_TIME = ("timestamp", "time", "t", "time_unix")
_GPU = ("index", "gpu", "gpu_index", "gpu_id")
_POWER = ("power.draw [w]", "power.draw", "power", "watts", "power_w")


def _find(header: list[str], names: tuple[str, ...]) -> int | None:
    lowered = [h.strip().lower() for h in header]
    return next((lowered.index(n) for n in names if n in lowered), None)


def _time(value: str) -> float:
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            return datetime.strptime(value, fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    stamp = datetime.fromisoformat(value)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def read_power_csv(path: Path) -> tuple[PowerSample, ...]:
    """All samples in the file; a malformed row -> InputError with its line."""
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        return ()
    header = rows[0]
    t_col, gpu_col, w_col = _find(header, _TIME), _find(header, _GPU), _find(header, _POWER)
    if t_col is None or w_col is None:
        raise InputError(
            "power CSV needs a time and a power column",
            location=Location(path, line=1),
            hint="name them in the header (timestamp, power.draw as nvidia-smi does) or remove it",
        )
    out = []
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            watts = row[w_col].strip().removesuffix("W").strip()
            gpu = row[gpu_col].strip() if gpu_col is not None else "0"
            out.append(PowerSample(t=_time(row[t_col]), gpu=gpu, watts=float(watts)))
        except (IndexError, ValueError):
            raise InputError(
                f"bad power sample row: {row!r:.120}",
                location=Location(path, line=line),
                hint="fix or delete the row (a number of watts per sample), or remove the file",
            ) from None
    return tuple(out)
