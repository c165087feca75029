"""What the vendor tools print, as `GpuSample`s (unix time, GPU, watts, SM clock).

One reader takes every CSV form a power file comes in, exactly as written:
- nvidia-smi `--query-gpu=timestamp,index,power.draw,...` with `--format=csv` (units in
  the header and the values: `412.34 W`, `1980 MHz`) or `csv,nounits`; `[N/A]` where a
  value is not supported. Its timestamps (`2026/12/03 10:00:00.123`) are the wall clock
  of the host that ran it, with no zone: the caller says which zone that was (`tz`;
  None: this process's local zone, as InferenceX's `utils/aggregate_power.py` reads them).
- amd-smi `metric -p -c -t -u -w N --csv` (watch mode), raw or through InferenceX's
  `start_gpu_monitor` awk filter: a preamble, then `timestamp,gpu,...,socket_power,...`
  rows per GPU per tick (timestamp in whole unix seconds), the header repeated each tick
  unless filtered; `gfx_0_clk` is the graphics clock.
- the sampler's own file (`timestamp,gpu,power.draw [W],clocks.sm [MHz]`, unix seconds)
  and plain `t,gpu,watts` tables.
A DCGM exporter's `/metrics` (Prometheus text, `DCGM_FI_DEV_POWER_USAGE{gpu="0"}` in watts,
`DCGM_FI_DEV_SM_CLOCK` in MHz) is read per scrape, stamped by the poller.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from prometheus_client.parser import text_string_to_metric_families

CSV_HEADER = "timestamp,gpu,power.draw [W],clocks.sm [MHz]"

# Column names as the tools write them (lowercased), most specific first.
_TIME = ("timestamp", "time", "t", "time_unix")
_GPU = ("index", "gpu", "gpu_index", "gpu_id", "gpu_uuid")
_POWER = (
    "power.draw [w]",
    "power.draw",
    "power.draw.instant [w]",
    "power.draw.average [w]",
    "socket_power",  # amd-smi (AMDSMI 26.x), before power_management in the same row
    "average_socket_power",
    "power",
    "watts",
    "power_w",
)
_CLOCK = (
    "clocks.sm [mhz]",
    "clocks.sm",
    "clocks.current.sm [mhz]",
    "clocks.current.sm",
    "gfx_0_clk",
    "gfx_clk",
)


@dataclass(frozen=True)
class GpuSample:
    t: float  # unix seconds
    gpu: str
    watts: float
    sm_mhz: float | None = None

    def csv_line(self) -> str:
        clock = "" if self.sm_mhz is None else f"{self.sm_mhz:g}"
        return f"{self.t:.3f},{self.gpu},{self.watts:g},{clock}"


class ParseError(ValueError):
    """Output the parser does not understand (the tool changed, or is not the tool)."""


def _number(text: str) -> float | None:
    text = text.strip().split(" ")[0]  # "412.34 W" -> "412.34"
    if not text or text.startswith("[") or text.upper() in ("N/A", "NA"):
        return None
    return float(text)


def parse_time(text: str, tz: tzinfo | None) -> float:
    """Unix seconds from a power file's time cell.

    Numbers are unix seconds (milliseconds above 1e12); nvidia-smi's and ISO date-times
    without a zone are wall-clock times in `tz` (None: this process's local zone).
    """
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        return value / 1000.0 if value > 1e12 else value
    stamp: datetime | None = None
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            stamp = datetime.strptime(text, fmt)
            break
        except ValueError:
            continue
    if stamp is None:
        try:
            stamp = datetime.fromisoformat(text)
        except ValueError:
            raise ParseError(f"unreadable timestamp {text!r}") from None
    if stamp.tzinfo is None and tz is not None:
        stamp = stamp.replace(tzinfo=tz)
    return stamp.timestamp()  # naive: local time, as the host's C library says


def _find(cols: dict[str, int], names: tuple[str, ...]) -> int | None:
    return next((cols[n] for n in names if n in cols), None)


class PowerCsvReader:
    """Reads a power CSV line by line as a tool streams it: lines before the first header
    are the tool's preamble, a repeated header is skipped, a reading of `[N/A]` is dropped."""

    def __init__(self, tz: tzinfo | None = None) -> None:
        self.tz = tz
        self._cols: tuple[int, int | None, int, int | None] | None = None  # t, gpu, W, MHz

    def feed(self, line: str) -> GpuSample | None:
        if not line.strip():
            return None
        row = next(csv.reader(io.StringIO(line), skipinitialspace=True))
        if row[0].strip().lower() in _TIME:
            cols = {name.strip().lower(): i for i, name in enumerate(row)}
            power = _find(cols, _POWER)
            if power is None:
                raise ParseError(f"power CSV header without a power column: {line.strip()!r}")
            self._cols = (
                cols[row[0].strip().lower()],
                _find(cols, _GPU),
                power,
                _find(cols, _CLOCK),
            )
            return None
        if self._cols is None:
            return None  # the tool's preamble before the first header
        t_col, gpu_col, power_col, clock_col = self._cols
        try:
            watts = _number(row[power_col])
            if watts is None:
                return None
            return GpuSample(
                t=parse_time(row[t_col], self.tz),
                gpu=row[gpu_col].strip() if gpu_col is not None else "0",
                watts=watts,
                sm_mhz=_number(row[clock_col]) if clock_col is not None else None,
            )
        except (IndexError, ValueError) as exc:
            raise ParseError(f"bad power row {line.strip()!r:.120}: {exc}") from None

    @property
    def started(self) -> bool:
        """Whether a header has been read."""
        return self._cols is not None


def parse_power_csv(text: str, tz: tzinfo | None = None) -> list[GpuSample]:
    """Every sample of a power CSV in any of the forms above; a file with no header
    naming a time and a power column is a ParseError."""
    reader = PowerCsvReader(tz)
    samples = [s for line in text.splitlines() if (s := reader.feed(line)) is not None]
    if not reader.started:
        raise ParseError("no header naming a time and a power column")
    return samples


def parse_nvidia_smi(text: str, tz: tzinfo | None = UTC) -> list[GpuSample]:
    """nvidia-smi's CSV; `tz` the zone it ran in (the sampler runs it with TZ=UTC)."""
    return parse_power_csv(text, tz)


def parse_amd_smi_csv(text: str) -> list[GpuSample]:
    """amd-smi's watch CSV (unix-second stamps: no zone to know)."""
    return parse_power_csv(text, UTC)


def parse_dcgm_metrics(text: str, t: float) -> list[GpuSample]:
    """One scrape of a DCGM exporter, stamped `t`."""
    power: dict[str, float] = {}
    clock: dict[str, float] = {}
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as exc:
        raise ParseError(f"not Prometheus text: {exc}") from None
    for family in families:
        for sample in family.samples:
            gpu = sample.labels.get("gpu")
            if gpu is None:
                continue
            if sample.name == "DCGM_FI_DEV_POWER_USAGE":
                power[gpu] = float(sample.value)
            elif sample.name == "DCGM_FI_DEV_SM_CLOCK":
                clock[gpu] = float(sample.value)
    return [GpuSample(t=t, gpu=g, watts=w, sm_mhz=clock.get(g)) for g, w in sorted(power.items())]
