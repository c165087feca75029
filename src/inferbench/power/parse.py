"""What the vendor tools print, as `GpuSample`s (unix time, GPU, watts, SM clock).

- nvidia-smi `--query-gpu=timestamp,index,power.draw,clocks.sm --format=csv[,nounits]`
  (with `-lms N` it repeats): a header naming each column, then one row per GPU per
  sample; `[N/A]` where a value is not supported.
- amd-smi `metric -p -c -t -u -w N --csv` (watch mode, as InferenceX runs it): a
  preamble, then `timestamp,gpu,...,socket_power,...,gfx_0_clk,...` rows per GPU per tick,
  the header repeated now and then.
- a DCGM exporter's `/metrics` (Prometheus text): `DCGM_FI_DEV_POWER_USAGE{gpu="0",...}`
  in watts and `DCGM_FI_DEV_SM_CLOCK` in MHz; stamped by the poller too.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from prometheus_client.parser import text_string_to_metric_families

CSV_HEADER = "timestamp,gpu,power.draw [W],clocks.sm [MHz]"


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
    text = text.strip().split(" ")[0]
    if not text or text.startswith("[") or text.upper() in ("N/A", "NA"):
        return None
    return float(text)


def _stamp(text: str) -> float:
    text = text.strip()
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            # nvidia-smi prints local time; the sampler runs it with TZ=UTC
            return datetime.strptime(text, fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    raise ParseError(f"unreadable nvidia-smi timestamp {text!r}")


class NvidiaSmiReader:
    """Reads nvidia-smi's CSV line by line (the header first), as `-lms` streams it."""

    POWER = ("power.draw [w]", "power.draw", "power.draw.instant [w]", "power.draw.average [w]")

    def __init__(self) -> None:
        self._columns: dict[str, int] | None = None

    def feed(self, line: str) -> GpuSample | None:
        if not line.strip():
            return None
        row = next(csv.reader(io.StringIO(line), skipinitialspace=True))
        if self._columns is None or row[0].strip().lower() == "timestamp":
            self._columns = {name.strip().lower(): i for i, name in enumerate(row)}
            if "timestamp" not in self._columns or not any(p in self._columns for p in self.POWER):
                raise ParseError(f"nvidia-smi header without timestamp and power: {line!r}")
            return None
        cols = self._columns
        power_col = next(cols[p] for p in self.POWER if p in cols)
        gpu_col = cols.get("index", cols.get("gpu_uuid"))
        clock_col = next((cols[c] for c in cols if c.startswith("clocks.sm")), None)
        clock_col = clock_col if clock_col is not None else cols.get("clocks.current.sm [mhz]")
        try:
            watts = _number(row[power_col])
            if watts is None:
                return None
            return GpuSample(
                t=_stamp(row[cols["timestamp"]]),
                gpu=row[gpu_col].strip() if gpu_col is not None else "0",
                watts=watts,
                sm_mhz=_number(row[clock_col]) if clock_col is not None else None,
            )
        except (IndexError, ValueError) as exc:
            raise ParseError(f"bad nvidia-smi row {line!r}: {exc}") from None


def parse_nvidia_smi(text: str) -> list[GpuSample]:
    reader = NvidiaSmiReader()
    return [s for line in text.splitlines() if (s := reader.feed(line)) is not None]


class AmdSmiCsvReader:
    """Reads `amd-smi metric -p -c -t -u -w N --csv` (watch mode) line by line: preamble
    lines are skipped, the `timestamp,gpu,...` header may repeat, `socket_power` is watts
    and `gfx_0_clk` the graphics clock (AMDSMI 26.x column names)."""

    def __init__(self) -> None:
        self._columns: dict[str, int] | None = None

    def feed(self, line: str) -> GpuSample | None:
        if not line.strip():
            return None
        row = next(csv.reader(io.StringIO(line), skipinitialspace=True))
        if row[0].strip().lower() == "timestamp":
            self._columns = {name.strip().lower(): i for i, name in enumerate(row)}
            if not any(p in self._columns for p in ("socket_power", "average_socket_power")):
                raise ParseError(f"amd-smi header without socket_power: {line!r}")
            return None
        if self._columns is None:
            return None  # the tool's preamble before the first header
        cols = self._columns
        power_col = cols.get("socket_power", cols.get("average_socket_power"))
        clock_col = cols.get("gfx_0_clk", cols.get("gfx_clk"))
        try:
            watts = _number(row[power_col]) if power_col is not None else None
            if watts is None:
                return None
            return GpuSample(
                t=_iso_or_epoch(row[cols["timestamp"]]),
                gpu=row[cols["gpu"]].strip() if "gpu" in cols else "0",
                watts=watts,
                sm_mhz=_number(row[clock_col]) if clock_col is not None else None,
            )
        except (IndexError, ValueError) as exc:
            raise ParseError(f"bad amd-smi row {line!r}: {exc}") from None


def _iso_or_epoch(text: str) -> float:
    text = text.strip()
    try:
        value = float(text)
        return value / 1000.0 if value > 1e12 else value
    except ValueError:
        stamp = datetime.fromisoformat(text)
    # amd-smi prints local time without a zone; the sampler runs it with TZ=UTC
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()


def parse_amd_smi_csv(text: str) -> list[GpuSample]:
    reader = AmdSmiCsvReader()
    return [s for line in text.splitlines() if (s := reader.feed(line)) is not None]


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


def write_csv_lines(samples: Iterable[GpuSample]) -> str:
    return "".join(s.csv_line() + "\n" for s in samples)
